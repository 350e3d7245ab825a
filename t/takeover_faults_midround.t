#!/usr/bin/perl
# Faults in the middle of a round (issue 52), on SQLite and on PostgreSQL
# (t/pg/run): a worker killed (SIGKILL) while a round's two tool calls run
# has its run taken over by another, the call that is not idempotent
# reached its service once and the model is told its outcome is unknown,
# the idempotent one came again with one Idempotency-Key, the answer once
# in the thread and in a join; with on_unknown=interrupt a human is asked
# instead, and the resumed round runs nothing again; a model call cut by
# a take-over is made again and a join shows the new tokens only; on
# PostgreSQL, the worker's connection cut in the middle of a write; and
# nginx -s reload during a round: the old worker finishes it.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use MockLLM;
use JSON::PP;
use Time::HiRes qw(sleep);
use POSIX ();

my $t = AgentTest->new;
my $dir = $t->dir;
my $db = "$dir/agent.db";
my $PG = $ENV{AGENT_PG};

# the model: per question, a round of calls, then an answer from their
# results; "stream ..." streams slowly the first time (it is cut), then a
# short answer
my %rounds = (
    'pay it'    => [ [ 'c1', 'pay', '{"which": "pay"}' ],
                     [ 'c2', 'look', '{"which": "look"}' ] ],
    'pay ask'   => [ [ 'i1', 'pay', '{"which": "payi"}' ],
                     [ 'i2', 'look', '{"which": "looki"}' ] ],
    'pay live'  => [ [ 'l1', 'pay', '{"which": "payl"}' ],
                     [ 'l2', 'look', '{"which": "lookl"}' ] ],
    'pay none'  => [ [ 'n1', 'pay', '{"which": "payn"}' ],
                     [ 'n2', 'look', '{"which": "lookn"}' ] ],
    'reload it' => [ [ 'r1', 'pay', '{"which": "payr"}' ] ],
    'cut pg'    => [ [ 'g1', 'look', '{"which": "lookg"}' ] ],
);

$t->mock(sub {
    my ($req) = @_;
    my $q = AgentTest::last_user($req);
    my @tools = grep { $_->{role} eq 'tool' } @{ $req->{messages} };
    if ($q =~ /^stream (\w+)/) {
        return { text => 'new ' x 5, pieces => [ ('new ') x 5 ] }
            if -e "$dir/streamed-$1";
        open my $fh, '>', "$dir/streamed-$1" or die;
        close $fh;
        return { text => 'lost ' x 200, pieces => [ ('lost ') x 200 ],
                 delay => 0.2 };
    }
    return { tools => $rounds{$q} } if !@tools && $rounds{$q};
    return { text => "$q: " . join(' | ', map { $_->{content} } @tools) };
});

my $svc = $t->held_service;
my $sp = $svc->port;

my $graph = <<'GRAPH';
agent_graph NAME {
    node model llm tools=pay,look;
    node tools tools TOOLS;
    edge START model;
    edge model tools if=tool_calls;
    edge model END;
    edge tools model;
}
GRAPH
my $graphs = join '', map {
    (my $g = $graph) =~ s/NAME/$_->[0]/;
    $g =~ s/ TOOLS/$_->[1]/;
    $g } [ 'pay', '' ], [ 'payi', ' on_unknown=interrupt' ];

my $conf = $t->conf(http => <<"HTTP");
agent_tool pay location=/internal/svc "description=Pays";
agent_tool look location=/internal/svc "description=Looks" idempotent=on;
$graphs
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
            agent_use_graph pay; agent_turn_lease 2s; }
        location /lgi/ { agent_langgraph_api;
            agent_use_graph payi; agent_turn_lease 2s; }
        location /lgs/ { agent_langgraph_api; agent_turn_lease 2s; }
        location /internal/svc { internal;
            proxy_pass http://127.0.0.1:$sp/svc; }
        $1};
$t->run($conf);

