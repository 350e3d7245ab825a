#!/usr/bin/perl
# Checkpoints are bounded (issue 49, item 5): agent_checkpoint_keep N keeps
# a thread's last N checkpoints through many runs while an unbounded
# thread grows; GET /threads/{id}/storage counts them; a pruned one asked
# for (its state, a run from it) is a 404 that says why; TIME keeps those
# younger; the checkpoint an interrupt waits on stays and is resumed from;
# nginx -t refuses bad values; without a thread pool the pass runs at the
# run's end.  On both stores.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $RUNS = 20;

my $t = AgentTest->new;
$t->mock(sub { return { text => 'fine, ' . AgentTest::last_user($_[0]) } });

my $conf = $t->conf(http => <<'HTTP');
agent_graph approval {
    channel plan     value scope=turn;
    channel approval value;

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
    node model llm;
    edge START model;
    edge model END;
}
agent_assistants approval chat;
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api; agent_checkpoint_keep 3; }
        location /all/ { agent_langgraph_api; }
        location /one/ { agent_langgraph_api; agent_checkpoint_keep 1; }
        location /young/ { agent_langgraph_api; agent_checkpoint_keep 3s; }
        $1};

# nginx -t: the values it takes
for my $bad ([ '0', qr/must keep 1 checkpoint at least/ ],
             [ 'soon', qr/takes a count, a time/ ]) {
    (my $c = $conf) =~ s/agent_checkpoint_keep 3;/agent_checkpoint_keep $bad->[0];/;
    $t->write_conf($c);
    my ($ok, $out) = $t->test_conf;
    ok(!$ok, "agent_checkpoint_keep $bad->[0]: nginx -t fails");
    like($out, $bad->[1], '... saying why');
}
{
    (my $c = $conf) =~ s/agent_checkpoint_keep 3;/agent_checkpoint_keep 3;
        agent_checkpoint_keep 4;/;
    $t->write_conf($c);
    my ($ok, $out) = $t->test_conf;
    like($out, qr/"agent_checkpoint_keep" directive is duplicate/,
         'twice in a location: nginx -t fails');
}

$t->run($conf);

