#!/usr/bin/perl
# MCP server (issue 31, item 1): agent_mcp_server serves a location's
# graphs as MCP tools, driven by the official MCP TypeScript SDK's client
# (npm, unchanged): initialize, tools/list with schemas, tools/call with
# progress, a thread continued, tools inside a graph, an interrupt
# answered with resume, a channel argument, an unknown tool and another
# owner's thread (JSON-RPC errors), a client that goes away mid-run;
# malformed JSON-RPC, a session used by another owner (404) and the
# stateless revision's server/discover; the transport's rules (a foreign
# Origin 403, an unsupported MCP-Protocol-Version 400); then our own
# agent_mcp pointed at it, a graph calling another graph as an MCP tool.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $root = "$FindBin::Bin/..";
my $t = AgentTest->new;
my $sdk = AgentTest::npm('mcp', '@modelcontextprotocol/sdk',
                         '@modelcontextprotocol/sdk@1.32.2');

$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    my $last = $m[$u]{content};
    my @names = map { $_->{function}{name} } @{ $req->{tools} // [] };
    if (grep { $_ eq 'chat' } @names) {
        return { text => 'outer got ' . $m[-1]{content} }
            if $m[-1]{role} eq 'tool';
        return { tools => [ [ 'm1', 'chat', '{"message": "inner"}' ] ] };
    }
    if ($req->{tools}) {
        return { text => 'the tool said ' . $m[-1]{content} }
            if $m[-1]{role} eq 'tool';
        return { tools => [ [ 'c1', 'lookup', '{"q": "x"}' ] ] };
    }
    return { text => 'one two three four five six seven eight',
             pieces => [ map { "$_ " } qw(one two three four five six
                                           seven eight) ],
             delay => 0.4 } if $last eq 'slow';
    my $n = grep { $_->{role} eq 'user' } @m;
    return { text => "Hello, you said $last ($n)" };
});

my $conf = $t->conf(http => <<'HTTP');
agent_tool lookup location=/lookup "description=Looks up";
agent_mcp self url=http://127.0.0.1:%%PORT%%/mcp timeout=10s headers=X-User:svc;
agent_graph chat {
    node model llm;
    edge START model;
    edge model END;
}
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
agent_graph notes {
    channel topic value type=string;
    channel summary value;
    node note template "text=noted {{topic}}" output=summary;
    edge START note;
    edge note END;
}
agent_graph outer {
    node agent llm tools=self.chat;
    node tool tools;
    edge START agent;
    edge agent tool if=tool_calls;
    edge agent END;
    edge tool agent;
}
agent_use_graph outer;
HTTP
$conf =~ s{(location /api/chat/)}{location = /lookup { return 200 "found"; }
    location = /mcp { agent_mcp_server; agent_owner \$http_x_user;
        agent_cors http://ui.example.com; agent_use_graph chat;
        agent_assistants loop approval notes; }
    $1};
$t->run($conf);

my $url = 'http://127.0.0.1:' . $t->port . '/mcp';
my %o = AgentTest::observe("$root/t/mcp/client.mjs", $sdk, $url);

