#!/usr/bin/perl
# Subgraphs (issue 30, item 6): "node NAME subgraph graph=GRAPH" runs a
# declared graph as one step, its state in and out by channel names: a
# graph of three levels (LangGraph's suite's nested), channels shared and
# not, each reducer (messages, value, append, sum), a model inside; the
# LangGraph API's /assistants/{id}/subgraphs with recurse and schemas; our
# chat API on a graph with a subgraph.  An interrupt inside a subgraph
# (an interrupt node, one two levels down, a breakpoint) stops the thread
# at the subgraph's node and the answer resumes it inside, from the
# LangGraph API and from our chat API; graphs that run each other in a
# circle stop at eight levels; nginx -t refuses what cannot run.  With
# stream_subgraphs the LangGraph stream shows each level's steps under its
# namespace ("values|NODE:TASK|NODE:TASK").

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
    return { text => 'the model inside, ' . AgentTest::last_user($req) };
});

my $graphs = <<'HTTP';
agent_graph nested_child {
    channel child value enum=child_one,child_two;
    node c_one template "text=Entered c_one node";
    node c_two template "text=Entered c_two node";
    edge START c_one;
    edge c_one c_two;
    edge c_two END;
}
agent_graph nested_parent {
    channel parent value enum=parent_one,parent_two;
    node p_one template "text=Entered p_one node";
    node p_two subgraph graph=nested_child;
    edge START p_one;
    edge p_one p_two;
    edge p_two END;
}
agent_graph nested {
    node gp_one template "text=Entered gp_one node";
    node gp_two subgraph graph=nested_parent;
    edge START gp_one;
    edge gp_one gp_two;
    edge gp_two END;
}
agent_graph inner {
    channel topic value;
    channel summary value;
    channel notes append;
    channel steps sum;
    channel scratch value;
    node write template "text=about {{topic}}" output=summary;
    node keep template "text=kept {{topic}}" output=scratch;
    node think llm;
    edge START write;
    edge write keep;
    edge keep think;
    edge think END;
}
agent_graph outer {
    channel topic value;
    channel summary value;
    channel notes append 'default=["first"]';
    channel steps sum;
    node set template "text=cats" output=topic;
    node sub subgraph graph=inner;
    node after template "text=after {{summary}}";
    edge START set;
    edge set sub;
    edge sub after;
    edge after END;
}
agent_graph asks {
    channel q value 'default="Sure?"';
    channel a value;
    node ask interrupt value=q resume=a;
    edge START ask;
    edge ask END;
}
agent_graph asking {
    channel a value;
    node sub subgraph graph=asks;
    node said template "text=said {{a}}";
    edge START sub;
    edge sub said;
    edge said END;
}
agent_graph deep {
    channel a value;
    node first template "text=first";
    node mid subgraph graph=asking;
    edge START first;
    edge first mid;
    edge mid END;
}
agent_graph city {
    channel city value;
    node look template "text=San Francisco" output=city;
    node tell template "text=It's sunny in {{city}}!" interrupt_before=on;
    edge START look;
    edge look tell;
    edge tell END;
}
agent_graph weather {
    channel route value;
    node route_node template text=weather output=route;
    node weather_graph subgraph graph=city;
    edge START route_node;
    edge route_node weather_graph;
    edge weather_graph END;
}
agent_graph loop_a {
    node b subgraph graph=loop_b;
    edge START b;
    edge b END;
}
agent_graph loop_b {
    node a subgraph graph=loop_a;
    edge START a;
    edge a END;
}
HTTP

my $conf = $t->conf(http => $graphs . "agent_use_graph outer;\n");
$conf =~ s{(location /api/chat/)}{location /ask/ { agent_chat;
    agent_use_graph asking; }
    location /lg/ { agent_langgraph_api;
    agent_use_graph outer;
    agent_assistants nested asking loop_a deep weather; }
    $1};
$t->run($conf);

