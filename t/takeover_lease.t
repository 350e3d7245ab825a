#!/usr/bin/perl
# The turn lock is a lease: a holder judged alive by its pid alone (a pid
# reused after a restart) cannot keep a session for ever; a running turn
# renews its lease; DELETE during a turn is 409 and afterwards removes
# every row of the session.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use Time::HiRes qw(time sleep);
use POSIX qw(WNOHANG);

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my $q = $req->{messages}[-1]{content} // '';
    return { text => 'a slow answer in six words', delay => 0.5 }
        if $q eq 'slow';
    return { text => "fine: $q" };
});
$t->run($t->conf(location => 'agent_turn_lease 1s;'));
my $db = $t->dir . '/agent.db';

sub now_ms { int(time * 1000) }

my $sid = $t->session;
is($t->turn($sid, 'first')->{types}[-1], 'end', 'a first turn');

# a lock held by a live process (this test: a pid that was reused) with a
# lease far in the future: 409
$t->sqlite($db, "UPDATE sessions SET run_id = 'forged', run_pid = $$, "
               . 'run_expires = ' . (now_ms() + 60000)
               . " WHERE id = '$sid'");
my $r = $t->turn($sid, 'blocked');
is($r->{status}, 409, 'an unexpired lease of a live pid: 409');

# its lease runs out: the session is free although the pid lives
$t->sqlite($db, 'UPDATE sessions SET run_expires = ' . (now_ms() - 1)
               . " WHERE id = '$sid'");
$r = $t->turn($sid, 'freed');
is($r->{types}[-1], 'end', 'an expired lease frees the session');
is($r->{events}[-1]{full_response}, 'fine: freed', 'the turn ran');
is($t->sqlite($db, "SELECT run_id IS NULL FROM sessions WHERE id = '$sid'"),
   1, 'unlocked after the turn');

# a short lease still running: 409 until it ends
$t->sqlite($db, "UPDATE sessions SET run_id = 'forged', run_pid = $$, "
               . 'run_expires = ' . (now_ms() + 1200)
               . " WHERE id = '$sid'");
is($t->turn($sid, 'early')->{status}, 409, 'before the lease ends: 409');
sleep 1.4;
is($t->turn($sid, 'late')->{types}[-1], 'end', 'after it ended: the turn');

# a turn of 2.5 s with a lease of 1 s renews it: others wait for its end
my $pid = fork() // die;
if ($pid == 0) {
    my $x = $t->turn($sid, 'slow');
    POSIX::_exit(($x->{types}[-1] // '') eq 'end' ? 0 : 1);
}
sleep 0.3;
my @during;
for (1 .. 4) {
    push @during, $t->turn($sid, 'meanwhile')->{status};
    my $exp = $t->sqlite($db, "SELECT run_expires FROM sessions "
                              . "WHERE id = '$sid'");
    push @during, ($exp ne '' && $exp > now_ms()) ? 'renewed' : "lapsed";
    sleep 0.5;
}
is_deeply(\@during, [ (409, 'renewed') x 4 ],
          'the running turn keeps its lease past 1 s');

# DELETE meanwhile: 409, nothing removed
$r = $t->http('DELETE', "/api/sessions/$sid");
is($r->{status}, 409, 'DELETE during a turn: 409');
like($r->{json}{error} // '', qr/turn is running/, 'says why');
waitpid($pid, 0);
is($? >> 8, 0, 'the slow turn ended with its end event');

my $msgs = $t->sqlite($db, "SELECT COUNT(*) FROM messages "
                           . "WHERE session_id = '$sid'");
ok($msgs >= 8, "its messages are all there ($msgs)");

# afterwards: 204, and no row of the session anywhere
is($t->http('DELETE', "/api/sessions/$sid")->{status}, 204,
   'DELETE after the turn: 204');
is($t->http('GET', "/api/sessions/$sid")->{status}, 404, 'gone');
for my $table (qw(messages checkpoints resources)) {
    is($t->sqlite($db, "SELECT COUNT(*) FROM $table "
                       . "WHERE session_id = '$sid'"), 0,
       "no $table left");
}
is($t->sqlite($db, "SELECT COUNT(*) FROM sessions WHERE id = '$sid'"), 0,
   'no session row left');

$t->stop;
$t->check_log;
done_testing;
