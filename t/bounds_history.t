#!/usr/bin/perl
# Bounded conversations: agent_history_max_size refuses a turn past the
# stored size (unless the graph summarizes), agent_images_keep sends the
# images of the last N turns only, GET /messages pages (limit, before,
# include_images) with a byte budget per page, and 50 slow readers of a
# large session keep the worker's memory under a stated bound.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use IO::Socket::INET;
use IO::Select;
use Time::HiRes qw(time sleep);
use HTTP::Tiny;
use MIME::Base64 qw(encode_base64);

my $t = AgentTest->new;
my $mock = $t->mock(sub { { text => 'noted' } });

# a PNG of about n bytes: its signature, then noise
sub png {
    my ($n) = @_;
    my $raw = "\x89PNG\r\n\x1a\n" . join '', map { chr(int rand 256) } 1 .. $n;
    return { mime_type => 'image/png', data => encode_base64($raw, '') };
}

my $conf = $t->conf(http => "client_max_body_size 16m;\n"
    . "agent_prompts " . $t->root . "/prompts;\n"
    . "agent_graph summed {\n"
    . "    channel summary value;\n"
    . "    node sum summarize output=summary keep=2;\n"
    . "    node agent llm prompt=react_system.md summary=summary;\n"
    . "    edge START sum;\n    edge sum agent;\n    edge agent END;\n}\n");
