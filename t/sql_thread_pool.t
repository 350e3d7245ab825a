#!/usr/bin/perl
# SQL tools run on nginx's thread pool: while one session's query runs for a
# second and a half, a turn on another session, on the same (single) worker,
# streams to its end.  With the pool off, the query holds the worker.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use IO::Socket::INET;
use IO::Select;
use JSON::PP;

my $slow = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) '
         . 'SELECT COUNT(*) FROM c';

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my $last = $req->{messages}[-1];
    return { text => 'after the query' } if $last->{role} eq 'tool';
    return { tools => [[ 'c1', 'execute_sql_query',
                         encode_json({ query => $slow }) ]] }
        if $last->{content} eq 'slow';
    return { text => 'a quick answer' };
});

sub start_slow {
    my ($sid) = @_;
    my $body = encode_json({ message => 'slow' });
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                  PeerPort => $t->port) or die $!;
    print $s "POST /api/chat/$sid/message HTTP/1.1\r\nHost: x\r\n"
             . "Content-Length: " . length($body) . "\r\n"
             . "Connection: close\r\n\r\n$body";
    my $buf = '';
    my $sel = IO::Select->new($s);
    while ($buf !~ /"tool_start"/ && $sel->can_read(10)) {
        sysread($s, $buf, 65536, length $buf) or last;
    }
    return ($s, $buf);
}

sub pending {
    my ($s) = @_;
    my $buf = '';
    my $sel = IO::Select->new($s);
    while ($sel->can_read(0)) {
        sysread($s, $buf, 65536, length $buf) or last;
    }
    return $buf;
}

sub finish {
    my ($s, $buf) = @_;
    my $sel = IO::Select->new($s);
    while ($buf !~ /"type":"(end|error)"/ && $sel->can_read(10)) {
        sysread($s, $buf, 65536, length $buf) or last;
    }
    close $s;
    return $buf;
}

for my $mode ('default', 'off') {
    my $conf = $t->conf(workers => 1, location =>
        "agent_sql_timeout 1500ms; agent_sql_thread_pool $mode;");
    $t->run($conf);

    my ($a, $b) = ($t->session, $t->session);
    my ($s, $buf) = start_slow($a);
    like($buf, qr/"tool_start"/, "$mode: the slow query started");

    my $r = $t->turn($b, 'quick');
    is($r->{types}[-1], 'end', "$mode: the other turn ended");

    my $mid = pending($s);

    if ($mode eq 'default') {
        unlike($mid, qr/"tool_result"/,
               'pool: the other turn ended while the query ran');
    } else {
        like($mid, qr/"tool_result"/,
             'inline: the other turn had to wait for the query');
    }

    $buf = finish($s, $buf . $mid);
    like($buf, qr/"tool_result".*longer than 1500 ms/s,
         "$mode: the query was stopped at its cap");
    like($buf, qr/"type":"end"/, "$mode: the slow turn ended too");

    $t->stop;
}

# a client that leaves while its query runs on a thread
$t->run($t->conf(location => 'agent_sql_timeout 1s;'));
my $sid = $t->session;
my ($s) = start_slow($sid);
close $s;
ok(AgentTest::wait_for(sub {
    $t->slurp('error.log') =~ /client gone, turn on session "\Q$sid\E"/ }),
   'the turn was cancelled');
sleep 1.5;
my $r = $t->turn($sid, 'quick');
is($r->{types}[-1], 'end', 'the session works after');
my $m = $t->http('GET', "/api/sessions/$sid/messages?include_tools=1")
           ->{json}{messages};
ok(!grep({ $_->{role} eq 'tool' } @$m),
   'the late result of the cancelled job was dropped');

$t->stop;

# The store's WAL checkpoint (SQLite): on the pool where the locations
# have one, in the commit on the event loop where none has; the store
# whole after.
for my $mode ($ENV{AGENT_PG} ? () : ('default', 'off')) {
    my $conf = $t->conf(workers => 1,
                        http => "agent_sql_thread_pool $mode;");
    $conf =~ s{(location /api/chat/)}{location = /metrics { agent_metrics; }
        $1};
    $t->run($conf);

    my $wal = $t->{dir} . '/agent.db-wal';
    my ($turns, $ended, $where, $seen) = (0, 0, '', 0);
    for (1 .. 150) {
        $turns++;
        my $r = $t->turn($t->session, 'quick ' . ('x' x 4000));
        $ended++ if ($r->{types}[-1] // '') eq 'end';
        my $m = $t->http('GET', '/metrics')->{content};
        my %n = $m =~ /^agent_store_checkpoints_total
                        \{where="(\w+)",kind="passive"\}\ (\d+)$/mgx;
        if (%n) {
            $where = join ',', sort keys %n;
            last if ++$seen == 3;
        }
    }
    is($ended, $turns, "$mode: every turn ended ($turns)");
    is($where, $mode eq 'off' ? 'loop' : 'thread',
       "$mode: the WAL was checkpointed "
       . ($mode eq 'off' ? 'in the commit' : 'on the thread pool'));
    cmp_ok(-s $wal, '<', 3000 * 4096, "$mode: the WAL stays bounded");

    my $l = $t->http('GET', '/api/sessions/?limit=1000');
    cmp_ok(scalar @{ $l->{json}{sessions} }, '>=', $ended,
           "$mode: every session is in the store");
    unlike($t->slurp('error.log'), qr/checkpoint failed/,
           "$mode: no checkpoint failed");

    $t->stop;
}

$t->check_log;
done_testing;