# a background run of the question on a new thread of the location
sub start {
    my ($loc, $assistant, $q, %o) = @_;
    my $th = $t->http('POST', "/$loc/threads", {})->{json}{thread_id};
    my $r = $t->http('POST', "/$loc/threads/$th/runs", {
        assistant_id => $assistant, stream_resumable => JSON::PP::true,
        input => { messages => [ { role => 'user', content => $q } ] },
        %o });
    is($r->{status}, 200, "$q: a background run");
    return ($th, $r->{json}{run_id});
}

sub holder {
    my ($th) = @_;
    return $t->sqlite($db, "SELECT run_pid FROM sessions WHERE id = '$th'");
}

sub ends {
    my ($loc, $th, $run, $want) = @_;
    my $s = '';
    ok(AgentTest::wait_for(sub {
        $s = $t->http('GET', "/$loc/threads/$th/runs/$run")->{json}{status}
             // '';
        $s eq $want }, 60), "the run ended \"$want\"")
        or diag("status: $s\n" . $t->slurp('error.log'));
}

sub held { my @n = @_; return AgentTest::wait_for(sub {
    !grep { !-e "$dir/held-$_" } @n }, 30) }

# the service's calls of a kind: [key] each
sub calls_of {
    my ($which) = @_;
    return map { $_->{headers}{'idempotency-key'} // '' }
           grep { ($_->{body}{which} // '') eq $which } $svc->requests;
}

# the model's requests for a question that carried tool results
sub asked_after {
    my ($q) = @_;
    return grep { grep { $_->{role} eq 'tool' } @$_ }
           map { $_->{body}{messages} }
           grep { AgentTest::last_user($_->{body}) eq $q }
           $t->{mock}->requests;
}

# the thread's messages: types, the last one's text
sub thread_of {
    my ($loc, $th) = @_;
    my $m = $t->http('GET', "/$loc/threads/$th/state")->{json}{values}
            {messages} // [];
    return ([ map { $_->{type} } @$m ], $m);
}

# a join of the run from another connection: its events
sub join_of {
    my ($loc, $th, $run) = @_;
    my $j = $t->stream("/$loc/threads/$th/runs/$run/stream", '',
                       method => 'GET');
    is($j->{status}, 200, 'the run joined');
    return @{ $j->{events} };
}

sub answer_once {
    my ($re, @ev) = @_;
    my @vals = grep { $_->{_event} eq 'values' } @ev;
    is(scalar(grep { ($_->{_json}{messages}[-1]{content} // '') =~ $re }
              @vals), 1, 'the answer once in the join');
    like($vals[-1]{_json}{messages}[-1]{content} // '', $re,
         '... in its last values');
    is(scalar(grep { $_->{_event} eq 'error' } @ev), 0, 'no error in it');
    my %seen;
    is(scalar(grep { $seen{$_}++ } grep { defined } map { $_->{id} } @ev),
       0, 'each event id once');
    start_once(@ev);
}

# the run's start once, each state once: a take-over does not send again
# the start and the values the lost worker had kept
sub start_once {
    my (@ev) = @_;
    is(scalar(grep { $_->{_event} eq 'metadata' } @ev), 1,
       'the run\'s start once');
    my $js = JSON::PP->new->canonical;
    my %n;
    $n{ $js->encode($_->{_json}) }++
        for grep { $_->{_event} eq 'values' } @ev;
    is(scalar(grep { $_ > 1 } values %n), 0, 'each state once in its values')
        or diag(join "\n", grep { $n{$_} > 1 } keys %n);
}

# --- 1. SIGKILL in the middle of a round -------------------------------------

my ($th, $run) = start('lg', 'pay', 'pay it');
ok(held(qw(pay1 look1)), 'the round\'s two calls reached the service');
my $victim = holder($th);
like($victim, qr/^\d+$/, 'a worker holds the thread');
kill 'KILL', $victim;
AgentTest::free($dir, qw(pay1 look1));

ends('lg', $th, $run, 'success');
like($t->slurp('error.log'),
     qr/run "$run" of thread "$th" lost its worker, taken over/,
     'another worker took it over');

my @pay = calls_of('pay');
my @look = calls_of('look');
is(scalar @pay, 1, 'the call that is not idempotent reached its service once');
is(scalar @look, 2, 'the idempotent one came again');
like($look[0], qr/^[0-9a-f]{32}$/, '... with an Idempotency-Key');
is($look[1], $look[0], '... the same both times');

my ($after) = asked_after('pay it');
my %res = map { $_->{tool_call_id} => $_->{content} }
          grep { $_->{role} eq 'tool' } @{ $after // [] };
like($res{c1} // '', qr/outcome unknown: the call .{0,2}c1\b/,
     'the model is told the payment\'s outcome is unknown');
like($res{c2} // '', qr/"look":\s*2/, 'the look-up\'s second answer');

my ($types, $msgs) = thread_of('lg', $th);
is_deeply($types, [ qw(human ai tool tool ai) ],
          'the thread holds each message once');
is($t->sqlite($db, "SELECT count(*) FROM messages WHERE session_id = '$th'"),
   5, 'five rows of messages');
answer_once(qr/^pay it: /, join_of('lg', $th, $run));

# the same with a client on the run's stream: its stream is cut with the
# worker; it joins again after its last event and sees the rest, the
# answer once, each event once
my $tl = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
my $kid = fork() // die;
if ($kid == 0) {
    my $c = $t->stream("/lg/threads/$tl/runs/stream", encode_json({
        assistant_id => 'pay', stream_resumable => JSON::PP::true,
        input => { messages => [ { role => 'user', content => 'pay live' } ] }
        }), timeout => 60);
    open my $fh, '>', "$dir/live.json" or POSIX::_exit(1);
    print $fh encode_json($c->{events});
    close $fh;
    POSIX::_exit(0);
}
ok(held(qw(payl1 lookl1)), 'a client\'s run: its round reached the service');
kill 'KILL', holder($tl);
AgentTest::free($dir, qw(payl1 lookl1));
waitpid($kid, 0);
my @seen = @{ decode_json(AgentTest::slurp_file("$dir/live.json")) };
my ($live) = grep { $_->{_event} eq 'metadata' } @seen;
my $rl = $live->{_json}{run_id} // '';
ends('lg', $tl, $rl, 'success');
my $again = $t->stream("/lg/threads/$tl/runs/$rl/stream", '',
                       method => 'GET',
                       headers => { 'Last-Event-ID' => $seen[-1]{id} });
is($again->{status}, 200, 'the client joins again after its last event');
answer_once(qr/^pay live: /, @seen, @{ $again->{events} });
is(scalar(calls_of('payl')), 1, '... the payment made once');

# --- 2. on_unknown=interrupt: a human is asked instead -----------------------

my ($ti, $ri) = start('lgi', 'payi', 'pay ask');
ok(held(qw(payi1 looki1)), 'on_unknown: the round reached the service');
$victim = holder($ti);
kill 'KILL', $victim;
AgentTest::free($dir, qw(payi1 looki1));

ends('lgi', $ti, $ri, 'interrupted');
my $st = $t->http('GET', "/lgi/threads/$ti/state")->{json};
is_deeply($st->{next}, [ 'tools' ], 'it waits at the tools node');
my $iv = $st->{tasks}[0]{interrupts}[0]{value} // [];
is_deeply([ map { "$_->{id} $_->{name}" } @$iv ], [ 'i1 pay' ],
          'the interrupt names the cut call that is not idempotent');
is(scalar(asked_after('pay ask')), 0, 'the model was not told');
is(scalar(calls_of('looki')), 2, 'the idempotent call ran again');

my $r = $t->http('POST', "/lgi/threads/$ti/runs/wait", {
    assistant_id => 'payi', command => { resume => 'paid: receipt 42' } });
is($r->{status}, 200, 'resumed with the human\'s answer');
like($r->{json}{messages}[-1]{content} // '', qr/^pay ask: /,
     'the run answered');
($after) = asked_after('pay ask');
%res = map { $_->{tool_call_id} => $_->{content} }
       grep { $_->{role} eq 'tool' } @{ $after // [] };
like($res{i1} // '', qr/paid: receipt 42/,
     'the model got the human\'s answer for the cut call');
like($res{i2} // '', qr/"looki":\s*2/, '... and the look-up\'s answer');
is(scalar(calls_of('payi')), 1, 'the payment reached its service once');
is(scalar(calls_of('looki')), 2, 'nothing ran again at the resume');
($types) = thread_of('lgi', $ti);
is_deeply($types, [ qw(human ai tool tool ai) ],
          'on_unknown: each message once');

# a run with neither input nor answer answers the wait with null, as
# LangGraph's do (so does a take-over of a resumed round): no answer,
# the model is told the outcome is unknown, nothing runs again
my ($tn, $rn) = start('lgi', 'payi', 'pay none');
ok(held(qw(payn1 lookn1)), 'no answer: the round reached the service');
kill 'KILL', holder($tn);
AgentTest::free($dir, qw(payn1 lookn1));
ends('lgi', $tn, $rn, 'interrupted');
$r = $t->http('POST', "/lgi/threads/$tn/runs/wait",
              { assistant_id => 'payi' });
like($r->{json}{messages}[-1]{content} // '', qr/^pay none: /,
     'no answer: the run answered');
($after) = asked_after('pay none');
%res = map { $_->{tool_call_id} => $_->{content} }
       grep { $_->{role} eq 'tool' } @{ $after // [] };
like($res{n1} // '', qr/outcome unknown: no human answered/,
     'no answer: the model is told the outcome is unknown');
is(scalar(calls_of('payn')), 1, 'no answer: the payment made once');

# --- 3. a model call cut by a take-over: its tokens once in a join ----------

# with values (a step's end) and with messages alone (none)
for my $modes ([ 'values', 'messages-tuple' ], [ 'messages-tuple' ]) {
    my $q = @$modes > 1 ? 'stream it' : 'stream tokens';
    my ($ts, $rs) = start('lgs', 'react', $q, stream_mode => $modes);
    # some of the cut call's tokens were kept before the worker goes
    ok(AgentTest::wait_for(sub {
        $t->sqlite($db, "SELECT count(*) FROM run_events WHERE run_id ="
                        . " '$rs' AND data LIKE '%lost%'") >= 3 }, 30),
       "$q: the cut call's tokens were kept");
    kill 'KILL', holder($ts);
    ends('lgs', $ts, $rs, 'success');

    my @ev = join_of('lgs', $ts, $rs);
    start_once(@ev);
    my @tok = map { $_->{_json}[0]{content} // '' }
              grep { $_->{_event} eq 'messages'
                     && ref $_->{_json} eq 'ARRAY' } @ev;
    is(scalar(grep { /lost/ } @tok), 0,
       "$q: a join after the take-over shows none of the cut call's tokens");
    is(join('', grep { /new/ } @tok), 'new ' x 5,
       "$q: the new call's tokens once");
    my ($types, $msgs) = thread_of('lgs', $ts);
    is_deeply($types, [ qw(human ai) ], "$q: the question, the answer");
    is($msgs->[-1]{content}, 'new ' x 5, "$q: the new answer");
}

# --- 4. PostgreSQL: the worker's connection cut in the middle of a write ----

SKIP: {
    skip 'PostgreSQL only (t/pg/run)', 11 unless $PG;
    my $name = AgentTest::pg_name($db);

    my ($tg, $rg) = start('lg', 'pay', 'cut pg');
    ok(held('lookg1'), 'PG: the round reached the service');
    # the model's step is written (it may be written behind the round)
    ok(AgentTest::wait_for(sub { $t->sqlite($db, "SELECT count(*) FROM"
        . " messages WHERE session_id = '$tg'") == 2 }, 30),
       'PG: the model\'s step written');

    # the round's step, written once the call answers, waits: its
    # connection is cut while it writes
    AgentTest::pg_query($name, qq{CREATE OR REPLACE FUNCTION slow_write()
        RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
        IF NEW.session_id = '$tg' THEN PERFORM pg_sleep(30); END IF;
        RETURN NEW; END \$\$;
        CREATE TRIGGER slow_write BEFORE INSERT ON checkpoints
        FOR EACH ROW EXECUTE FUNCTION slow_write()});
    AgentTest::free($dir, 'lookg1');

    my $cut = '';
    ok(AgentTest::wait_for(sub {
        $cut = AgentTest::pg_query($name, q{SELECT
            string_agg(pg_terminate_backend(pid)::text, ',')
            FROM pg_stat_activity WHERE application_name = 'nginx-agent'
            AND wait_event = 'PgSleep'});
        $cut =~ /true|1/ }, 30), 'PG: its backend cut in the write')
        or diag($cut);
    AgentTest::pg_query($name, 'DROP TRIGGER slow_write ON checkpoints');

    my $s = '';
    ok(AgentTest::wait_for(sub {
        $s = $t->http('GET', "/lg/threads/$tg/runs/$rg")->{json}{status}
             // '';
        $s eq 'success' || $s eq 'error' }, 90), "PG: the run ended ($s)")
        or diag($t->slurp('error.log'));
    my $m;
    ($types, $m) = thread_of('lg', $tg);
    my %n;
    $n{$_}++ for map { $_->{id} // '' } @$m;
    is(scalar(grep { $_ > 1 } values %n), 0, 'PG: no message doubled');
    is_deeply($types, $s eq 'success' ? [ qw(human ai tool ai) ]
                                      : [ qw(human ai) ],
              'PG: the step written whole or not at all') or diag("@$types");
    like($t->slurp('error.log'), $s eq 'success' ? qr/./
         : qr/PostgreSQL connection \d+ failed: FATAL:  terminating/,
         'PG: a clear error when it failed');
    is(scalar(calls_of('lookg')), 1, 'PG: the tool called once');
    # its end, cut too, is written again by its own worker once the
    # connection is back: not ended by another's look as a lost worker's
    my $log = $t->slurp('error.log');
    unlike($log, qr/run "$rg" of thread "$tg" ended: another turn/,
           'PG: not ended as one whose worker was lost');
    like($log, $s eq 'success' ? qr/./
         : qr/the end of run "$rg" saved on a later try/,
         'PG: its worker saved its end once the store was back');
}

# --- 5. nginx -s reload during a round: the old worker finishes it ----------

my ($tr, $rr) = start('lg', 'pay', 'reload it');
ok(held('payr1'), 'reload: the call reached the service');
my $old = holder($tr);
my %before = map { $_ => 1 } $t->worker_pids;
kill "HUP", $t->{nginx};
ok(AgentTest::wait_for(sub {
    grep { !$before{$_} } $t->worker_pids }, 30), 'reload: new workers');
AgentTest::free($dir, 'payr1');

ends('lg', $tr, $rr, 'success');
is(scalar(calls_of('payr')), 1, 'reload: the call reached its service once');
($types) = thread_of('lg', $tr);
is_deeply($types, [ qw(human ai tool ai) ], 'reload: each message once');
answer_once(qr/^reload it: /, join_of('lg', $tr, $rr));
ok(AgentTest::wait_for(sub { !kill 0, $old }, 30),
   'reload: the old worker ended');

# nginx -t: on_unknown= knows two words
my $bad = AgentTest->new;
(my $bg = $graph) =~ s/NAME/odd/;
$bg =~ s/ TOOLS/ on_unknown=later/;
$bad->write_conf($bad->conf(http => "agent_tool pay location=/internal/svc"
                                    . " \"description=Pays\";\n$bg"));
my ($good, $said) = $bad->test_conf;
ok(!$good, 'nginx -t refuses on_unknown=later');
like($said, qr/on_unknown.*one of result interrupt/, '... and says why')
    or diag($said);

$t->check_log(allow => qr/exited on signal 9|lost its worker|was cut while/);
my @killed = $t->slurp('error.log') =~ /exited on signal 9/g;
is(scalar @killed, 6, 'no worker died but the six killed');
done_testing;
