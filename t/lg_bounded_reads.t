#!/usr/bin/perl
# agent_langgraph_api gets the checks of the location and bounded answers
# (issue 28, items 3 and 5): a thread's history and a search of threads
# stop at a byte budget, read one entry at a time, so that a long thread
# cannot make the worker hold its whole history.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my ($last) = map { $_->{content} } grep { $_->{role} eq 'user' } reverse @m;
    # "big N": an answer of N KB
    return { text => join('', map { chr(97 + $_ % 26) x 1023 . ' ' }
                                  1 .. $1) } if $last =~ /^big (\d+)/;
    return { text => "Hello from the mock" };
});

my $conf = $t->conf(workers => 1, http => <<'HTTP');
agent_graph chat {
    channel note value;
    node model llm;
    edge START model;
    edge model END;
}
agent_graph approval {
    channel note value;
    channel approval value;
    node approve interrupt "value=note" resume=approval;
    node act     template "text=Done: {{approval}}";
    edge START approve;
    edge approve act;
    edge act END;
}
agent_graph approval2 {
    channel approval value;
    node approve interrupt resume=approval;
    node act     template "text=Ran: {{approval}}";
    edge START approve;
    edge approve act;
    edge act END;
}
agent_graph other {
    node model llm;
    edge START model;
    edge model END;
}
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
            agent_use_graph chat; agent_assistants approval;
            agent_input note "from-server"; }
        location /lgall/ { agent_langgraph_api; }
        location /lg2/ { agent_langgraph_api; agent_use_graph approval2; }
        location /lgsmall/ { agent_langgraph_api;
            agent_history_max_size 100k; }
        location /lgtiny/ { agent_langgraph_api; client_max_body_size 1k; }
        location /lgev/ { agent_langgraph_api; agent_use_graph chat;
            agent_run_events_max_size 4k; agent_run_events_keep 1s; }
        $1};
$t->run($conf);

my $worker;
AgentTest::wait_for(sub { ($worker) = $t->worker_pids; $worker }, 5);

# the peak memory of the worker so far, in KB
sub peak {
    open my $fh, '<', "/proc/$worker/status" or return 0;
    while (<$fh>) {
        return $1 if /^VmHWM:\s+(\d+)/;
    }
    return 0;
}

sub lg {
    my ($method, $path, $body) = @_;
    return $t->http($method, "/lgall$path", $body);
}

# 1. a thread of 40 turns of 20 KB: 120 checkpoints, each state up to
# 800 KB; all its history at once was about 50 MB
my $r = lg('POST', '/threads', { thread_id => 'long-1' });
is($r->{status}, 200, 'a thread');
for my $i (1 .. 40) {
    my $e = $t->turn('long-1', "big 20");
    $e->{events}[-1]{type} eq 'end' or diag("turn $i: $e->{raw}"), last;
}

my $base = peak();

$r = lg('GET', '/threads/long-1/history');
is($r->{status}, 200, 'GET history');
is(scalar @{ $r->{json} }, 10, 'the default limit is 10');

$r = lg('POST', '/threads/long-1/history', { limit => 1000 });
is($r->{status}, 200, 'POST history, limit 1000');
my $h = $r->{json};
ok(@$h >= 1 && @$h < 120, 'fewer entries than asked: ' . scalar @$h);
ok(length $r->{content} <= 8 * 1024 * 1024 + 4096,
   'the answer within the budget: ' . length $r->{content});
is(scalar @{ $h->[0]{values}{messages} }, 80,
   'the newest entry first, whole');

# the next page starts where the first stopped
my $last = $h->[-1]{checkpoint}{checkpoint_id};
$r = lg('POST', '/threads/long-1/history',
        { limit => 1000,
          before => { configurable => { checkpoint_id => $last } } });
is($r->{status}, 200, 'the next page with before');
is($r->{json}[0]{checkpoint}{checkpoint_id},
   $h->[-1]{parent_checkpoint}{checkpoint_id},
   'it goes on with the parent of the last entry');

