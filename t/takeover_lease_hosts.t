#!/usr/bin/perl
# The lease belongs to the turn and holds across hosts.
#
# 1. Two locations with different agent_turn_lease (30 s, 2 s) in one
#    worker: a checkpoint of the 30 s turn written after a 2 s lock of the
#    other location renews its own 30 s, so nobody takes the session from
#    the running turn.
# 2. A second nginx on the same checkpoint file in its own PID namespace
#    (unshare -p -f --mount-proc), as another host or container would be:
#    it sees the first one's pid as gone, and must still not take its
#    running turn (409), nor delete the session under it (409); the answer
#    and the history are whole.  Once the lease is over, it may.
# 3. A turn whose lease was taken from it writes nothing more and ends
#    with an error event, code lease_lost.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use Time::HiRes qw(time sleep);
use POSIX qw(WNOHANG);

sub now_ms { int(time * 1000) }

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my $q = AgentTest::last_user($req);
    my $tools = grep { $_->{role} eq 'tool' } @m;
    if ($q =~ /^slow/) {
        # a first model call of 1 s, a tool step, then 4 s of answer
        return { tools => [ [ "call_$q", 'execute_sql_query',
                              '{"query":"SELECT 1"}' ] ],
                 first_delay => 1 }
            if !grep { $_->{role} eq 'tool' && $_->{tool_call_id} eq "call_$q" } @m;
        return { text => 'a slow answer of five words', delay => 1 };
    }
    return { text => "fine: $q" };
});

my $conf = $t->conf(workers => 1, location => 'agent_turn_lease 30s;');
$conf =~ s{(location /api/chat/)}
          {location /short/ { agent_chat; agent_turn_lease 2s; }\n        $1};
$t->run($conf);
my $db = $t->dir . '/agent.db';

# --- 1. two leases ---------------------------------------------------------

my $s1 = $t->session;
my $s2 = $t->session;