sub run_on {
    my ($loc, $tid, $text, %o) = @_;
    return $t->http('POST', "/$loc/threads/$tid/runs/wait", {
        assistant_id => $o{assistant} // 'chat',
        input => { messages => [ { role => 'user', content => $text } ] },
        %{ $o{body} // {} } });
}
sub storage { $t->http('GET', "/$_[0]/threads/$_[1]/storage")->{json} }
sub count { storage(@_)->{checkpoints}{count} }
sub ids {
    my ($loc, $tid) = @_;
    my $h = $t->http('GET', "/$loc/threads/$tid/history?limit=1000")->{json};
    return map { $_->{checkpoint}{checkpoint_id} } @$h;
}

# 1. many runs on a bounded thread and on an unbounded one
my $kept = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
my $all = $t->http('POST', '/all/threads', {})->{json}{thread_id};

is(run_on('lg', $kept, 'first')->{status}, 200, 'a first run');
my @first = ids('lg', $kept);
ok(@first >= 2, 'it made checkpoints (' . scalar(@first) . ')');

my $max = 0;
for my $i (2 .. $RUNS) {
    my $r = run_on('lg', $kept, "run $i");
    is($r->{status}, 200, "run $i") unless $r->{status} == 200;
    run_on('all', $all, "run $i");
    # a pass runs behind the run's end (SQLite: on the thread pool)
    AgentTest::wait_for(sub { count('lg', $kept) <= 3 }, 10);
    my $n = count('lg', $kept);
    $max = $n if $n > $max;
}
run_on('all', $all, 'first');

ok($max <= 3, "the bounded thread never held more than 3 after a run "
              . "($max)");
my $s = storage('lg', $kept);
my $u = storage('all', $all);
is($s->{thread_id}, $kept, 'storage: the thread');
ok($s->{checkpoints}{count} >= 1 && $s->{checkpoints}{count} <= 3,
   "its checkpoints within the bound ($s->{checkpoints}{count})");
ok($u->{checkpoints}{count} >= 2 * $RUNS,
   "the unbounded one grew ($u->{checkpoints}{count})");
ok($s->{checkpoints}{bytes} * 4 < $u->{checkpoints}{bytes},
   "and its bytes did ($s->{checkpoints}{bytes} against "
   . "$u->{checkpoints}{bytes})");
is($s->{channel_values}{messages}{count}, 2 * $RUNS,
   'every message kept: they are the latest state\'s');
is($s->{channel_values}{messages}{count},
   $u->{channel_values}{messages}{count}, '... as on the unbounded one');
ok($s->{channel_values}{messages}{bytes} > 0, 'messages have bytes');
is($s->{total_bytes}, $s->{checkpoints}{bytes}
   + $s->{channel_values}{messages}{bytes} + $s->{pending_writes}{bytes},
   'total_bytes is the sum of its parts');
is($s->{pending_writes}{count}, 0, 'no pending writes after the runs');

# the latest state is whole, and the conversation goes on
my $st = $t->http('GET', "/lg/threads/$kept/state")->{json};
is(scalar @{ $st->{values}{messages} }, 2 * $RUNS, 'the state: every message');
is($st->{values}{messages}[-1]{content}, "fine, run $RUNS",
   'the state: the last answer');
my $r = run_on('lg', $kept, 'and on');
is($r->{json}{messages}[-1]{content}, 'fine, and on', 'a run after them');

# 2. time travel to a checkpoint let go: a 404 that says why
$r = $t->http('GET', "/lg/threads/$kept/state/$first[-1]");
is($r->{status}, 404, 'the state at a pruned checkpoint: 404');
like($r->{content}, qr/has no checkpoint .*agent_checkpoint_keep keeps a thread's last 3 checkpoints/,
     '... which says it may have been let go');
$r = run_on('lg', $kept, 'again', body => { checkpoint_id => $first[-1] });
is($r->{status}, 404, 'a run from a pruned checkpoint: 404');
like($r->{content}, qr/agent_checkpoint_keep/, '... which says why');
$r = $t->http('GET', "/all/threads/$all/state/" . (ids('all', $all))[-1]);
is($r->{status}, 200, 'the unbounded thread keeps its first');
$r = $t->http('GET', "/all/threads/$all/state/nope");
unlike($r->{content}, qr/agent_checkpoint_keep/,
       'where nothing is let go, a 404 does not say so');

# 3. TIME: those younger than it stay, the latest always
my $young = $t->http('POST', '/young/threads', {})->{json}{thread_id};
run_on('young', $young, "early $_") for 1 .. 3;
my @early = ids('young', $young);
sleep 4;
run_on('young', $young, 'late');
ok(AgentTest::wait_for(sub {
       my %now = map { $_ => 1 } ids('young', $young);
       !grep { $now{$_} } @early }, 10),
   'TIME: the checkpoints older than it let go');
$st = $t->http('GET', "/young/threads/$young/state")->{json};
is($st->{values}{messages}[-1]{content}, 'fine, late',
   'TIME: the latest kept');
ok(count('young', $young) >= 1, 'TIME: at least the latest');

# 4. the checkpoint an interrupt waits on stays, and the run resumes
my $w = $t->http('POST', '/one/threads', {})->{json}{thread_id};
$r = run_on('one', $w, 'go', assistant => 'approval');
is($r->{json}{__interrupt__}[0]{value}, 'Delete the rows of 2019?',
   'a run that waits for an answer');
ok(AgentTest::wait_for(sub { count('one', $w) == 1 }, 10),
   'keep 1: one checkpoint left');
$st = $t->http('GET', "/one/threads/$w/state")->{json};
is_deeply($st->{next}, [ 'approve' ], 'the one the interrupt waits on');
is($st->{tasks}[0]{interrupts}[0]{value}, 'Delete the rows of 2019?',
   '... with its interrupt');
$r = $t->http('POST', "/one/threads/$w/runs/wait", {
    assistant_id => 'approval', command => { resume => 'yes' } });
is($r->{json}{messages}[-1]{content}, 'Done: yes', 'resumed from it');

$t->check_log;

# 5. without a thread pool the pass runs at the run's end, on the worker
my $p = AgentTest->new;
$p->mock(sub { return { text => 'fine' } });
my $pconf = $p->conf(http => "agent_sql_thread_pool off;\n"
    . "agent_graph chat { node model llm; edge START model; edge model END; }\n"
    . "agent_assistants chat;\nagent_checkpoint_keep 2;\n");
$pconf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api; }
        $1};
$p->run($pconf);
my $pt = $p->http('POST', '/lg/threads', {})->{json}{thread_id};
my $pmax = 0;
for my $i (1 .. 6) {
    $p->http('POST', "/lg/threads/$pt/runs/wait", { assistant_id => 'chat',
        input => { messages => [ { role => 'user', content => "r$i" } ] } });
    my $n = $p->http('GET', "/lg/threads/$pt/storage")->{json}{checkpoints}
        {count};
    $pmax = $n if $n > $pmax;
}
ok($pmax >= 1 && $pmax <= 2, "no thread pool: at most 2 after each run "
                             . "($pmax)");
$p->check_log;

done_testing;
