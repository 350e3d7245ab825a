#!/usr/bin/perl
# A cancel reads back as cancelled (issue 48, item 11): an Open Responses
# cancel and an A2A CancelTask of a run on one worker, asked through
# either worker, then read at once through both: every read says
# cancelled, never in progress, also while the run's worker is stopped
# (SIGSTOP: it cannot have heard the cancel), and after the run's own end
# on its worker (its model's whole answer come meanwhile); a cancelled
# response is not deleted, nor its kept events let go, while its run still
# stops; on PostgreSQL, an end held (a trigger waits for a gate) before or
# while the cancel comes.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use IO::Select;
use IO::Socket::INET;
use JSON::PP;
use Time::HiRes qw(sleep);

my $t = AgentTest->new;
# slow: a run holds its worker's model call for seconds
$t->mock(sub {
    my ($req) = @_;
    my $last = $req->{messages}[-1]{content} // '';
    return { text => 'quick' } if $last eq 'quick';
    return { text => join(' ', 1 .. 40), pieces => [ map { "$_ " } 1 .. 40 ],
             delay => $last eq 'slower' ? 0.3 : 0.15 };
});

my $conf = $t->conf(http => <<'HTTP');
agent_graph chat {
    node model llm;
    edge START model;
    edge model END;
}
HTTP
$conf =~ s{(location /api/chat/)}{location = /who {
            add_header X-Worker \$pid always; return 204; }
        location /v1/ { agent_responses; agent_owner \$http_x_user;
            agent_use_graph chat; add_header X-Worker \$pid always; }
        location /v1k/ { agent_responses; agent_owner \$http_x_user;
            agent_use_graph chat; agent_run_events_keep 3s; }
        location /a2a/ { agent_a2a; agent_owner \$http_x_user;
            agent_use_graph chat; add_header X-Worker \$pid always; }
        $1};
# each new connection may go to either worker
$conf =~ s{listen (127\.0\.0\.1:%%PORT%%);}{listen $1 reuseport;};
$t->run($conf);

# a request on a connection served by the worker $pid ($same) or by
# another one; a worker that does not answer /who at once (stopped) is
# another one that cannot take the request: the next connection is tried.
# $sent: the socket once the request is sent, its answer not read
sub on_worker {
    my ($same, $pid, $method, $path, $body, $sent) = @_;
    for (1 .. 200) {
        my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                      PeerPort => $t->port) or die $!;
        print $s "GET /who HTTP/1.1\r\nHost: x\r\n\r\n";
        my $sel = IO::Select->new($s);
        my $head = '';
        while ($head !~ /\r\n\r\n/ && $sel->can_read(0.5)) {
            last unless sysread($s, $head, 4096, length $head);
        }
        my ($w) = $head =~ /X-Worker: (\d+)/i;
        if (!$w || ($w eq $pid) != $same) {
            close $s;
            next;
        }
        $body //= '';
        print $s "$method $path HTTP/1.1\r\nHost: x\r\nX-User: alice\r\n"
                 . "Content-Type: application/json\r\n"
                 . "Content-Length: " . length($body) . "\r\n"
                 . "Connection: close\r\n\r\n$body";
        return $s if $sent;
        my $res = '';
        while ($sel->can_read(20)) {
            last unless sysread($s, $res, 65536, length $res);
        }
        close $s;
        my ($status) = $res =~ m{^HTTP/1\.1 (\d+)};
        my ($h, $b) = split /\r\n\r\n/, $res, 2;
        if ($h =~ /Transfer-Encoding: chunked/i) {
            my $d = '';
            while ($b =~ s/^([0-9a-f]+)\r\n//i && hex $1) {
                $d .= substr($b, 0, hex $1, '');
                $b =~ s/^\r\n//;
            }
            $b = $d;
        }
        return { worker => $w, status => $status,
                 json => eval { decode_json($b) } // {} };
    }
    die "no connection to the worker wanted";
}

sub create {
    my ($input) = @_;
    my $r = $t->http('POST', '/v1/responses', encode_json({
        model => 'chat', input => $input // 'slow',
        background => JSON::PP::true }), 'X-User' => 'alice');
    die "background: $r->{status} $r->{content}" unless $r->{status} == 200;
    return ($r->{json}{id}, $r->{headers}{'x-worker'});
}

# the run has begun its model call: its worker runs it
sub started {
    my ($n) = @_;
    return AgentTest::wait_for(sub { $t->{mock}->requests >= $n }, 20);
}

