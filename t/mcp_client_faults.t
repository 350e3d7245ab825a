#!/usr/bin/perl
# An MCP server that errs, stalls or lies: a 500, an answer that is not
# JSON, an event stream cut halfway, an answer over max_size, a call past
# timeout=.  Each is an error result the model sees and a line in the log,
# never a crash or a hung turn; the session goes on.  The server is
# scripted at the wire (HTTP, JSON-RPC, server-sent events).  Then a server
# of the stateless 2026-07-28 revision: server/discover, no handshake, no
# session, _meta and the version on every request.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use MockLLM;
use JSON::PP;

my $root = AgentTest::root();
my $t = AgentTest->new;
my $json = JSON::PP->new->canonical;

my @tools = map { { name => $_, description => "the $_ tool",
                    inputSchema => { type => 'object' } } }
            qw(err_tool bad_tool cut_tool big_tool slow_tool good_tool);

my $mcp = MockLLM->new(dir => $t->dir, name => 'mcp', script => sub {
    my ($b) = @_;
    my $m = $b->{method} // '';
    my $id = $b->{id};
    my $ok = sub { { status => 200, headers => { 'Mcp-Session-Id' => 's-1' },
                     body => $json->encode({ jsonrpc => '2.0', id => $id,
                                             result => $_[0] }) } };

    return $ok->({ protocolVersion => '2025-06-18', capabilities => {},
                   serverInfo => { name => 'raw', version => '1' } })
        if $m eq 'initialize';
    return { status => 202, body => '' } if $m eq 'notifications/initialized';
    return $ok->({ tools => \@tools }) if $m eq 'tools/list';

    my $tool = $b->{params}{name} // '';
    return { status => 500, body => 'internal error' } if $tool eq 'err_tool';
    return { status => 200, body => 'this is {not json' } if $tool eq 'bad_tool';
    return { chunks => [ "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":",
                         "$id,\"result\":{\"content\":[" ], cut_after => 1 }
        if $tool eq 'cut_tool';
    return { status => 200, body => 'x' x (2 * 1024 * 1024) }
        if $tool eq 'big_tool';
    return { status => 200, delay => 3, body => '{}' } if $tool eq 'slow_tool';
    return $ok->({ content => [ { type => 'text', text => 'fine' } ] });
});

my $mock = $t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    return { text => 'done' } if grep { $_->{role} eq 'tool' } @m[$u .. $#m];
    return { tools => [ [ 'n1', 'now_tool', '{}' ] ] }
        if grep { $_->{function}{name} eq 'now_tool' } @{ $req->{tools} // [] };
    return { tools => [ map { [ "c_$_", $_, '{}' ] }
                        map { $_->{name} } @tools ] };
});

my $modern = MockLLM->new(dir => $t->dir, name => 'modern', script => sub {
    my ($b) = @_;
    my $m = $b->{method} // '';
    my $ok = sub { { status => 200, body => $json->encode({ jsonrpc => '2.0',
                     id => $b->{id}, result => $_[0] }) } };
    return $ok->({ supportedVersions => [ '2026-07-28', '2025-11-25' ],
                   capabilities => { tools => {} },
                   serverInfo => { name => 'modern', version => '1' } })
        if $m eq 'server/discover';
    return $ok->({ tools => [ { name => 'now_tool', inputSchema => {
                       type => 'object' } } ], ttlMs => 60000 })
        if $m eq 'tools/list';
    return $ok->({ resultType => 'complete',
                   content => [ { type => 'text', text => '{"now": 1}' } ] })
        if $m eq 'tools/call';
    return { status => 400, body => 'not in this revision' };
});

# a server whose error text would forge a line of nginx's log
my $forger = MockLLM->new(dir => $t->dir, name => 'forger', script => sub {
    my ($b) = @_;
    return { status => 200, body => $json->encode({ jsonrpc => '2.0',
             id => $b->{id}, error => { code => -32000, message =>
             "no\n2026/01/01 00:00:00 [emerg] forged\r\x7fend" } }) };
});

