#!/usr/bin/perl
# The take-over check (issue 49, item 3), with four workers: a dead
# worker's run is still taken over, through the index of holders; a chat
# turn whose worker died, its session taken by its client's next message,
# is ended as an orphan; a live run whose end is written slowly (a store
# under load: a trigger that takes seconds on the status) is never taken
# for lost, as it was when its thread was let go before its end was
# written; many sessions made at once while another process holds the
# SQLite file's write lock all succeed (they waited, as a turn's writes
# do, where they were a 500 "database is locked").

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use Time::HiRes qw(time sleep);
use POSIX ();

my $t = AgentTest->new;
my $dir = $t->dir;
my $db = "$dir/agent.db";
my $PG = $ENV{AGENT_PG};

$t->mock(sub {
    my ($req) = @_;
    my $q = AgentTest::last_user($req);
    # slow tokens: a worker can be killed between two
    return { text => 'slow ' x 10, pieces => [ ('slow ') x 10 ],
             delay => 0.5 }
        if $q =~ /^slow/;
    return { text => "fine: $q" };
});

my $conf = $t->conf(workers => 4);
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api; }
        $1};
$t->run($conf);

sub status_of {
    my ($run) = @_;
    return $t->sqlite($db, "SELECT status FROM runs WHERE run_id = '$run'");
}

# --- a dead worker's run is still taken over -------------------------------

my $th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
my $r = $t->http('POST', "/lg/threads/$th/runs", { assistant_id => 'react',
    input => { messages => [ { role => 'user', content => 'slow one' } ] } });
is($r->{status}, 200, 'a background run');
my $run = $r->{json}{run_id};

my $holder;
ok(AgentTest::wait_for(sub {
    $holder = $t->sqlite($db, "SELECT run_pid FROM sessions "
                              . "WHERE id = '$th' AND run_id = '$run'");
    $holder =~ /^\d+$/ }, 20), 'a worker holds its thread');
kill 'KILL', $holder;

my $state = '';
ok(AgentTest::wait_for(sub {
    $state = $t->http('GET', "/lg/threads/$th/runs/$run")->{json}{status}
             // '';
    $state eq 'success' }, 40), 'another worker finished the run')
    or diag("status: $state\n" . $t->slurp('error.log'));
like($t->slurp('error.log'),
     qr/run "$run" of thread "$th" lost its worker, taken over/,
     'the take-over is logged');

# --- a chat turn whose worker died, its session taken by the next message --

my $sid = $t->session;
my $pid = fork() // die;
if ($pid == 0) {
    $t->turn($sid, 'slow chat', timeout => 30);
    POSIX::_exit(0);
}
my $first;
ok(AgentTest::wait_for(sub {
    $first = $t->sqlite($db, "SELECT run_id FROM sessions WHERE id = '$sid'");
    $first =~ /\S/ }, 20), 'a chat turn holds its session');
$holder = $t->sqlite($db, "SELECT run_pid FROM sessions WHERE id = '$sid'");
kill 'KILL', $holder;
waitpid($pid, 0);
# gone once its master reaped it (a zombie's pid answers kill 0)
ok(AgentTest::wait_for(sub { !kill 0, $holder }, 20), 'its worker is gone');

# its holder is gone: the next message takes the session at once
my $next = $t->turn($sid, 'again');
is($next->{types}[-1], 'end', 'the next message takes the session over');

ok(AgentTest::wait_for(sub { status_of($first) eq 'error' }, 40),
   'the check ends it as an orphan')
    or diag(status_of($first) . "\n" . $t->slurp('error.log'));
like($t->slurp('error.log'),
     qr/run "$first" of thread "$sid" ended: another turn took its thread/,
     '... and says so');

# --- a live run whose end is written slowly is never taken for lost ---------