sub lg { my ($m, $p, $b) = @_; return $t->http($m, "/lg$p", $b) }
sub texts { return [ map { ref $_->{content} ? '' : $_->{content} }
                     @{ $_[0]{messages} // [] } ] }

# three levels, as LangGraph's suite's nested graph
my $th = lg('POST', '/threads', {})->{json}{thread_id};
my $r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'nested',
                                               input => {} });
is($r->{status}, 200, 'a graph of three levels runs');
is_deeply([ grep { /^Entered/ } @{ texts($r->{json}) } ],
          [ map { "Entered $_ node" } qw(gp_one p_one c_one c_two) ],
          '... each level\'s nodes once, in order') or diag explain $r->{json};

# stream_subgraphs: each level's steps, under its namespace
$th = lg('POST', '/threads', {})->{json}{thread_id};
my $st = $t->stream("/lg/threads/$th/runs/stream", encode_json({
    assistant_id => 'nested', input => {}, stream_subgraphs => JSON::PP::true,
    stream_mode => [ 'values', 'updates' ] }));
my @ev = map { $_->{_event} // '' } @{ $st->{events} };
my ($ns1) = map { /^values\|(gp_two:[0-9a-f-]{36})$/ ? $1 : () } @ev;
ok($ns1, 'stream_subgraphs: the subgraph\'s values as "values|NODE:TASK"')
    or diag explain \@ev;
$ns1 //= 'none';
my ($ns2) = map { /^values\|\Q$ns1\E\|(p_two:[0-9a-f-]{36})$/ ? $1 : () } @ev;
ok($ns2, '... two levels down: "values|NODE:TASK|NODE:TASK"')
    or diag explain \@ev;
$ns2 //= 'none';
my @ups = map { [ $_->{_event}, keys %{ $_->{_json} } ] }
          grep { ($_->{_event} // '') =~ /^updates/ } @{ $st->{events} };
is_deeply(\@ups, [ [ 'updates', 'gp_one' ],
                   [ "updates|$ns1", 'p_one' ],
                   [ "updates|$ns1|$ns2", 'c_one' ],
                   [ "updates|$ns1|$ns2", 'c_two' ],
                   [ "updates|$ns1", 'p_two' ],
                   [ 'updates', 'gp_two' ] ],
          '... each level\'s updates, in order') or diag explain \@ups;
is($st->{events}[0]{id}, 0, '... the ids count from 0, as LangGraph\'s');
my ($gp) = grep { ($_->{_event} // '') eq 'updates'
                  && $_->{_json}{gp_two} } @{ $st->{events} };
is_deeply(texts($gp->{_json}{gp_two}),
          [ map { "Entered $_ node" } qw(gp_one p_one c_one c_two) ],
          '... a subgraph node\'s update: the messages it returns, all')
    or diag explain $gp;
my ($first) = grep { ($_->{_event} // '') eq "values|$ns1|$ns2" }
              @{ $st->{events} };
is_deeply(texts($first->{_json}),
          [ map { "Entered $_ node" } qw(gp_one p_one) ],
          '... a subgraph\'s first values: the state it starts with');
is($st->{events}[-1]{_event}, 'values', '... the thread\'s values last');
$st = $t->stream("/lg/threads/$th/runs/stream", encode_json({
    assistant_id => 'nested', input => {},
    stream_mode => [ 'values', 'updates' ] }));
is_deeply([ grep { /\|/ } map { $_->{_event} // '' } @{ $st->{events} } ],
          [], 'no stream_subgraphs: none of theirs');
$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'nested',
    input => {}, interrupt_before => [ 'tool', 'gp_one_not' ] });
is($r->{status}, 200, 'interrupt_before naming no node: ignored, as LangGraph')
    or diag explain $r;
is_deeply(lg('GET', "/threads/$th/state")->{json}{next}, [],
          '... the run went to its end');

# channels in and out, each reducer, a model inside
$th = lg('POST', '/threads', {})->{json}{thread_id};
$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'outer',
    input => { messages => [ { role => 'user', content => 'go' } ] } });
my $v = $r->{json};
is($v->{summary}, 'about cats', 'a shared channel: read in, written out');
ok(!exists $v->{scratch}, '... a channel of the subgraph only: its own')
    or diag explain $v;
my @t = @{ texts($v) };
is($t[-1], 'after about cats', 'the next step reads what it wrote');
is(scalar(grep { $_ eq 'the model inside, go' } @t), 1,
   '... the model inside answered once, in the messages once');
is(scalar(grep { $_ eq 'go' } @t), 1, '... the input message once');
is_deeply($v->{notes}, ['first'], 'an append channel: not doubled');
my $h = lg('GET', "/threads/$th/history")->{json} // [];
is_deeply([ map { $_->{metadata}{step} } @$h ], [ 3, 2, 1, 0, -1 ],
          'the subgraph is one step of the thread\'s history')
    or diag explain [ map { $_->{metadata} } @$h ];
is_deeply($h->[1]{next}, [ 'after' ], '... the step before "after"');

# our chat API on the same graph
my $sid = $t->session;
$r = $t->http('POST', "/api/chat/$sid/message", encode_json({
    message => 'hello' }), 'Content-Type' => 'application/json',
    'Accept' => 'application/json');
is($r->{json}{full_response}, 'after about cats',
   'our chat API: a graph with a subgraph') or diag explain $r->{json};

# /assistants/{id}/subgraphs
$r = lg('GET', '/assistants/nested/subgraphs');
is_deeply([ sort keys %{ $r->{json} } ], [ 'gp_two' ],
          '/subgraphs: the subgraph nodes');
$r = lg('GET', '/assistants/nested/subgraphs?recurse=true');
is_deeply([ sort keys %{ $r->{json} } ], [ 'gp_two', 'gp_two|p_two' ],
          '... recurse: those inside too, by namespace');
is_deeply($r->{json}{gp_two}{state}{properties}{parent}{enum},
          [ 'parent_one', 'parent_two' ], '... each with its state schema');
is($r->{json}{'gp_two|p_two'}{state_schema}{properties}{messages}{type},
   'array', '... under both SDKs\' names');
is(lg('GET', '/assistants/outer/subgraphs')->{json}{sub}{graph_id}, 'inner',
   '... the graph each runs');
is(lg('GET', '/assistants/nope/subgraphs')->{status}, 404,
   '... an unknown assistant: 404');

# an interrupt inside a subgraph: the thread waits at the node
$th = lg('POST', '/threads', {})->{json}{thread_id};
$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'asking',
                                            input => {} });
my $s = lg('GET', "/threads/$th/state")->{json};
is_deeply($s->{next}, [ 'sub' ], 'an interrupt in a subgraph: the thread '
          . 'waits at its node') or diag explain $s;
is($s->{tasks}[0]{interrupts}[0]{value}, 'Sure?', '... with its value')
    or diag explain $s->{tasks};
ok(!exists $s->{values}{__subgraph__}, '... its state not shown');
is(lg('GET', "/threads/$th")->{json}{status}, 'interrupted',
   '... the thread interrupted');
$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'asking',
                                            command => { resume => 'yes' } });
is($r->{json}{a}, 'yes', 'resumed from the parent thread: the subgraph '
   . 'took the answer, wrote it out') or diag explain $r->{json};
is(texts($r->{json})->[-1], 'said yes', '... and the run went on after it');
is(lg('GET', "/threads/$th")->{json}{status}, 'idle', '... the thread idle');

# two levels down
$th = lg('POST', '/threads', {})->{json}{thread_id};
lg('POST', "/threads/$th/runs/wait", { assistant_id => 'deep', input => {} });
is_deeply(lg('GET', "/threads/$th/state")->{json}{next}, [ 'mid' ],
          'two levels down: the outer thread waits at its node');
$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'deep',
                                            command => { resume => 'ok' } });
