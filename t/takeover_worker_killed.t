#!/usr/bin/perl
# A worker killed mid-turn does not lock its session for ever: the next
# turn, on any worker, takes the session over; completed steps stay.  A
# worker killed that is not reaped yet (a zombie: its master not run yet
# on a busy host) is gone too: its client's next message takes the
# session at once, not a 409.

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

my $db = $t->dir . '/agent.db';

# a session whose slow turn a worker holds: the client's pid, the holder's
sub held {
    my ($sid, $name) = @_;
    my $pid = fork() // die;
    if ($pid == 0) {
        $t->turn($sid, 'slow', timeout => 30);
        POSIX::_exit(0);
    }
    my $owner;
    ok(AgentTest::wait_for(sub {
        $owner = $t->sqlite($db, "SELECT run_pid FROM sessions "
                                 . "WHERE id = '$sid' AND run_id IS NOT NULL");
        $owner =~ /^\d+$/ }), "a worker holds $name");
    return ($pid, $owner);
}

my $sid = $t->session;
my ($pid, $owner) = held($sid, 'the session');

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

# the master stopped: the worker killed stays a zombie, not reaped, while
# its client hears the stream end and sends its next message
my $sid2 = $t->session;
($pid, my $owner2) = held($sid2, 'another session');
kill 'STOP', $t->{nginx};
kill 'KILL', $owner2;
waitpid($pid, 0);
ok(AgentTest::wait_for(sub {
    (AgentTest::slurp_file("/proc/$owner2/stat") // '') =~ /\) Z /
}), 'the killed worker is a zombie');
$r = $t->turn($sid2, 'still there?');
kill 'CONT', $t->{nginx};
is($r->{types}[-1], 'end', 'its client\'s next message takes the session')
    or diag("status $r->{status}");
like($t->slurp('error.log'), qr/held by process $owner2, which is gone/,
     'that takeover is logged');

$t->stop;
$t->check_log(allow => qr/exited on signal 9/);
done_testing;
