#!/usr/bin/perl
# Two concurrent turns on one session: one runs, the other gets 409, across
# workers; turns on different sessions run side by side.

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
    return { text => 'slow answer here', delay => 0.3 };
});
$t->run;

my $sid = $t->session;
my $dir = $t->dir;

# several clients at once, each in its own process, as browsers would
sub race {
    my (@sessions) = @_;
    my @pids;
    for my $i (0 .. $#sessions) {
        my $pid = fork();
        if ($pid == 0) {
            my $r = $t->turn($sessions[$i], "hello $i");
            open my $fh, '>', "$dir/race.$i" or POSIX::_exit(1);
            print $fh ($r->{status} // 0), ' ',
                      ($r->{types}[-1] // '-'), "\n";
            close $fh;
            POSIX::_exit(0);
        }
        push @pids, $pid;
    }
    waitpid($_, 0) for @pids;
    return map { $t->slurp("race.$_") =~ s/\n//r } 0 .. $#sessions;
}

my @out = race($sid, $sid);
is(scalar(grep { $_ eq '200 end' } @out), 1, 'one turn ran');
is(scalar(grep { /^409/ } @out), 1, 'the other got 409');

my $r = $t->http('POST', "/api/chat/$sid/connection", { database => 'x' });
is($r->{status}, 404, '(checked before the lock)');

# 409 in JSON, with a reason
my $pid = fork();
if ($pid == 0) {
    $t->turn($sid, 'long');
    POSIX::_exit(0);
}
AgentTest::wait_for(sub {
    $t->sqlite("$dir/agent.db",
               "SELECT run_id IS NOT NULL FROM sessions WHERE id = '$sid'")
    eq '1' });
$r = $t->http('POST', "/api/chat/$sid/message", { message => 'me too' });
is($r->{status}, 409, 'busy session: 409');
like($r->{json}{error}, qr/already running/, '409 says why');
waitpid($pid, 0);

# different sessions do not wait for each other
my @s = map { $t->session } 1 .. 4;
@out = race(@s);
is(scalar(grep { $_ eq '200 end' } @out), 4, 'four sessions, four turns');

$t->stop;
$t->check_log;
done_testing;
