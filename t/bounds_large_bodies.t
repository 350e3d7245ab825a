#!/usr/bin/perl
# Large bodies get their answer (issue 48, item 12): a LangGraph background
# run of 1 MB and 1.9 MB (within agent_max_document_size 2m; 3 MB is a
# 422 with its reason), whose answer (the run, its input in it) is more
# than the socket takes at once while the run goes on, reaches a client
# that reads slowly, and the run completes; store items of 800 KB and 2 MB
# of distinct words are put (PostgreSQL's tsvector holds 1 MB: only the
# first 256 KiB are indexed), read back equal and found by a word, and
# PostgreSQL's notices are lines of the error log; a body over
# client_max_body_size is a 413 with its reason; the chat API, A2A and
# Responses take a 1 MB message.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use IO::Socket::INET;
use IO::Select;
use Socket qw(SOL_SOCKET SO_RCVBUF sockaddr_in inet_aton);
use Time::HiRes qw(time);

my $t = AgentTest->new;
# "hold": a run that outlasts its answer (its model call waits), so the
# rest of the answer goes while the run still holds the request
$t->mock(sub {
    my ($req) = @_;
    return { text => 'hello',
             first_delay => ($req->{messages}[-1]{content} // '') eq 'hold'
                            ? 10 : 0 };
});

my $conf = $t->conf(http => <<'HTTP');
client_max_body_size 16m;
agent_max_document_size 2m;
agent_graph chat {
    channel note value;
    node model llm;
    edge START model;
    edge model END;
}
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
        agent_use_graph chat; }
    location /small/ { agent_langgraph_api; agent_use_graph chat;
        client_max_body_size 100k; }
    location /a2a/ { agent_a2a; agent_use_graph chat; }
    location /v1/ { agent_responses; agent_use_graph chat; }
    $1};
# a small send buffer: a large answer takes many writes, each when the
# client has read some
$conf =~ s{listen (127\.0\.0\.1:%%PORT%%);}{listen $1 sndbuf=32k;};
$t->run($conf);

sub lg { my ($m, $p, $b) = @_; return $t->http($m, "/lg$p", $b) }

