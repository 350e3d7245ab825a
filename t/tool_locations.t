#!/usr/bin/perl
# Tools and graph nodes that are nginx locations: agent_tool sends the
# model's arguments as a JSON POST subrequest and takes the body as the
# result; a node of kind http sends channels and writes the answer's keys
# back.  The locations are JavaScript in nginx (Debian's njs module) and a
# proxy_pass to a small HTTP service with an Authorization the model never
# sees; the faults: a 500, an answer over max_size, a location too slow,
# an answer that is no JSON object, a body cut short.  Skipped where the njs module is not
# installed (apt-get install libnginx-mod-http-js).

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use MockLLM;
use JSON::PP;

my $njs = '/usr/lib/nginx/modules/ngx_http_js_module.so';

if (!-f $njs && $> == 0) {
    system('sh', '-c', 'DEBIAN_FRONTEND=noninteractive apt-get install -y '
           . '-qq libnginx-mod-http-js >/dev/null 2>&1');
}
plan skip_all => "no njs module at $njs (libnginx-mod-http-js)" unless -f $njs;

my $root = AgentTest::root();
my $dir = "$root/t/locations";
my $t = AgentTest->new;

# a service behind proxy_pass: answers a record, logs what it was sent
my $svc = MockLLM->new(dir => $t->dir, name => 'svc', script => sub {
    my ($body) = @_;
    # cut: its headers, then a body that stops short of its length
    return { status => 200, body => '{"id": ', short => 50 }
        if $body->{cut};
    { status => 200, body => '{"id": 7, "name": "ann"}' } });

my $mock = $t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my $q = AgentTest::last_user($req);
    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    return { text => 'done' } if grep { $_->{role} eq 'tool' } @m[$u .. $#m];
    return { tools => [ [ 'w', 'weather', '{"city": "Oslo"}' ],
                        [ 'l', 'lookup', '{"id": 7}' ],
                        [ 'b', 'broken', '{}' ],
                        [ 'g', 'big', '{}' ],
                        [ 's', 'slow', '{}' ] ] } if $q eq 'all tools';
    return { tools => [ [ 's2', 'slow', '{}' ] ] } if $q eq 'slow only';
    return { tools => [ [ 'c', 'lookup', '{"cut": 1}' ] ] } if $q eq 'cut';
    return { text => 'no tools' };
});

my $conf = $t->conf(http => <<"HTTP");
agent_prompts $root/prompts;
js_import tools from $dir/tools.js;
agent_tool weather location=/internal/weather schema=$dir/weather.json
    "description=The weather in a city, now";