my $pid = fork() // die;
if ($pid == 0) {
    my $x = $t->turn($s1, 'slow one');
    POSIX::_exit(($x->{types}[-1] // '') eq 'end' ? 0 : 1);
}

# during the first model call: a turn of the 2 s location on another session
sleep 0.4;
my $short = $t->stream("/short/$s2/message", encode_json({ message => 'hi' }));
is($short->{types}[-1], 'end', 'a turn of the 2 s location');

# the 30 s turn's tool step is saved at about 1 s; wait past 2 s after it
sleep 3;
my $exp = $t->sqlite($db, "SELECT run_expires FROM sessions WHERE id = '$s1'");
ok($exp ne '' && $exp - now_ms() > 20000,
   'the checkpoint renewed the turn\'s own 30 s lease ('
   . ($exp ne '' ? $exp - now_ms() : 'none') . ' ms left)');
my $r = $t->turn($s1, 'meanwhile');
is($r->{status}, 409, 'another turn on the session is refused meanwhile');

waitpid($pid, 0);
is($? >> 8, 0, 'the 30 s turn ended with its end event');
is(join(',', split /\n/, $t->sqlite($db, "SELECT role FROM messages "
                   . "WHERE session_id = '$s1' ORDER BY seq")),
   'user,assistant,tool,assistant', 'its history is whole');

# --- 2. a second nginx in its own PID namespace ----------------------------

my $unshare = `command -v unshare 2>/dev/null`;
chomp $unshare;
my $can = $unshare && $> == 0
          && system("$unshare -p -f --mount-proc true >/dev/null 2>&1") == 0;

SKIP: {
    skip 'unshare -p needs root and util-linux', 9 unless $can;

    my $b = AgentTest->new;
    my $bconf = $b->conf(workers => 1);
    my $mock = $t->{mock}->port;
    $bconf =~ s/%%MOCK%%/$mock/g;
    $bconf =~ s{agent_checkpoint_db \S+;}{agent_checkpoint_db $db;};
    $b->write_conf($bconf);

    my $bpid = fork() // die;
    if ($bpid == 0) {
        open STDOUT, '>>', $b->dir . '/nginx.out';
        open STDERR, '>&', \*STDOUT;
        # make test-asan: the sanitizers' runtimes, as AgentTest gives them
        $ENV{LD_PRELOAD} = $ENV{AGENT_PRELOAD} if $ENV{AGENT_PRELOAD};
        exec $unshare, '-p', '-f', '--mount-proc', $AgentTest::NGINX,
             '-p', $b->dir . '/', '-c', $b->dir . '/nginx.conf',
             '-e', $b->dir . '/error.log', '-g', 'daemon off;';
        exit 1;
    }
    my $up = AgentTest::wait_for(sub {
        IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                              PeerPort => $b->port) }, 20);
    ok($up, 'a second nginx in its own PID namespace, on the same file')
        or diag($b->slurp('nginx.out') . $b->slurp('error.log'));
    skip 'the second nginx did not start', 1 unless $up;

    my $sid = $t->session;
    $pid = fork() // die;
    if ($pid == 0) {
        my $x = $t->turn($sid, 'slow two');
        POSIX::_exit(($x->{types}[-1] // '') eq 'end' ? 0 : 1);
    }
    sleep 0.5;

    my $host = $t->sqlite($db, "SELECT run_host FROM sessions "
                               . "WHERE id = '$sid'");
    like($host, qr/^[0-9a-f-]{36} pid:\[\d+\]$/,
         "the lease records the host: boot id and pid namespace ($host)");

    $r = $b->turn($sid, 'from the other host');
    is($r->{status}, 409, 'the other host may not take the running turn');
    $r = $b->http('DELETE', "/api/sessions/$sid");
    is($r->{status}, 409, 'nor delete the session under it');

    waitpid($pid, 0);
    is($? >> 8, 0, 'the first host\'s turn ended with its end event');
    is(join(',', split /\n/, $t->sqlite($db, "SELECT role FROM messages "
                       . "WHERE session_id = '$sid' ORDER BY seq")),
       'user,assistant,tool,assistant', 'the history is whole');

    # a lease of another host that ran out frees the session
    $t->sqlite($db, "UPDATE sessions SET run_id = 'gone', run_pid = 1, "
                    . "run_host = 'another host', run_expires = "
                    . (now_ms() - 1) . " WHERE id = '$sid'");
    $r = $b->turn($sid, 'later');
    is($r->{types}[-1], 'end', 'an expired lease of another host: taken');

    # a live lease of another host whose pid is gone here: still 409
    $t->sqlite($db, "UPDATE sessions SET run_id = 'far', run_pid = 999999, "
                    . "run_host = 'another host', run_expires = "
                    . (now_ms() + 60000) . " WHERE id = '$sid'");
    is($t->turn($sid, 'x')->{status}, 409,
       'a pid of another host is never judged gone here');

    my ($bmaster) = grep { /^\d+$/ } map { s/\s+//gr }
                    `ps -o pid= --ppid $bpid`;
    kill 'QUIT', $bmaster if $bmaster;
    ok(AgentTest::wait_for(sub { waitpid($bpid, WNOHANG) == $bpid }, 10),
       'the second nginx stopped');
    $b->check_log;
}

# --- 3. a turn whose lease is taken from it --------------------------------

my $s3 = $t->session;
$pid = fork() // die;
if ($pid == 0) {
    my $x = $t->turn($s3, 'slow three', timeout => 30);
    open my $fh, '>', $t->dir . '/lost.json' or die;
    print $fh encode_json({ types => $x->{types},
                            last => $x->{events}[-1] });
    close $fh;
    POSIX::_exit(0);
}
sleep 1.5;

# another turn takes the session, as if the lease had run out
$t->sqlite($db, "UPDATE sessions SET run_id = 'thief', run_pid = 1, "
                . "run_host = 'another host' WHERE id = '$s3'");
my $before = $t->sqlite($db, "SELECT COUNT(*) FROM messages "
                             . "WHERE session_id = '$s3'");
waitpid($pid, 0);
my $lost = decode_json(AgentTest::slurp_file($t->dir . '/lost.json'));
is($lost->{last}{type}, 'error', 'the turn that lost its lease ends with '
   . 'an error event');
is($lost->{last}{code}, 'lease_lost', 'code lease_lost');
is($t->sqlite($db, "SELECT COUNT(*) FROM messages WHERE session_id = '$s3'"),
   $before, 'it wrote nothing after it lost the lease');
is($t->sqlite($db, "SELECT run_id FROM sessions WHERE id = '$s3'"), 'thief',
   'the new holder keeps the session');

$t->stop;
$t->check_log;
done_testing;
