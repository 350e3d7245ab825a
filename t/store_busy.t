#!/usr/bin/perl
# A busy host loses no turn.  Another process holds the SQLite store's write
# lock (BEGIN IMMEDIATE, as a backup, a sqlite3 shell or a writer the
# scheduler stopped would) for longer than any busy time: turns that start
# meanwhile, and turns whose steps are written meanwhile, wait for it on a
# timer and end; none fails, every session holds exactly the turns its
# client saw end, and the wait is logged as a wait, not as an error.  With
# AGENT_PG the store is PostgreSQL, which has no file lock: skipped.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use Time::HiRes qw(time sleep);
use POSIX ();

plan skip_all => 'the store is PostgreSQL' if $ENV{AGENT_PG};
eval { require DBI; require DBD::SQLite; 1 }
    or plan skip_all => 'no DBD::SQLite (libdbd-sqlite3-perl)';

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my $last = $req->{messages}[-1];
    return { text => 'counted' } if $last->{role} eq 'tool';
    my $q = $last->{content} // '';
    return { tools => [[ 'c1', 'execute_sql_query',
                         '{"query":"SELECT 1"}' ]], delay => 0.2 }
        if $q =~ /sql/;
    return { text => "fine: $q", delay => 0.2 };
});
my $conf = $t->conf;
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api; }
    $1};
$t->run($conf);

my $SESSIONS = 8;
my $TURNS = 4;
my @sids = map { $t->session } 1 .. $SESSIONS;
my $dir = $t->dir;

# the writer: holds the lock for $hold seconds, $times times, from now on
sub writer {
    my ($hold, $times, $gap) = @_;
    my $pid = fork() // die;
    return $pid if $pid;
    my $db = DBI->connect("dbi:SQLite:dbname=$dir/agent.db", '', '',
                          { RaiseError => 1, AutoCommit => 1 });
    $db->sqlite_busy_timeout(60000);
    for (1 .. $times) {
        $db->do('BEGIN IMMEDIATE');
        $db->do("UPDATE sessions SET title = title WHERE id = 'none'");
        sleep $hold;
        $db->do('COMMIT');
        sleep $gap;
    }
    POSIX::_exit(0);
}

sub clients {
    my ($tag) = @_;
    my @pids;
    for my $i (0 .. $#sids) {
        my $pid = fork() // die;
        if ($pid == 0) {
            my ($ok, $bad, $why) = (0, 0, '');
            for my $n (1 .. $TURNS) {
                my $msg = $n % 2 ? "$tag $n" : "sql $tag $n";
                my $r = $t->turn($sids[$i], $msg, timeout => 60);
                if (($r->{types}[-1] // '') eq 'end') {
                    $ok++;
                } else {
                    $bad++;
                    $why ||= ($r->{status} // '?') . ' '
                             . ($r->{json}{error} // $r->{events}[-1]{error}
                                // '');
                }
            }
            open my $fh, '>', "$dir/busy-$tag-$i" or POSIX::_exit(1);
            print $fh "$ok $bad $why";
            close $fh;
            POSIX::_exit(0);
        }
        push @pids, $pid;
    }
    return @pids;
}

sub tally {
    my ($tag) = @_;
    my ($ok, $bad, @why) = (0, 0);
    for my $i (0 .. $#sids) {
        open my $fh, '<', "$dir/busy-$tag-$i" or do { $bad++; next };
        my ($o, $b, $w) = split / /, <$fh>, 3;
        $ok += $o;
        $bad += $b;
        push @why, $w if $b;
    }
    return ($ok, $bad, @why);
}

# 1. the lock is held before the turns start: they wait for it
my $w = writer(1.5, 1, 0);
sleep 0.3;
my @pids = clients('a');
waitpid($_, 0) for @pids, $w;
my ($ok, $bad, @why) = tally('a');
is($bad, 0, 'a lock held before the turns: no turn failed')
    or diag(join "\n", @why[0 .. 2]);
is($ok, $SESSIONS * $TURNS, 'every turn ended');

# 2. the lock taken again and again while the turns run their steps
$w = writer(0.7, 6, 0.3);
@pids = clients('b');
waitpid($_, 0) for @pids, $w;
($ok, $bad, @why) = tally('b');
is($bad, 0, 'a lock taken while the steps are written: no turn failed')
    or diag(join "\n", @why[0 .. 2]);
is($ok, $SESSIONS * $TURNS, 'every turn ended');

# every session holds exactly what its client saw end, in order
my $lost = 0;
for my $sid (@sids) {
    my $m = $t->http('GET', "/api/sessions/$sid/messages?limit=1000")->{json};
    my @roles = map { $_->{role} } @{ $m->{messages} // [] };
    $lost++ if join(',', @roles)
               ne join(',', ('user', 'assistant') x (2 * $TURNS));
}
is($lost, 0, 'every session holds exactly the turns its client saw end');

# 3. the LangGraph API's writes in a transaction wait too, and are
# answered: a thread's copy, an assistant made (they hung: a busy file's
# wait was no answer to come for the request's pass)
my $th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
$t->http('POST', "/lg/threads/$th/runs/wait", { assistant_id => 'react',
    input => { messages => [ { role => 'user', content => 'hi' } ] } });
$w = writer(1, 1, 0);
sleep 0.3;
my $t0 = time;
my @lg;
for my $req ([ 'POST', "/lg/threads/$th/copy", undef ],
             [ 'POST', '/lg/assistants', { graph_id => 'react' } ]) {
    my $pid = fork() // die;
    if ($pid == 0) {
        my $r = $t->http(@$req);
        open my $fh, '>', "$dir/lg-" . scalar(@lg) or POSIX::_exit(1);
        print $fh "$r->{status} " . sprintf('%.2f', time - $t0);
        close $fh;
        POSIX::_exit(0);
    }
    push @lg, $pid;
}
waitpid($_, 0) for @lg, $w;
sub got_lg {
    open my $fh, '<', "$dir/lg-$_[0]" or return '? 0';
    return scalar <$fh>;
}
my @got = map { got_lg($_) } 0 .. 1;
is(join(' ', map { (split / /)[0] } @got), '200 200',
   'a copy and an assistant made while the file is locked: answered');
ok(!grep({ (split / /)[1] < 0.6 || (split / /)[1] > 10 } @got),
   '... once it is let go (' . join(', ', map { (split / /)[1] . ' s' }
                                              @got) . ')');

my $log = $t->slurp('error.log');
like($log, qr/the store is busy, the write waits/,
     'the writes waited (and said so)');
unlike($log, qr/database is locked|SQLITE_BUSY|could not be saved/,
       'no busy error in the log');

$t->check_log;
done_testing;