# a POST from a client with a small receive window: the answer arrives in
# many pieces; read until the server closes or the answer is whole
sub slow_post {
    my ($path, $body) = @_;
    my $s = IO::Socket::INET->new(Proto => 'tcp') or die $!;
    setsockopt($s, SOL_SOCKET, SO_RCVBUF, 16384) or die $!;
    connect($s, sockaddr_in($t->port, inet_aton('127.0.0.1'))) or die $!;
    print $s "POST $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
             . "Content-Type: application/json\r\n"
             . "Content-Length: " . length($body) . "\r\n\r\n$body";
    my $sel = IO::Select->new($s);
    my ($buf, $deadline) = ('', time + 30);
    while (time < $deadline && $sel->can_read($deadline - time)) {
        my $n = sysread($s, $buf, 1 << 20, length $buf);
        last unless $n;
        my ($head, $rest) = split /\r\n\r\n/, $buf, 2;
        my ($len) = ($head // '') =~ /^Content-Length: (\d+)/mi;
        last if defined $rest && defined $len && length($rest) >= $len;
    }
    close $s;
    my ($status) = $buf =~ m{^HTTP/1\.1 (\d+)};
    my ($body_in) = $buf =~ /\r\n\r\n(.*)\z/s;
    return { status => $status // 0, content => $body_in // '',
             json => scalar eval { decode_json($body_in // '') } };
}

my $in = { messages => [ { role => 'user', content => 'go' } ] };

# --- background runs --------------------------------------------------------

my $hold = { messages => [ { role => 'user', content => 'hold' } ] };

for my $mb (1, 1.9) {
    my $note = 'n' x ($mb * 1_000_000);

    # answered whole while the run goes on, then cancelled
    my $th = lg('POST', '/threads', {})->{json}{thread_id};
    my $r = slow_post("/lg/threads/$th/runs", encode_json({
        assistant_id => 'chat', input => { %$hold, note => $note } }));
    is($r->{status}, 200, "a background run of $mb MB: answered");
    my $run = $r->{json} // {};
    is(length($run->{kwargs}{input}{note} // ''), length $note,
       '... the whole run, its input in it')
        or diag(length($r->{content}) . ' bytes came');
    is(lg('GET', "/threads/$th/runs/$run->{run_id}")->{json}{status},
       'running', '... while the run goes on');
    is(lg('POST', "/threads/$th/runs/$run->{run_id}/cancel?wait=1")
       ->{status}, 204, '... cancelled');

    # one that completes, joined: the thread's values, the note in them
    $th = lg('POST', '/threads', {})->{json}{thread_id};
    $r = slow_post("/lg/threads/$th/runs", encode_json({
        assistant_id => 'chat', input => { %$in, note => $note } }));
    $run = $r->{json} // {};
    is(length($run->{kwargs}{input}{note} // ''), length $note,
       "another of $mb MB: answered whole");
    my $j = lg('GET', "/threads/$th/runs/$run->{run_id}/join");
    is($j->{status}, 200, '... joined');
    is(($j->{json}{messages} // [ {} ])->[-1]{content}, 'hello',
       '... the run completed');
    is(length($j->{json}{note} // ''), length $note, '... its note kept');
    is(lg('GET', "/threads/$th/runs/$run->{run_id}")->{json}{status},
       'success', '... its status');
}

# past the document cap: refused with its reason, nothing run
my $th = lg('POST', '/threads', {})->{json}{thread_id};
my $r = slow_post("/lg/threads/$th/runs", encode_json({
    assistant_id => 'chat', input => { %$in, note => 'n' x 3_000_000 } }));
is($r->{status}, 422, 'a background run of 3 MB, past the cap: 422');
like($r->{content}, qr/agent_max_document_size/, '... which says why');
is(scalar @{ lg('GET', "/threads/$th/runs")->{json} // [] }, 0,
   '... and no run was made');

# the same through a client that reads at once (HTTP::Tiny)
$th = lg('POST', '/threads', {})->{json}{thread_id};
$r = lg('POST', "/threads/$th/runs", { assistant_id => 'chat',
    input => $in, metadata => { big => 'm' x 1_000_000 } });
is($r->{status}, 200, 'a background run with 1 MB of metadata');
is(length($r->{json}{metadata}{big} // ''), 1_000_000, '... answered whole');

# --- store items --------------------------------------------------------------

# distinct words: a tsvector of them is larger than their text
srand(48);
sub words {
    my ($len, $first) = @_;
    my $s = "$first ";
    $s .= join('', map { ('a' .. 'z')[rand 26] } 1 .. 8) . ' '
        while length $s < $len;
    return $s;
}

for my $size (800_000, 2_000_000) {
    my $value = { text => words($size, "zebra$size") . " okapi$size" };
    $r = lg('PUT', '/store/items', { namespace => [ 'big' ],
                                     key => "k$size", value => $value });
    is($r->{status}, 204, "an item of $size bytes: put")
        or diag($r->{content});
    $r = lg('GET', "/store/items?namespace=big&key=k$size");
    is_deeply($r->{json}{value}, $value, '... read back equal');
    $r = lg('POST', '/store/items/search', { namespace_prefix => [ 'big' ],
                                             query => "zebra$size" });
    is_deeply([ map { $_->{key} } @{ $r->{json}{items} // [] } ],
              [ "k$size" ], '... found by a word of its start');
    $r = lg('POST', '/store/items/search', { namespace_prefix => [ 'big' ],
                                             query => "okapi$size" });
    is_deeply($r->{json}{items}, [],
              '... not by one past its first 256 KiB');
}

# a word longer than PostgreSQL indexes: its notice is a line of the
# error log, not libpq's unframed lines on stderr (the log's file)
$r = lg('PUT', '/store/items', { namespace => [ 'big' ], key => 'long',
                                 value => { text => 'y' x 3000 } });
is($r->{status}, 204, 'an item of one 3000-byte word: put');
my @raw = grep { !m{^\d{4}/\d\d/\d\d } } split /\n/, $t->slurp('error.log');
ok(!@raw, '... every line of the error log is nginx\'s') or diag(@raw);

# --- over client_max_body_size ----------------------------------------------

# LangGraph's errors: the sentence as text, or {"detail"} to a client that
# accepts JSON (as LangGraph's servers answer)
$r = $t->http('POST', "/small/threads/$th/runs", { assistant_id => 'chat',
    input => { %$in, note => 'n' x 1_000_000 } },
    Accept => 'application/json');
is($r->{status}, 413, 'a run over client_max_body_size: 413');
like($r->{headers}{'content-type'}, qr{^application/json}, '... in JSON');
like($r->{json}{detail} // '', qr/larger than 102400 bytes/,
     '... with its reason');

$r = $t->http('PUT', '/small/store/items', { namespace => [ 'big' ],
    key => 'k', value => { text => 'x' x 200_000 } });
is($r->{status}, 413, 'a store put over it: 413');
like($r->{content}, qr/larger than 102400 bytes/, '... why, as text');

$r = $t->http('POST', '/a2a/', 'x' x 17_000_000);
is($r->{status}, 413, 'A2A over it: 413');
like($r->{json}{error} // '', qr/larger than 16777216 bytes/,
     '... in JSON, why');

# --- the other protocols, 1 MB ------------------------------------------------

my $big = 'hi ' . ('w' x 1_000_000);
my $sid = $t->session;
my $turn = $t->turn($sid, $big);
is($turn->{events}[-1]{type}, 'end', 'the chat API: a 1 MB message answered');
$r = $t->http('GET', "/api/sessions/$sid/messages");
my ($user) = grep { $_->{role} eq 'user' } @{ $r->{json}{messages} // [] };
is(length($user->{content} // ''), length $big, '... and kept whole');

$r = slow_post('/a2a/', encode_json({ jsonrpc => '2.0', id => 1,
    method => 'message/send', params => { message => { role => 'user',
    kind => 'message', messageId => 'm1',
    parts => [ { kind => 'text', text => $big } ] } } }));
is($r->{json}{result}{status}{state}, 'completed', 'A2A: 1 MB answered');

$r = slow_post('/v1/responses', encode_json({ model => 'chat',
                                              input => $big }));
is($r->{json}{status}, 'completed', 'Responses: 1 MB answered');
$r = slow_post('/v1/responses', encode_json({ model => 'chat',
    input => $big, background => JSON::PP::true }));
is($r->{status}, 200, 'Responses in the background: 1 MB answered');
ok(AgentTest::wait_for(sub {
    ($t->http('GET', "/v1/responses/$r->{json}{id}")->{json}{status} // '')
        eq 'completed' }, 30), '... and completed');

$t->stop;
$t->check_log;

done_testing();
