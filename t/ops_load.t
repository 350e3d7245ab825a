#!/usr/bin/perl
# 64 sessions over 2 workers, turns back to back for AGENT_LOAD_SECONDS
# (default 60), a third of them with a SQL tool call: no SQLITE_BUSY or
# any other failure reaches a client, no message is lost, and SQLite's WAL
# does not grow without end.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use Time::HiRes qw(time sleep);

my $SECONDS = $ENV{AGENT_LOAD_SECONDS} // 60;
my $SESSIONS = 64;

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my $last = $req->{messages}[-1];
    return { text => 'counted' } if $last->{role} eq 'tool';
    my $q = $last->{content} // '';
    return { tools => [[ 'c1', 'execute_sql_query',
                         '{"query":"SELECT COUNT(*) FROM csv_data"}' ]] }
        if $q =~ /sql/;
    return { text => "fine: $q" };
});
$t->run;

my @sids = map { $t->session } 1 .. $SESSIONS;
for my $sid (@sids[0 .. 7]) {
    $t->http('POST', "/api/sessions/$sid/resources?name=d.csv",
             "a,b\n1,2\n3,4\n", 'Content-Type' => 'text/csv');
}

my $dir = $t->dir;
my $end = time + $SECONDS;
my @pids;

for my $i (0 .. $#sids) {
    my $pid = fork() // die;
    if ($pid == 0) {
        my ($ok, $bad, $why) = (0, 0, '');
        my $n = 0;
        while (time < $end) {
            my $msg = ($i < 8 && $n % 3 == 0) ? "sql $n" : "turn $n";
            my $r = $t->turn($sids[$i], $msg, timeout => 30);
            if (($r->{types}[-1] // '') eq 'end') {
                $ok++;
            } else {
                $bad++;
                $why ||= ($r->{status} // '?') . ' '
                         . ($r->{json}{error} // $r->{events}[-1]{error}
                            // '');
            }
            $n++;
        }
        open my $fh, '>', "$dir/load-$i" or POSIX::_exit(1);
        print $fh "$ok $bad $why";
        close $fh;
        POSIX::_exit(0);
    }
    push @pids, $pid;
}

waitpid($_, 0) for @pids;

my ($total, $failed, @why) = (0, 0);
my $lost = 0;

for my $i (0 .. $#sids) {
    open my $fh, '<', "$dir/load-$i" or do { $failed++; next };
    my ($ok, $bad, $why) = split / /, <$fh>, 3;
    $total += $ok;
    $failed += $bad;
    push @why, $why if $bad;

    # every page of the history, newest first
    my (@msgs, $next);
    for (1 .. 1000) {
        my $m = $t->http('GET', "/api/sessions/$sids[$i]/messages?limit=1000"
                                . ($next ? "&before=$next" : ''))->{json};
        unshift @msgs, @{ $m->{messages} // [] };
        last unless $m->{has_more};
        $next = $m->{next_before};
    }
    $lost++ if @msgs != 2 * $ok;

    # in order: user, assistant, user, assistant ...
    my @roles = map { $_->{role} } @msgs;
    $lost++ if join(',', @roles)
               ne join(',', ('user', 'assistant') x (@msgs / 2));
}

diag("$total turns in $SECONDS s over $SESSIONS sessions");
ok($total >= $SESSIONS, "turns completed: $total");
is($failed, 0, 'no turn failed') or diag(join "\n", @why[0 .. 4]);
is($lost, 0, 'every session holds exactly the turns its client saw end');
unlike($t->slurp('error.log'), qr/database is locked|SQLITE_BUSY/,
       'no busy error in the log');

# the WAL's file keeps its largest size: writes that never paused had it
# grow without end until the thread pool's checkpoint restarted it
SKIP: {
    skip 'the store is PostgreSQL', 1 if $ENV{AGENT_PG};
    my $wal = -s "$dir/agent.db-wal";
    diag("the WAL at its largest: $wal bytes");
    cmp_ok($wal, '<', 64 * 1024 * 1024, 'the WAL stayed under 64 MB');
}

$t->stop;
$t->check_log;
done_testing;
