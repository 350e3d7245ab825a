#!/usr/bin/perl
# CSV imports run on nginx's thread pool: while a big file is imported, a
# turn on the same (single) worker streams to its end; with the pool off the
# import holds the worker.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use IO::Socket::INET;
use IO::Select;
use Time::HiRes qw(sleep);

my $t = AgentTest->new;
$t->mock(sub { { text => 'a quick answer' } });

my $csv = "id,name,amount,note\n"
        . join('', map { "$_,name $_,$_.25,\"a note, quoted\"\n" }
                   1 .. 800000);

sub start_upload {
    my ($sid) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                  PeerPort => $t->port) or die $!;
    print $s "POST /api/sessions/$sid/resources?name=big.csv HTTP/1.1\r\n"
             . "Host: x\r\nContent-Type: text/csv\r\n"
             . "Content-Length: " . length($csv) . "\r\n"
             . "Connection: close\r\n\r\n$csv";
    return $s;
}

sub pending {
    my ($s, $wait) = @_;
    my $buf = '';
    my $sel = IO::Select->new($s);
    while ($sel->can_read($wait)) {
        sysread($s, $buf, 65536, length $buf) or last;
        last if $wait == 0 && !$sel->can_read(0);
    }
    return $buf;
}

for my $mode ('default', 'off') {
    $t->run($t->conf(workers => 1, http => 'client_max_body_size 64m;',
                     location => "agent_sql_thread_pool $mode;")
            =~ s/(agent_sessions;)/$1 agent_sql_thread_pool $mode;/r);

    my ($a, $b) = ($t->session, $t->session);
    my $s = start_upload($a);
    sleep 0.3;

    my $r = $t->turn($b, 'quick');
    is($r->{types}[-1], 'end', "$mode: the turn ended");

    # make test-pg: the row's write answers after the import, and the turn
    # may end before it does: its answer is read as it comes
    my $mid = pending($s, ($mode eq 'off' && $ENV{AGENT_PG}) ? 10 : 0);
    if ($mode eq 'default') {
        unlike($mid, qr/HTTP\/1\.1 201/,
               'pool: the turn ended while the import ran');
    } else {
        like($mid, qr/HTTP\/1\.1 201/,
             'inline: the turn had to wait for the import');
    }

    my $all = $mid . pending($s, 20);
    like($all, qr/"row_count":800000/, "$mode: the import completed");
    close $s;
    $t->stop;
}

$t->check_log;
done_testing;
