#!/usr/bin/perl
# A pass made again gets only its own answers (issue 48, item 9).  With
# NGX_AGENT_STORE_DEFER=1 the SQLite store answers later, as PostgreSQL
# does: every request makes its passes again and takes the answers kept
# in its call by position.  Sessions, a chat turn, the LangGraph API
# (threads, a run, state, store items) and A2A answer as they do without
# it.  With NGX_AGENT_STORE_DEFER=astray a pass made again asks for its
# answers with another key: each is refused with an [alert], the request
# is a 500, and no row is handed to a request that did not ask for it.
# On both stores (make test-pg: "astray" there too).

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my @u = grep { $_->{role} eq 'user' } @{ $req->{messages} };
    return { text => 'you said ' . $u[-1]{content} . ' (' . @u . ')' };
});

my $conf = $t->conf(http => <<'HTTP');
agent_graph chat {
    node model llm;
    edge START model;
    edge model END;
}
agent_graph echo {
    channel note value;
    output note;
    node say template output=note "text=noted {{note}}";
    edge START say;
    edge say END;
}
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
        agent_use_graph echo; }
    location /a2a/ { agent_a2a; agent_use_graph chat; }
    $1};

sub lg { my ($m, $p, $b) = @_; return $t->http($m, "/lg$p", $b) }

# --- answers kept and given back: every endpoint as without it ------------

$ENV{NGX_AGENT_STORE_DEFER} = 1;
$t->run($conf);
like($t->slurp('nginx.conf'), qr/^env NGX_AGENT_STORE_DEFER;/m,
     'the knob reaches the workers by env');

my $id = $t->session(title => 'kept');
my $r = $t->http('GET', "/api/sessions/$id");
is($r->{status}, 200, 'a session read');
is($r->{json}{title}, 'kept', '... its own row');
$r = $t->http('GET', '/api/sessions/');
ok((grep { $_->{id} eq $id } @{ $r->{json}{sessions} // $r->{json} }),
   'the sessions listed');

for my $n (1, 2) {
    my $s = $t->turn($id, "turn $n");
    is($s->{types}[-1], 'end', "turn $n ends") or diag $s->{raw};
    is($s->{text}, "you said turn $n ($n)", '... its answer, the history '
       . 'kept');
}
$r = $t->http('GET', "/api/sessions/$id/messages");
is(scalar @{ $r->{json}{messages} }, 4, 'four messages kept');

my $th = lg('POST', '/threads', {})->{json}{thread_id};
ok($th, 'a thread');
$r = lg('POST', "/threads/$th/runs/wait",
        { assistant_id => 'echo', input => { note => 'one' } });
is($r->{status}, 200, 'a run');
is_deeply($r->{json}, { note => 'noted one' }, '... its output');
$r = lg('GET', "/threads/$th/state");
is($r->{json}{values}{note}, 'noted one', "the thread's state");
$r = lg('GET', "/threads/$th/runs");
is(scalar @{ $r->{json} }, 1, 'its run listed');
is($r->{json}[0]{status}, 'success', '... done');

$r = lg('PUT', '/store/items', { namespace => [ 'users', 'u1' ],
                                  key => 'prefs', value => { tone => 'dry' } });
is($r->{status}, 204, 'an item put');
$r = $t->http('GET', '/lg/store/items?namespace=users.u1&key=prefs');
is($r->{json}{value}{tone}, 'dry', '... and read back');

$r = $t->http('POST', '/a2a/', encode_json({ jsonrpc => '2.0', id => 1,
    method => 'message/send', params => { message => {
        kind => 'message', role => 'user', messageId => 'm1',
        parts => [ { kind => 'text', text => 'hello' } ] } } }));
is($r->{json}{result}{status}{state}, 'completed', 'an A2A task')
    or diag $r->{content};
is($r->{json}{result}{artifacts}[0]{parts}[0]{text}, 'you said hello (1)',
   '... its answer');

is($t->http('DELETE', "/api/sessions/$id")->{status}, 204,
   'the session deleted');
is($t->http('GET', "/api/sessions/$id")->{status}, 404, '... gone');

$t->check_log;
$t->stop;

# --- a pass that asks differently: refused, loudly -------------------------

$ENV{NGX_AGENT_STORE_DEFER} = 'astray';
unlink "$t->{dir}/error.log";
$t->run($conf);

$r = $t->http('POST', '/api/sessions/', { title => 'astray' });
is($r->{status}, 500, 'a session made, its pass made again asks '
   . 'differently: 500');
$r = lg('GET', "/threads/$th");
is($r->{status}, 500, 'a thread read: 500');
unlike($r->{content}, qr/\Q$th\E/, '... none of its row');
$r = $t->http('GET', '/lg/store/items?namespace=users.u1&key=prefs');
is($r->{status}, 500, 'an item read: 500');
unlike($r->{content}, qr/dry/, '... none of its value');

my @alerts = grep { /\[alert\].*asked for operation .* refused/ }
             split /\n/, $t->slurp('error.log');
ok(@alerts >= 3, 'each refusal an [alert] in the log') or diag @alerts;

$t->check_log(allow => qr/asked for operation .* refused/);

done_testing();
