#!/usr/bin/perl
# The official MCP conformance suite (@modelcontextprotocol/conformance,
# npm) against agent_mcp_server: every server scenario passes but those
# t/conformance/mcp.exceptions lists, each with its reason; one listed
# that passes fails too (the list stays true).  Run by mcp.sh.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use AgentTest;

my $kit = AgentTest::npm('conformance', '@modelcontextprotocol/conformance',
                         '@modelcontextprotocol/conformance@0.1.16',
                         'node@22.23.3');
my $node = "$kit/node_modules/.bin/node";
my $cli = "$kit/node_modules/\@modelcontextprotocol/conformance/dist/"
          . 'index.js';

# the suite needs Node 22 (Debian's is older): npm's node package
like(`$node --version 2>&1` // '', qr/^v22\./, 'Node 22, from npm');

my $t = AgentTest->new;
$t->mock(sub { return { text => 'hello from the graph' } });

# served as docs/protocols.md says: only under its own names, with a
# default server that refuses any other Host (DNS rebinding)
my $conf = $t->conf(http => <<'HTTP');
agent_graph chat {
    node model llm;
    edge START model;
    edge model END;
}
agent_graph notes {
    channel topic value type=string;
    node note template "text=noted {{topic}}";
    edge START note;
    edge note END;
}
server {
    listen 127.0.0.1:%%PORT%%;
    server_name localhost 127.0.0.1;
    location = /mcp { agent_mcp_server; agent_use_graph chat;
                      agent_assistants notes; }
}
HTTP
$conf =~ s{listen 127.0.0.1:%%PORT%%;\n        location /api}
          {listen 127.0.0.1:%%PORT%% default_server;
        location / { return 421; }
        location /api};
$t->run($conf);

my $url = 'http://localhost:' . $t->port . '/mcp';
my $out = $t->dir . '/results';

my $rc = system('timeout', '600', $node, $cli, 'server', '--url', $url,
                '--suite', 'all',
                '--expected-failures', "$FindBin::Bin/mcp.exceptions",
                '-o', $out);

is($rc, 0, 'the MCP conformance suite: every scenario passes but the '
   . 'listed exceptions, and each listed one fails');

# a listed scenario fails only for what the fixture server alone has: a
# tool of its, or a method of resources, prompts or completion
my (%failed, @astray);
for my $f (glob "$out/server-*/checks.json") {
    my ($name) = $f =~ m{/server-(.+)-\d{4}-\d\d-\d\dT[^/]+/checks\.json$};
    my $checks = decode_json(AgentTest::slurp_file($f));
    for my $c (grep { $_->{status} =~ /^(FAILURE|WARNING)$/ } @$checks) {
        $failed{$name} = 1;
        my $why = $c->{errorMessage} // '';
        push @astray, "$name: $why"
            unless $why =~ /Unknown\ tool:\ test_
                            | Tool\ 'json_schema_2020_12_tool'\ not\ found
                            | Method\ not\ found:\ (resources|prompts
                                                   |completion)\//x;
    }
}
ok(%failed, 'the suite\'s results read');
ok(!@astray, 'each exception fails for the fixture server\'s names alone')
    or diag(join "\n", @astray);

$t->check_log;
done_testing;
