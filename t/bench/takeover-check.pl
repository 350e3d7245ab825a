#!/usr/bin/perl
# The take-over check's cost, before and after issue 49's item 3: a store
# made by nginx, filled with TAKEOVER_RUNS (30000) running runs held by 4
# live workers of one host (nothing lost), then each look's queries run
# in a fresh sqlite3 (as after another worker's commit: SQLite's cache
# empty), with its figures: pages read, virtual machine steps, time.
# Before: the two walks of every running run joined to its session; after:
# the expired leases by sessions_lease, the holders by sessions_holder, a
# slice of 256 running runs.  Prints figures; asserts nothing.
# Run: perl t/bench/takeover-check.pl

use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More ();
use AgentTest;
use File::Copy qw(copy);
use Time::HiRes qw(time);

my $N = $ENV{TAKEOVER_RUNS} // 30000;
my $LOOKS = 5;

my $t = AgentTest->new;
$t->run;
$t->stop;
my $dir = $t->dir;
my $db = "$dir/agent.db";

# 4 workers of host 'H' hold N sessions, each with its running run; a
# run's kwargs as a LangGraph run's (about 1 KiB)
my $now = int(time * 1000);
my $kw = 'x' x 1000;
open my $sql, '|-', 'sqlite3', $db or die $!;
print $sql "BEGIN;\n";
for my $i (1 .. $N) {
    my $id = sprintf 'thread-%08d', $i;
    my $run = sprintf 'run-%08d', $i;
    my $pid = 101 + $i % 4;
    my $exp = $now + 30000 + $i % 1000;
    print $sql "INSERT INTO sessions (id, created_at, updated_at, run_id,"
        . " run_pid, run_expires, run_host) VALUES ('$id', 'now', 'now',"
        . " '$run', $pid, $exp, 'H');\n"
        . "INSERT INTO runs (run_id, thread_id, assistant_id, status,"
        . " kwargs, created_at, updated_at, events, origin) VALUES"
        . " ('$run', '$id', 'react', 'running', '$kw', 'now', 'now', 0,"
        . " '/lg/');\n";
}
print $sql "COMMIT;\n";
close $sql or die "sqlite3: $?";

my %q = (
    old_lost => "SELECT r.run_id, r.thread_id, s.run_pid, s.run_host,"
        . " s.run_expires, r.origin FROM runs r JOIN sessions s"
        . " ON s.id = r.thread_id AND s.run_id = r.run_id"
        . " WHERE r.status = 'running' AND (s.run_expires < $now"
        . " OR s.run_host = 'H') ORDER BY s.run_expires LIMIT 8",
    old_orphans => "SELECT r.run_id, r.thread_id FROM runs r JOIN sessions s"
        . " ON s.id = r.thread_id WHERE r.status = 'running'"
        . " AND (s.run_id IS NULL OR s.run_id != r.run_id) LIMIT 8",
    new_expired => "SELECT r.run_id, r.thread_id, s.run_pid, s.run_host,"
        . " s.run_expires, r.origin FROM sessions s CROSS JOIN runs r"
        . " ON r.run_id = s.run_id AND r.thread_id = s.id"
        . " WHERE s.run_expires < $now AND s.run_id IS NOT NULL"
        . " AND r.status = 'running' ORDER BY s.run_expires LIMIT 8",
    new_holders => "WITH RECURSIVE p(pid) AS (SELECT (SELECT run_pid"
        . " FROM sessions WHERE run_host = 'H' AND run_id IS NOT NULL"
        . " ORDER BY run_pid LIMIT 1) UNION ALL SELECT (SELECT run_pid"
        . " FROM sessions WHERE run_host = 'H' AND run_id IS NOT NULL"
        . " AND run_pid > p.pid ORDER BY run_pid LIMIT 1) FROM p"
        . " WHERE p.pid IS NOT NULL) SELECT pid FROM p"
        . " WHERE pid IS NOT NULL LIMIT 64",
    new_slice => "SELECT r.run_id, r.thread_id, s.run_id IS r.run_id"
        . " FROM runs r CROSS JOIN sessions s ON s.id = r.thread_id"
        . " WHERE r.status = 'running' AND r.thread_id > ''"
        . " ORDER BY r.thread_id LIMIT 256",
    base => "SELECT 1",
);

# one query in a fresh process: pages read, VM steps, seconds
sub measure {
    my ($file, $query) = @_;
    open my $in, '>', "$dir/look.sql" or die $!;
    print $in ".stats on\n.timer on\n$query;\n";
    close $in;
    my $out = `sqlite3 $file < $dir/look.sql 2>&1`;
    my ($miss) = $out =~ /Page cache misses:\s+(\d+)/;
    my ($steps) = $out =~ /Virtual Machine Steps:\s+(\d+)/;
    my ($real) = $out =~ /Run Time: real ([\d.]+)/;
    return ($miss // 0, $steps // 0, $real // 0);
}

my $before = "$dir/before.db";
my $after = "$dir/after.db";
copy($db, $before) or die;
copy($db, $after) or die;
system('sqlite3', $before, 'DROP INDEX sessions_holder;'
                           . ' DROP INDEX sessions_lease;') == 0 or die;

my ($base) = measure($after, $q{base});

sub look {
    my ($file, @names) = @_;
    my ($pages, $steps, $secs) = (0, 0, 0);
    for (1 .. $LOOKS) {
        for my $n (@names) {
            my ($m, $s, $r) = measure($file, $q{$n});
            $pages += $m - $base;
            $steps += $s;
            $secs += $r;
        }
    }
    return ($pages / $LOOKS, $steps / $LOOKS, $secs / $LOOKS * 1000);
}

my $size = -s $db;
printf "store: %d running runs held by 4 live workers, %.1f MiB\n",
       $N, $size / 1048576;
printf "%-7s %12s %14s %10s\n", 'check', 'pages read', 'VM steps', 'ms';
printf "%-7s %12d %14d %10.2f\n", 'before', look($before, 'old_lost',
                                                 'old_orphans');
printf "%-7s %12d %14d %10.2f\n", 'after', look($after, 'new_expired',
                                                'new_holders', 'new_slice');
printf "%-7s %12d %14d %10.2f\n", '(lost)', look($after, 'new_expired',
                                                 'new_holders');

# what the index on the expiry costs a turn: each step's write renews the
# lease (run_expires), which moves the session's entry in sessions_lease
sub renew {
    my ($file) = @_;
    my $sql = join '', map { sprintf "UPDATE sessions SET run_expires ="
                             . " run_expires + 1 WHERE id = 'thread-%08d';\n",
                             1 + ($_ * 7919) % $N } 1 .. 2000;
    open my $in, '>', "$dir/renew.sql" or die $!;
    print $in "BEGIN;\n$sql" . "COMMIT;\n";
    close $in;
    my $t0 = time;
    system("sqlite3 $file < $dir/renew.sql") == 0 or die;
    return (time - $t0) * 1e6 / 2000;
}
renew($before);
renew($after);
my ($rb, $ra) = (0, 0);
for (1 .. 3) {
    $rb += renew($before) / 3;
    $ra += renew($after) / 3;
}
printf "a lease renewed (a step's write): %.1f us before, %.1f us after\n",
       $rb, $ra;
my $one = "UPDATE sessions SET run_expires = run_expires + 1"
          . " WHERE id = 'thread-00012345'";
my @b = measure($before, $one);
my @a = measure($after, $one);
printf "one renewal: %d pages read, %d VM steps before; %d, %d after\n",
       $b[0] - $base, $b[1], $a[0] - $base, $a[1];
