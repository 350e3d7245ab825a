#!/usr/bin/perl
# MCP server (issue 50, item 12): tools/call's event stream carries
# notifications/progress per step (a progressToken) and notifications/
# message where a log level is asked for, by the call's _meta (the
# 2026-07-28 way) or by logging/setLevel, whose level the session's id
# keeps; the logging capability; levels checked; the owner's digest holds.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use Digest::MD5 qw(md5_hex);

my $t = AgentTest->new;

$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    return { status => 400 } if $m[-1]{content} eq 'fail';
    return { text => 'the tool said ' . $m[-1]{content} }
        if $m[-1]{role} eq 'tool';
    return { tools => [ [ 'c1', 'lookup', '{"q": "x"}' ] ] };
});

my $conf = $t->conf(http => <<'HTTP');
agent_tool lookup location=/lookup "description=Looks up";
agent_graph loop {
    node agent llm tools=lookup;
    node tool tools;
    edge START agent;
    edge agent tool if=tool_calls;
    edge agent END;
    edge tool agent;
}
agent_graph approval {
    channel plan value 'default="Delete the rows?"';
    channel answer value;
    node ask interrupt value=plan resume=answer;
    node done template "text=you said {{answer}}";
    edge START ask;
    edge ask done;
    edge done END;
}
HTTP
$conf =~ s{(location /api/chat/)}{location = /lookup { return 200 "found"; }
    location = /mcp { agent_mcp_server; agent_owner \$http_x_user;
        agent_use_graph loop; agent_assistants approval; }
    $1};
$t->run($conf);

my $db = $t->dir . '/agent.db';
my $n = 0;

sub rpc {
    my ($method, $params, %h) = @_;
    my $body = encode_json({ jsonrpc => '2.0', id => ++$n,
                             method => $method,
                             $params ? (params => $params) : () });
    return $t->http('POST', '/mcp', $body, 'Accept' =>
                    'application/json, text/event-stream', 'X-User' =>
                    'alice', %h);
}

# tools/call, its event stream: the messages in order
sub call {
    my ($message, $meta, %h) = @_;
    my $body = encode_json({ jsonrpc => '2.0', id => ++$n,
                             method => 'tools/call', params => {
                             name => 'loop',
                             arguments => { message => $message },
                             $meta ? (_meta => $meta) : () } });
    my $r = $t->stream('/mcp', $body, headers => {
        'Accept' => 'application/json, text/event-stream',
        'X-User' => 'alice', %h });
    return ($r, [ map { $_->{_json} } @{ $r->{events} } ]);
}

