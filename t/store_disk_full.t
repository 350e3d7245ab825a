#!/usr/bin/perl
# The checkpoint file on a full filesystem (a 16 MB tmpfs) and made
# read-only: the client gets a clear error, the log says why, nothing is
# half-written, and the session works again once space or write access
# is back.  Needs root for the mount; skipped otherwise.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

plan skip_all => 'needs root to mount a small tmpfs' if $> != 0;
plan skip_all => 'make test-pg: the store is on the server, its faults are '
    . 't/store_pg_hosts.t\'s' if $ENV{AGENT_PG};

my $t = AgentTest->new;
my $data = $t->dir . '/data';
mkdir $data;
system('mount', '-t', 'tmpfs', '-o', 'size=16m,mode=0777', 'tmpfs', $data) == 0
    or plan skip_all => 'tmpfs cannot be mounted here';
END { system('umount', '-l', $data) if $data && $> == 0; }

$t->mock(sub {
    my ($req) = @_;
    my $q = $req->{messages}[-1]{content} // '';
    return { text => 'answer to ' . length($q) . ' bytes' };
});
my $conf = $t->conf(user => 'user www-data;',
                    http => 'client_max_body_size 4m;');
$conf =~ s{agent_checkpoint_db \S+;}{agent_checkpoint_db $data/agent.db;};
$t->run($conf);
my $db = "$data/agent.db";

sub ok_turn {
    my ($sid, $msg, $name) = @_;
    my $r = $t->turn($sid, $msg);
    is($r->{types}[-1], 'end', $name) or diag(explain $r->{events}[-1]);
}

sub failed_turn {
    my ($sid, $msg, $name) = @_;
    my $r = $t->turn($sid, $msg);
    my $clear = ($r->{status} // 0) >= 500 ? ($r->{json}{error} // '')
              : ($r->{types}[-1] // '') eq 'error'
                ? ($r->{events}[-1]{error} // '') : '';
    ok(length $clear, "$name: a clear error (" . ($r->{status} // '?')
                      . ", $clear)");
}

my $sid = $t->session;
ok_turn($sid, 'small', 'a turn before the disk fills');
my $count = $t->sqlite($db, "SELECT COUNT(*) FROM messages "
                            . "WHERE session_id = '$sid'");

# fill the filesystem
system("dd if=/dev/zero of=$data/fill bs=64k 2>/dev/null");
my $big = 'x' x 1_500_000;
failed_turn($sid, $big, 'disk full');
like($t->slurp('error.log'), qr/\[(error|crit)\].*(full|disk|could not)/i,
     'the log says why');
is($t->sqlite($db, 'PRAGMA integrity_check'), 'ok',
   'disk full: the store is intact');
is($t->sqlite($db, "SELECT COUNT(*) FROM messages WHERE session_id = '$sid'"),
   $count, 'disk full: nothing of the failed turn was written');
is($t->sqlite($db, "SELECT run_id IS NULL FROM sessions WHERE id = '$sid'"),
   1, 'disk full: the session is not left locked');

unlink "$data/fill";
ok_turn($sid, $big, 'space back: the same turn works');
ok_turn($sid, 'small again', 'and the next');

# read-only: the file no longer writable by the workers, then a reload
my $before = $t->sqlite($db, "SELECT COUNT(*) FROM messages "
                             . "WHERE session_id = '$sid'");
chmod 0444, $db, "$db-wal", "$db-shm";
chmod 0555, $data;
kill 'HUP', $t->{nginx};
sleep 1.5;
failed_turn($sid, 'read-only', 'read-only');
chmod 0777, $data;
chmod 0644, $db, "$db-wal", "$db-shm";
is($t->sqlite($db, 'PRAGMA integrity_check'), 'ok',
   'read-only: the store is intact');
is($t->sqlite($db, "SELECT COUNT(*) FROM messages WHERE session_id = '$sid'"),
   $before, 'read-only: nothing half-written');

kill 'HUP', $t->{nginx};
sleep 1.5;
ok_turn($sid, 'writable again', 'write access back: turns work');
# every page of it (a page stops at 1 MiB of text: the big turn is one)
my ($n, $next) = (0, '');
for (1 .. 20) {
    my $pg = $t->http('GET', "/api/sessions/$sid/messages$next")->{json};
    $n += @{ $pg->{messages} };
    last unless $pg->{has_more};
    $next = "?before=$pg->{next_before}";
}
is($n, $before + 2, 'the history has every completed turn');

$t->stop;
$t->check_log(allow => qr/attempt to write a readonly database|disk is full|no space left/i);
done_testing;
