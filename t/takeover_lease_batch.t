#!/usr/bin/perl
# A worker renews its turns' leases together: 24 turns held open on one
# worker with a 1 s agent_turn_lease are renewed by few statements, each
# of many rows (agent_lease_renewals_total); one turn's lease taken from
# outside ends that turn with lease_lost while the others go on and end;
# clients that hang up meanwhile leave their sessions free.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use POSIX qw(WNOHANG);
use Time::HiRes qw(time);

my $N = 24;
my $t = AgentTest->new;
my $dir = $t->dir;

$t->mock(sub {
    my ($req) = @_;
    my $q = $req->{messages}[-1]{content} // '';
    # held until the test lets it go: the turn holds its lease meanwhile
    AgentTest::hold($dir, $1) if $q =~ /^hold (\d+)/;
    return { text => join(' ', map { "w$_" } 1 .. 40), delay => 0.2 }
        if $q eq 'drip';
    return { text => "done: $q" };
});

my $conf = $t->conf(workers => 1, location => 'agent_turn_lease 1s;');
$conf =~ s{(location /api/sessions/)}{location = /metrics { agent_metrics; }
        $1};
$t->run($conf);
my $db = "$dir/agent.db";

sub now_ms { int(time * 1000) }

sub metric {
    my ($kind) = @_;
    my $m = $t->http('GET', '/metrics')->{content} // '';
    return $m =~ /^agent_lease_renewals_total\{kind="\Q$kind\E"\} (\d+)/m
           ? $1 : 0;
}

# each turn in a process of its own, its last event written to a file
my (@sid, %pid);
for my $i (1 .. $N) {
    my $sid = $t->session;
    push @sid, $sid;
    my $pid = fork() // die;
    if ($pid == 0) {
        my $r = $t->turn($sid, "hold $i", timeout => 120);
        open my $fh, '>', "$dir/turn-$i.json" or die;
        print $fh encode_json({ last => $r->{events}[-1] // {} });
        close $fh;
        POSIX::_exit(0);
    }
    $pid{$i} = $pid;
}

ok(AgentTest::wait_for(sub { !grep { !-e "$dir/held-$_" } 1 .. $N }, 60),
   "$N turns hold their leases, their model calls held");

# a few rounds of renewals of all of them
ok(AgentTest::wait_for(sub { metric('renewed') >= 4 * $N }, 60),
   'their leases are renewed again and again');
my $sent = metric('statement');
my $renewed = metric('renewed');
ok($sent >= 1, "renewed by statements ($sent)");
ok($renewed >= 3 * $sent, "many leases a statement ($renewed leases in "
   . "$sent statements)");
is(metric('lost'), 0, 'none lost');

# clients that hang up while the renewals go on
my @gone;
for (1 .. 3) {
    my $sid = $t->session;
    push @gone, $sid;
    my $r = $t->turn($sid, 'drip', stop_after => 5);
    ok($r->{stopped}, 'a client hangs up mid-stream');
}

# another turn takes the first turn's session, as if its lease ran out
$t->sqlite($db, "UPDATE sessions SET run_id = 'thief', run_pid = 1, "
                . "run_host = 'another host', run_expires = "
                . (now_ms() + 60000) . " WHERE id = '$sid[0]'");

ok(AgentTest::wait_for(sub { waitpid($pid{1}, WNOHANG) == $pid{1} }, 60),
   'the turn whose lease was taken ends');
my $lost = decode_json(AgentTest::slurp_file("$dir/turn-1.json"));
is($lost->{last}{type}, 'error', 'with an error event');
is($lost->{last}{code}, 'lease_lost', 'code lease_lost');
is(metric('lost'), 1, 'found lost by a renewal');

# the others go on: more renewals, none of them lost
my $after = metric('renewed');
ok(AgentTest::wait_for(sub { metric('renewed') >= $after + 2 * ($N - 1) },
                       60),
   'the others are still renewed');
is(scalar(grep { waitpid($pid{$_}, WNOHANG) == $pid{$_} } 2 .. $N), 0,
   'the others still run');
is(metric('lost'), 1, 'no other lease lost');

ok(AgentTest::wait_for(sub {
       !grep { $t->sqlite($db, "SELECT COALESCE(run_id, '') FROM sessions "
                               . "WHERE id = '$_'") ne '' } @gone }, 30),
   'the sessions of the clients that left are free');

AgentTest::free($dir, 1 .. $N);

for my $i (2 .. $N) {
    waitpid($pid{$i}, 0);
}

my @ends = map {
    decode_json(AgentTest::slurp_file("$dir/turn-$_.json"))->{last}{type}
        // '?'
} 2 .. $N;
is_deeply(\@ends, [ ('end') x ($N - 1) ], 'the others end with their end');
is($t->sqlite($db, 'SELECT COUNT(*) FROM sessions WHERE run_id IS NOT NULL '
                   . "AND id <> '$sid[0]'"), 0, 'every other lease let go');
is($t->sqlite($db, "SELECT run_id FROM sessions WHERE id = '$sid[0]'"),
   'thief', 'the taken session stays its new holder\'s');

$t->stop;
$t->check_log;
done_testing;