# the store under load: the status of an ended run takes seconds to write
if ($PG) {
    $t->sqlite($db, q{CREATE OR REPLACE FUNCTION slow_end() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN IF NEW.status = 'success' THEN
        PERFORM pg_sleep(4); END IF; RETURN NEW; END $$;
        CREATE TRIGGER slow_end BEFORE UPDATE OF status ON runs
        FOR EACH ROW EXECUTE FUNCTION slow_end()});
} else {
    # no sleep in SQLite: a join it counts through, of a size that takes
    # it about 4 s here (the size measured, not the time asserted)
    my $burn = sub {
        my ($n) = @_;
        $t->sqlite($db, "PRAGMA busy_timeout = 10000; DROP TABLE IF EXISTS"
                        . " burn; CREATE TABLE burn (x INTEGER);"
                        . " WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL"
                        . " SELECT x + 1 FROM c WHERE x < $n)"
                        . " INSERT INTO burn SELECT x FROM c");
    };
    my $count = "SELECT count(*) FROM burn a, burn b, burn c"
                . " WHERE a.x + b.x + c.x > 0";
    $burn->(100);
    my $t0 = time;
    $t->sqlite($db, $count);
    my $took = time - $t0;
    my $n = int(100 * (4 / ($took > 0.02 ? $took : 0.02)) ** (1 / 3)) + 1;
    $burn->($n > 2000 ? 2000 : $n);
    $t->sqlite($db, "PRAGMA busy_timeout = 10000; CREATE TRIGGER slow_end"
                    . " BEFORE UPDATE OF status ON runs"
                    . " WHEN new.status = 'success' BEGIN $count; END");
}

my @sids = map { $t->session } 1 .. 2;
my @kids;
for my $i (0 .. $#sids) {
    my $kid = fork() // die;
    if ($kid == 0) {
        my $res = $t->turn($sids[$i], "live $i", timeout => 60);
        POSIX::_exit(($res->{types}[-1] // '') eq 'end' ? 0 : 1);
    }
    push @kids, $kid;
}
my $ended = 0;
for (@kids) {
    waitpid($_, 0);
    $ended++ if $? == 0;
}
is($ended, 2, 'two turns whose end was written slowly ended');

# the looks of the other workers had time to see them, twice and more
sleep 3;
$t->sqlite($db, $PG ? 'DROP TRIGGER slow_end ON runs'
                    : 'PRAGMA busy_timeout = 10000; DROP TRIGGER slow_end');

for my $s (@sids) {
    is($t->sqlite($db, "SELECT status FROM runs WHERE thread_id = '$s'"),
       'success', 'the live run ended "success"');
    is($t->sqlite($db, "SELECT count(*) FROM run_events r JOIN runs u"
                       . " ON u.run_id = r.run_id WHERE u.thread_id = '$s'"
                       . " AND r.data LIKE '%\"lost\"%'"), 0,
       '... with no outcome "lost"');
}
unlike($t->slurp('error.log'),
       qr/of thread "(?:\Q$sids[0]\E|\Q$sids[1]\E)" ended/,
       'no live run was taken for lost');

# --- sessions made at once while another process holds the write lock -----

SKIP: {
    skip 'the store is PostgreSQL: no file lock', 2 if $PG;
    skip 'no DBD::SQLite (libdbd-sqlite3-perl)', 2
        unless eval { require DBI; require DBD::SQLite; 1 };

    my $w = fork() // die;
    if ($w == 0) {
        my $h = DBI->connect("dbi:SQLite:dbname=$db", '', '',
                             { RaiseError => 1, AutoCommit => 1 });
        $h->sqlite_busy_timeout(60000);
        $h->do('BEGIN IMMEDIATE');
        open my $fh, '>', "$dir/locked" or die;
        close $fh;
        sleep 1.5;
        $h->do('COMMIT');
        POSIX::_exit(0);
    }
    AgentTest::wait_for(sub { -e "$dir/locked" }, 20);

    my $N = 24;
    my @c;
    for my $i (1 .. $N) {
        my $kid = fork() // die;
        if ($kid == 0) {
            my $res = $t->http('POST', '/api/sessions/', { title => "s$i" });
            open my $fh, '>', "$dir/made-$i" or POSIX::_exit(1);
            print $fh "$res->{status} " . ($res->{json}{error} // '');
            close $fh;
            POSIX::_exit(0);
        }
        push @c, $kid;
    }
    waitpid($_, 0) for @c, $w;

    my @got;
    for my $i (1 .. $N) {
        open my $fh, '<', "$dir/made-$i" or do { push @got, '?'; next };
        push @got, scalar <$fh>;
    }
    my @bad = grep { !/^201 / } @got;
    is(scalar @bad, 0, "$N sessions made at once while the file is locked")
        or diag(join "\n", @bad[0 .. ($#bad > 4 ? 4 : $#bad)]);
    unlike($t->slurp('error.log'), qr/database is locked/,
           'no "database is locked" in the log');
}

# the two workers this test killed, and no other
$t->check_log(allow => qr/exited on signal 9/);
my @killed = $t->slurp("error.log") =~ /exited on signal 9/g;
is(scalar @killed, 2, "no worker died but the two killed");
done_testing;
