#!/usr/bin/perl
# Memory per open stream stays flat however long the answer: eight
# LangGraph runs/stream whose tokens interleave in one worker, held open
# after 3,000 tokens each; the worker grew by less than a token's
# metadata for each token (it was made again, into the stream's pool, on
# every token once streams interleave: 1.5 KiB a token).

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use IO::Select;
use IO::Socket::INET;
use JSON::PP;

use constant {
    STREAMS => 8,
    TOKENS  => 3000,
    GROWTH  => 12 * 1024,       # kB, the worker's VmRSS with them open
};

my $long = join '', map { "x$_ " } 0 .. TOKENS - 1;

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    return { text => 'warm' } if $req->{messages}[-1]{content} eq 'warm';
    # every token sent, then held until the client leaves
    return { text => $long, delay => 0.001, stall_after => TOKENS + 1,
             stall => 20 };
});

my $conf = $t->conf(workers => 1);
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api; }
    $1};
$t->run($conf);

sub run_body {
    my ($text) = @_;
    return encode_json({ assistant_id => 'react', input => { messages => [
        { role => 'user', content => $text } ] },
        stream_mode => ['messages-tuple', 'values'],
        on_disconnect => 'cancel' });
}

sub rss {
    my ($pid) = $t->worker_pids;
    return (AgentTest::slurp_file("/proc/$pid/status")
            =~ /VmRSS:\s+(\d+)/)[0] // 0;
}

# the worker's first run makes what every run shares
my $th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
my $warm = $t->stream("/lg/threads/$th/runs/stream", run_body('warm'));
is($warm->{events}[-1]{_event}, 'values', 'a first run ends');
my $before = rss();

my (%got, %sock, @socks);
my $sel = IO::Select->new;
for my $i (1 .. STREAMS) {
    my $id = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
    my $body = run_body("long $i");
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                  PeerPort => $t->port) or die $!;
    print $s "POST /lg/threads/$id/runs/stream HTTP/1.1\r\n"
             . "Host: localhost\r\nContent-Type: application/json\r\n"
             . "Content-Length: " . length($body) . "\r\n"
             . "Connection: close\r\n\r\n$body";
    $sock{$s} = $i;
    push @socks, $s;
    $got{$i} = '';
    $sel->add($s);
}

# read every stream until its last token (the runs wait there)
my $done = 0;
while ($done < STREAMS && (my @r = $sel->can_read(120))) {
    for my $s (@r) {
        my $i = $sock{$s};
        my $n = sysread($s, $got{$i}, 65536, length $got{$i});
        if (!$n || index($got{$i}, 'x' . (TOKENS - 1) . ' ') >= 0) {
            $sel->remove($s);
            $done++;
        }
    }
}

is($done, STREAMS, 'every stream gave its ' . TOKENS . ' tokens');
my @tokens = map { scalar(() = $got{$_} =~ /"x\d+ "/g) } 1 .. STREAMS;
is_deeply(\@tokens, [ (TOKENS) x STREAMS ], 'each token once, in order')
    or diag("tokens per stream: @tokens");
# the metadata a stream keeps is its own: one run named in each, and
# each run in one stream
my %runs = map { my %r = map { $_ => 1 } $got{$_} =~ /"run_id":"([^"]+)"/g;
                 $_ => [ keys %r ] } 1 .. STREAMS;
is_deeply([ map { scalar @{ $runs{$_} } } 1 .. STREAMS ], [ (1) x STREAMS ],
          'each stream\'s metadata names one run');
my %seen = map { $runs{$_}[0] // '' => 1 } 1 .. STREAMS;
is(scalar keys %seen, STREAMS, '... its own');

my $grew = rss() - $before;
SKIP: {
    # make test-asan: freed memory waits in ASan's quarantine
    skip "the allocator is ASan's", 1 if $ENV{AGENT_SANITIZER_LOGS};
    ok($grew < GROWTH, "the worker grew by $grew kB with "
       . STREAMS . ' runs of ' . TOKENS . ' tokens open (under '
       . GROWTH . ')');
}

close $_ for @socks;

# the worker goes on
my $again = $t->stream("/lg/threads/$th/runs/stream", run_body('warm'));
is($again->{events}[-1]{_event}, 'values', 'another run ends after them');

$t->check_log;

done_testing;
