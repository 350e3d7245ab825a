#!/usr/bin/perl
# What LangGraph's clients expect of agent_langgraph_api's shapes (issue
# 30, item 2): a tool's result that is text is a plain string, not JSON
# text; a run whose input has no message ("messages": []) runs, not 413.

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
    my @m = @{ $req->{messages} };
    return { text => 'done' } if grep { $_->{role} eq 'tool' } @m;
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
HTTP
$conf =~ s{(location /api/chat/)}{location = /lookup { return 200 "tool_call__begin"; }
    location /lg/ { agent_langgraph_api; agent_use_graph loop; }
    $1};
$t->run($conf);

sub lg { my ($m, $p, $b) = @_; return $t->http($m, "/lg$p", $b) }

my $th = lg('POST', '/threads', {})->{json}{thread_id};
my $r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'loop',
    input => { messages => [ { role => 'user', content => 'go' } ] } });
is($r->{status}, 200, 'a run with a tool call');
my ($tool) = grep { $_->{type} eq 'tool' } @{ $r->{json}{messages} };
is($tool->{content}, 'tool_call__begin',
   'a tool result that is text is a plain string');
is($r->{json}{messages}[-1]{content}, 'done', 'the model answered after');

$r = lg('GET', "/threads/$th/state");
($tool) = grep { $_->{type} eq 'tool' } @{ $r->{json}{values}{messages} };
is($tool->{content}, 'tool_call__begin', 'in the state too');

$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'loop',
    input => { messages => [] } });
isnt($r->{status}, 413, 'an input with no message is no size limit');
is($r->{status}, 200, '... it runs');

done_testing;
