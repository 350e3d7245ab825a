#!/usr/bin/perl
# A provider's bad minute: connect errors, 429 with Retry-After, 5xx and a
# silent first token are tried again with backoff, then on the fallback
# model; other errors are not; once text has gone out a failure is an
# error event, never a restart.  Each timeout of a model: connect, first
# token, idle, total.  A key a provider quotes back is not passed on.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use IO::Socket::INET;
use Fcntl qw(:flock);
use Time::HiRes qw(time);

my $t = AgentTest->new;
my $dir = $t->dir;
my $key = 'sk-quoted-secret-99';

# the attempt of a scenario, counted across the mock's processes
sub attempt {
    my ($tag) = @_;
    open my $fh, '+>>', "$dir/attempt-$tag" or die $!;
    flock($fh, LOCK_EX);
    seek($fh, 0, 0);
    my $n = (<$fh> // 0) + 1;
    truncate($fh, 0);
    print $fh $n;
    close $fh;
    return $n;
}

my %plan = (
    s429 => sub { $_[0] == 1 ? { status => 429, headers => { 'Retry-After' => 1 } }
                             : { text => 'after the 429' } },
    s503 => sub { $_[0] <= 2 ? { status => 503 } : { text => 'third time' } },
    s500 => sub { { status => 500, message => 'upstream broke' } },
    s400 => sub { { status => 400, message => 'bad request' } },
    sfirst => sub { $_[0] == 1 ? { text => 'late', first_delay => 1.5 }
                               : { text => 'on time' } },
    smid => sub { { text => 'one two three four five six', cut_after => 3 } },
    sidle => sub { { text => 'one two three four', stall_after => 3,
                     stall => 2 } },
    stotal => sub { { text => 'a b c d e f g h', delay => 0.25 } },
    slong => sub { { status => 429, headers => { 'Retry-After' => 3600 } } },
    skey => sub { { status => $_[0] == 1 ? 503 : 401,
                    message => "Incorrect API key provided: $key." } },
    # the key quoted across the 200 bytes of the message passed on
    scut => sub { { status => 401,
                    message => ('x' x 190) . " $key." } },
    # an error in the stream before any of the answer, then one after text
    sflow => sub { $_[0] == 1
        ? { chunks => [ sse_error('Overloaded', 'overloaded_error') ] }
        : { text => 'after the overload' } },
    sreq => sub { { chunks => [ sse_error('bad tools',
                                          'invalid_request_error') ] } },
    slate => sub { my @c = MockLLM::text_chunks('partial answer');
                   { chunks => [ @c[0 .. $#c - 3],
                                 sse_error('Overloaded', 'overloaded_error') ] } },
);

sub sse_error {
    my ($message, $type) = @_;
    return MockLLM::sse_body({ error => { message => $message,
                                          type => $type } });
}

my $mock = $t->mock(sub {
    my ($body) = @_;
    my $u = AgentTest::last_user($body);
    my ($tag) = $u =~ /^(\w+)/;
    return { text => "fallback answered $u" }
        if ($body->{model} // '') eq 'backup';
    return $plan{$tag} ? $plan{$tag}->(attempt($tag)) : { text => 'ok' };
});

# a port nothing listens on, and one that never accepts
my $closed = AgentTest::free_port();
my $hole = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                                 Listen => 1, ReuseAddr => 1) or die $!;
my @fill = map { IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                       PeerPort => $hole->sockport,
                                       Blocking => 0) } 1 .. 4;
select(undef, undef, undef, 0.3);     # its queue is full: SYNs dropped

my $m = 'http://127.0.0.1:%%MOCK%%/v1/chat/completions';
my $conf = $t->conf(http => join "\n",
    "agent_model slow provider=openai url=$m timeout=700ms retries=0;",
    "agent_model idle provider=openai url=$m idle_timeout=500ms;",
    "agent_model backup provider=openai url=$m;",
    "agent_model down provider=openai url=http://127.0.0.1:$closed/v1 "
        . "retries=1 backoff=10ms fallback=backup;",
    "agent_model limited provider=openai url=$m fallback=backup;",
    "agent_model hole provider=openai url=http://127.0.0.1:"
        . $hole->sockport . "/v1 connect_timeout=300ms retries=0;",
    "agent_model keyed provider=openai url=$m key_env=AGENT_TEST_KEY "
        . "retries=1 backoff=10ms;");
$conf =~ s{(agent_model mock [^;]*)}{$1 retries=2 backoff=50ms first_token_timeout=600ms};
$conf =~ s/^(worker_processes)/env AGENT_TEST_KEY=$key;\n$1/m;
$t->run($conf);

sub ask {
    my ($text, $model) = @_;
    my $sid = $t->session;
    my $t0 = time;
    my $r = $t->turn($sid, { message => $text,
                             ($model ? (model => $model) : ()) });
    $r->{took} = time - $t0;
    $r->{last} = $r->{events}[-1];
    $r->{text} = join '', map { $_->{content} }
                          grep { $_->{type} eq 'chunk' } @{ $r->{events} };
    return $r;
}

sub tries { my ($tag) = @_; scalar grep { AgentTest::last_user($_->{body})
                                          =~ /^$tag\b/ } $mock->requests }

my $r = ask('s429 please');
is($r->{last}{full_response}, 'after the 429', '429: tried again');
is(tries('s429'), 2, '429: two requests');
ok($r->{took} >= 0.95, sprintf('429: Retry-After honoured (%.2f s)',
                               $r->{took}));

$r = ask('s503 please');
is($r->{last}{full_response}, 'third time', '503 twice: the third try');
is(tries('s503'), 3, '503: three requests');

$r = ask('s500 please');
is($r->{last}{type}, 'error', '500 each time: an error event');
like($r->{last}{error}, qr/answered 500: upstream broke/, '500: says so');
is(tries('s500'), 3, '500: retries=2, three requests');

$r = ask('s400 please');
is($r->{last}{type}, 'error', '400: an error event');
is(tries('s400'), 1, '400: not tried again');

$r = ask('sfirst please');
is($r->{last}{full_response}, 'on time', 'no first token: tried again');
is(tries('sfirst'), 2, 'first token timeout: two requests');
ok($r->{took} < 1.4, sprintf('first token timeout: did not wait for the '
                             . 'late one (%.2f s)', $r->{took}));

$r = ask('smid please');
is($r->{last}{type}, 'error', 'cut mid-stream: an error event');
like($r->{text}, qr/^one two/, 'cut mid-stream: the text before it went out');
is(tries('smid'), 1, 'cut mid-stream: never restarted');

$r = ask('sidle please', 'idle');
is($r->{last}{type}, 'error', 'idle timeout: an error event');
like($r->{last}{error}, qr/idle timeout/, 'idle timeout: says so');
ok(length $r->{text}, 'idle timeout: after text, no retry');
is(tries('sidle'), 1, 'idle timeout: one request');

$r = ask('stotal please', 'slow');
is($r->{last}{type}, 'error', 'total timeout: an error event');
ok($r->{took} < 1.5, sprintf('total timeout: 700 ms (%.2f s)', $r->{took}));

$r = ask('down please', 'down');
is($r->{last}{full_response}, 'fallback answered down please',
   'connect error, retried, then the fallback answers');

$r = ask('slong please', 'limited');
is($r->{last}{type}, 'end', 'Retry-After of an hour: the fallback at once');
ok($r->{took} < 3, sprintf('not waiting an hour (%.2f s)', $r->{took}));

$r = ask('hole please', 'hole');
is($r->{last}{type}, 'error', 'connect timeout: an error event');
ok($r->{took} < 2, sprintf('connect timeout: 300 ms (%.2f s)', $r->{took}));

$r = ask('skey please', 'keyed');
is($r->{last}{type}, 'error', 'a 401: an error event');
like($r->{last}{error}, qr/answered 401: Incorrect API key provided: \*+/,
     'the provider quoted the key: masked');
unlike($r->{raw}, qr/\Q$key\E/, 'the key is not in the stream');
is(tries('skey'), 2, 'the 503 quoting the key was retried');

$r = ask('scut please', 'keyed');
like($r->{last}{error}, qr/answered 401: x+ \*/,
     'a key quoted at the cut of the message: masked');
unlike($r->{raw}, qr/sk-quoted/, '... no part of it passed on');

$r = ask('sflow please');
is($r->{last}{full_response}, 'after the overload',
   'an error in the stream before any text: tried again');
is(tries('sflow'), 2, '... two requests');

$r = ask('sreq please');
like($r->{last}{error}, qr/reported: bad tools/,
     'an error in the stream naming the request: an error event');
is(tries('sreq'), 1, '... not tried again');

$r = ask('slate please');
is($r->{last}{type}, 'error', 'an error in the stream after text: an error');
like($r->{text}, qr/^partial/, '... the text before it went out');
is(tries('slate'), 1, '... never restarted');

$t->stop;
my $log = $t->slurp('error.log');
unlike($log, qr/sk-quoted/, 'nor in the log, retries included');
like($log, qr/model "mock": .*429.*; try 2 of 3 in \d+ ms/,
     'each retry logged');
like($log, qr/model "down": .*; falling back to "backup"/,
     'the fallback logged');
$t->check_log;
done_testing;