$conf =~ s{(location /api/chat/ \{)}
          {location /small/ { agent_chat; agent_history_max_size 4k; }
        location /summed/ { agent_chat; agent_history_max_size 4k;
                            agent_use_graph summed; }
        location /keep1/ { agent_chat; agent_images_keep 1; }
        $1};
$t->run($conf);

sub post {
    my ($loc, $sid, $body) = @_;
    return $t->stream("/$loc/$sid/message", encode_json($body));
}

# --- agent_history_max_size ------------------------------------------------

my $sid = $t->session;
my $text = 'x' x 1500;
is(post('small', $sid, { message => $text })->{types}[-1], 'end',
   'a turn under the size limit');
is(post('small', $sid, { message => $text })->{types}[-1], 'end',
   'a second one, the history now past 3 KB');
my $r = post('small', $sid, { message => $text });
is($r->{status}, 413, 'a turn past agent_history_max_size: 413');
like($r->{json}{error} // '', qr/^this conversation has reached its size limit \(\d+ bytes stored, agent_history_max_size is 4096\); start a new session$/,
     'with words that say what to do');
is($t->http('GET', "/api/sessions/$sid")->{json}{message_count}, 4,
   'nothing of the refused turn stored');
$r = $t->turn($sid, 'hello');
is($r->{types}[-1], 'end', 'a location with the default limit goes on');

my $s2 = $t->session;
post('summed', $s2, { message => $text }) for 1 .. 3;
$r = post('summed', $s2, { message => $text });
is($r->{types}[-1], 'end', 'a graph that summarizes is not refused');

# --- agent_images_keep -----------------------------------------------------

sub images_sent {
    my ($req) = @_;
    my $n = 0;
    for my $m (@{ $req->{body}{messages} }) {
        next unless ref $m->{content};
        $n += grep { $_->{type} eq 'image_url' } @{ $m->{content} };
    }
    return $n;
}

for my $case ([ 'api/chat', 3, [1, 2, 3, 3] ], [ 'keep1', 1, [1, 1, 1, 1] ]) {
    my ($loc, $keep, $want) = @$case;
    my $s = $t->session;
    my @sent;
    for my $i (1 .. 4) {
        my $before = scalar $mock->requests;
        post($loc, $s, { message => "picture $i", images => [ png(100) ] });
        push @sent, images_sent(($mock->requests)[$before]);
    }
    is_deeply(\@sent, $want, "agent_images_keep $keep: images sent per "
              . "turn (@sent)");
    my ($last) = ($mock->requests)[-1];
    my ($old) = grep { ($_->{role} // '') eq 'user' } @{ $last->{body}{messages} };
    my $c = ref $old->{content}
            ? join ' ', map { $_->{text} // '' } @{ $old->{content} }
            : $old->{content};
    like($c, qr/\[1 attachment\(s\) shown earlier in the conversation\]/,
         "agent_images_keep $keep: an older turn says an image was there");
    my $all = $t->http('GET', "/api/sessions/$s/messages?include_images=1");
    is(scalar(grep { @{ $_->{metadata}{images} // [] } }
                   @{ $all->{json}{messages} }), 4,
       "agent_images_keep $keep: the stored history keeps every image");
}

# --- paging ----------------------------------------------------------------

my $p = $t->session;
$t->turn($p, "question $_") for 1 .. 15;
my $all = $t->http('GET', "/api/sessions/$p/messages?limit=1000")->{json};
is(scalar @{ $all->{messages} }, 30, 'one page of all 30 messages');
ok(!$all->{has_more}, 'no more');
my @ids;
my $before = '';
for (1 .. 10) {
    my $pg = $t->http('GET', "/api/sessions/$p/messages?limit=7$before")->{json};
    unshift @ids, map { $_->{id} } @{ $pg->{messages} };
    last unless $pg->{has_more};
    $before = "&before=$pg->{next_before}";
}
is_deeply(\@ids, [ map { $_->{id} } @{ $all->{messages} } ],
          'pages of 7 by next_before cover every message once, in order');
my $first = $t->http('GET', "/api/sessions/$p/messages?limit=4")->{json};
is_deeply([ map { $_->{content} } @{ $first->{messages} } ],
          [ 'question 14', 'noted', 'question 15', 'noted' ],
          'a page is the newest messages, oldest first');
is($t->http('GET', "/api/sessions/$p/messages")->{json}{messages}[0]{content},
   'question 1', 'without limit: the default page of 100');
for my $bad ('limit=0', 'limit=1001', 'limit=x', 'before=abc',
             'include_images=1&limit=21') {
    is($t->http('GET', "/api/sessions/$p/messages?$bad")->{status}, 400,
       "$bad: 400");
}

# --- 50 slow readers of a large session ------------------------------------

my $big = $t->session;
for my $i (1 .. 24) {
    post('api/chat', $big, { message => "large $i",
                             images => [ map { png(200_000) } 1 .. 4 ] });
}
my $history = $t->http('GET', "/api/sessions/$big")->{json};
my $pg = $t->http('GET', "/api/sessions/$big/messages?include_images=1");
ok(length($pg->{content}) < 6 * 1024 * 1024,
   'a page with images stops at its byte budget ('
   . int(length($pg->{content}) / 1024) . ' KiB of a history of 48 turns)');
ok($pg->{json}{has_more}, 'and says there is more');

sub rss_kb {
    my $kb = 0;
    for my $pid ($t->worker_pids) {
        open my $fh, '<', "/proc/$pid/status" or next;
        while (<$fh>) { $kb += $1 if /^VmRSS:\s+(\d+)/ }
    }
    return $kb;
}

my $base = rss_kb();
my @readers;
for my $i (1 .. 50) {
    my $q = $i % 2 ? '?include_images=1' : '?include_tools=1';
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                  PeerPort => $t->port) or die $!;
    # a reader that reads nothing for now: the answer waits in the worker
    print $s "GET /api/sessions/$big/messages$q HTTP/1.1\r\n"
             . "Host: localhost\r\nConnection: close\r\n\r\n";
    push @readers, $s;
}
sleep 2;
my $peak = rss_kb();
my $t0 = time;
# under the sanitizers the 50 pages (5 MB of JSON each) take the worker
# that long to write (15 s here on a quiet machine), so the other request
# waits for more than HTTP::Tiny's 20 s on a busy one; the time is shown
my $other = HTTP::Tiny->new(timeout => $ENV{AGENT_SANITIZER_LOGS} ? 90 : 20)
    ->get('http://127.0.0.1:' . $t->port . '/api/sessions/?limit=5');
my $waited = time - $t0;
is($other->{status}, 200, 'another request is answered meanwhile');
diag(sprintf 'workers: %d MiB before, %d MiB with 50 slow readers; another '
     . 'request answered in %.0f ms', $base / 1024, $peak / 1024,
     $waited * 1000);
ok($peak - $base < 256 * 1024, 'the workers grew by less than 256 MiB '
   . 'with 50 slow readers of a 48-turn session with 4 images a turn ('
   . int(($peak - $base) / 1024) . ' MiB)');

my $complete = 0;
my %body;
my $sel = IO::Select->new(@readers);
my $deadline = time + 60;
while ($sel->count && time < $deadline) {
    for my $s ($sel->can_read(1)) {
        my $n = sysread($s, $body{$s}, 1 << 20, length($body{$s} // ''));
        next if $n;
        $sel->remove($s);
        $complete++ if ($body{$s} // '') =~ /\r\n\r\n\{"messages":\[.*\],"has_more":(?:true,"next_before":\d+|false,"next_before":null)\}\n$/s;
        close $s;
    }
}
is($complete, 50, 'each reader got its whole page in the end');

$t->stop;
$t->check_log;
done_testing;