my $grown = peak() - $base;
SKIP: {
    # make test-asan: freed memory waits in ASan's quarantine (256 MB)
    skip "the allocator is ASan's: $grown KB", 1
        if $ENV{AGENT_SANITIZER_LOGS};
    ok($grown < 40 * 1024, "the worker grew by $grown KB (< 40 MB)");
}

# 2. threads/search: 10 threads of 1 MB values answer within the budget
for my $i (1 .. 10) {
    lg('POST', '/threads', { thread_id => "wide-$i" });
    $t->turn("wide-$i", "big 1000");
}
$base = peak();
$r = lg('POST', '/threads/search', { limit => 100 });
is($r->{status}, 200, 'threads/search');
ok(@{ $r->{json} } >= 1 && @{ $r->{json} } < 11,
   'fewer threads than there are: ' . scalar @{ $r->{json} });
ok(length $r->{content} <= 8 * 1024 * 1024 + 4096,
   'the search within the budget: ' . length $r->{content});
$r = lg('POST', '/threads/search', { limit => 100,
                                     offset => scalar @{ $r->{json} } });
ok(@{ $r->{json} } >= 1, 'the rest with offset: ' . scalar @{ $r->{json} });
$grown = peak() - $base;
SKIP: {
    skip "the allocator is ASan's: $grown KB", 1
        if $ENV{AGENT_SANITIZER_LOGS};
    ok($grown < 40 * 1024,
       "the search grew the worker by $grown KB (< 40 MB)");
}

# 3. an assistant_id names only the location's graphs
my $in = { messages => [ { role => 'user', content => 'hi' } ] };
$r = $t->http('POST', '/lg/threads', { thread_id => 'c-1' });
$r = $t->http('POST', '/lg/threads/c-1/runs/wait',
              { assistant_id => 'other', input => $in });
is($r->{status}, 404, 'a graph of another location: 404');
like($r->{content}, qr/No assistant found for/, 'as LangGraph words it');
$r = $t->http('POST', '/lg/assistants/search', { graph_id => 'other' });
is_deeply($r->{json}, [], 'nor found by a search');
$r = $t->http('POST', '/lg/assistants/search', {});
is_deeply([ sort map { $_->{graph_id} } @{ $r->{json} } ],
          [ 'approval', 'chat' ], 'the search lists the location\'s graphs');

# 4. agent_input wins over the run's input
$r = $t->http('POST', '/lg/threads/c-1/runs/wait',
              { assistant_id => 'chat',
                input => { %$in, note => 'from-client' } });
is($r->{status}, 200, 'a run with its own "note"');
is($r->{json}{note}, 'from-server', 'agent_input wins over the input');
$r = $t->http('POST', '/lg/threads/c-1/runs/wait',
              { assistant_id => 'chat', input => $in,
                command => { update => { note => 'from-command' } } });
is($t->http('GET', '/lg/threads/c-1/state')->{json}{values}{note},
   'from-server', 'and over a command\'s update');

# 5. agent_history_max_size holds: long-1 stores about 800 KB
$r = $t->http('POST', '/lgsmall/threads/long-1/runs/wait',
              { assistant_id => 'react', input => $in });
is($r->{status}, 413, 'a thread past agent_history_max_size: 413');
$r = $t->http('POST', '/lgsmall/threads/long-1/runs/stream',
              { assistant_id => 'react', input => $in });
is($r->{status}, 413, 'also for a streamed run');

# 6. thread ids as the URLs take them
for my $id ("a\r\nb", 'x' x 5000, 'a/b', 'a b') {
    $r = $t->http('POST', '/lg/threads', { thread_id => $id });
    is($r->{status}, 422, 'thread_id ' . substr(encode_json([$id]), 0, 20)
                          . ': 422');
}
$r = $t->http('POST', '/lg/threads', { thread_id => 'ok_id-2' });
is($r->{status}, 200, 'an id of letters, digits, - and _');

