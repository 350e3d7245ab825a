#!/usr/bin/perl
# A long conversation's request body sent in pieces: the history's kept
# text is read by curl where the worker keeps it (src/llm/ngx_http_agent_
# llm_prefix.c, curl's read callback), not copied into the body.  The
# provider gets each body whole and as long as it says, the kept text in
# its place byte for byte; a request curl sends again on a new connection
# (the kept one found closed before any answer) and a request tried again
# after a 500 resend the whole body.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
my $dir = $t->dir;

$t->mock(sub {
    my ($req) = @_;
    my $q = AgentTest::last_user($req);
    my $last = $req->{messages}[-1];

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

for my $q ('tool 1', 'plain 2', 'tool 3', 'plain 4', 'tool hangup 5',
           'tool fail 6', 'plain 7')
{
    my $r = $t->turn($sid, $q);
    is($r->{events}[-1]{type}, 'end', "turn \"$q\" ends")
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

my $m = $t->http('GET', "/api/sessions/$sid/messages")->{json};
my @c = map { $_->{content} // '' } @{ ref $m eq 'HASH' ? $m->{messages}
                                                         : $m };
is(scalar(grep { /^after the tool: tool (hangup|fail)/ } @c), 2,
   'both turns answered after the tool');

$t->stop;
$t->check_log;

done_testing;