sub logs { [ grep { ($_->{method} // '') eq 'notifications/message' }
             @{ $_[0] } ] }
sub progress { [ grep { ($_->{method} // '') eq 'notifications/progress' }
                 @{ $_[0] } ] }
sub events { [ map { "$_->{params}{level} $_->{params}{data}{event}" }
               @{ logs($_[0]) } ] }

my $r = rpc('initialize', { protocolVersion => '2025-11-25',
                            capabilities => {},
                            clientInfo => { name => 't', version => '1' } });
is(ref $r->{json}{result}{capabilities}{logging}, 'HASH',
   'initialize: the logging capability');
my $sid = $r->{headers}{'mcp-session-id'};
ok($sid, '... and a session');

# progress alone: a notification per step, no log

my ($s, $m) = call('hi', { progressToken => 'p1' }, 'Mcp-Session-Id' => $sid);
is($s->{headers}{'content-type'}, 'text/event-stream',
   'tools/call: an event stream');
is_deeply([ map { $_->{params}{message} } @{ progress($m) } ],
          [ qw(agent tool agent) ], 'a progress notification per step');
is_deeply([ map { $_->{params}{progress} } @{ progress($m) } ], [ 1, 2, 3 ],
          '... counting up');
is_deeply([ map { $_->{params}{progressToken} } @{ progress($m) } ],
          [ ('p1') x 3 ], '... with the call\'s token');
is(scalar @{ logs($m) }, 0, 'no level asked: no notifications/message');
like($m->[-1]{result}{content}[0]{text}, qr/the tool said "?found/,
     '... and the result last');

# a level in the call's _meta

($s, $m) = call('hi', { 'io.modelcontextprotocol/logLevel' => 'debug',
                        progressToken => 7 });
is_deeply(events($m), [ 'info node_start', 'debug model_start',
                        'info node_start', 'info tool_start',
                        'debug tool_end', 'info node_start',
                        'debug model_start' ],
          '_meta logLevel debug: each step, model call and tool, in order');
my @l = @{ logs($m) };
is($l[0]{params}{logger}, 'loop', '... the graph as the logger');
is($l[1]{params}{data}{model}, 'mock', '... a model call names its model');
is($l[3]{params}{data}{tool}, 'lookup', '... a tool call its tool');
is_deeply([ map { $_->{method} // 'result' } @$m[0 .. 2] ],
          [ 'notifications/message', 'notifications/progress',
            'notifications/message' ],
          '... a step\'s log before its progress');
ok($m->[-1]{result} && !$m->[-1]{result}{isError}, '... the result last');

($s, $m) = call('hi', { 'io.modelcontextprotocol/logLevel' => 'info' });
is_deeply(events($m), [ 'info node_start', 'info node_start',
                        'info tool_start', 'info node_start' ],
          'logLevel info: nothing of debug');

($s, $m) = call('fail', { 'io.modelcontextprotocol/logLevel' => 'error' });
is_deeply(events($m), [ 'error error' ], 'logLevel error: the failure only');
ok(logs($m)->[0]{params}{data}{code}, '... with its code');
ok($m->[-1]{result}{isError}, '... then the error result');

$r = rpc('tools/call', { name => 'loop', arguments => { message => 'x' },
                         _meta => { 'io.modelcontextprotocol/logLevel'
                                    => 'loud' } });
is($r->{json}{error}{code}, -32602, 'an unknown level in _meta: -32602');

# logging/setLevel: the session's id says the level from then on

$r = rpc('logging/setLevel', { level => 'loud' }, 'Mcp-Session-Id' => $sid);
is($r->{json}{error}{code}, -32602, 'logging/setLevel of no level: -32602');
$r = rpc('logging/setLevel', { level => 'debug' }, 'Mcp-Session-Id' => $sid);
is_deeply($r->{json}{result}, {}, 'logging/setLevel: {}');
my $leveled = $r->{headers}{'mcp-session-id'} // '';
like($leveled, qr/^\Q@{[ substr $sid, 0, 37 ]}\E[0-9a-f]{16}0$/,
     '... the session\'s id again, saying the level');

($s, $m) = call('hi', undef, 'Mcp-Session-Id' => $leveled);
is(scalar @{ logs($m) }, 7, 'a call in that session: its log at debug');
($s, $m) = call('hi', { 'io.modelcontextprotocol/logLevel' => 'warning' },
                'Mcp-Session-Id' => $leveled);
is(scalar @{ logs($m) }, 0, '... a call\'s own level goes first');
($s, $m) = call('hi', undef, 'Mcp-Session-Id' => $sid);
is(scalar @{ logs($m) }, 0, 'the first id: no level, no log');

# a session's run is named as before its level: a cancel sent with
# either id finds it
($s, $m) = call('hi', undef, 'Mcp-Session-Id' => $leveled);
my $run = md5_hex("$sid\n$n");
$run =~ s/^(.{8})(.{4})(.{4})(.{4})(.{12})$/$1-$2-$3-$4-$5/;
is($t->sqlite($db, "SELECT count(*) FROM runs WHERE run_id = '$run'"), 1,
   '... the run of a call with a level named by the session alone');

$r = rpc('ping', undef, 'Mcp-Session-Id' => $leveled, 'X-User' => 'bob');
is($r->{status}, 404, 'the leveled id used by another owner: 404');
$r = rpc('ping', undef, 'Mcp-Session-Id' => $sid . '0');
is($r->{status}, 404, 'a level added by hand: 404');
$r = rpc('ping', undef, 'Mcp-Session-Id' => $leveled . '0');
is($r->{status}, 404, 'two levels: 404');

# a client that takes elicitation keeps it with a level
$r = rpc('initialize', { protocolVersion => '2025-11-25',
                         capabilities => { elicitation => {} },
                         clientInfo => { name => 't', version => '1' } });
$r = rpc('logging/setLevel', { level => 'notice' }, 'Mcp-Session-Id' =>
         $r->{headers}{'mcp-session-id'});
my $both = $r->{headers}{'mcp-session-id'} // '';
like($both, qr/e2$/, 'elicitation and a level: both in the id');
my $body = encode_json({ jsonrpc => '2.0', id => ++$n, method => 'tools/call',
                         params => { name => 'approval',
                                     arguments => { message => 'go' } } });
$s = $t->stream('/mcp', $body, stop_after => 2, headers => {
    'Accept' => 'application/json, text/event-stream', 'X-User' => 'alice',
    'Mcp-Session-Id' => $both });
$m = [ map { $_->{_json} } @{ $s->{events} } ];
is_deeply(events($m), [ 'notice interrupt' ],
          '... the wait logged at notice');
is($m->[-1]{method}, 'elicitation/create', '... and the client asked');

$r = rpc('logging/setLevel', { level => 'info' });
is_deeply($r->{json}{result}, {}, 'setLevel without a session: {}');
ok(!$r->{headers}{'mcp-session-id'}, '... and no session made');

$t->stop;
$t->check_log;
done_testing;
