#!/usr/bin/perl
# A conversation's history encoded once (src/llm/ngx_http_agent_llm_prefix.c):
# each worker keeps the JSON of the messages a session's last model request
# sent and sends it again where the messages are the same.  What the model
# gets must be what it got without it: each request of a session holds the
# previous one's messages, then the new ones, as stored; two sessions never
# see each other's; an edit of an earlier message is sent, not the kept
# text; a history past the kept bound is sent whole.  Two workers, so a
# session's turns meet kept text another worker's turns have outdated.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my $q = AgentTest::last_user($req);
    my @m = @{ $req->{messages} };
    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;

    return { text => "answer to $q \"quoted\"\n\t\\" }
        if $q !~ /^tool/ || grep { $_->{role} eq 'tool' } @m[$u .. $#m];
    return { tools => [[ "c$u", 'execute_sql_query',
                         '{"query": "SELECT 1 AS one"}' ]] };
});
$t->run($t->conf);

# the messages a request sent, the system prompt left out
sub sent {
    my ($req) = @_;
    return [ map { { role => $_->{role}, content => $_->{content},
                     tool_call_id => $_->{tool_call_id},
                     calls => join(',', map { "$_->{id}:$_->{function}{name}"
                                              . ":$_->{function}{arguments}" }
                                        @{ $_->{tool_calls} // [] }) } }
             grep { $_->{role} ne 'system' } @{ $req->{messages} } ];
}

sub asked {
    my ($sid) = @_;
    return map { $_->{body} } grep {
        !$_->{body}{_err}
        && grep { ($_->{content} // '') =~ /\Q$sid\E/ }
                @{ $_->{body}{messages} } } $t->{mock}->requests;
}

# --- two sessions, turns interleaved, with and without tool calls -----------

my @s = ($t->session, $t->session);

for my $i (1 .. 6) {
    for my $sid (@s) {
        my $q = ($i % 2 ? 'tool' : 'plain') . " $sid $i";
        my $r = $t->turn($sid, $q);
        is($r->{events}[-1]{type}, "end", "turn $i of a session ends")
            or diag(explain($r->{events}[-1]));
    }
}

is(scalar(grep { $_->{body}{_err} } $t->{mock}->requests), 0,
   'every request\'s body is JSON');

for my $k (0, 1) {
    my $sid = $s[$k];
    my @req = asked($sid);
    is(scalar @req, 9, "session $k: nine model requests (three tool turns)");

    my $grew = 1;
    for my $n (1 .. $#req) {
        my ($a, $b) = (sent($req[$n - 1]), sent($req[$n]));
        $grew &&= @$b > @$a
                  && Test::More::_deep_check([ @$b[0 .. $#$a] ], $a);
    }
    ok($grew, "session $k: each request holds the last one's messages, "
              . 'then new ones');

    my $other = $s[1 - $k];
    ok(!grep({ grep { ($_->{content} // '') =~ /\Q$other\E/ }
                    @{ $_->{messages} } } @req),
       "session $k: never the other session's messages");

    my $last = sent($req[-1]);
    is(scalar @$last, 6 * 2 + 3 * 2 - 1,
       "session $k: the last request holds the whole conversation");
    is($last->[3]{content}, "answer to tool $sid 1 \"quoted\"\n\t\\",
       '... an early answer as it was written, quotes and escapes too');
    like($last->[1]{calls}, qr/^c\d+:execute_sql_query:\{"query"/,
         '... an early tool call with its arguments');

    my $h = $t->http('GET', "/api/sessions/$sid/messages")->{json};
    my @stored = map { $_->{content} } grep { $_->{role} ne 'system' }
                 @{ ref $h eq 'HASH' ? $h->{messages} : $h };
    is_deeply([ map { $_->{content} // '' }
                grep { $_->{role} =~ /^(user|assistant)$/
                       && ($_->{content} // '') ne '' } @$last ],
              [ grep { $_ ne '' } map { $_ // '' } @stored[0 .. $#stored - 1] ],
              "session $k: what the model read is what is stored");
}

# --- an earlier message edited: the edit is sent, not the kept text ---------

my $conf = $t->conf;
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api; }
        $1};
$t->stop;
$t->run($conf);

my $th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
for my $q ('first', 'second') {
    $t->http('POST', "/lg/threads/$th/runs/wait", { assistant_id => 'react',
        input => { messages => [ { role => 'user', content => "$q $th" } ] } });
}
my $st = $t->http('GET', "/lg/threads/$th/state")->{json};
my $ai = { %{ $st->{values}{messages}[1] } };
(my $edit = $ai->{content}) =~ tr/a-z/A-Z/;   # same length, other bytes
$ai->{content} = $edit;
is($t->http('POST', "/lg/threads/$th/state",
            { values => { messages => [ $ai ] } })->{status}, 200,
   'an earlier answer edited in place, at its length');
$t->http('POST', "/lg/threads/$th/runs/wait", { assistant_id => 'react',
    input => { messages => [ { role => 'user', content => "third $th" } ] } });
my @req = asked($th);
my $m = sent($req[-1]);
is($m->[1]{content}, $edit, 'the next request sends the edit');
is(scalar(grep { ($_->{content} // '') eq $st->{values}{messages}[1]{content} }
           @$m), 0, '... and not the text it replaced');

# --- a history past the kept bound (1 MiB) is sent whole -------------------

my $big = $t->session;
my $x = 'x' x 400_000;
for my $i (1 .. 3) {
    my $r = $t->turn($big, "plain $big $i $x");
    is($r->{events}[-1]{type}, 'end', "a 400 KB turn $i ends");
}
$m = sent((asked($big))[-1]);
is(scalar @$m, 5, 'its third request holds the five messages');
is(scalar(grep { length($_->{content} // '') > 400_000 } @$m), 5,
   '... each of them whole (the answers echo the question)');

$t->check_log;

done_testing;