is_deeply([ grep { /^(first|said)/ } @{ texts($r->{json}) } ],
          [ 'first', 'said ok' ], '... resumed through both')
    or diag explain $r->{json};

# a breakpoint inside (LangGraph's suite's weather graph, as a subgraph)
$th = lg('POST', '/threads', {})->{json}{thread_id};
lg('POST', "/threads/$th/runs/wait", { assistant_id => 'weather',
    input => { messages => [ { role => 'user', content => 'SF' } ] } });
$s = lg('GET', "/threads/$th/state")->{json};
is_deeply($s->{next}, [ 'weather_graph' ],
          'interrupt_before inside: waits at the subgraph node');
is_deeply(texts($s->{values}), [ 'SF' ], '... nothing of it written yet');
is_deeply($s->{tasks}[0]{interrupts}, [],
          '... a breakpoint, no interrupt of its own (as LangGraph shows it)')
    or diag explain $s->{tasks};
like($s->{tasks}[0]{checkpoint}{checkpoint_ns} // '', qr/^weather_graph:/,
     '... its task names the subgraph\'s namespace');
my $in = lg('GET', "/threads/$th/state?subgraphs=true")->{json}{tasks}[0];
is($in->{checkpoint}, undef, 'subgraphs=true: no namespace')
    or diag explain $in;
