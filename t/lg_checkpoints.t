#!/usr/bin/perl
# A run's checkpoints as LangGraph streams and keeps them (issue 30, item
# 2): the state before the input is a checkpoint of its own (step -1 on a
# new thread, source "input", next __start__); the "checkpoints" stream
# mode sends each step saved, the "tasks" mode each node's task and
# result, "debug" both as {"type": "checkpoint" | "task" | "task_result"};
# their ids are the history's; a resumed run's stream starts with the
# checkpoint it resumes; a fork from the input checkpoint runs the graph
# again on another input (an edited first message); a run with no input
# on a thread that waits for nothing: a command's update saved as a step,
# a goto's node run, a fork's next node run again (regenerate).

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;
$t->mock(sub { { text => 'answer to ' . AgentTest::last_user($_[0]) } });

my $conf = $t->conf(http => <<'HTTP');
agent_graph two {
    channel note value;
    node think llm;
    node mark template output=note text=marked;
    edge START think;
    edge think mark;
    edge mark END;
}
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
        agent_use_graph two; }
    $1};
$t->run($conf);

sub lg { my ($m, $p, $b) = @_; return $t->http($m, "/lg$p", $b) }
sub run_stream {
    my ($th, $body) = @_;
    my $st = $t->stream("/lg/threads/$th/runs/stream", encode_json({
        assistant_id => 'two', %$body }));
    return [ map { { event => $_->{_event}, data => $_->{_json} } }
                 @{ $st->{events} } ];
}
sub msgs { [ map { $_->{content} } @{ $_[0]{values}{messages} } ] }

my $in = { messages => [ { role => 'user', content => 'hi' } ] };

# --- checkpoints and tasks --------------------------------------------------

my $th = lg('POST', '/threads', {})->{json}{thread_id};
my $ev = run_stream($th, { input => $in,
                           stream_mode => [ 'tasks', 'checkpoints' ] });

is_deeply([ map { $_->{event} } @$ev ],
          [ qw(metadata checkpoints checkpoints tasks tasks checkpoints tasks
               tasks checkpoints) ],
          'the order: the input\'s two checkpoints, then each node\'s task, '
          . 'result, checkpoint');
my @cps = map { $_->{data} } grep { $_->{event} eq 'checkpoints' } @$ev;
is_deeply([ map { $_->{metadata}{step} } @cps ], [ -1, 0, 1, 2 ],
          'steps -1 to 2');
is_deeply([ map { $_->{metadata}{source} } @cps ],
          [ qw(input loop loop loop) ], 'sources');
is_deeply([ map { $_->{next} } @cps ],
          [ [ '__start__' ], [ 'think' ], [ 'mark' ], [] ], 'next');
is_deeply(msgs($cps[0]), [], 'before the input: no message');
is_deeply(msgs($cps[1]), [ 'hi' ], 'the input step: the message');
is_deeply(msgs($cps[2]), [ 'hi', 'answer to hi' ], 'after think');
is($cps[3]{values}{note}, 'marked', 'after mark: its channel');
is($cps[0]{parent_checkpoint}, undef, 'the first has no parent');
is($cps[1]{parent_checkpoint}{checkpoint_id},
   $cps[0]{checkpoint}{checkpoint_id}, 'each the parent of the next');

my @tasks = map { $_->{data} } grep { $_->{event} eq 'tasks' } @$ev;
is($tasks[0]{name}, 'think', 'a task: its node');
is_deeply($tasks[0]{triggers}, [ 'branch:to:think' ], '... its trigger');
is_deeply(msgs({ values => $tasks[0]{input} }), [ 'hi' ],
          '... the state it starts with');
is($tasks[1]{result}{messages}[0]{content}, 'answer to hi',
   'a result: what the node wrote');
is($tasks[1]{error}, undef, '... no error');
is_deeply($tasks[3]{result}, { note => 'marked' }, 'the second\'s');
is($tasks[0]{id}, $tasks[1]{id}, 'a task and its result: one id');

my $hist = lg('POST', "/threads/$th/history", { limit => 10 })->{json};
is_deeply([ map { $_->{checkpoint}{checkpoint_id} } reverse @$hist ],
          [ map { $_->{checkpoint}{checkpoint_id} } @cps ],
          'the history: the same checkpoints');
is_deeply([ map { $_->{metadata}{source} } reverse @$hist ],
          [ qw(input loop loop loop) ], '... and sources');

# a second run: its input step follows the last (4, not -1)
$ev = run_stream($th, { input => { messages => [ { role => 'user',
                                                  content => 'again' } ] },
                        stream_mode => [ 'checkpoints' ] });