sub text { $_[0]{result}{content}[0]{text} // '' }

ok($o{session} && $o{session} =~ /^[0-9a-f-]{36}\.[0-9a-f]{16}$/,
   'initialize: an Mcp-Session-Id') or diag explain $o{session};
is($o{version}{name}, 'ngx_http_agent_module', '... the server\'s name');
is_deeply([ map { $_->{name} } @{ $o{tools} } ],
          [ qw(chat loop approval notes) ],
          'tools/list: the location\'s graphs');
my ($notes) = grep { $_->{name} eq 'notes' } @{ $o{tools} };
is($notes->{inputSchema}{properties}{message}{type}, 'string',
   '... a message in the input schema');
is($notes->{inputSchema}{properties}{topic}{type}, 'string',
   '... and the graph\'s channels, typed');
ok(!$notes->{inputSchema}{properties}{input}, '... not the turn\'s own');
ok($notes->{outputSchema}{properties}{thread_id}, '... an output schema');

is(text($o{hi}), 'Hello, you said hi (1)', 'tools/call: the answer');
is($o{hi}{result}{structuredContent}{status}, 'success',
   '... structuredContent: success');
ok($o{hi}{result}{structuredContent}{thread_id}, '... and its thread');
ok(scalar @{ $o{hi}{progress} } >= 1, '... progress while it ran');
is($o{hi}{progress}[0]{message}, 'model', '... a step each');
is(text($o{again}), 'Hello, you said again (2)',
   'thread_id: the same conversation');
like(text($o{loop}), qr/^the tool said "?found"?$/,
     'a graph that calls tools');
is($o{ask}{result}{structuredContent}{status}, 'interrupted',
   'an interrupt: status interrupted');
is($o{ask}{result}{structuredContent}{interrupt}{value}, 'Delete the rows?',
   '... what it waits for');
like(text($o{ask}), qr/Delete the rows\?.*"resume"/s,
     '... and how to answer, in the text');
is(text($o{resume}), 'you said yes', 'resume answers it');
is($o{notes}{result}{structuredContent}{values}{summary}, 'noted cats',
   'a channel as an argument; the values in structuredContent');
like($o{bad_arg}{error} // '', qr/inputSchema/, 'an argument that is no '
     . 'input: an error');
is($o{unknown}{code}, -32602, 'an unknown tool: -32602');
like($o{unknown}{error}, qr/Unknown tool: nope/, '... named');
like($o{bob}{error} // '', qr/Thread with ID .* not found/,
     'another owner\'s thread: not found');
is($o{cancel_status}, 202, 'notifications/cancelled: taken');
like($o{cancelled_stream} // '', qr/cancelled/,
     '... the request it names ends, cancelled')
    or diag $o{cancelled_stream};
unlike($o{cancelled_stream} // '', qr/seven eight/,
       '... before its answer was made');
ok($o{abort}{error}, 'the SDK\'s aborted call: aborted')
    or diag explain $o{abort};
ok(!$o{after_cancel}{error}, '... and the thread goes on')
    or diag explain $o{after_cancel};
ok(!$o{after}{error}, 'a client gone mid-run: the thread is free at once')
    or diag explain $o{after};
like(text($o{after}), qr/Hello, you said after/, '... and goes on');

# the wire, by hand
sub rpc {
    my ($body, %h) = @_;
    return $t->http('POST', '/mcp', $body, 'Content-Type' =>
                    'application/json', 'Accept' =>
                    'application/json, text/event-stream', 'X-User' =>
                    'alice', %h);
}
my $r = rpc('{"jsonrpc": "2.0", "id": 1, "method": ');
is($r->{status}, 400, 'bad JSON: 400');
is($r->{json}{error}{code}, -32700, '... parse error');
$r = rpc('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]');
is($r->{json}{error}{code}, -32600, 'a batch: invalid request');
$r = rpc('{"id": 1, "method": "ping"}');
is($r->{json}{error}{code}, -32600, 'no "jsonrpc": invalid request');
$r = rpc('[' x 100000);
is($r->{status}, 400, 'deep nesting: 400');
$r = rpc('{"jsonrpc": "2.0", "id": "x", "method": "resources/list"}');
is($r->{json}{error}{code}, -32601, 'an unknown method: -32601');
is($r->{json}{id}, 'x', '... with the request\'s id');
$r = rpc('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": '
         . '{"name": "chat", "arguments": {"message": 5}}}');
is($r->{json}{error}{code}, -32602, 'a message of the wrong type: -32602');
$r = rpc('{"jsonrpc": "2.0", "method": "notifications/initialized"}');
is($r->{status}, 202, 'a notification: 202');
$r = rpc('{"jsonrpc": "2.0", "method": "tools/call", "params": 5}');
is($r->{status}, 202, 'a notification with bad params: not answered');
$r = rpc('{"jsonrpc": "2.0", "id": null, "method": "ping"}');
is($r->{json}{error}{code}, -32600,
   'an id null: answered (not a notification), invalid request');
$r = $t->http('POST', '/mcp', '{"jsonrpc": "2.0", "id": 9, "method": '
              . '"ping"}', 'Content-Type' => 'application/json');
is($r->{status}, 401, 'no owner: 401');
is($r->{json}{error}{code}, -32000, '... as a JSON-RPC error');

# a message to a thread that waits answers what it waits for
$r = rpc('{"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": '
         . '{"name": "approval", "arguments": {"message": "go"}}}');
my ($wait) = $r->{content} =~ /"thread_id":"([^"]+)"/;
like($r->{content}, qr/"status":"interrupted"/, 'a run that waits');
$r = rpc('{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": '
         . '{"name": "approval", "arguments": {"message": "sure", '
         . '"thread_id": "' . ($wait // '') . '"}}}');
like($r->{content}, qr/you said sure/, '... answered by the next message');

$r = $t->http('GET', '/mcp');
is($r->{status}, 405, 'GET: 405');
$r = rpc('{"jsonrpc": "2.0", "id": 3, "method": "ping"}',
         'Mcp-Session-Id' => $o{session});
is($r->{status}, 200, 'the session of its owner');
$r = rpc('{"jsonrpc": "2.0", "id": 3, "method": "ping"}',
         'Mcp-Session-Id' => $o{session}, 'X-User' => 'bob');
is($r->{status}, 404, 'used by another owner: 404');
$r = rpc('{"jsonrpc": "2.0", "id": 4, "method": "server/discover"}');
ok((grep { $_ eq '2026-07-28' } @{ $r->{json}{result}{supportedVersions} }),
   'server/discover: the stateless revision');

# the transport: a page of another site is refused (its Origin), a
# revision we do not speak too; none sent is 2025-03-26, taken
my $ping = '{"jsonrpc": "2.0", "id": 5, "method": "ping"}';
my $host = '127.0.0.1:' . $t->port;
$r = rpc($ping, 'Origin' => 'http://evil.example.com');
is($r->{status}, 403, 'a foreign Origin: 403');
is($r->{json}{error}{code}, -32000, '... as a JSON-RPC error');
ok(!$r->{headers}{'access-control-allow-origin'}, '... and no CORS header');
is(rpc($ping, 'Origin' => 'http://127.0.0.1:1')->{status}, 403,
   'the same host on another port: 403');
is(rpc($ping, 'Origin' => 'null')->{status}, 403, 'Origin null: 403');
$r = $t->http('DELETE', '/mcp', undef, 'X-User' => 'alice',
              'Origin' => 'http://evil.example.com');
is($r->{status}, 403, '... whatever the method');
is(rpc($ping, 'Origin' => "http://$host")->{status}, 200,
   'the same host\'s Origin: 200');
is(rpc($ping, 'Origin' => "HTTP://$host")->{status}, 200,
   '... in capitals too');
$r = rpc($ping, 'Origin' => 'http://ui.example.com');
is($r->{status}, 200, 'an Origin agent_cors lists: 200');
is($r->{headers}{'access-control-allow-origin'}, 'http://ui.example.com',
   '... named by CORS');
is(rpc($ping)->{status}, 200, 'no Origin: 200');
$r = rpc($ping, 'MCP-Protocol-Version' => '1999-01-01');
is($r->{status}, 400, 'an unsupported MCP-Protocol-Version: 400');
is($r->{json}{error}{code}, -32600, '... invalid request');
like($r->{json}{error}{message}, qr/2025-11-25/, '... naming ours');
for my $v (qw(2026-07-28 2025-11-25 2025-06-18 2025-03-26)) {
    is(rpc($ping, 'MCP-Protocol-Version' => $v)->{status}, 200,
       "MCP-Protocol-Version $v: 200");
}
$r = $t->http('DELETE', '/mcp', undef, 'X-User' => 'alice',
              'Mcp-Session-Id' => $o{session});
is($r->{status}, 204, 'DELETE ends a session');

# a graph that calls another graph through our own MCP client
my $sid = $t->session;
my $chat = $t->http('POST', "/api/chat/$sid/message",
                    encode_json({ message => 'ask inside' }),
                    'Content-Type' => 'application/json',
                    'Accept' => 'application/json');
like($chat->{json}{full_response},
     qr/^outer got .*"answer":"Hello, you said inner \(1\)"/,
     'agent_mcp pointed at agent_mcp_server: a graph as another\'s tool')
    or diag explain $chat;

$t->stop;
$t->check_log;
done_testing;
