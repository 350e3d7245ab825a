#!/usr/bin/perl
# The oracle: one SDK script (t/lg/sdk.mjs, scenario "oracle") drives
# LangGraph's own Agent Server (langgraphjs dev from npm, serving the same
# graphs written in LangGraph.js, t/lg/graph.mjs) and nginx's
# agent_langgraph_api with two workers, both on the same scripted
# provider; the two transcripts must agree in event names and order, JSON
# keys and shapes, statuses and the messages' types and texts.  Ids,
# times and run metadata differ by nature and are left out; the
# differences by design (docs/langgraph-api.md) are asserted as such.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;
$t->mock(sub { return { text => 'Hello from the mock' } });

my $conf = $t->conf(http => <<'HTTP');
agent_graph approval {
    channel plan     value default=null scope=turn;
    channel approval value default=null;
    node draft   template output=plan "text=Delete the rows of 2019?";
    node approve interrupt value=plan resume=approval;
    node act     template "text=Done: {{approval}}";
    node cancel  template "text=Cancelled.";
    edge START draft;
    edge draft approve;
    edge approve act "if=approval == 'yes'";
    edge approve cancel;
    edge act END;
    edge cancel END;
}
agent_graph chat {
    channel note value default=null;
    node model llm;
    edge START model;
    edge model END;
}
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api; agent_assistants approval chat;
        agent_langgraph_server js; }
        $1};
$t->run($conf);

my $ref = eval { $t->lg_reference('http://127.0.0.1:' . $t->{mock}->port
                                  . '/v1') };
plan skip_all => "LangGraph's Agent Server is not installable here: $@"
    unless $ref;

my $ours = $t->lg_sdk('http://127.0.0.1:' . $t->port . '/lg', 'oracle');
my $theirs = $t->lg_sdk($ref->{url}, 'oracle');
ok(!$ours->{__died__} && !$theirs->{__died__}, 'both transcripts complete');

# --- the normal forms ------------------------------------------------------

sub keys_of { ref $_[0] eq 'HASH' ? [ sort keys %{ $_[0] } ] : ref $_[0] }

# event names, a run of message chunks as one (the tokens' split differs)
sub names {
    my @n;
    for (@{ $_[0] }) {
        next if @n && $n[-1] eq 'messages' && $_->{event} eq 'messages';
        push @n, $_->{event};
    }
    return \@n;
}