is($in->{state}{values}{city}, 'San Francisco',
   '... the subgraph\'s state where it waits');
is_deeply(texts($in->{state}{values}), [ 'SF' ], '... its messages');
is_deeply($in->{state}{next}, [ 'tell' ], '... the node it waits at');
is($in->{state}{tasks}[0]{name}, 'tell', '... as a task');
my $ns = $s->{tasks}[0]{checkpoint};
$r = lg('POST', "/threads/$th/state/checkpoint", { checkpoint => $ns });
is($r->{json}{values}{city}, 'San Francisco',
   'the state at its namespace: the subgraph\'s') or diag explain $r;
$r = lg('POST', "/threads/$th/state", { values => { city => 'LA' },
                                        checkpoint => $ns });
is($r->{status}, 200, 'its state written at its namespace')
    or diag explain $r;
$r = lg('POST', "/threads/$th/state", { values => { nope => 1 },
                                        checkpoint => $ns });
is($r->{status}, 422, '... a channel it does not have: 422');
is(lg('POST', "/threads/$th/state/checkpoint", { checkpoint => $ns })
   ->{json}{values}{city}, 'LA', '... read back');
is_deeply(lg('GET', "/threads/$th/state")->{json}{next}, [ 'weather_graph' ],
          '... the thread still waits at the node');
$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'weather',
                                            input => undef });
is_deeply(texts($r->{json}), [ 'SF', "It's sunny in LA!" ],
          '... a run with no input goes on inside it, with what was written')
    or diag explain $r->{json};
is(lg('POST', "/threads/$th/state", { values => { city => 'NY' },
                                      checkpoint => $ns })->{status}, 409,
   'no subgraph waits any more: 409');
$r = lg('POST', "/threads/$th/state/checkpoint", { checkpoint => $ns });
is_deeply([ $r->{json}{values}{city}, $r->{json}{next},
            $r->{json}{checkpoint}{checkpoint_ns} ],
          [ 'LA', [], $ns->{checkpoint_ns} ],
          '... the state at its namespace: its last checkpoint, as '
          . 'LangGraph\'s') or diag explain $r;
is_deeply(texts($r->{json}{values}), [ 'SF', "It's sunny in LA!" ],
          '... with its messages');
is(lg('POST', "/threads/$th/state/checkpoint",
      { checkpoint => { checkpoint_ns => 'weather_graph:nope' } })->{status},
   404, '... a namespace the thread has no checkpoint in: 404');

# the subgraph's own steps: checkpoints of its namespace, as LangGraph's
my $hist = lg('POST', "/threads/$th/history", { limit => 50 })->{json};
is_deeply([ map { $_->{metadata}{step} } @$hist ], [ 2, 1, 0, -1 ],
          'the thread\'s history: its own steps (no wait, no write inside)')
    or diag explain [ map { [ $_->{metadata}{step}, $_->{next} ] } @$hist ];
is_deeply($hist->[1]{next}, [ 'weather_graph' ],
          '... the subgraph node\'s step next');
like($ns->{checkpoint_ns}, qr/^weather_graph:\Q$hist->[1]{checkpoint}{checkpoint_id}\E$/,
     '... whose id names the namespace (the task\'s)');
my $inner = lg('POST', "/threads/$th/history", { checkpoint => $ns,
                                                 limit => 50 })->{json};
is_deeply([ map { $_->{metadata}{step} } @$inner ], [ 3, 2, 1, 0, -1 ],
          'the namespace\'s history: the subgraph\'s steps, the write one')
    or diag explain $inner;
is_deeply([ map { $_->{next} } @$inner ],
          [ [], [ 'tell' ], [ 'tell' ], [ 'look' ], [ '__start__' ] ],
          '... each one\'s next');
