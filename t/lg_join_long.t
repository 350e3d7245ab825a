#!/usr/bin/perl
# A LangGraph run that lasts longer than twice its lease is followed to its
# end by a join of its stream: the join gives a run up for lost only when
# it has written nothing for twice the lease (its worker gone), not at a
# fixed time after the join began.  A 1 s lease, a run of about 4 s.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;
$t->mock(sub {
    return { text => 'one two three four five six seven', delay => 0.6 };
});

my $conf = $t->conf;
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
        agent_turn_lease 1s; }
    $1};
$t->run($conf);

my $th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
my $first = $t->stream("/lg/threads/$th/runs/stream", encode_json({
    assistant_id => 'react', input => { messages => [
        { role => 'user', content => 'a long answer' } ] },
    stream_mode => ['messages-tuple', 'values'], stream_resumable => \1,
    on_disconnect => 'continue' }), stop_after => 2);
ok($first->{stopped}, 'the client goes away after 2 events');
my $run_id = $first->{events}[0]{_json}{run_id};
my $last = $first->{events}[-1]{id};

my $t0 = time;
my $join = $t->stream("/lg/threads/$th/runs/$run_id/stream", '',
                      method => 'GET', timeout => 30,
                      headers => { 'Last-Event-ID' => $last });
my $text = join '', map { $_->{_json}[0]{content} }
           grep { ($_->{_event} // '') eq 'messages' }
           @{ $first->{events} }, @{ $join->{events} };
is($text, 'one two three four five six seven',
   'every token, the join past twice the lease')
    or diag("join: status " . ($join->{status} // 'none') . ", "
            . scalar(@{ $join->{events} }) . " events, raw: "
            . substr($join->{raw}, 0, 400));
is(($join->{events}[-1] // {})->{_event}, 'values', 'to the run\'s end');
ok($join->{last_chunk}, '... where the join ends');
is($t->http('GET', "/lg/threads/$th/runs/$run_id")->{json}{status},
   'success', 'the run succeeded');

$t->check_log;

done_testing;