@cps = map { $_->{data} } grep { $_->{event} eq 'checkpoints' } @$ev;
is_deeply([ map { $_->{metadata}{step} } @cps ], [ 3, 4, 5, 6 ],
          'a second run: steps on from the first');
is_deeply(msgs($cps[0]), [ 'hi', 'answer to hi' ],
          '... its input checkpoint: the state the first left');

# --- debug ------------------------------------------------------------------

my $t2 = lg('POST', '/threads', {})->{json}{thread_id};
$ev = run_stream($t2, { input => $in, stream_mode => 'debug' });
my @dbg = map { $_->{data} } grep { $_->{event} eq 'debug' } @$ev;
is_deeply([ map { $_->{type} } @dbg ],
          [ qw(checkpoint checkpoint task task_result checkpoint task
               task_result checkpoint) ], 'debug: the same, typed');
is_deeply([ map { $_->{step} } grep { $_->{type} eq 'checkpoint' } @dbg ],
          [ -1, 0, 1, 2 ], '... checkpoints with their steps');
like($dbg[0]{timestamp}, qr/^\d{4}-/, '... and when');
is_deeply($dbg[0]{payload}{next}, [ '__start__' ],
          '... the payload: the state');

# --- a resumed run ----------------------------------------------------------

my $t3 = lg('POST', '/threads', {})->{json}{thread_id};
$ev = run_stream($t3, { input => $in, interrupt_before => [ 'mark' ],
                        stream_mode => [ 'checkpoints' ] });
@cps = map { $_->{data} } grep { $_->{event} eq 'checkpoints' } @$ev;
is_deeply([ map { $_->{metadata}{step} } @cps ], [ -1, 0, 1 ],
          'interrupted before mark: the step before is where it waits, as '
          . 'LangGraph\'s (no checkpoint of its own)');
is_deeply($cps[-1]{next}, [ 'mark' ], '... next mark');
my $last = $cps[-1]{checkpoint}{checkpoint_id};
$ev = run_stream($t3, { stream_mode => [ 'checkpoints' ] });
my @more = map { $_->{data} } grep { $_->{event} eq 'checkpoints' } @$ev;
is($more[0]{checkpoint}{checkpoint_id}, $last,
   'resumed: the stream starts with the checkpoint it resumes');
is_deeply([ map { $_->{metadata}{step} } @more ], [ 1, 2 ], '... then on');

# --- a fork from the input checkpoint: an edited first message --------------

$hist = lg('POST', "/threads/$th/history", { limit => 20 })->{json};
my ($first) = grep { $_->{metadata}{step} == -1 } @$hist;
my $r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'two',
    checkpoint_id => $first->{checkpoint}{checkpoint_id},
    input => { messages => [ { role => 'user', content => 'edited' } ] } });
is_deeply([ map { $_->{content} } @{ $r->{json}{messages} } ],
          [ 'edited', 'answer to edited' ],
          'a fork from step -1: the graph again on the edited message');

# --- runs with no input on a thread that waits for nothing -----------------

my $st;
my $t4 = lg('POST', '/threads', {})->{json}{thread_id};
lg('POST', "/threads/$t4/runs/wait", { assistant_id => 'two', input => $in });
my $before = lg('GET', "/threads/$t4/state")->{json};
$r = lg('POST', "/threads/$t4/runs/wait", { assistant_id => 'two',
    command => { update => { note => 'by hand' } } });
is($r->{status}, 200, 'a command\'s update on a finished thread: 200');
my $after = lg('GET', "/threads/$t4/state")->{json};
is($after->{values}{note}, 'by hand', '... written');
is(scalar @{ $after->{values}{messages} },
   scalar @{ $before->{values}{messages} }, '... and no node ran');
is($after->{metadata}{step}, $before->{metadata}{step} + 1,
   '... a step of its own');
is_deeply($after->{next}, [], '... nothing next');

$r = lg('POST', "/threads/$t4/runs/wait", { assistant_id => 'two',
    command => { goto => 'mark' } });
is($r->{json}{note}, 'marked', 'a goto on a finished thread: that node runs');

# Agent Chat UI's "mark as resolved": goto __end__ on a waiting thread
my $t6 = lg('POST', '/threads', {})->{json}{thread_id};
lg('POST', "/threads/$t6/runs/wait", { assistant_id => 'two', input => $in,
                                       interrupt_before => [ 'mark' ] });
is(lg('GET', "/threads/$t6")->{json}{status}, 'interrupted', 'a thread waits');
$r = lg('POST', "/threads/$t6/runs/wait", { assistant_id => 'two',
    command => { goto => '__end__' } });
