#!/usr/bin/perl
# Many hosts on one PostgreSQL, and PostgreSQL's faults.
#
# Three nginx instances with their own prefixes and ports, as three hosts
# behind a balancer, share one database of Debian's PostgreSQL (a
# throwaway cluster: t/pg/run, started here when make test did not):
#
# 1. a conversation whose turns go round the hosts, each seeing the whole
#    history; a running turn is 409 on the others;
# 2. a host killed mid-turn: another continues the conversation;
# 3. a reload of one host while the others serve;
# 4. faults: the server stopped mid-turn and started again, unreachable
#    when nginx starts, slow (a lock held for seconds), a connection cut
#    during a turn: clear errors, nothing half-written, and recovery
#    without restarting nginx.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";

BEGIN {
    # make test: a cluster of its own for this file
    unless ($ENV{AGENT_PG}) {
        exec "$FindBin::Bin/pg/run", $^X, $0;
        die "t/pg/run: $!";
    }
}

use AgentTest;
use Time::HiRes qw(time sleep);
use Digest::SHA qw(sha1_hex);

sub file_bytes {
    open my $fh, '<:raw', $_[0] or return '';
    local $/;
    return <$fh> // '';
}
use POSIX qw(WNOHANG);

my @as = split ' ', $ENV{AGENT_PG_AS} // '';

sub pg_ctl {
    my ($what) = @_;
    return system(@as, "$ENV{AGENT_PG_BIN}/pg_ctl", '-D', $ENV{AGENT_PG_DATA},
                  '-w', '-m', 'fast', '-l', $ENV{AGENT_PG_LOG},
                  '-o', $ENV{AGENT_PG_START}, $what) == 0;
}

my $db = 'hosts';
AgentTest::pg_query('postgres', "CREATE DATABASE $db");
my $url = "$ENV{AGENT_PG}/$db";


# three hosts on the one database
my @h;
for my $i (0 .. 2) {
    my $t = AgentTest->new;
    $t->mock(\&AgentTest::sum_script);
    # host 2 imports uploads on its event loop, the others on a thread pool
    my $conf = $t->conf(location => 'agent_turn_lease 4s;',
                        http => $i == 2 ? 'agent_sql_thread_pool off;' : '');
    $conf =~ s{agent_checkpoint_db \S+;}
              {agent_checkpoint_db $url pool=2 timeout=2s;};
    $t->run($conf);
    push @h, $t;
}

# --- 1. a conversation round the hosts -------------------------------------

my $sid = $h[0]->session;
for my $n (1 .. 6) {
    my $t = $h[$n % 3];
    my $r = $t->turn($sid, "question $n");
    is($r->{types}[-1], 'end', "turn $n on host " . ($n % 3));
    is($r->{events}[-1]{full_response}, "turn $n: question $n",
       "host " . ($n % 3) . " sees the $n questions so far");
}

my $m = $h[1]->http('GET', "/api/sessions/$sid/messages")->{json};
is(scalar @{ $m->{messages} }, 12, 'the history is whole from any host');

# the steps of one pass are written in one statement (the input step and
# the first node's, here): still one row each, in order, each the next's
# parent, the counters summed
my @cp = split /\n/, AgentTest::pg_query($db, "SELECT id, COALESCE(parent_id, "
    . "''), step, msg_count FROM checkpoints WHERE session_id = '$sid' "
    . "ORDER BY n");
my ($chain, $steps) = (1, 1);
for my $i (1 .. $#cp) {
    my @a = split /\|/, $cp[$i - 1];
    my @b = split /\|/, $cp[$i];
    $chain = 0 if $b[1] ne $a[0];
    $steps = 0 if $b[2] != $a[2] + 1 && $b[2] != -1;
}
ok(@cp >= 12 && $chain, scalar(@cp) . ' checkpoints, each the next one\'s '
   . 'parent');
ok($steps, 'their steps in order');
is(AgentTest::pg_query($db, "SELECT message_count FROM sessions "
    . "WHERE id = '$sid'"), 12, 'the session counts its 12 messages');
is($h[2]->http('GET', "/api/sessions/")->{json}{sessions}[0]{id}, $sid,
   'the sessions listed from any host');

