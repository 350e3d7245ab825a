#!/usr/bin/perl
# A worker killed mid-turn does not lock its session for ever: the next
# turn, on any worker, takes the session over; completed steps stay.  A
# holder that has exited but is not reaped yet (a zombie: the master not
# run yet on a busy host) is gone too: its client's next message takes
# the session at once, not a 409.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use POSIX ();

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my $q = $req->{messages}[-1]{content};
    return { text => join(' ', ('slow') x 50), delay => 0.2 }
        if $q eq 'slow';
    return { text => "answer to $q" };
});
$t->run;

my $sid = $t->session;
my $db = $t->dir . '/agent.db';

my $pid = fork();
if ($pid == 0) {
    $t->turn($sid, 'slow', timeout => 30);
    POSIX::_exit(0);
}

my $owner;
ok(AgentTest::wait_for(sub {
    $owner = $t->sqlite($db, "SELECT run_pid FROM sessions "
                             . "WHERE id = '$sid' AND run_id IS NOT NULL");
    $owner =~ /^\d+$/ }), 'a worker holds the session');
my $host = $t->sqlite($db, "SELECT run_host FROM sessions WHERE id = '$sid'");

kill 'KILL', $owner;
waitpid($pid, 0);

ok(AgentTest::wait_for(sub { scalar($t->worker_pids) == 2 }),
   'the master started a new worker');

my $r = $t->turn($sid, 'are you there?');
is($r->{types}[-1], 'end', 'the next turn runs');
is($r->{events}[-1]{full_response}, 'answer to are you there?', 'answers');
like($t->slurp('error.log'), qr/held by process $owner, which is gone/,
     'the takeover is logged');

my $m = $t->http('GET', "/api/sessions/$sid/messages")->{json}{messages};
is($m->[0]{content}, 'slow', 'the killed turn\'s input step was kept');

# a holder of this host that exited and is not reaped: a zombie of ours
my $z = fork() // die;
POSIX::_exit(0) if $z == 0;
ok(AgentTest::wait_for(sub {
    (AgentTest::slurp_file("/proc/$z/stat") // '') =~ /\) Z /
}), 'a process exited, not reaped');
my $zs = $t->session;
$t->sqlite($db, "UPDATE sessions SET run_id = 'zombie', run_pid = $z,"
    . " run_host = '$host', run_expires = " . (time * 1000 + 600000)
    . " WHERE id = '$zs'");
$r = $t->turn($zs, 'still there?');
is($r->{types}[-1], 'end', 'a zombie holder\'s session is taken at once')
    or diag("status $r->{status}");
like($t->slurp('error.log'), qr/held by process $z, which is gone/,
     'that takeover is logged');
waitpid($z, 0);

$t->stop;
$t->check_log(allow => qr/exited on signal 9/);
done_testing;