sub msgs {
    [ map { [ $_->{type}, $_->{content} ] } @{ $_[0] // [] } ]
}

# a state's values: channels by name, messages as [type, text]
sub values_of {
    my ($v) = @_;
    return $v unless ref $v eq 'HASH';
    return { map { $_ eq 'messages' ? ($_ => msgs($v->{$_}))
                 : $_ eq '__interrupt__'
                   ? ($_ => [ map { $_->{value} } @{ $v->{$_} } ])
                 : ($_ => $v->{$_}) } keys %$v };
}

sub state_of {
    my ($s) = @_;
    return { keys => keys_of($s), next => $s->{next},
             values => values_of($s->{values}),
             tasks => [ map { [ $_->{name},
                                [ map { $_->{value} } @{ $_->{interrupts} } ] ] }
                        @{ $s->{tasks} } ],
             checkpoint => keys_of($s->{checkpoint}) };
}

sub thread_of {
    my ($th) = @_;
    return { keys => keys_of($th),
             status => $th->{status},
             values => values_of($th->{values}),
             interrupts => [ map { [ map { $_->{value} } @$_ ] }
                             values %{ $th->{interrupts} // {} } ] };
}

# --- the streams -------------------------------------------------------------

for my $run (qw(stream ask resume)) {
    my ($a, $b) = ($ours->{$run}, $theirs->{$run});
    is_deeply(names($a), names($b), "$run: the same events in the same order")
        or diag explain [ names($a), names($b) ];
    my @a = grep { $_->{event} ne 'messages' } @$a;
    my @b = grep { $_->{event} ne 'messages' } @$b;
    for my $i (0 .. $#a) {
        my ($x, $y) = ($a[$i], $b[$i]);
        next unless $y;
        if ($x->{event} eq 'values') {
            is_deeply(values_of($x->{data}), values_of($y->{data}),
                      "$run: values $i") or diag explain [ $x, $y ];
        } elsif ($x->{event} eq 'updates') {
            is_deeply({ map { $_ => keys_of($x->{data}{$_}) }
                        keys %{ $x->{data} } },
                      { map { $_ => keys_of($y->{data}{$_}) }
                        keys %{ $y->{data} } }, "$run: updates $i");
        } else {
            is_deeply(keys_of($x->{data}), keys_of($y->{data}),
                      "$run: $x->{event} $i");
        }
    }
}

my @a = map { $_->{data} } grep { $_->{event} eq 'messages' }
        @{ $ours->{stream} };
my @b = map { $_->{data} } grep { $_->{event} eq 'messages' }
        @{ $theirs->{stream} };
is(join('', map { $_->[0]{content} } @a),
   join('', map { $_->[0]{content} } @b), 'messages: the same text');
is_deeply(keys_of($a[0][0]), keys_of($b[0][0]), 'a chunk: the same keys');
is($a[0][0]{type}, $b[0][0]{type}, 'and type');
my %theirs_meta = map { $_ => 1 } @{ keys_of($b[0][1]) };
is_deeply([ grep { !$theirs_meta{$_} } @{ keys_of($a[0][1]) } ], [],
          "a chunk's metadata: ours a subset of theirs");
is_deeply([ map { $_->[1]{langgraph_node} } @a[0, -1] ],
          [ map { $_->[1]{langgraph_node} } @b[0, -1] ], 'the same node');
is($a[0][1]{langgraph_step}, $b[0][1]{langgraph_step}, 'the same step');

# --- state, threads, runs ----------------------------------------------------

for my $k (qw(state waiting after before_state)) {
    is_deeply(state_of($ours->{$k}), state_of($theirs->{$k}),
              "getState ($k)") or diag explain [ $ours->{$k}, $theirs->{$k} ];
}
for my $k (qw(thread thread_after status idle before_thread)) {
    is_deeply(thread_of($ours->{$k}), thread_of($theirs->{$k}),
              "threads ($k)") or diag explain [ $ours->{$k}, $theirs->{$k} ];
}
for my $k (qw(wait ask_wait resume_wait before_wait)) {
    is_deeply(values_of($ours->{$k}), values_of($theirs->{$k}),
              "runs.wait ($k)") or diag explain [ $ours->{$k}, $theirs->{$k} ];
}
like($ours->{ask_wait}{__interrupt__}[0]{id}, qr/^[0-9a-f]{32}$/,
     "an interrupt's id: 32 hex digits, as theirs");
is_deeply([ map { keys_of($_) } @{ $ours->{runs} } ],
          [ map { keys_of($_) } @{ $theirs->{runs} } ], 'runs.list: keys');
is_deeply([ map { $_->{status} } @{ $ours->{runs} } ],
          [ map { $_->{status} } @{ $theirs->{runs} } ], 'and statuses');
is_deeply(keys_of($ours->{search}[0]), keys_of($theirs->{search}[0]),
          'assistants.search: keys');
is($ours->{search}[0]{assistant_id}, $theirs->{search}[0]{assistant_id},
   "the assistant's id: the same uuid5");
for my $k (qw(no_thread no_assistant)) {
    is($ours->{$k}{error}{status}, $theirs->{$k}{error}{status},
       "errors: $k");
}

# history: the checkpoint before the input (step -1) too, in both
my ($h1, $h2) = ($ours->{history}, $theirs->{history});
is(scalar @$h1, scalar @$h2, 'history: as many checkpoints');
is_deeply([ map { state_of($_) } @$h1 ], [ map { state_of($_) } @$h2 ],
          'the same states, newest first');
is($h1->[-1]{metadata}{step}, -1, 'ours too: the empty input checkpoint');
is_deeply([ map { $_->{metadata}{source} } @$h1 ],
          [ map { $_->{metadata}{source} } @$h2 ], 'the same sources');

$t->check_log;

done_testing;