# a running turn holds the session on every host
my $pid = fork() // die;
if ($pid == 0) {
    $SIG{TERM} = sub { POSIX::_exit(0) };
    my $r = $h[0]->turn($sid, 'slow one');
    POSIX::_exit(($r->{types}[-1] // '') eq 'end' ? 0 : 1);
}
sleep 1;
my $r = $h[1]->http('POST', "/api/chat/$sid/message", { message => 'me' });
is($r->{status}, 409, 'a turn running on host 0 is 409 on host 1');
is($h[2]->http('DELETE', "/api/sessions/$sid")->{status}, 409,
   'and its session cannot be deleted from host 2');
waitpid($pid, 0);
is($? >> 8, 0, 'the turn on host 0 ended with its end event');
is($h[1]->turn($sid, 'after')->{types}[-1], 'end',
   'host 1 continues after it');

# an upload on one host, queried on the others
my $su = $h[1]->session;
$r = $h[1]->http('POST', "/api/sessions/$su/resources?name=n.csv",
                 "n\n1\n2\n3\n", 'Content-Type' => 'text/csv');
is($r->{status}, 201, 'a CSV uploaded to host 1');
for my $i (2, 0) {
    $r = $h[$i]->turn($su, 'sum it');
    like($r->{events}[-1]{full_response} // '', qr/\[\[6\]\]/,
         "host ${i}'s SQL tool reads it (fetched once into its own "
         . 'folder)');
}
like($h[0]->slurp('error.log'),
     qr/fetched from the store, written on the thread pool/,
     'host 0 writes its copy on its thread pool');
like($h[2]->slurp('error.log'),
     qr/fetched from the store, written on the event loop/,
     'host 2 (no thread pool) on its event loop');
my @cached = glob($h[2]->dir . '/resources/*.sqlite');
is(scalar @cached, 1, 'host 2 keeps one copy');
is(AgentTest::pg_query($db, 'SELECT COUNT(*) FROM blobs'), 1,
   'the store keeps its bytes once');
my ($taken) = glob($h[1]->dir . '/resources/*.sqlite');
unlike($h[1]->slurp('error.log'), qr/read and hashed on the event loop/,
       'host 1 reads and hashes the upload on its thread pool');
is(AgentTest::pg_query($db, 'SELECT hash FROM blobs'),
   sha1_hex(file_bytes($taken)),
   'by their SHA-1 (worked out with the import, on the thread pool)');
is(sha1_hex(file_bytes($cached[0])), sha1_hex(file_bytes($taken)),
   "host 2's copy has the same bytes");

# the same on a host that imports on its event loop
my $su2 = $h[2]->session;
$r = $h[2]->http('POST', "/api/sessions/$su2/resources?name=m.csv",
                 "n\n4\n5\n", 'Content-Type' => 'text/csv');
is($r->{status}, 201, 'a CSV uploaded to host 2 (no thread pool)');
like($h[2]->slurp('error.log'), qr/read and hashed on the event loop/,
     'host 2 reads and hashes it on its event loop');
like($h[0]->turn($su2, 'sum it')->{events}[-1]{full_response} // '',
     qr/\[\[9\]\]/, "host 0's SQL tool reads it");
($taken) = glob($h[2]->dir . "/resources/$r->{json}{id}.sqlite");
is(AgentTest::pg_query($db, "SELECT blob FROM resources WHERE id = "
                            . "'$r->{json}{id}'"),
   sha1_hex(file_bytes($taken)), 'its bytes by their SHA-1 too');
is($h[2]->http('DELETE', "/api/sessions/$su2")->{status}, 204,
   'that session deleted');
is($h[2]->http('DELETE', "/api/sessions/$su")->{status}, 204,
   'the session deleted from host 2');
is(AgentTest::pg_query($db, 'SELECT COUNT(*) FROM blobs'), 0,
   'its bytes with it');

# --- 2. a host killed mid-turn ----------------------------------------------

my $s2 = $h[0]->session;
is($h[0]->turn($s2, 'first')->{types}[-1], 'end', 'a first turn on host 0');
$pid = fork() // die;
if ($pid == 0) {
    $SIG{TERM} = sub { POSIX::_exit(0) };
    $h[0]->turn($s2, 'slow killed');
    POSIX::_exit(0);
}
sleep 1;
my @w = $h[0]->worker_pids;
kill 'KILL', $h[0]->{nginx}, @w;
waitpid(delete $h[0]->{nginx}, 0);
waitpid($pid, 0);

# its lease runs out (4 s; at once when its processes are reaped on this
# machine, t/takeover_worker_killed.t); another machine's, the same
# (t/takeover_lease_hosts.t)
ok(AgentTest::wait_for(sub {
       ($h[1]->turn($s2, 'continued')->{types}[-1] // '') eq 'end' }, 15),
   'host 1 continues the killed host\'s session');
my @roles = map { $_->{role} }
    @{ $h[1]->http('GET', "/api/sessions/$s2/messages")->{json}{messages} };
is_deeply(\@roles, [qw(user assistant user user assistant)],
          'the killed turn left its input and nothing half-written');
$h[0]->run($h[0]->slurp('nginx.conf'));

# --- 3. a reload on one host while the others serve -------------------------

my $s3 = $h[2]->session;
@w = $h[0]->worker_pids;
kill 'HUP', $h[0]->{nginx};
my $ok = 0;
for my $n (1 .. 6) {
    $ok++ if $h[1 + $n % 2]->turn($s3, "during $n")->{types}[-1] eq 'end';
}
is($ok, 6, 'hosts 1 and 2 serve while host 0 reloads');
ok(AgentTest::wait_for(sub { !(grep { kill 0, $_ } @w) }, 10),
   'host 0 has new workers');
is($h[0]->turn($s3, 'after reload')->{types}[-1], 'end',
   'and serves the same conversation');

# --- 4. faults ----------------------------------------------------------------

# the server stopped mid-turn, started again
my $s4 = $h[0]->session;
$pid = fork() // die;
if ($pid == 0) {
    $SIG{TERM} = sub { POSIX::_exit(0) };
    my $r = $h[0]->turn($s4, 'slow stopped');
    open my $fh, '>', $h[0]->dir . '/stopped.json' or POSIX::_exit(1);
    print $fh encode_json($r->{events}[-1] // {});
    close $fh;
    POSIX::_exit(0);
}
# mid-turn: once its input is stored (a loaded host may take a while to
# get there; a fixed sleep stopped the server before the turn began)
AgentTest::wait_for(sub {
    my $m = $h[1]->http('GET', "/api/sessions/$s4/messages")->{json};
    @{ $m->{messages} // [] } == 1 }, 15);
sleep 0.3;
ok(pg_ctl('stop'), 'PostgreSQL stopped mid-turn');
waitpid($pid, 0);
my $last = decode_json($h[0]->slurp('stopped.json') || '{}');
is($last->{type}, 'error', 'the turn ends with an error event');
like($last->{error} // '', qr/could not be saved/, 'saying why');
$r = $h[1]->http('GET', "/api/sessions/$s4");
is($r->{status}, 500, 'a request while it is down: 500');
like($r->{json}{error} // '', qr/store/, 'with a clear error');
ok(pg_ctl('start'), 'PostgreSQL started again');
ok(AgentTest::wait_for(sub {
       $h[1]->http('GET', "/api/sessions/$s4")->{status} == 200 }, 15),
   'the hosts reconnect by themselves');
# each worker's connection comes back on its own: read where one has
my $msgs;
AgentTest::wait_for(sub {
    my $m = $h[1]->http('GET', "/api/sessions/$s4/messages");
    $msgs = $m->{json}{messages} if $m->{status} == 200;
    $m->{status} == 200 }, 15);
@roles = map { $_->{role} } @{ $msgs // [] };
is_deeply(\@roles, ['user'], 'the stopped turn: its input, no half answer');
# the unlock could not be written: the lease frees it (4 s)
ok(AgentTest::wait_for(sub {
       $h[0]->turn($s4, 'again')->{types}[-1] eq 'end' }, 15),
   'the session goes on once its lease is over');

# unreachable when nginx starts
ok(pg_ctl('stop'), 'PostgreSQL stopped');
my $d = AgentTest->new;
$d->mock(\&AgentTest::sum_script);
my $dconf = $d->conf;
$dconf =~ s{agent_checkpoint_db \S+;}{agent_checkpoint_db $url;};
$d->run($dconf);
$r = $d->http('POST', '/api/sessions/', { title => 'x' });
ok($r->{status} >= 500, "nginx starts without it; a request: $r->{status}");
ok(pg_ctl('start'), 'PostgreSQL started');
ok(AgentTest::wait_for(sub {
       $d->http('POST', '/api/sessions/', { title => 'x' })->{status}
       == 201 }, 15),
   'the new host serves once it is up');

# slow: a lock held for seconds; timeout=2s
my $lock = fork() // die;
if ($lock == 0) {
    exec('psql', '-X', '-q', '-d', $url, '-c',
         'BEGIN; LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE; '
         . 'SELECT pg_sleep(6); COMMIT;') or POSIX::_exit(1);
}
sleep 0.5;
my $t0 = time;
$r = $h[1]->http('GET', "/api/sessions/$s4");
my $took = time - $t0;
is($r->{status}, 500, 'a statement behind the lock fails');
ok($took < 4.5, sprintf('after the timeout, not the lock (%.1f s)', $took));
waitpid($lock, 0);
is($h[1]->http('GET', "/api/sessions/$s4")->{status}, 200,
   'and the next one, the lock gone, is answered');

# a connection cut during a turn
my $s5 = $h[2]->session;
$pid = fork() // die;
if ($pid == 0) {
    $SIG{TERM} = sub { POSIX::_exit(0) };
    my $r = $h[2]->turn($s5, 'slow cut');
    open my $fh, '>', $h[2]->dir . '/cut.json' or POSIX::_exit(1);
    print $fh encode_json({ type => $r->{types}[-1] });
    close $fh;
    POSIX::_exit(0);
}
sleep 1;
AgentTest::pg_query($db, "SELECT pg_terminate_backend(pid) FROM "
    . "pg_stat_activity WHERE application_name = 'nginx-agent'");
waitpid($pid, 0);
$last = decode_json($h[2]->slurp('cut.json') || '{}');
ok($last->{type} eq 'end' || $last->{type} eq 'error',
   "the cut turn ends with an event ($last->{type})");
ok(AgentTest::wait_for(sub {
       $h[2]->turn($s5, 'after the cut')->{types}[-1] eq 'end' }, 10),
   'the next turn is served on a new connection');
my $n = AgentTest::pg_query($db, "SELECT COUNT(*) FROM messages m "
    . "WHERE session_id = '$s5' AND NOT EXISTS (SELECT 1 FROM checkpoints c "
    . "WHERE c.session_id = m.session_id AND c.msg_count > m.seq)");
is($n, 0, 'no message without its checkpoint');

# the session's row changed while a turn asks for its lease (here a rename
# held in a transaction, as a last step letting the session go would be):
# the turn's start reads the session again, as it is now.  The row is held
# for 1 s, well within the hosts' statement timeout (2 s).
my $s6 = $h[0]->session;
is($h[0]->turn($s6, 'before')->{types}[-1], 'end', 'a first turn');
my $hold = fork() // die;
if ($hold == 0) {
    open STDOUT, '>', '/dev/null';
    exec('psql', '-X', '-q', '-d', $url, '-c',
         "BEGIN; UPDATE sessions SET title = 'renamed meanwhile' "
         . "WHERE id = '$s6'; SELECT pg_sleep(1); COMMIT;")
        or POSIX::_exit(1);
}
# the row held: its transaction has written (it has an id)
ok(AgentTest::wait_for(sub {
       AgentTest::pg_query($db, "SELECT COUNT(*) FROM pg_locks l JOIN "
           . "pg_stat_activity a USING (pid) WHERE l.locktype = "
           . "'transactionid' AND a.query LIKE '%renamed meanwhile%' "
           . "AND a.pid <> pg_backend_pid()") > 0 }, 10),
   'a transaction holds the session\'s row');
$t0 = time;
$r = $h[1]->turn($s6, 'behind the row');
$took = time - $t0;
waitpid($hold, 0);
is($r->{types}[-1], 'end', 'the turn behind the changed row is served')
    or diag explain $r;
ok($took > 0.5, sprintf('after the change (%.1f s)', $took));
$m = $h[2]->http('GET', "/api/sessions/$s6")->{json};
is($m->{title}, 'renamed meanwhile', 'the change kept');
is(AgentTest::pg_query($db, "SELECT COUNT(*) FROM messages "
    . "WHERE session_id = '$s6'"), 4, 'both turns stored');
is(AgentTest::pg_query($db, "SELECT COUNT(*) FROM sessions "
    . "WHERE id = '$s6' AND run_id IS NULL"), 1, 'and the session let go');

# an unlock that could not be sent while the server was down is sent again
# once it is back: the session is free long before its lease (60 s here);
# a recorded turn's end, which lets its session go, is sent again so
$d->stop;
$dconf = $d->conf(location => 'agent_turn_lease 60s;');
$dconf =~ s{agent_checkpoint_db \S+;}{agent_checkpoint_db $url;};
$d->run($dconf);
my $s7 = $d->session;
$pid = fork() // die;
if ($pid == 0) {
    $SIG{TERM} = sub { POSIX::_exit(0) };
    $d->turn($s7, 'slow unlocked later');
    POSIX::_exit(0);
}
sleep 1;
ok(pg_ctl('stop'), 'PostgreSQL stopped mid-turn, a long lease');
waitpid($pid, 0);
ok(pg_ctl('start'), 'and started again');
# the session let go long before its lease, the unlock's retry logged
sub let_go {
    my ($sid, $what, $logged) = @_;
    my $t0 = time;
    ok(AgentTest::wait_for(sub {
           ($d->turn($sid, 'after it')->{types}[-1] // '') eq 'end' }, 20),
       "the session is let go $what");
    ok(time - $t0 < 30, sprintf('long before its lease: %.1f s', time - $t0));
    like($d->slurp('error.log'),
         $logged // qr/session "\Q$sid\E" could not be unlocked, trying again
                        |the\ end\ of\ run\ "[^"]+"\ could\ not\ be\ saved,
                         \ trying\ again/x,
         'the unlock\'s retry logged');
}
let_go($s7, 'once the server is back');

# an unlock lost with its connection (a client gone mid-turn, the server's
# backend cut while the unlock runs: a trigger makes it sleep) is sent
# again on a new one: the session is free long before its lease
$d->slow_unlock(1, $db);
my $s8 = $d->session;
$pid = fork() // die;
if ($pid == 0) {
    $SIG{TERM} = sub { POSIX::_exit(0) };
    $d->turn($s8, 'slow and left');
    POSIX::_exit(0);
}
sleep 1;
kill 'TERM', $pid;
waitpid($pid, 0);
# a recorded run's end lets its session go in its status's statement
# (turn_record.c); that cut, the session is let go by an unlock of its own
my $unlock = "state = 'active' AND query LIKE '%UPDATE sessions SET run_id "
             . "= NULL%' AND pid <> pg_backend_pid()";
ok(AgentTest::wait_for(sub {
       AgentTest::pg_query($db, "SELECT COUNT(*) FROM pg_stat_activity "
                                . "WHERE $unlock") > 0 }, 10),
   'the client gone, its unlock runs');
AgentTest::pg_query($db, "SELECT pg_terminate_backend(pid) FROM "
                         . "pg_stat_activity WHERE $unlock");
let_go($s8, 'on a new connection',
       qr/the end of run "[^"]+" could not be saved
          |session\ "\Q$s8\E"\ could\ not\ be\ unlocked/x);
$d->slow_unlock(0, $db);

# a DELETE that fails lets its session go before it answers 500: a turn
# at once is served, not refused for a lease nobody holds (60 s here)
my $s9 = $d->session;
AgentTest::pg_query($db, q{CREATE FUNCTION no_delete() RETURNS trigger
    LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'not now'; END $$;
    CREATE TRIGGER no_delete BEFORE DELETE ON sessions FOR EACH ROW
    EXECUTE FUNCTION no_delete()});
is($d->http('DELETE', "/api/sessions/$s9")->{status}, 500,
   'a DELETE that fails: 500');
AgentTest::pg_query($db, 'DROP TRIGGER no_delete ON sessions');
is($d->turn($s9, 'after the failed delete')->{types}[-1], 'end',
   'its session let go: a turn at once is served');

$_->stop for @h, $d;
$_->check_log for @h, $d;
done_testing;