is($r->{status}, 200, 'command goto __end__');
is(lg('GET', "/threads/$t6")->{json}{status}, 'idle', '... it waits no more');
$st = lg('GET', "/threads/$t6/state")->{json};
is_deeply($st->{next}, [], '... nothing next');
ok(!defined $st->{values}{note}, '... and mark never ran');

# regenerate (Agent Chat UI): no input, from the checkpoint before an answer
$hist = lg('POST', "/threads/$t4/history", { limit => 20 })->{json};
my ($pre) = grep { ($_->{next}[0] // '') eq 'think' } @$hist;
my $calls = () = $t->{mock}->requests;
$r = lg('POST', "/threads/$t4/runs/wait", { assistant_id => 'two',
    checkpoint_id => $pre->{checkpoint}{checkpoint_id}, input => undef });
is($r->{status}, 200, 'a run with no input from a checkpoint before think');
is_deeply([ map { $_->{content} } @{ $r->{json}{messages} } ],
          [ 'hi', 'answer to hi' ], 'think ran again: one answer, anew');
is(scalar(() = $t->{mock}->requests), $calls + 1, '... the model asked once more');

# --- an update that replaces a message (human review's edit) ----------------

my $t5 = lg('POST', '/threads', {})->{json}{thread_id};
lg('POST', "/threads/$t5/runs/wait", { assistant_id => 'two', input => $in });
$st = lg('GET', "/threads/$t5/state")->{json};
my $ai = { %{ $st->{values}{messages}[1] } };
my $was = $ai->{content};
$ai->{content} = 'edited by a human';
$r = lg('POST', "/threads/$t5/state", { values => { messages => [ $ai ] } });
is($r->{status}, 200, 'an update with a message of ours (its id)')
    or diag($r->{content});
$st = lg('GET', "/threads/$t5/state")->{json};
is_deeply([ map { $_->{content} } @{ $st->{values}{messages} } ],
          [ 'hi', 'edited by a human' ], 'it replaced that message, in place');
is($st->{values}{messages}[1]{id}, $ai->{id}, '... under its id');
$hist = lg('POST', "/threads/$t5/history", { limit => 10 })->{json};
is($hist->[1]{values}{messages}[1]{content}, $was,
   'the checkpoint before still has the old one');
lg('POST', "/threads/$t5/state", { values => { messages => [
    { type => 'human', content => 'a new one' } ] } });
$st = lg('GET', "/threads/$t5/state")->{json};
is_deeply([ map { $_->{content} } @{ $st->{values}{messages} } ],
          [ 'hi', 'edited by a human', 'a new one' ],
          'one without an id of ours: appended, the edit kept');
$r = lg('POST', "/threads/$t5/runs/wait", { assistant_id => 'two',
    input => { messages => [ { role => 'user', content => 'next' } ] } });
my ($req) = grep { AgentTest::last_user($_) eq 'next' }
            map { $_->{body} // $_ } $t->{mock}->requests;
ok($req && grep({ ($_->{content} // '') eq 'edited by a human' }
                @{ $req->{messages} }), 'the model reads the edit next');
is_deeply([ map { $_->{content} } @{ $r->{json}{messages} } ],
          [ 'hi', 'edited by a human', 'a new one', 'next', 'answer to next' ],
          'and the thread goes on from it');
$r = lg('POST', "/threads/$t5/state", { values => { messages => [
    { type => 'robot', content => 'x' } ] } });
is($r->{status}, 422, 'a message of no known type: 422');

# no input from an input checkpoint (next __start__): the graph again
my $t7 = lg('POST', '/threads', {})->{json}{thread_id};
lg('POST', "/threads/$t7/runs/wait", { assistant_id => 'two', input => $in });
lg('POST', "/threads/$t7/runs/wait", { assistant_id => 'two',
    input => { messages => [ { role => 'user', content => 'again' } ] } });
$hist = lg('POST', "/threads/$t7/history", { limit => 20 })->{json};
my ($in2) = grep { $_->{metadata}{source} eq 'input'
                   && $_->{metadata}{step} > 0 } @$hist;
$r = lg('POST', "/threads/$t7/runs/wait", { assistant_id => 'two',
    checkpoint_id => $in2->{checkpoint}{checkpoint_id}, input => undef });
is($r->{status}, 200, 'no input from an input checkpoint: 200');
is_deeply([ map { $_->{content} } @{ $r->{json}{messages} } ],
          [ 'hi', 'answer to hi', 'answer to hi' ],
          '... the graph ran again on the state before that input');

# a fork's old branch (its messages in its channels), streamed in debug
my $t8 = lg('POST', '/threads', {})->{json}{thread_id};
lg('POST', "/threads/$t8/runs/wait", { assistant_id => 'two', input => $in });
lg('POST', "/threads/$t8/runs/wait", { assistant_id => 'two',
    input => { messages => [ { role => 'user', content => 'two' } ] } });
$hist = lg('POST', "/threads/$t8/history", { limit => 20 })->{json};
my ($end1) = grep { $_->{metadata}{step} == 2 } @$hist;
my ($old) = grep { ($_->{next}[0] // '') eq 'mark'
                   && $_->{metadata}{step} > 4 } @$hist;
lg('POST', "/threads/$t8/runs/wait", { assistant_id => 'two',
    checkpoint_id => $end1->{checkpoint}{checkpoint_id},
    input => { messages => [ { role => 'user', content => 'three' } ] } });
$ev = run_stream($t8, { checkpoint_id => $old->{checkpoint}{checkpoint_id},
                        input => undef, stream_mode => [ 'debug' ] });
my ($c0) = map { $_->{data} } grep { $_->{event} eq 'debug'
                                     && $_->{data}{type} eq 'checkpoint' }
                                   @$ev;
is_deeply(msgs($c0->{payload}),
          [ 'hi', 'answer to hi', 'two', 'answer to two' ],
          'a run from the old branch: its first checkpoint event, its messages');
is($ev->[-1]{event}, 'debug', '... and the run goes on to its end');

# a checkpoint names the run that saved it, with the run's metadata;
# history's "metadata" filter finds a run's checkpoints
my $t9 = lg('POST', '/threads', {})->{json}{thread_id};
my $r1 = lg('POST', "/threads/$t9/runs", { assistant_id => 'two',
    input => $in })->{json};
lg('GET', "/threads/$t9/runs/$r1->{run_id}/join");
my $r2 = lg('POST', "/threads/$t9/runs", { assistant_id => 'two',
    input => { messages => [ { role => 'user', content => 'b' } ] },
    metadata => { tag => 'second', n => 2 } })->{json};
lg('GET', "/threads/$t9/runs/$r2->{run_id}/join");
$hist = lg('POST', "/threads/$t9/history", { limit => 20 })->{json};
is(scalar @$hist, 8, 'two runs: eight checkpoints');
is_deeply([ map { $_->{metadata}{run_id} } @$hist ],
          [ ($r2->{run_id}) x 4, ($r1->{run_id}) x 4 ],
          'each names the run that saved it');
is_deeply([ map { $_->{metadata}{tag} // '' } @$hist ],
          [ ('second') x 4, ('') x 4 ], '... with that run\'s metadata');
my $f = lg('POST', "/threads/$t9/history", { metadata => { tag => 'second' },
                                             limit => 20 })->{json};
is_deeply([ map { $_->{checkpoint}{checkpoint_id} } @$f ],
          [ map { $_->{checkpoint}{checkpoint_id} } @$hist[0 .. 3] ],
          'history filtered by metadata: that run\'s checkpoints');
$f = lg('POST', "/threads/$t9/history", { metadata => { tag => 'second' },
    limit => 2, before => $hist->[0]{checkpoint}{checkpoint_id} })->{json};
is_deeply([ map { $_->{checkpoint}{checkpoint_id} } @$f ],
          [ map { $_->{checkpoint}{checkpoint_id} } @$hist[1, 2] ],
          '... with before and limit');
is(scalar @{ lg('POST', "/threads/$t9/history",
               { metadata => { tag => 'none' } })->{json} }, 0,
   '... none that hold another value');
is_deeply([ map { $_->{metadata}{step} } @{ lg('POST',
    "/threads/$t9/history", { metadata => { source => 'input' } })->{json} } ],
          [ 3, -1 ], '... or by what each checkpoint\'s metadata says');
is_deeply([ map { $_->{metadata}{step} } @{ lg('POST',
    "/threads/$t9/history", { metadata => { tag => 'second', step => 4 } })
    ->{json} } ], [ 4 ], '... both at once');
is(lg('POST', "/threads/$t9/history", { metadata => [] })->{status}, 422,
   'metadata is an object');
lg('POST', "/threads/$t9/state", { values => { note => 'x' } });
my $u = lg('POST', "/threads/$t9/history", { limit => 1 })->{json}[0];
ok(!exists $u->{metadata}{tag}, 'a state update is no run\'s: no metadata');

# other streams see none of it
my $sid = $t->http('POST', '/api/sessions/', {})->{json}{id};
my $turn = $t->turn($sid, 'plain');
ok(!grep({ ($_->{type} // '') =~ /checkpoint/ } @{ $turn->{events} }),
   'the chat stream has no checkpoint events');
is($turn->{types}[-1], 'end', '... and ends as ever');

$t->stop;
$t->check_log;
done_testing;