# 7. metadata filters are applied or refused, never dropped
$r = $t->http('POST', '/lg/threads/search', { metadata => { user => 'u' } });
is_deeply([ $r->{status}, $r->{json} ], [ 200, [] ],
          'a metadata filter is applied: no thread has it');
$r = $t->http('POST', '/lg/threads/search', { metadata => {} });
is($r->{status}, 200, 'an empty one is no filter');

# 8. an interrupt is answered through its own graph only
$t->http('POST', '/lg/threads', { thread_id => 'i-1' });
$r = $t->http('POST', '/lg/threads/i-1/runs/wait',
              { assistant_id => 'approval', input => $in });
ok($r->{json}{__interrupt__}, 'the approval graph waits');
$r = $t->http('POST', '/lg2/threads/i-1/runs/wait',
              { assistant_id => 'approval2',
                command => { resume => 'yes' } });
is($r->{status}, 409, 'an answer through another graph\'s same step: 409');
like($r->{content}, qr/of the graph "approval"/, 'naming the graph');
my $msgs = $t->http('GET', '/lg/threads/i-1/state')->{json}{values}{messages};
ok(!grep({ ($_->{content} // '') =~ /^Ran:/ } @$msgs),
   'its step did not run');
$r = $t->http('POST', '/lg/threads/i-1/runs/wait',
              { assistant_id => 'approval',
                command => { resume => 'yes' } });
is($r->{status}, 200, 'answered through its own graph');
like($r->{json}{messages}[-1]{content}, qr/^Done: yes/, 'it goes on');

# stored events of resumable runs: capped per run, and let go once the
# run has ended and the join window passed
sub kept {
    my ($run) = @_;
    return $t->sqlite($t->dir . '/agent.db', "SELECT COUNT(*) || ' ' ||"
                      . " COALESCE(SUM(length(data)), 0) FROM run_events"
                      . " WHERE run_id = '$run'");
}
$r = $t->http('POST', '/lgev/threads', { thread_id => 'ev-1' });
$r = $t->stream('/lgev/threads/ev-1/runs/stream', encode_json({
    assistant_id => 'chat', stream_resumable => \1,
    stream_mode => ['messages-tuple'],
    input => { messages => [ { role => 'user', content => 'big 20' } ] } }));
my ($ev_run) = map { ref $_->{_json} eq 'HASH' && $_->{_json}{run_id} // () }
               @{ $r->{events} };
ok($ev_run, 'a resumable run of a 20 KB answer');
my ($n, $bytes) = split / /, kept($ev_run);
ok($n > 0 && $bytes <= 4096,
   "its kept events stop at agent_run_events_max_size: $n, $bytes bytes");
my $j = $t->stream("/lgev/threads/ev-1/runs/$ev_run/stream", '',
                   method => 'GET', headers => { 'Last-Event-ID' => -1 });
ok($j->{last_chunk}, 'a join still ends with the run');
like($t->slurp('error.log'), qr/kept \d+ bytes of events/, 'logged once');
sleep 1.5;
$t->http('POST', '/lgev/threads/ev-1/runs/wait', { assistant_id => 'chat',
         input => { messages => [ { role => 'user', content => 'hi' } ] } });
is(kept($ev_run), '0 0', 'past agent_run_events_keep, the next run lets '
   . 'them go');

# nginx's own errors at a LangGraph location are worded as ours are
$r = $t->http('POST', '/lgtiny/threads', { metadata => { x => 'y' x 4000 } });
is($r->{status}, 413, 'a body past client_max_body_size: 413');
like($r->{content} // '', qr/^[^{].*larger than 1024 bytes/,
     '... said as text, what the JS SDK shows');
$r = $t->http('POST', '/lgtiny/threads', { metadata => { x => 'y' x 4000 } },
              Accept => 'application/json');
like($r->{json}{detail} // '', qr/larger than 1024 bytes/,
     '... and in "detail" when JSON is asked for');

$t->stop;
$t->check_log;

done_testing;
