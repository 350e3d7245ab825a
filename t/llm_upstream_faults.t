#!/usr/bin/perl
# An upstream that errors, stalls, cuts the stream, lies or sends garbage:
# each turn ends with an error event, and the session stays usable.  And a
# stream split at every byte parses the same.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use MockLLM qw(text_chunks sse_body);

my %script = (
    e500 => { status => 500, message => 'internal failure' },
    e429 => { status => 429, message => 'Rate limit reached' },
    stall => { text => 'one two three four', stall_after => 2, stall => 3 },
    cut => { text => 'one two three four five', cut_after => 3 },
    garbage => { chunks => [ sse_body('{"choices":[{"delta":'
                                      . '{"content":"hi"}}]}'),
                             "this is not an event stream\n\n" ] },
    badjson => { chunks => [ sse_body('{"choices": [') ] },
    errevent => { chunks => [ sse_body('{"error":{"message":"overloaded",'
                                       . '"type":"server_error"}}') ] },
    nodone => { chunks => [ sse_body('{"choices":[{"delta":'
                                     . '{"content":"half"}}]}') ] },
    html => { status => 502, body => '<html>bad gateway</html>' },
    htmlevil => { status => 500, body => "<html>\n\ndata: {\"type\":"
                                         . "\"end\"}\n\n</html>" },
    errlong => { status => 400, body => '{"error":{"message":"'
                                        . ('x' x 600) . '"}}' },
    deep => { chunks => [ sse_body('{"choices":' . ('[' x 300000)) ] },
    bytes => { text => 'split at every byte', bytes => 1 },
);

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my $q = $req->{messages}[-1]{content};
    my $s = $script{$q} // { text => "fine: $q" };

    if ($s->{bytes}) {
        my $all = join '', text_chunks($s->{text});
        return { chunks => [ split //, $all ] };
    }

    return $s;
});
$t->run($t->conf(location => 'agent_llm_idle_timeout 1s;'));

my $sid = $t->session;

my %expect = (
    e500 => qr/answered 500: internal failure/,
    e429 => qr/answered 429: Rate limit reached/,
    stall => qr/no data from the provider within the idle timeout/,
    cut => qr/provider failed/,
    garbage => qr/not server-sent events/,
    badjson => qr/not a JSON object/,
    errevent => qr/reported: overloaded/,
    nodone => qr/ended before the answer was complete/,
    html => qr/answered 502$/,
    htmlevil => qr/answered 500$/,
    errlong => qr/answered 400: x{200}$/,
    deep => qr/nested deeper than 64 levels/,
);

# a turn that ends with an error lets its session go before its last
# event: the next turn, at once and on any worker, is served (on
# PostgreSQL the unlock is made slow, so that an end sent before it is
# seen)
$t->slow_unlock(0.2);

for my $case (sort keys %expect) {
    my $r = $t->turn($sid, $case);
    is($r->{status}, 200, "$case: the stream started");
    is($r->{types}[0], 'start', "$case: start");
    is($r->{types}[-1], 'error', "$case: error event last");
    like($r->{events}[-1]{error} // '', $expect{$case}, "$case: says why");
    is($r->{events}[-1]{code}, 'llm_error', "$case: code");

    $r = $t->turn($sid, "after $case");
    is($r->{events}[-1]{full_response}, "fine: after $case",
       "$case: the session works after");
}

$t->slow_unlock(0);

# the user message of a failed turn is kept; no assistant message for it
my $m = $t->http('GET', "/api/sessions/$sid/messages")->{json}{messages};
is($m->[0]{content}, 'badjson', 'failed turn: user message kept');
is($m->[1]{content}, 'after badjson', 'no answer recorded for it');

my $r = $t->turn($sid, 'bytes');
is($r->{events}[-1]{full_response}, 'split at every byte',
   'a stream split at every byte parses the same');

# a provider that is not there
$t->stop;
$t->write_conf('');
my $port = AgentTest::free_port();
my $c = $t->conf(location => 'agent_llm_connect_timeout 1s;');
$c =~ s/127\.0\.0\.1:%%MOCK%%/127.0.0.1:$port/;
$t->run($c);
$r = $t->turn($sid, 'anyone there?');
is($r->{types}[-1], 'error', 'no provider: error event');
like($r->{events}[-1]{error}, qr/provider failed: .*(connect|refused)/i,
     'no provider: says why');

$t->stop;
$t->check_log;
done_testing;
