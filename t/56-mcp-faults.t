#!/usr/bin/perl
# An MCP server that errs, stalls or lies: a 500, an answer that is not
# JSON, an event stream cut halfway, an answer over max_size, a call past
# timeout=.  Each is an error result the model sees and a line in the log,
# never a crash or a hung turn; the session goes on.  The server is
# scripted at the wire (HTTP, JSON-RPC, server-sent events).

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
    return { tools => [ map { [ "c_$_", $_, '{}' ] }
                        map { $_->{name} } @tools ] };
});

my $port = $mcp->port;
$t->run($t->conf(http => <<"HTTP", location => 'agent_use_graph raw;'));
agent_prompts $root/prompts;
agent_mcp raw url=http://127.0.0.1:$port/mcp timeout=1s;
agent_graph raw {
    node agent llm prompt=react_system.md tools=raw.*;
    node tools tools;
    edge START agent;
    edge agent tools if=tool_calls;
    edge agent END;
    edge tools agent;
}
HTTP

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

$t->check_log;
done_testing;
