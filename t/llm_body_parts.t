#!/usr/bin/perl
# A long conversation's request body sent in pieces: the history's kept
# text is read by curl where the worker keeps it (src/llm/ngx_http_agent_
# llm_prefix.c, curl's read callback), not copied into the body.  The
# provider gets each body whole and as long as it says, the kept text in
# its place byte for byte; a request curl sends again on a new connection
# (the kept one found closed before any answer) and a request tried again
# after a 500 resend the whole body.  A turn reads its history where the
# worker keeps it too: 70 other sessions' turns push its kept rows and
# text out of the worker while it waits on the model, and its next
# request still sends its whole history (under make test-asan, a read of
# freed memory would fail the file).

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use POSIX ();

my $t = AgentTest->new;
my $dir = $t->dir;

$t->mock(sub {
    my ($req) = @_;
    my $q = AgentTest::last_user($req);
    my $last = $req->{messages}[-1];

    # the first call of a "hold" turn waits for the test's word
    if ($q =~ /^hold/ && $last->{role} eq 'user') {
        for (1 .. 1200) {
            last if -e "$dir/go";
            select(undef, undef, undef, 0.1);
        }
        return { tools => [[ 'h1', 'execute_sql_query',
                             '{"query": "SELECT 2 AS two"}' ]] };
    }

    if ($last->{role} eq 'tool') {
        # once each: the connection closed unanswered, a 500
        if ($q =~ /hangup/ && !-e "$dir/hung") {
            open my $fh, '>', "$dir/hung";
            return { hangup => 1 };
        }
        if ($q =~ /fail/ && !-e "$dir/failed") {
            open my $fh, '>', "$dir/failed";
            return { status => 500 };
        }
        return { text => "after the tool: $q \"quoted\"\n\\" };
    }

    return { tools => [[ 'c' . scalar(@{ $req->{messages} }),
                         'execute_sql_query',
                         '{"query": "SELECT 1 AS one"}' ]] }
        if $q =~ /^tool/;
    return { text => "answer to $q" };
}, raw => 1);

# one worker: every request of the session meets the text kept before
(my $conf = $t->conf(workers => 1))
    =~ s/alias=default;/alias=default retries=2 backoff=10ms;/ or die;
$t->run($conf);

my $sid = $t->session;

# long questions: the kept text outgrows its buffer in a call that sends
# it, and moves while the body still reads it where it was
for my $q ('tool 1', 'plain 2', 'tool 3', 'plain 4', 'tool hangup 5',
           'tool fail 6', 'plain 7')
{
    my $r = $t->turn($sid, "$q " . ('x' x 1500));
    is($r->{events}[-1]{type}, 'end', "turn \"$q ...\" ends")
        or diag(explain($r->{events}[-1]));
}

my @log = $t->{mock}->log_lines;
my @req = grep { $_->{event} eq 'request' } @log;

is(scalar(grep { $_->{body}{_err} } @req), 0, 'every body is JSON');
is(scalar(grep { ($_->{headers}{'content-length'} // -1)
                 != length $_->{raw} } @req), 0,
   'every body as long as its Content-Length');
is(scalar(grep { ($_->{headers}{'transfer-encoding'} // '') ne '' } @req), 0,
   'no body chunked');

# the messages array's text, the system prompt's left out
sub history {
    my ($raw) = @_;
    my ($m) = $raw =~ /"messages":\[(.*?)\](?:,"tools":\[.*\])?\}$/s;
    $m //= '';
    $m =~ s/^\{"role":"system","content":"(?:[^"\\]|\\.)*"\},?//s;
    return $m;
}

my $kept = 1;
for my $n (1 .. $#req) {
    my ($a, $b) = (history($req[$n - 1]{raw}), history($req[$n]{raw}));
    $kept &&= length $b >= length $a && substr($b, 0, length $a) eq $a
        or diag("request $n: " . substr($b, 0, 200));
}
ok($kept, 'each body holds the last one\'s messages byte for byte, then '
          . 'the new ones');

my @hung = grep { $_->{event} eq 'hangup' } @log;
is(scalar @hung, 1, 'one request left unanswered');
my ($h) = grep { $_->{n} == $hung[0]{n} } @req;
my ($again) = grep { $_->{n} == $hung[0]{n} + 1 } @req;
ok($h && $again && $again->{raw} eq $h->{raw},
   'curl sent it again whole on a new connection');
my @tries = $t->slurp('error.log') =~ /; try \d+ of/g;
is(scalar @tries, 1, '... not as a call tried again (only the 500 was)');

my ($f) = grep { ($_->{body}{messages}[-1]{role} // '') eq 'tool'
                 && AgentTest::last_user($_->{body}) =~ /fail/ } @req;
my @f = grep { $_->{raw} eq ($f ? $f->{raw} : '') } @req;
is(scalar @f, 2, 'the request answered 500 was sent again whole');

# --- the kept rows and text let go while a turn reads them ---------------

my $pid = fork();
die "fork: $!" unless defined $pid;
if ($pid == 0) {
    my $r = $t->turn($sid, 'hold 8');
    open my $fh, '>', "$dir/held";
    print $fh $r->{events}[-1]{type} // '';
    close $fh;
    POSIX::_exit(0);
}

# the turn's first request has come: its history is read and pinned
for (1 .. 600) {
    last if grep { AgentTest::last_user($_->{body}) =~ /^hold/ }
            $t->{mock}->requests;
    select(undef, undef, undef, 0.1);
}

# a session's second turn reads its history: each one kept in its place
my $others = 0;
for my $i (1 .. 70) {
    my $other = $t->session;
    for my $k (1, 2) {
        my $r = $t->turn($other, "other $i $k");
        $others++ if ($r->{events}[-1]{type} // '') eq 'end';
    }
}
is($others, 140, '70 other sessions\' turns while it waits');

open my $go, '>', "$dir/go";
close $go;
waitpid($pid, 0);
is($t->slurp('held'), 'end', 'the waiting turn ends');

my @hold = grep { AgentTest::last_user($_->{body}) =~ /^hold/ }
           grep { $_->{event} eq 'request' } $t->{mock}->log_lines;
is(scalar @hold, 2, 'it asked the model twice');
my ($h1, $h2) = map { history($_->{raw}) } @hold;
ok(@hold == 2 && length $h1 > 1000 && substr($h2, 0, length $h1) eq $h1,
   'its second request holds its whole history as the first sent it');
like($h2, qr/"content":"tool 1 x.*"content":"plain 7 x.*"content":"hold 8"/s,
     '... from its first message to its last');

my $m = $t->http('GET', "/api/sessions/$sid/messages")->{json};
my @c = map { $_->{content} // '' } @{ ref $m eq 'HASH' ? $m->{messages}
                                                         : $m };
is(scalar(grep { /^after the tool: tool (hangup|fail)/ } @c), 2,
   'both turns answered after the tool');

$t->stop;
$t->check_log;

done_testing;