my $port = $mcp->port;
my $fport = $forger->port;
my $mport = $modern->port;
my $conf = $t->conf(http => <<"HTTP", location => 'agent_use_graph raw;');
agent_prompts $root/prompts;
agent_mcp raw url=http://127.0.0.1:$port/mcp timeout=1s;
agent_mcp modern url=http://127.0.0.1:$mport/mcp;
agent_mcp forger url=http://127.0.0.1:$fport/mcp;
agent_graph forged {
    node agent llm prompt=react_system.md tools=forger.*;
    edge START agent;
    edge agent END;
}
agent_graph modern {
    node agent llm prompt=react_system.md tools=modern.*;
    node tools tools;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
agent_graph raw {
    node agent llm prompt=react_system.md tools=raw.*;
    node tools tools;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
HTTP
$conf =~ s{(location /api/sessions/)}
          {location /modern/ { agent_chat; agent_use_graph modern; }
        location /forged/ { agent_chat; agent_use_graph forged; }
        $1};
$t->run($conf);

my $sid = $t->session;
my $t0 = time;
my $r = $t->turn($sid, 'everything at once');
is($r->{types}[-1], 'end', 'the turn ends') or diag explain $r->{events}[-1];
ok(time - $t0 < 10, 'and did not hang');

my %res = map { $_->{id} => $_->{content} }
          grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
like($res{c_err_tool}{error} // '', qr/MCP server answered an error/,
     'a 500: an error result');
like($res{c_bad_tool}{error} // '', qr/answer could not be read: it is neither JSON nor an event stream/,
     'not JSON: an error result that says so');
like($res{c_cut_tool}{error} // '', qr/answer could not be read: transfer closed/,
     'a stream cut halfway: an error result');
like($res{c_big_tool}{error} // '', qr/larger than max_size/,
     'an answer over max_size: an error result');
like($res{c_slow_tool}{error} // '', qr/could not be reached: Operation timed out/,
     'a call past timeout=: an error result');
is($res{c_good_tool}, 'fine', 'the good tool beside them answers');

my $log = $t->slurp('error.log');
like($log, qr/MCP server "raw": tools\/call "err_tool" failed/,
     'the failures are logged');

$r = $t->turn($sid, 'and again');
is($r->{types}[-1], 'end', 'the session goes on');

# the stateless revision where the server speaks it
$r = $t->stream("/modern/$sid/message", encode_json({ message => 'now' }));
($r) = grep { $_->{type} eq 'tool_result' } @{ $r->{events} };
is_deeply($r->{content}, { now => 1 }, '2026-07-28: the call answered');
my @seen = grep { $_->{event} eq 'request' } $modern->log_lines;
is_deeply([ map { $_->{body}{method} } @seen ],
          [ 'server/discover', 'tools/list', 'tools/call' ],
          '2026-07-28: no handshake, discover then list and call');
my ($call) = grep { $_->{body}{method} eq 'tools/call' } @seen;
is($call->{headers}{'mcp-protocol-version'}, '2026-07-28',
   '2026-07-28: the version header on the call');
is($call->{headers}{'mcp-method'}, 'tools/call', '2026-07-28: Mcp-Method');
ok(!exists $call->{headers}{'mcp-session-id'}, '2026-07-28: no session');
is($call->{body}{params}{_meta}{'io.modelcontextprotocol/protocolVersion'},
   '2026-07-28', '2026-07-28: _meta in the request');
like($call->{body}{params}{_meta}{idempotencyKey} // '', qr/^[0-9a-f]{32}$/,
     '2026-07-28: the call\'s idempotency key in the same _meta');
is($call->{body}{params}{name}, 'now_tool', '2026-07-28: and its params');
like($t->slurp('error.log'), qr/MCP server "modern": 1 tools, protocol 2026-07-28, no session/,
     '2026-07-28: logged');

# a server's error text is one line of the log, its control bytes escaped
$t->stream("/forged/$sid/message", encode_json({ message => 'forge' }));
ok(AgentTest::wait_for(sub { $t->slurp('error.log') =~ /forged/ }, 10),
   'the forging server\'s error is logged');
$log = $t->slurp('error.log');
unlike($log, qr/^2026\/01\/01 00:00:00 \[emerg\] forged/m,
       'but forges no line of the log');
like($log, qr/MCP server "forger" at "[^"]+": initialize failed: no\\x0a2026\/01\/01 00:00:00 \[emerg\] forged\\x0d\\x7fend/,
     'its control bytes written as \\xNN');

$t->check_log;
done_testing;
