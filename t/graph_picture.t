#!/usr/bin/perl
# GET {sessions location}/_graph: the location's graph, its channels and
# nodes, and a mermaid picture of it; every shipped graph, and the one
# drawn in docs/graphs.md is the one the module draws.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

open my $fh, '<', AgentTest->root . '/docs/graphs.md' or die $!;
my $docs = do { local $/; <$fh> };
close $fh;

for my $g (qw(react tool_rounds data_scientist planner_verifier
              sql_assistant memory))
{
    my $t = AgentTest->new;
    $t->mock(sub { { text => 'x' } });
    $t->run($t->graph_conf($g));

    my $r = $t->http('GET', '/api/sessions/_graph');
    is($r->{status}, 200, "$g: 200");
    my $j = $r->{json};
    is($j->{name}, $g, "$g: named");
    is_deeply([ map { $_->{name} } @{ $j->{channels} }[0 .. 2] ],
              [qw(messages input session_id)], "$g: the built-in channels");
    like($j->{mermaid}, qr/^graph TD;\n    __start__\(\[START\]\)/,
         "$g: a mermaid flowchart");
    for my $n (@{ $j->{nodes} }) {
        like($j->{mermaid}, qr/    \Q$n->{name}\E\["\Q$n->{name} ($n->{kind})\E"\]/,
             "$g: node $n->{name} drawn");
    }
    like($j->{mermaid}, qr/ --> __end__;/, "$g: END drawn");

    my $block = "```mermaid\n$j->{mermaid}```";
    ok(index($docs, $block) >= 0, "$g: docs/graphs.md draws it as it is");

    is($t->http('POST', '/api/sessions/_graph', {})->{status}, 405,
       "$g: GET only");
    $t->check_log;
    $t->stop;
}

# a node named as a mermaid word gets another id, and keeps its label
my $t = AgentTest->new;
$t->mock(sub { { text => 'x' } });
$t->run($t->conf(http => <<'G'));
agent_graph words {
    node end template text=bye;
    node graph template text=hi;
    edge START graph;
    edge graph end;
    edge end END;
}
agent_use_graph words;
G
my $m = $t->http('GET', '/api/sessions/_graph')->{json}{mermaid};
like($m, qr/\n    end_\["end \(template\)"\]\n/, 'a node "end" is drawn as end_');
like($m, qr/\n    graph_ --> end_;\n/, 'and its edges use that id');
is($t->turn($t->session, 'hello')->{events}[-1]{full_response}, 'bye',
   'the graph runs');
$t->check_log;
$t->stop;

# then=: a part of other nodes' steps is named in their box, not drawn
$t = AgentTest->new;
$t->mock(sub { { text => 'x' } });
$t->run($t->conf(http => <<'G'));
agent_graph parts {
    channel note value;
    node talk llm then=mark;
    node mark template output=note text=seen;
    edge START talk;
    edge talk END;
}
agent_use_graph parts;
G
$m = $t->http('GET', '/api/sessions/_graph')->{json}{mermaid};
like($m, qr/\n    talk\["talk \(llm, then mark\)"\]\n/,
     'a node with then= names its parts');
unlike($m, qr/mark\[/, '... which are not drawn');
$t->check_log;
$t->stop;

# the smallest graphs: the picture's fixed lines are counted in its size
# (one node of a short name wrote 18 bytes past it: make test-asan,
# t/routes_hostile.t)
for my $name (qw(m model)) {
    $t = AgentTest->new;
    $t->mock(sub { { text => 'x' } });
    $t->run($t->conf(http => <<"G"));
agent_graph one {
    node $name llm;
    edge START $name;
    edge $name END;
}
agent_use_graph one;
G
    for (1 .. 20) {
        $m = $t->http('GET', '/api/sessions/_graph')->{json}{mermaid} // '';
        last unless $m =~ /classDef last fill:#bfb6fc\n\z/;
    }
    is($m, "graph TD;\n    __start__([START]):::first\n"
           . "    $name\[\"$name (llm)\"]\n    __end__([END]):::last\n"
           . "    __start__ --> $name;\n    $name --> __end__;\n"
           . "    classDef default fill:#f2f0ff,line-height:1.2\n"
           . "    classDef first fill-opacity:0\n"
           . "    classDef last fill:#bfb6fc\n",
       "a graph of one node \"$name\": the whole picture, 20 times");
    $t->check_log;
    $t->stop;
}

done_testing;
