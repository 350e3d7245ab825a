#!/usr/bin/perl
# The graph language of contract v2 under nginx -t: every rejection the
# contract lists fails the test and names the file and the right line;
# valid graphs, conditions and the shipped conf/graphs/ files pass.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
my $root = AgentTest->root;
mkdir $t->dir . '/prompts';
open my $fh, '>', $t->dir . '/prompts/p.md' or die;
print $fh "A prompt: {{input}}\n";
close $fh;
# the built-in react graph reads its prompt from agent_prompts too
system('cp', "$root/prompts/react_system.md", $t->dir . '/prompts/') == 0
    or die;

my $ok_graph = <<'G';
    channel a sum;
    channel b value;
    node one template text=hi;
    edge START one;
    edge one END;
G

# nginx -t on http text; the line of the first line holding $mark
sub check {
    my ($http, %o) = @_;
    $t->write_conf($t->conf(http => "agent_prompts %%DIR%%/prompts;\n$http",
                            location => $o{location} // ''));
    my ($ok, $out) = $t->test_conf;
    my $line;
    if (defined $o{mark}) {
        open my $c, '<', $t->dir . '/nginx.conf' or die;
        my @l = <$c>;
        close $c;
        ($line) = grep { index($l[$_ - 1], $o{mark}) >= 0 } 1 .. @l;
    }
    return ($ok, $out, $line);
}

sub rejected {
    my ($name, $http, $mark, $words, %o) = @_;
    my ($ok, $out, $line) = check($http, mark => $mark, %o);
    ok(!$ok, "$name: nginx -t fails");
    like($out, $words, "$name: says why") or diag $out;
    like($out, qr/in \S+nginx\.conf:\Q$line\E\n/,
         "$name: names the file and line $line") or diag $out;
}

sub graph { "agent_graph g {\n$_[0]}\n" }

rejected('unknown kind', graph("    node x wizard;\n    edge START x;\n"
                               . "    edge x END;\n"),
         'node x wizard', qr/unknown node kind "wizard"/);

rejected('unknown reducer', graph("    channel c average;\n$ok_graph"),
         'channel c average', qr/unknown reducer "average"/);

rejected('unknown node parameter',
         graph("    node x template text=x colour=red;\n    edge START x;\n"
               . "    edge x END;\n"),
         'colour=red', qr/unknown parameter "colour" of node "x"/);

rejected('unknown channel parameter',
         graph("    channel c value colour=red;\n$ok_graph"),
         'channel c value colour', qr/unknown parameter "colour" of channel "c"/);

rejected('edge to an undeclared node',
         graph("$ok_graph    edge one nowhere;\n"),
         'edge one nowhere', qr/edge to the undeclared node "nowhere"/);

rejected('edge from an undeclared node',
         graph("$ok_graph    edge ghost one;\n"),
         'edge ghost one', qr/edge from the undeclared node "ghost"/);

rejected('no START edge',
         graph("    node one template text=x;\n    edge one END;\n"),
         'agent_graph g', qr/exactly one "edge START NODE;", it has 0/);

rejected('two START edges',
         graph("$ok_graph    edge START one;\n"),
         'agent_graph g', qr/exactly one "edge START NODE;", it has 2/);

rejected('a node no edge leaves',
         graph("$ok_graph    node two template text=x;\n"),
         'node two template', qr/no edge leaves the node "two"/);

rejected('a last edge with if=',
         graph("    channel ok value;\n    node one template text=x;\n"
               . "    edge START one;\n    edge one END if=ok;\n"),
         'node one template', qr/last edge leaving the node "one" has an if=/);

rejected('END unreachable',
         graph("    node a template text=x;\n    node b template text=y;\n"
               . "    node c template text=z;\n    edge START a;\n"
               . "    edge a END;\n    edge b c;\n    edge c b;\n"),
         'node b template', qr/END cannot be reached from the node "b"/);

for my $bad ('"if=a &&"', '"if=(a"', '"if=a ==="', "\"if='open\"",
             '"if=a b"', '"if=a.b."')
{
    rejected("if= that does not parse: $bad",
             graph("    channel a value;\n    node one template text=x;\n"
                   . "    edge START one;\n    edge one one $bad;\n"
                   . "    edge one END;\n"),
             "edge one one", qr/does not parse/);
}

rejected('if= naming an undeclared channel',
         graph("    node one template text=x;\n    edge START one;\n"
               . "    edge one one \"if=missing > 1\";\n    edge one END;\n"),
         'edge one one', qr/unknown channel "missing"/);

rejected('a missing prompt file',
         graph("    node m llm prompt=nope.md;\n    edge START m;\n"
               . "    edge m END;\n"),
         'node m llm', qr/nope\.md/);

rejected('an unknown graph in agent_use_graph', graph($ok_graph),
         'agent_use_graph nowhere', qr/unknown graph "nowhere"/,
         location => 'agent_use_graph nowhere;');

rejected('count= of a channel that is not a sum',
         graph("    channel b value;\n    node one template text=x count=b;\n"
               . "    edge START one;\n    edge one END;\n"),
         'count=b', qr/count=b .* names no sum channel/);

rejected('agent_input of a channel the graph lacks',
         graph($ok_graph) . "agent_use_graph g;\n",
         'agent_input who', qr/has no channel "who"/,
         location => 'agent_input who $remote_user;');

rejected('an unknown stream format', '', 'agent_stream',
         qr/unknown format "smoke signals"/,
         location => 'agent_stream "smoke signals";');

rejected('a duplicate channel',
         graph("$ok_graph    channel b value; # again\n"),
         '# again', qr/channel "b" is declared twice/);

rejected('a built-in channel declared again',
         graph("    channel messages value;\n$ok_graph"),
         'channel messages', qr/channel "messages" is declared twice/);

rejected('a duplicate node',
         graph("$ok_graph    node one template text=y;\n"),
         'text=y', qr/node "one" is declared twice/);

rejected('a node named START',
         graph("    node START template text=x;\n$ok_graph"),
         'node START', qr/"START" is a reserved node name/);

rejected('a default that is not JSON',
         graph("    channel d value default=nope;\n$ok_graph"),
         'default=nope', qr/default of channel "d" is not valid JSON/);

rejected('an unknown tool', graph("    node m llm tools=teleport;\n"
                                   . "    edge START m;\n    edge m END;\n"),
         'tools=teleport', qr/there is no tool "teleport"/);

rejected('output= of an undeclared channel',
         graph("    node t template text=x output=nowhere;\n"
               . "    edge START t;\n    edge t END;\n"),
         'output=nowhere', qr/names an undeclared channel/);

rejected('format=json without a channel',
         graph("    node m llm format=json;\n    edge START m;\n"
               . "    edge m END;\n"),
         'format=json', qr/format=json of the node "m" needs output=CHANNEL/);

# what the kinds need, checked by the graph for all of them alike
rejected('a guard without output=',
         graph("    node g guard max_length=10;\n    edge START g;\n"
               . "    edge g END;\n"),
         'node g guard', qr/the guard node "g" needs output=CHANNEL/);

rejected('a format node without shape=',
         graph("    channel r value;\n    node f format output=r;\n"
               . "    edge START f;\n    edge f END;\n"),
         'node f format', qr/the format node "f" needs shape=FILE/);

rejected('require= of an undeclared channel',
         graph("    channel ok value;\n    node g guard output=ok "
               . "require=nowhere;\n    edge START g;\n    edge g END;\n"),
         'require=nowhere', qr/require=nowhere of the node "g" names an undeclared channel/);

rejected('a custom event named as a turn\'s own',
         graph("    channel r value;\n    node f format shape=s.json "
               . "output=r event=end;\n    edge START f;\n    edge f END;\n"),
         'event=end', qr/invalid value "end" in "event=end" of node "f": letters, digits/);

rejected('an unknown directive in the block',
         graph("    nodes x template;\n$ok_graph"),
         'nodes x', qr/unknown directive "nodes" in agent_graph/);

# what passes

my ($ok, $out) = check(graph(<<'G') . "agent_use_graph g;\n");
    channel m messages;
    channel l append 'default=[1]';
    channel s sum default=2 scope=turn;
    channel v value 'default={"needs_code": true}';
    channel o merge 'default={}';
    channel x value;
    node plan template "text=Plan {{v.needs_code}} for {{input}}" output=x;
    node sqlq sql query=x result=o error=x ok=v count=s;
    node answer llm prompt=p.md history=off stream=on;
    node last template "text=Failed after {{s}} attempts.";
    edge START plan;
    edge plan sqlq "if=v.needs_code && !(x == 'a' || s >= 2)";
    edge plan answer;
    edge sqlq plan "if=s < 3 && l.length > 0 && l.0 != null";
    edge sqlq last "if=tool_calls || messages > 100";
    edge sqlq answer;
    edge answer END;
    edge last END;
G
ok($ok, 'a graph with every reducer, kind and kind of condition passes')
    or diag $out;

# agent_input at the http level is checked where turns run: the chat
# location's graph has the channel, the sessions location's does not
($ok, $out) = check(graph("    channel who value;\n$ok_graph")
                    . 'agent_input who $remote_user;' . "\n",
                    location => 'agent_use_graph g;');
ok($ok, 'agent_input checked against the chat location\'s graph only')
    or diag $out;

($ok, $out) = check("include $root/conf/graphs/react.conf;\n");
ok($ok, 'conf/graphs/react.conf passes nginx -t') or diag $out;

# the built-in react graph is the one shipped as conf/graphs/react.conf
open my $src, '<', "$root/src/engine/ngx_http_agent_graph_react.c" or die;
my $c = do { local $/; <$src> };
close $src;
my ($text) = $c =~ /ngx_http_agent_react_text = ngx_string\(\n(.*?)\);/s;
$text = join '', map { eval $_ } $text =~ /("(?:[^"\\]|\\.)*")/g;
open my $rc, '<', "$root/conf/graphs/react.conf" or die;
my $file = do { local $/; <$rc> };
close $rc;
my ($body) = $file =~ /agent_graph react \{\n(.*\})\n/s;
s/\n+\z// for $text, $body;
is($text, $body, 'the compiled-in react graph is conf/graphs/react.conf');

done_testing;