is_deeply([ map { $_->{values}{city} // '' } @$inner ],
          [ 'LA', 'LA', 'San Francisco', '', '' ],
          '... its channels at each') or diag explain $inner;
is_deeply(texts($inner->[0]{values}), [ 'SF', "It's sunny in LA!" ],
          '... its messages at its end');
is($inner->[0]{checkpoint}{checkpoint_ns}, $ns->{checkpoint_ns},
   '... each in its namespace');
is($inner->[0]{parent_checkpoint}{checkpoint_id},
   $inner->[1]{checkpoint}{checkpoint_id}, '... each after the one before');
is_deeply($inner->[2]{tasks}[0]{name}, 'tell', '... the wait: its task');
my $cp = lg('POST', "/threads/$th/copy", {})->{json}{thread_id};
is(scalar @{ lg('POST', "/threads/$cp/history", { checkpoint => $ns,
                                                 limit => 50 })->{json} },
   5, 'a copy of the thread has them too');

# stream_subgraphs on a resume: the namespace its checkpoints are in
$th = lg('POST', '/threads', {})->{json}{thread_id};
lg('POST', "/threads/$th/runs/wait", { assistant_id => 'weather',
    input => { messages => [ { role => 'user', content => 'SF' } ] } });
$ns = lg('GET', "/threads/$th/state")->{json}{tasks}[0]{checkpoint};
$st = $t->stream("/lg/threads/$th/runs/stream", encode_json({
    assistant_id => 'weather', input => undef,
    stream_subgraphs => JSON::PP::true, stream_mode => [ 'values' ] }));
is_deeply([ grep { /\|/ } map { $_->{_event} // '' } @{ $st->{events} } ],
          [ ("values|$ns->{checkpoint_ns}") x 2 ],
          'a resume streams the subgraph under the namespace of its task')
    or diag explain $st->{events};

# an assistant a client made over the graph: the same, read with its graph
my $as = lg('POST', '/assistants', { graph_id => 'weather' })->{json};
$th = lg('POST', '/threads', {})->{json}{thread_id};
lg('POST', "/threads/$th/runs/stream", { assistant_id => $as->{assistant_id},
    input => { messages => [ { role => 'user', content => 'SF' } ] } });
$s = lg('GET', "/threads/$th/state")->{json};
ok(exists $s->{values}{route} && !exists $s->{values}{topic},
   'an assistant made over it: its thread read with its graph')
    or diag explain $s->{values};
like($s->{tasks}[0]{checkpoint}{checkpoint_ns} // '', qr/^weather_graph:/,
     '... the subgraph\'s namespace in its task');

# our chat API: the interrupt and its resume
$sid = $t->session;
$r = $t->http('POST', "/ask/$sid/message", encode_json({
    message => 'hi' }), 'Content-Type' => 'application/json',
    'Accept' => 'application/json');
like(encode_json($r->{json} // {}), qr/Sure\?/,
     'our chat API: the subgraph\'s interrupt') or diag explain $r;
$r = $t->http('POST', "/ask/$sid/resume", encode_json({ resume => 'fine' }),
              'Content-Type' => 'application/json',
              'Accept' => 'application/json');
is($r->{json}{full_response}, 'said fine', '... and its resume')
    or diag explain $r;

$th = lg('POST', '/threads', {})->{json}{thread_id};
$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'loop_a',
                                            input => {} });
like(encode_json($r->{json} // {}), qr/nest deeper than 8/,
     'subgraphs in a circle: stopped at 8 levels') or diag explain $r;

$t->stop;
$t->check_log;

# nginx -t
for ([ 'node s subgraph;', qr/needs graph=/, 'no graph=' ],
     [ 'node s subgraph graph=none;', qr/no such graph/, 'an unknown graph' ],
     [ 'node s subgraph graph=g;', qr/does not run itself/, 'itself' ],
     [ "channel notes sum;\n    node s subgraph graph=inner;",
       qr/reduced otherwise/, 'a channel reduced otherwise in each' ])
{
    my ($node, $re, $what) = @$_;
    my $bad = AgentTest->new;
    $bad->write_conf($bad->conf(http => $graphs . "agent_graph g {\n"
                                . "    $node\n    edge START s;\n"
                                . "    edge s END;\n}\n"));
    my ($ok, $out) = $bad->test_conf;
    ok(!$ok && $out =~ $re, "nginx -t: $what") or diag $out;
}

done_testing;