agent_tool lookup location=/internal/lookup "description=A record by id";
agent_tool broken location=/internal/broken;
agent_tool big location=/internal/big max_size=1k;
agent_tool slow location=/internal/slow timeout=1s;
agent_graph located {
    channel score       value;
    channel input_chars sum;

    node agent llm prompt=react_system.md
        tools=weather,lookup,broken,big,slow;
    node tools tools;
    node score http location=/internal/score input=input,messages
        output=score,input_chars;

    edge START agent;
    edge agent tools if=tool_calls;
    edge agent score;
    edge tools agent;
    edge score END;
}
agent_graph failing {
    node prose http location=/internal/prose;
    node down  http location=/internal/broken;
    edge START prose;
    edge prose down;
    edge down END;
}
agent_use_graph located;
HTTP
$conf =~ s/^/load_module $njs;\n/;
my $svc_port = $svc->port;
$conf =~ s{(location /api/sessions/)}{location /internal/weather { internal; js_content tools.weather; }
        location /internal/lookup { internal; proxy_pass http://127.0.0.1:$svc_port/lookup; proxy_set_header Authorization "Bearer svc-secret"; }
        location /internal/broken { internal; return 500 "database down"; }
        location /internal/big { internal; js_content tools.big; }
        location /internal/slow { internal; js_content tools.slow; }
        location /internal/score { internal; js_content tools.score; }
        location /internal/prose { internal; js_content tools.prose; }
        location /failing/ { agent_chat; agent_use_graph failing; }
        $1};
$t->run($conf);

my $sid = $t->session;
my $r = $t->turn($sid, 'all tools', headers => { Cookie => 'user=secret' });
is($r->{types}[-1], 'end', 'a turn with five location tools ends')
    or diag explain $r->{events}[-1];

my %res = map { $_->{id} => $_->{content} }
          grep { $_->{type} eq 'tool_result' } @{ $r->{events} };

is_deeply($res{w}, { city => 'Oslo', celsius => 21, method => 'POST',
                     type => 'application/json', cookie => undef },
          'njs tool: the arguments as a JSON POST, the answer as the result, '
          . 'no cookie of the user');
is_deeply($res{l}, { id => 7, name => 'ann' },
          'proxied tool: the service\'s answer');
my ($sreq) = $svc->requests;
is($sreq->{auth}, 'Bearer svc-secret',
   'proxied tool: the Authorization set in nginx reached the service');
is_deeply($sreq->{body}, { id => 7 }, 'proxied tool: the arguments');
ok(!exists $sreq->{headers}{cookie}, 'proxied tool: no cookie of the user');
like($res{b}{error} // '', qr/^the tool's location answered 500: database down/,
     'a 500 is an error result the model sees');
like($res{g} // '', qr/^x{1024}\n\[cut: the answer was larger than 1024 bytes\]$/,
     'an answer over max_size is cut with a marker');
like($res{s}{error} // '', qr/did not answer within 1000 ms/,
     'a location too slow is an error result');

my @reqs = $mock->requests;
my ($def) = grep { $_->{function}{name} eq 'weather' }
            @{ $reqs[0]{body}{tools} };
is_deeply($def->{function}{parameters}{required}, ['city'],
          'the model sees the schema file as the parameters');
is($def->{function}{description}, 'The weather in a city, now',
   'and the description');
my ($after) = grep { grep { $_->{role} eq 'tool' } @{ $_->{body}{messages} } }
              @reqs;
is(scalar(grep { $_->{role} eq 'tool' } @{ $after->{body}{messages} }), 5,
   'the model got five results');

# the http node: channels out, the answer's keys into channels
my $st = $t->http('GET', "/api/sessions/$sid/state")->{json}{values};
is_deeply($st->{score}, { chars => 9, messages => scalar @{ $st->{messages} } },
          'http node: input and messages sent, the answer in score');
is($st->{input_chars}, 9, 'http node: a sum channel through its reducer');
ok(!exists $st->{not_a_channel}, 'http node: other keys left out');
like($t->slurp('error.log'), qr/left out "not_a_channel"/,
     'http node: and logged');

# a node whose location answers no JSON object, or an error
$r = $t->stream("/failing/$sid/message", encode_json({ message => 'x' }));
my $err = $r->{events}[-1];
is($err->{type}, 'error', 'http node: prose fails the turn');
like($err->{error}, qr/the node "prose" got no JSON object from \/internal\/prose/,
     'http node: and says which');

# a service that closes before the end of its body: after its headers
# nginx ends the subrequest without an error; what came is not the answer
$r = $t->turn($t->session, 'cut');
is($r->{types}[-1], 'end', 'a turn whose tool\'s body is cut short ends');
my ($cut) = map { $_->{content} }
            grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
like($cut->{error} // '', qr/^the tool's location answered 502/,
     'a body cut short is an error result, not the part that came')
    or diag explain $cut;
like($t->slurp('error.log'),
     qr/the location "\/internal\/lookup" answered 200, its body cut short/,
     'and logged');

# a client that leaves while a location tool runs: the turn ends, the
# subrequest runs out in the background, the worker lives on
my $sid2 = $t->session;
$r = $t->turn($sid2, 'slow only', stop_after => 4);
ok($r->{stopped}, 'client left while the location tool ran');
sleep 3.5;
like($t->slurp('error.log'), qr/client gone, turn on session "\Q$sid2\E" cancelled/,
     'the turn was cancelled');
$r = $t->turn($sid2, 'and now?');
is($r->{types}[-1], 'end', 'the session goes on');

$t->check_log;
done_testing;
