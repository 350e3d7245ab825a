#!/usr/bin/perl
# Usage where an operator looks: the turn's end event sums every model
# call (cached and cache-write tokens too), the session keeps running
# totals, and the $agent_ variables give them to log_format.  Anthropic's
# prompt cache: breakpoints only with cache=on.  agent_model's own checks.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;
my $query = 'SELECT COUNT(*) AS n FROM csv_data';

my $mock = $t->mock(sub {
    my ($body, $n) = @_;
    my $last = $body->{messages}[-1]{content}[0] // {};
    return { text => 'Plain.' } if ($last->{text} // '') eq 'no cache';
    return { tools => [ [ 'toolu_1', 'execute_sql_query',
                          encode_json({ query => $query }) ] ],
             usage => { prompt => 1200, completion => 20,
                        cache_write => 1000 } }
        if ($last->{type} // '') eq 'text';
    return { text => 'Done.', pieces => [ 'Do', 'ne.' ],
             usage => { prompt => 1300, completion => 5, cached => 1000,
                        cache_write => 100 } };
}, format => 'anthropic');

my $vars = join '|', map { "\$agent_$_" }
    qw(session model prompt_tokens completion_tokens cached_tokens
       tool_calls llm_time ttft);
my $conf = $t->conf(http => "log_format agent '$vars';\n"
    . "agent_model nocache provider=anthropic url=http://127.0.0.1:%%MOCK%% "
    . "cache=off;", location => 'access_log %%DIR%%/agent.log agent; '
    . 'client_max_body_size 16m;');
$conf =~ s{agent_model mock [^;]*;}
          {agent_model claude provider=anthropic url=http://127.0.0.1:%%MOCK%% model=claude-x;};
$t->run($conf);

my $sid = $t->session;
$t->http('POST', "/api/sessions/$sid/resources?name=c.csv", "a,b\n1,2\n",
         'Content-Type' => 'text/csv');

my $r = $t->turn($sid, 'Count them');
my $end = $r->{events}[-1];
is($end->{type}, 'end', 'the turn ends');
is_deeply($end->{usage}, { prompt_tokens => 2500, completion_tokens => 25,
                           cached_tokens => 1000,
                           cache_creation_tokens => 1100 },
          'end: usage of both calls, cache reads and writes');

my @req = $mock->requests;
ok(encode_json($req[1]{body}) =~ /cache_control/, 'cache=on: breakpoints');

$r = $t->turn($sid, { message => 'no cache', model => 'nocache' });
is($r->{events}[-1]{full_response}, 'Plain.', 'a turn on the cache=off model');
@req = $mock->requests;
ok(encode_json($req[-1]{body}) !~ /cache_control/, 'cache=off: none');

$r = $t->http('GET', "/api/sessions/$sid");
is_deeply($r->{json}{usage}, { prompt_tokens => 2510,
                               completion_tokens => 30,
                               cached_tokens => 1000 },
          'the session: running totals of both turns');

$t->http('GET', "/api/chat/$sid/model");

# images: refused before anything goes upstream
my $before = () = $mock->requests;
my $img = sub { { mime_type => $_[0], data => $_[1] // 'iVBORw0KGgo=' } };
my @cases = (
    [ [ $img->('image/bmp') ], 400, qr/png, image\/jpeg, image\/webp/ ],
    [ [ $img->('image/png', 'data:image/png;base64,AAAA') ], 400,
      qr/must be base64/ ],
    [ [ map { $img->('image/png') } 1 .. 9 ], 400, qr/at most 8 images/ ],
    [ [ { data => 'AAAA' } ], 400, qr/"mime_type"/ ],
    [ [ $img->('image/jpeg', 'A' x (7 * 1024 * 1024)) ], 413,
      qr/larger than 5 MB/ ],
);
for my $c (@cases) {
    my $r = $t->http('POST', "/api/chat/$sid/message",
                     { message => 'look', images => $c->[0] });
    is($r->{status}, $c->[1], "images: $c->[1]");
    like($r->{json}{error}, $c->[2], '... says why');
}
is(scalar(() = $mock->requests), $before, 'nothing of them sent upstream');
$r = $t->turn($sid, { message => 'no cache', model => 'nocache',
                      images => [ $img->('IMAGE/WebP',
                                         'UklGRhoAAABXRUJQVlA4TA==') ] });
is($r->{events}[-1]{type}, 'end', 'a webp image is taken');
my ($sent) = grep { $_->{type} eq 'image' }
             map { ref $_->{content} ? @{ $_->{content} } : () }
             @{ ($mock->requests)[-1]{body}{messages} };
is($sent->{source}{media_type}, 'image/webp',
   '... its type sent in lower case, as Anthropic requires');
$t->http('GET', "/api/chat/$sid/model");
$t->stop;

my @log = grep { /\S/ } split /\n/, $t->slurp('agent.log');
is(scalar @log, 10, 'every request logged');
my @f = split /\|/, $log[0];
is($f[0], $sid, '$agent_session');
is($f[1], 'claude', '$agent_model');
is_deeply([ @f[2 .. 5] ], [ 2500, 25, 1000, 1 ],
          '$agent_prompt_tokens, completion, cached, tool calls');
like($f[6], qr/^\d+\.\d{3}$/, '$agent_llm_time in seconds');
like($f[7], qr/^\d+\.\d{3}$/, '$agent_ttft in seconds');
# $agent_ttft counts from the turn's start, so the store's work before the
# first model call (a round trip to PostgreSQL) is in it and not in
# $agent_llm_time: no order between the two holds
ok($f[7] > 0 && $f[7] < 10, 'the first token: a time of this turn');
@f = split /\|/, $log[1];
is($f[1], 'nocache', '$agent_model: the model of the message');
is($log[2], join('|', ('-') x 8), 'no turn: the variables are empty');
like($log[3], qr/^-\|/, 'a refused message: no turn either');
$t->check_log;

# agent_model's checks: each names the file and the line
my @bad = (
    [ 'provider=bedrock',
      qr/invalid value "bedrock" in "provider=bedrock" of agent_model "bad"/ ],
    [ 'provider=openai url=http://x fallback=nowhere',
      qr/unknown fallback model "nowhere" in .*nginx.conf:\d+/ ],
    [ 'provider=openai url=http://x retries=many',
      qr/invalid value "many" in "retries=many"/ ],
    [ 'provider=openai url=http://x "headers=Bad Name:1"',
      qr/invalid value "Bad Name:1" in "headers=Bad Name:1"/ ],
    [ 'provider=openai url=http://x first_token_timeout=soon',
      qr/invalid value "soon" in "first_token_timeout=soon"/ ],
    [ 'provider=gemini url=ftp://x', qr/needs "url=http/ ],
);
for my $b (@bad) {
    my $u = AgentTest->new;
    $u->mock(sub { {} });
    $u->write_conf($u->conf(http => "agent_model bad $b->[0];"));
    my ($ok, $out) = $u->test_conf;
    ok(!$ok, "nginx -t refuses $b->[0]");
    like($out, $b->[1], '... and says why');
    like($out, qr/nginx\.conf:\d+/, '... and where');
}

my $u = AgentTest->new;
$u->mock(sub { {} });
$u->write_conf($u->conf(http => join "\n",
    'agent_model a provider=openai url=http://x fallback=b;',
    'agent_model b provider=openai url=http://x fallback=a;'));
my ($ok, $out) = $u->test_conf;
ok(!$ok && $out =~ /its fallbacks come back to it/, 'a fallback loop refused');

$u->write_conf($u->conf(http => join "\n",
    'agent_model g provider=gemini key_env=GEMINI_API_KEY max_tokens=512 '
    . 'headers=X-Goog-User-Project:proj,X-Trace:1 retries=0;',
    'agent_model c provider=anthropic connect_timeout=2s '
    . 'first_token_timeout=30s idle_timeout=20s timeout=2m backoff=1s;'));
($ok, $out) = $u->test_conf;
ok($ok, 'default URLs and every parameter accepted') or diag($out);

done_testing;
