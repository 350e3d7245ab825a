#!/usr/bin/perl
# Body limits while the body arrives: a chunked or HTTP/2 body over
# client_max_body_size is answered 413 in JSON before it ends, nothing
# past the limit is spooled; nginx's own error pages are JSON in the
# module's locations; a body spooled to a temp file is read back on the
# thread pool, not on the event loop.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use IO::Socket::INET;
use IO::Select;
use Time::HiRes qw(time sleep);

my $t = AgentTest->new;
$t->mock(sub { { text => 'unused' } });
my $h2port = AgentTest::free_port();
my $conf = $t->conf(http => 'client_max_body_size 64k; '
                            . 'client_body_buffer_size 1k;');
$conf =~ s/error_log (\S+) info;/error_log $1 debug;/;
# HTTP/2 (h2c) with a 1k limit: curl sends such a body in one go, so it
# is done uploading when the answer comes and reads it whole
my $h2 = <<"H2";
    server {
        listen 127.0.0.1:$h2port http2;
        location /api/sessions/ { agent_sessions; client_max_body_size 1k; }
    }
}
H2
$conf =~ s/\}\s*\z/$h2/;
$t->run($conf);

# the largest temp file of a request body now: nginx unlinks them at
# once, the workers' open descriptors still show them
sub spooled {
    my $max = 0;
    my $dir = $t->dir . '/body/';
    for my $pid ($t->worker_pids) {
        for my $fd (glob("/proc/$pid/fd/*")) {
            my $l = readlink($fd) // next;
            next unless index($l, $dir) == 0;
            $max = -s $fd if (-s $fd // 0) > $max;
        }
    }
    return $max;
}

# raw HTTP/1.1: headers, then the body as the test says; the answer
# as soon as it comes
sub raw_request {
    my ($head, $send, $wait) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                  PeerPort => $t->port) or die $!;
    print $s $head;
    my $sent = $send->($s);
    my $sel = IO::Select->new($s);
    my $buf = '';
    my $deadline = time + $wait;
    while (time < $deadline && $sel->can_read($deadline - time)) {
        my $n = sysread($s, $buf, 65536, length $buf);
        last unless $n;
        last if $buf =~ /\r\n\r\n/ && $buf =~ /\}\n/;
    }
    close $s;
    my ($status) = $buf =~ m{^HTTP/1\.1 (\d+)};
    my ($body) = $buf =~ /\r\n\r\n(.*)\z/s;
    my ($ctype) = $buf =~ /^Content-Type: (\S+)/mi;
    return { status => $status // 0, body => $body // '',
             ctype => $ctype // '', sent => $sent };
}

# 1. chunked, never finished: 200 KB of chunks against a 64 KB limit
my $r = raw_request(
    "POST /api/sessions/ HTTP/1.1\r\nHost: x\r\n"
    . "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
    sub {
        my ($s) = @_;
        my $sent = 0;
        local $SIG{PIPE} = 'IGNORE';
        for (1 .. 50) {
            my $chunk = 'x' x 4096;
            last unless print $s sprintf("%x\r\n%s\r\n", 4096, $chunk);
            $sent += 4096;
        }
        sleep 0.5;           # the connection stays open: what is on disk?
        return spooled();    # no last chunk: the body never ends
    }, 5);
is($r->{status}, 413, 'chunked body over the limit: 413 before it ends');
like($r->{ctype}, qr{^application/json}, '413 is JSON');
my $j = eval { decode_json($r->{body}) } // {};
like($j->{error} // '', qr/larger than 65536 bytes/,
     'the limit in the sentence');

ok($r->{sent} <= 65536, 'nothing past the limit was spooled to disk')
    or diag("spooled: $r->{sent} bytes");

# 2. bad chunked framing: nginx's 400, in JSON
$r = raw_request(
    "POST /api/sessions/ HTTP/1.1\r\nHost: x\r\n"
    . "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
    sub { print { $_[0] } "zz\r\nnot a chunk\r\n"; 0 }, 5);
is($r->{status}, 400, 'broken chunked framing: 400');
like($r->{ctype}, qr{^application/json}, '400 is JSON');
$j = eval { decode_json($r->{body}) } // {};
like($j->{error} // '', qr/could not be read/, 'a sentence for it');

# 3. Content-Length over the limit, checked before the body is read
$r = raw_request(
    "POST /api/sessions/ HTTP/1.1\r\nHost: x\r\n"
    . "Content-Type: application/json\r\nContent-Length: 10000000\r\n\r\n",
    sub { 0 }, 5);
is($r->{status}, 413, 'Content-Length over the limit: 413 at once');
like($r->{ctype}, qr{^application/json}, 'in JSON');

# 4. HTTP/2 without a length: counted as it arrives
SKIP: {
    skip 'curl missing', 3 unless `curl --version 2>/dev/null` =~ /HTTP2/;
    my $url = "http://127.0.0.1:$h2port/api/sessions/";
    # nginx resets the stream after its answer: when the reset comes before
    # curl's upload ends, curl reports "Stream error in the HTTP/2 framing
    # layer" instead of the answer (3 runs in 4 while make fuzz ran beside
    # it, 10 tries each), so more tries, each failure noted
    my ($body, $code, $ctype);
    for (1 .. 30) {
        my $out = `head -c 4000 /dev/zero | tr '\\0' x | curl -sS \\
            --http2-prior-knowledge -X POST \\
            -H 'Content-Type: application/json' --data-binary \@- \\
            -w '\\n%{http_code} %{content_type}' '$url' 2>&1`;
        ($body, $code, $ctype) = $out =~ /\A(.*)\n(\d+) (\S*)\z/s;
        last if ($code // 0) == 413;
        note($out);
    }
    is($code, 413, 'HTTP/2 body over the limit: 413');
    like($ctype // '', qr{^application/json}, 'HTTP/2 413 in JSON');
    like($body // '', qr/larger than 1024 bytes/, 'HTTP/2 413 sentence');
}

# 5. a body past client_body_buffer_size goes to a temp file; it is read
# back on the thread pool and arrives whole
my $title = 'T' x 1000;
my $meta = { n => 'y' x 30000 };
$r = $t->http('POST', '/api/sessions/', { title => $title, metadata => $meta });
is($r->{status}, 201, 'a spooled body: 201')
    or diag($r->{content});
ok($r->{json}{title} eq $title
   && ($r->{json}{metadata}{n} // '') eq $meta->{n},
   'the spooled body arrived whole');
ok($t->slurp('error.log') =~ /agent: request body read back on a thread/,
     'the temp file was read on a thread');

# and the server still answers
is($t->http('GET', '/api/sessions/')->{status}, 200, 'still serving');

$t->stop;
$t->check_log;
done_testing;
