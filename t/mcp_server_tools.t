#!/usr/bin/perl
# MCP gateway (issue 31, item 1): agent_mcp_server_tools serves agent_tool
# locations as tools of an MCP server location besides its graphs, driven
# by the official MCP TypeScript SDK's client: tools/list has each with its
# description and input schema; tools/call is the tool's subrequest (the
# arguments parsed and written anew, as a turn's call), its answer as text
# and, a JSON object, structuredContent; a location that fails is an error
# result, not a protocol error; the owner's check holds; nginx -t refuses
# a name that is no location's tool, or a graph's too.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use MockLLM;
use JSON::PP;

my $root = "$FindBin::Bin/..";
my $t = AgentTest->new;
my $sdk = AgentTest::npm('mcp', '@modelcontextprotocol/sdk',
                         '@modelcontextprotocol/sdk@1.32.2');

$t->mock(sub { { text => 'Hello from the graph' } });

# the service behind the weather tool: it answers what it was sent
my $svc = MockLLM->new(dir => $t->dir, name => 'svc', script => sub {
    my ($body) = @_;
    return { status => 200, body => encode_json({ got => $body,
                                                  sky => 'clear' }) };
});
my $sp = $svc->port;

my $conf = $t->conf(http => <<"HTTP");
agent_tool weather location=/internal/weather "description=The weather";
agent_tool plain location=/internal/plain "description=Plain text";
agent_tool broken location=/internal/broken;
agent_tool hidden location=/internal/plain;
agent_graph chat {
    node model llm;
    edge START model;
    edge model END;
}
HTTP
$conf =~ s{(location /api/chat/)}{location /internal/weather { internal;
        proxy_pass http://127.0.0.1:$sp/weather; }
    location /internal/plain { internal; return 200 "just text"; }
    location /internal/broken { internal; return 503 "down for now"; }
    location = /mcpgw { agent_mcp_server; agent_owner \$http_x_user;
        agent_use_graph chat;
        agent_mcp_server_tools weather plain broken; }
    $1};
$t->run($conf);

my $url = 'http://127.0.0.1:' . $t->port . '/mcpgw';
my %o = AgentTest::observe("$root/t/mcp/gateway.mjs", $sdk, $url);

sub text { $_[0]{result}{content}[0]{text} // '' }

is_deeply([ map { $_->{name} } @{ $o{tools} } ],
          [ qw(chat weather plain broken) ],
          'tools/list: the graph, then the agent_tool locations named')
    or diag explain [ map { $_->{name} } @{ $o{tools} } ];
my ($w) = grep { $_->{name} eq 'weather' } @{ $o{tools} };
is($w->{description}, 'The weather', '... with the tool\'s description');
is($w->{inputSchema}{type}, 'object', '... and its input schema');
ok(!grep({ $_->{name} eq 'hidden' } @{ $o{tools} }),
   'a tool not named is not served');

my $got = eval { decode_json(text($o{weather})) } // {};
is_deeply($got->{got}, { city => 'Oslo', days => 2 },
          'tools/call: the location got the arguments')
    or diag explain $o{weather};
is($o{weather}{result}{structuredContent}{sky}, 'clear',
   '... its JSON answer as structuredContent');
ok(!$o{weather}{result}{isError}, '... not an error');
is(text($o{text}), 'just text', 'a text answer as text')
    or diag explain $o{text};
ok(!$o{text}{result}{structuredContent}, '... no structuredContent');
ok($o{broken}{result}{isError}, 'a location that fails: an error result')
    or diag explain $o{broken};
like(text($o{broken}), qr/down for now/, '... with what it said');
like(text($o{graph}), qr/Hello from the graph/, 'the graph still a tool');
like($o{unknown}{error} // '', qr/Unknown tool: nope/,
     'an unknown tool: an error');

my @asked = $svc->requests;
is(scalar @asked, 1, 'the service called once');

# the wire, by hand
sub rpc {
    my ($body, %h) = @_;
    return $t->http('POST', '/mcpgw', $body, 'Content-Type' =>
                    'application/json', 'Accept' =>
                    'application/json, text/event-stream', %h);
}
my $r = rpc('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
            . '{"name": "weather", "arguments": {}}}');
is($r->{status}, 401, 'no owner: 401');
$r = rpc('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": '
         . '{"name": "weather", "arguments": [1, 2]}}', 'X-User' => 'bob');
is($r->{json}{error}{code}, -32602, 'arguments not an object: -32602');
$r = rpc('{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": '
         . '{"name": "plain"}}', 'X-User' => 'bob');
is($r->{json}{result}{content}[0]{text}, 'just text',
   'no arguments: an empty object') or diag explain $r;
is($r->{json}{id}, 3, '... answered with the request\'s id');

$t->stop;
$t->check_log;

# nginx -t: a name that is no location's tool, or a graph's too, or the
# directive outside an MCP server location
sub refused {
    my ($name, $bad, $re) = @_;
    $t->write_conf($bad);
    my ($ok, $out) = $t->test_conf;
    ok(!$ok, "$name: nginx -t fails");
    like($out, $re, "$name: the message says why");
}
(my $bad = $conf) =~ s{agent_mcp_server_tools weather plain broken;}
                      {agent_mcp_server_tools weather nope;};
refused('an unknown tool', $bad, qr/"nope" is not a tool of agent_tool/);
($bad = $conf) =~ s{agent_mcp_server_tools weather plain broken;}
                   {agent_mcp_server_tools chat;};
$bad =~ s{(agent_tool weather )}{agent_tool chat location=/internal/plain;\n$1};
refused('a graph\'s name', $bad, qr/"chat" is a graph of this location/);
($bad = $conf) =~ s{(location /api/chat/ \{ agent_chat;)}
                   {$1 agent_mcp_server_tools plain;};
refused('another kind of location', $bad,
        qr/only in a location of agent_mcp_server/);

done_testing;