# 1. cancel and read at once, spread over both workers, many times
my (@ids, @stale);
my $reads = 0;
for my $i (1 .. 10) {
    my ($id, $w) = create();
    push @ids, $id;
    started($i);
    my $c = on_worker($i % 2, $w, 'POST', "/v1/responses/$id/cancel");
    is($c->{json}{status}, 'cancelled',
       "cancel $i (" . ($i % 2 ? 'its' : 'the other') . ' worker): '
       . 'cancelled') or diag explain $c;
    for my $same (0, 1, 0, 1) {
        my $g = on_worker($same, $w, 'GET', "/v1/responses/$id");
        $reads++;
        push @stale, "$i: $g->{json}{status}"
            unless ($g->{json}{status} // '') eq 'cancelled';
    }
}
is_deeply(\@stale, [], "every one of $reads reads after a cancel: "
          . 'cancelled');

# 2. the run's worker stopped: it has not heard the cancel
my ($id, $w) = create();
started(11);
kill 'STOP', $w;
my $c = on_worker(0, $w, 'POST', "/v1/responses/$id/cancel");
is($c->{json}{status}, 'cancelled', 'its worker stopped: cancelled');
is(on_worker(0, $w, 'GET', "/v1/responses/$id")->{json}{status},
   'cancelled', '... and read so through the other worker');
# what its worker writes until it stops would outlive a row deleted now
my $d = on_worker(0, $w, 'DELETE', "/v1/responses/$id");
is($d->{status}, 400, '... not deleted while its run is stopping');
like($d->{json}{error}{message} // '', qr/still stopping/, '... said so');

# the model's whole answer comes while the worker is stopped: once it
# runs again, it may end the run before it hears the cancel
ok(AgentTest::wait_for(sub {
    grep { $_->{event} eq 'done' } $t->{mock}->log_lines }, 30),
   'the model\'s answer sent meanwhile');
kill 'CONT', $w;
ok(AgentTest::wait_for(sub {
    $t->sqlite($t->dir . '/agent.db', "SELECT count(*) FROM sessions"
               . " WHERE run_id IS NOT NULL") eq '0' }, 30),
   'the runs ended on their workers');
my @all = (@ids, $id);
my @after = map { on_worker($_ % 2, $w, 'GET', "/v1/responses/$all[$_]")
                  ->{json}{status} // '' } 0 .. $#all;
is_deeply(\@after, [ ('cancelled') x @after ],
          'every one after its end: cancelled still');
is($t->sqlite($t->dir . '/agent.db', "SELECT status FROM runs WHERE "
              . "run_id = '" . substr($id, 5, 36) . "'"),
   'interrupted', 'its row says so');
is(on_worker(0, $w, 'DELETE', "/v1/responses/$id")->{json}{deleted},
   JSON::PP::true, 'deleted after its end');
my $run = substr($id, 5, 36);
is($t->sqlite($t->dir . '/agent.db', "SELECT (SELECT count(*) FROM runs"
              . " WHERE run_id = '$run') + (SELECT count(*) FROM run_events"
              . " WHERE run_id = '$run')"), '0', '... nothing of it left');

# 3. A2A: CancelTask then GetTask through the other worker, the task's
# worker stopped
my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $t->port)
    or die $!;
my $msg = encode_json({ jsonrpc => '2.0', id => 1,
    method => 'SendStreamingMessage', params => { message => {
        role => 'ROLE_USER', messageId => 'm1',
        parts => [ { text => 'slow' } ] } } });
print $s "POST /a2a/ HTTP/1.1\r\nHost: x\r\nX-User: alice\r\n"
         . "Content-Type: application/json\r\nA2A-Version: 1.0\r\n"
         . "Content-Length: " . length($msg) . "\r\n"
         . "Connection: close\r\n\r\n$msg";
my $got = '';
my $sel = IO::Select->new($s);
while ($got !~ /"id":"([0-9a-f-]{36})"/ && $sel->can_read(20)) {
    last unless sysread($s, $got, 65536, length $got);
}
my ($task) = $got =~ /"task":\{"id":"([0-9a-f-]{36})"/;
($task) = $got =~ /"taskId":"([0-9a-f-]{36})"/ unless $task;
($w) = $got =~ /X-Worker: (\d+)/i;
ok($task && $w, 'A2A: a streamed task') or diag $got;
started(12);
kill 'STOP', $w;
my $rpc = sub {
    my ($method, $n) = @_;
    return on_worker(0, $w, 'POST', '/a2a/', encode_json({
        jsonrpc => '2.0', id => $n, method => $method,
        params => { id => $task } }))->{json};
};
$c = $rpc->('CancelTask', 2);
is($c->{result}{status}{state}, 'TASK_STATE_CANCELED',
   'CancelTask, its worker stopped: canceled') or diag explain $c;
is($rpc->('GetTask', 3)->{result}{status}{state}, 'TASK_STATE_CANCELED',
   '... GetTask through the other worker: canceled');
kill 'CONT', $w;
1 while $sel->can_read(20) && sysread($s, $got, 65536, length $got);
close $s;
is($rpc->('GetTask', 4)->{result}{status}{state}, 'TASK_STATE_CANCELED',
   '... and after its end');

# 4. a run that ran for longer than the events' keep of a run that starts
# after its cancel (3 s): its kept events are not let go while its worker
# still writes them (the cancel is its end's time)
($id, $w) = create('slower');
started(13);
sleep 3.5;
kill 'STOP', $w;
is(on_worker(0, $w, 'POST', "/v1/responses/$id/cancel")->{json}{status},
   'cancelled', 'a run older than the keep cancelled');
is(on_worker(0, $w, 'POST', '/v1k/responses', encode_json({
    model => 'chat', input => 'quick' }))->{json}{status}, 'completed',
   '... a run starts after it, with a keep of 3 s');
$run = substr($id, 5, 36);
is($t->sqlite($t->dir . '/agent.db', "SELECT events FROM runs WHERE run_id"
              . " = '$run'"), '1', '... the cancelled run\'s events kept');
kill 'CONT', $w;

# 5. PostgreSQL: a run's end held at its outcome (a trigger that waits
# for a gate) while the cancel comes; then a run's end held at its status
# while a cancel waits for its row.  No delay: each waits for the other
if ($ENV{AGENT_PG}) {
    my $db = AgentTest::pg_name($t->dir . '/agent.db');
    my $q = sub { AgentTest::pg_query($db, $_[0]) };
    $q->(q{CREATE TABLE hold (run_id text, what text, gate int);
        CREATE FUNCTION held(r text, w text) RETURNS void
        LANGUAGE plpgsql AS $$ BEGIN FOR i IN 1 .. 1200 LOOP
        EXIT WHEN NOT EXISTS (SELECT 1 FROM hold WHERE run_id = r
                              AND what = w AND gate = 0);
        PERFORM pg_sleep(0.05); END LOOP; END $$;
        CREATE FUNCTION hold_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.seq = 0 THEN PERFORM held(NEW.run_id, 'outcome');
        END IF;
        RETURN NEW; END $$;
        CREATE TRIGGER hold_outcome BEFORE INSERT ON run_events
        FOR EACH ROW EXECUTE FUNCTION hold_outcome();
        CREATE FUNCTION hold_end() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.status = 'success' THEN
        PERFORM held(NEW.run_id, 'end'); END IF; RETURN NEW; END $$;
        CREATE TRIGGER hold_end BEFORE UPDATE ON runs
        FOR EACH ROW EXECUTE FUNCTION hold_end()});
    my $waiting = sub {
        my ($like, $type) = @_;
        return AgentTest::wait_for(sub { $q->("SELECT count(*) FROM "
            . "pg_stat_activity WHERE query LIKE '$like%' AND "
            . "wait_event_type = '$type'") > 0 }, 60);
    };

    # its worker has ended it, its end not stored yet: the cancel is
    # answered, and the end that follows does not undo it
    my ($id, $w) = create();
    $run = substr($id, 5, 36);
    $q->("INSERT INTO hold VALUES ('$run', 'outcome', 0)");
    ok($waiting->('INSERT INTO run_events', 'Timeout'),
       'PostgreSQL: the run\'s end held at its outcome');
    my $c = on_worker(0, $w, 'POST', "/v1/responses/$id/cancel");
    is($c->{json}{status}, 'cancelled', '... a cancel then: cancelled');
    $q->("UPDATE hold SET gate = 1");
    ok(AgentTest::wait_for(sub { $q->("SELECT count(*) FROM sessions"
        . " WHERE run_id IS NOT NULL") eq '0' }, 30), '... the run ended');
    is(on_worker(1, $w, 'GET', "/v1/responses/$id")->{json}{status},
       'cancelled', '... and reads cancelled still, its end stored after');

    # the cancel waits for the row its end holds: the run completed first
    ($id, $w) = create();
    $run = substr($id, 5, 36);
    $q->("INSERT INTO hold VALUES ('$run', 'end', 0)");
    ok($waiting->('WITH w AS', 'Timeout'), 'the run\'s end held at its '
       . 'status') or diag $q->("SELECT query FROM pg_stat_activity");
    # through the other worker: the run's queues its store calls behind
    # its end's
    my $s = on_worker(0, $w, 'POST', "/v1/responses/$id/cancel", '', 1);
    ok($waiting->('UPDATE runs SET cancel', 'Lock'),
       '... a cancel waits for its row');
    $q->("UPDATE hold SET gate = 1");
    my $res = '';
    1 while IO::Select->new($s)->can_read(20)
            && sysread($s, $res, 65536, length $res);
    close $s;
    like($res, qr{^HTTP/1\.1 400}, '... answered: not in progress')
        or diag $res;
    is(on_worker(0, $w, 'GET', "/v1/responses/$id")->{json}{status},
       'completed', '... as it reads: completed');
    $q->(q{DROP TRIGGER hold_outcome ON run_events;
           DROP TRIGGER hold_end ON runs});
}

$t->stop;
$t->check_log;
done_testing;
