#!/usr/bin/perl
# An upload that races a DELETE of its session leaves nothing behind (no
# row, no file: the insert happens only while the session exists), and a
# turn runs at most agent_sql_concurrency SQL statements at once (default
# 4): twelve parallel calls of statements that run to their time cap take
# at least three rounds of it, six with a cap of 2, their results arrive
# in batches of the cap, and all answer in call order.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use Time::HiRes qw(time sleep);
use IO::Socket::INET;

my $t = AgentTest->new;
my $slow = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) '
         . 'SELECT count(*) FROM c';
$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    return { text => 'done' } if grep { $_->{role} eq 'tool' } @m;
    return { tools => [ map { [ "call_$_", 'execute_sql_query',
                                encode_json({ query => $slow }) ] } 1 .. 12 ] };
});

my $conf = $t->conf(http => "client_max_body_size 64m;\n"
                            . "agent_sql_timeout 300ms;");
$conf =~ s{(location /api/chat/ \{)}
          {location /two/ { agent_chat; agent_sql_concurrency 2; }
        $1};
$t->run($conf);

# --- an upload racing a DELETE ---------------------------------------------

my $res = $t->dir . '/resources';
my $csv = "id,name,amount,city\n"
    . join('', map { "$_,name $_,$_.25,city " . ($_ % 97) . "\n" } 1 .. 300_000);

my $sid = $t->session;
my @files_before = glob("$res/*");
my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $t->port)
    or die $!;
print $s "POST /api/sessions/$sid/resources?name=big.csv HTTP/1.1\r\n"
         . "Host: localhost\r\nContent-Type: text/csv\r\n"
         . 'Content-Length: ' . length($csv) . "\r\nConnection: close\r\n\r\n"
         . $csv;
# the body is in: the import runs on the thread pool; delete meanwhile
sleep 0.05;
my $del = $t->http('DELETE', "/api/sessions/$sid");
is($del->{status}, 204, 'the session deleted while its upload imports');
my $answer = do { local $/; <$s> } // '';
close $s;
my ($status) = $answer =~ m{^HTTP/1\.1 (\d+)};
is($status, 404, 'the upload is answered 404');
like($answer, qr/"error":"there is no session \\"$sid\\""/,
     'with the words of an unknown session');
is($t->sqlite($t->dir . '/agent.db', "SELECT COUNT(*) FROM resources "
              . "WHERE session_id = '$sid'"), 0, 'no resource row left');
my @files_after = glob("$res/*");
is_deeply(\@files_after, \@files_before, 'no file left in the resources '
          . 'folder (' . scalar(@files_after) . ' before and after)');

# --- SQL statements at once --------------------------------------------------

for my $case ([ 'api/chat', 4 ], [ 'two', 2 ]) {
    my ($loc, $cap) = @$case;
    my $sid = $t->session;
    my $t0 = time;
    my $r = $t->stream("/$loc/$sid/message", encode_json({ message => 'go' }),
                       timeout => 60);
    my $took = time - $t0;
    my @ids = map { $_->{id} } grep { $_->{type} eq 'tool_result' }
              @{ $r->{events} };
    is_deeply(\@ids, [ map { "call_$_" } 1 .. 12 ],
              "cap $cap: twelve results in call order");
    is($r->{types}[-1], 'end', "cap $cap: the turn ends");
    my $rounds = 12 / $cap;
    ok($took >= $rounds * 0.3 * 0.9,
       sprintf('cap %d: twelve 300 ms statements took %.2f s, at least %d '
               . 'rounds', $cap, $took, $rounds));

    # the statements that ran together end together: the results arrive
    # in batches (a gap of more than 150 ms between two batches), and each
    # batch is as large as the cap, neither more nor fewer
    my @batches;
    my $last;
    for my $ev (grep { $_->{type} eq 'tool_result' } @{ $r->{events} }) {
        push @batches, 0 if !defined $last || $ev->{_t} - $last > 0.15;
        $batches[-1]++;
        $last = $ev->{_t};
    }
    is(join(',', @batches), join(',', ($cap) x $rounds),
       "cap $cap: $cap statements at once, $rounds times");
}

$t->stop;
$t->check_log;
done_testing;
