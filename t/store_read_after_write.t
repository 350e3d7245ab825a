#!/usr/bin/perl
# A run answered as created is there for the client's next request on any
# worker: a LangGraph background run (POST /threads/{id}/runs, pending
# with after_seconds) and an A2A task answered at once (returnImmediately)
# read, cancelled or listed through the other worker right after their
# answer; a LangGraph streamed run read there as soon as its first event
# names it; an Open Responses background response read there too.  On
# PostgreSQL the begin's COMMIT is made slow (a deferred trigger that
# sleeps when it commits a run's row), so that an answer sent before that
# COMMIT is answered is seen each time (before: 404, "no run", "Task not
# found", as `make test-pg` on a loaded machine).

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use HTTP::Tiny;
use JSON::PP;

my $t = AgentTest->new;
$t->mock(sub { { text => 'slow, at last', delay => 1 } });

my $conf = $t->conf(http => <<'HTTP');
agent_graph chat {
    node model llm;
    edge START model;
    edge model END;
}
HTTP
$conf =~ s{(location /api/chat/)}{location = /who {
            add_header X-Worker \$pid always; return 204; }
        location /lg/ { agent_langgraph_api; agent_use_graph chat;
            add_header X-Worker \$pid always; }
        location /a2a/ { agent_a2a; agent_owner \$http_x_user;
            agent_use_graph chat; add_header X-Worker \$pid always; }
        location /v1/ { agent_responses; agent_owner \$http_x_user;
            agent_use_graph chat; add_header X-Worker \$pid always; }
        $1};
# each new connection may go to either worker
$conf =~ s{listen (127\.0\.0\.1:%%PORT%%);}{listen $1 reuseport;};
$t->run($conf);

my $base = 'http://127.0.0.1:' . $t->port;

if ($ENV{AGENT_PG}) {
    # fires at the COMMIT of the unit that wrote the run's row
    AgentTest::pg_query(AgentTest::pg_name($t->dir . '/agent.db'), q{
        CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql
        AS $$ BEGIN PERFORM pg_sleep(0.5); RETURN NULL; END $$;
        CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON runs
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
        EXECUTE FUNCTION slow_commit()});
}

# a request on a connection of the worker $w ($same) or of another one:
# /who names the connection's worker, the request follows on it
sub via {
    my ($same, $w, $method, $path, $body) = @_;
    for (1 .. 200) {
        my $ua = HTTP::Tiny->new(timeout => 20, keep_alive => 1);
        my $who = $ua->get("$base/who")->{headers}{'x-worker'} // '';
        next if $who eq '' || ($who eq $w) != $same;
        my $r = $ua->request($method, "$base$path", {
            headers => { 'Content-Type' => 'application/json',
                         'X-User' => 'alice' },
            defined $body ? (content => encode_json($body)) : () });
        $r->{json} = eval { decode_json($r->{content}) };
        $r->{worker} = $r->{headers}{'x-worker'} // '';
        return $r;
    }
    die "no connection to the worker wanted";
}

my $in = { messages => [ { role => 'user', content => 'go' } ] };
my (@lg, @a2a, @more, @joined);

for my $i (1 .. 4) {

    # LangGraph: a pending run read, listed and cancelled elsewhere
    my $th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
    my $p = $t->http('POST', "/lg/threads/$th/runs", { assistant_id => 'chat',
                     input => $in, after_seconds => 30 });
    my ($w, $run) = ($p->{headers}{'x-worker'}, $p->{json}{run_id} // '');
    my $g = via(0, $w, 'GET', "/lg/threads/$th/runs/$run");
    my $l = via(0, $w, 'GET', "/lg/threads/$th/runs?status=pending");
    my $c = via(0, $w, 'POST', "/lg/threads/$th/runs/$run/cancel?wait=1");
    push @lg, "$i: $p->{status} $g->{status} "
              . ($g->{json}{status} // '-') . ' '
              . scalar(@{ ref $l->{json} eq 'ARRAY' ? $l->{json} : [] })
              . " $c->{status}" . ($g->{worker} ne $w ? '' : ' same');

    # LangGraph: a streamed run, read elsewhere as soon as its first
    # event names it (a client that joins it from another connection)
    $th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
    my $st = $t->stream("/lg/threads/$th/runs/stream", encode_json({
        assistant_id => 'chat', input => $in, stream_resumable => \1,
        on_disconnect => 'continue' }), stop_after => 1);
    $run = $st->{events}[0] ? $st->{events}[0]{run_id} // '' : '';
    $g = via(0, $st->{headers}{'x-worker'} // '', 'GET',
             "/lg/threads/$th/runs/$run");
    push @joined, "$i: $g->{status} "
                  . ($run ne '' && ($g->{json}{run_id} // '') eq $run
                     ? 'found' : '-');

    # A2A: a task answered as it starts, read elsewhere
    my $s = $t->http('POST', '/a2a/', encode_json({ jsonrpc => '2.0',
        id => $i, method => 'SendMessage', params => {
            message => { role => 'ROLE_USER', messageId => "m-$i",
                         parts => [ { text => 'hi' } ] },
            configuration => { returnImmediately => JSON::PP::true } } }),
        'Content-Type' => 'application/json', 'X-User' => 'alice');
    my $task = $s->{json} ? $s->{json}{result}{task} // {} : {};
    $g = via(0, $s->{headers}{'x-worker'}, 'POST', '/a2a/', {
        jsonrpc => '2.0', id => 1, method => 'GetTask',
        params => { id => $task->{id} // 'none' } });
    push @a2a, "$i: " . ($task->{status}{state} // $s->{status}) . ' '
               . ($g->{json}{result}{id} && $g->{json}{result}{id} eq
                  $task->{id} ? 'found' : $g->{content});

    # an Open Responses background response, read elsewhere
    $s = $t->http('POST', '/v1/responses', { model => 'chat', input => 'hi',
                  background => JSON::PP::true }, 'X-User' => 'alice');
    my $id = $s->{json} ? $s->{json}{id} // '' : '';
    my $o = via(0, $s->{headers}{'x-worker'}, 'GET', "/v1/responses/$id");
    push @more, "$i: $s->{status} $o->{status} "
                . ($id && $o->{json} && ($o->{json}{id} // '') eq $id
                   ? 'found' : '-');
}

is_deeply(\@lg, [ map { "$_: 200 200 pending 1 204" } 1 .. 4 ],
          'a pending run answered: read, listed as pending and cancelled '
          . 'at once through the other worker');
is_deeply(\@joined, [ map { "$_: 200 found" } 1 .. 4 ],
          'a streamed run: read through the other worker once its first '
          . 'event names it');
is_deeply(\@a2a, [ map { "$_: TASK_STATE_WORKING found" } 1 .. 4 ],
          'a task answered as it starts: GetTask through the other worker '
          . 'finds it');

is_deeply(\@more, [ map { "$_: 200 200 found" } 1 .. 4 ],
          'a background response: read through the other worker');

# every run's turn ends, its thread let go
ok(AgentTest::wait_for(sub {
    $t->sqlite($t->dir . '/agent.db', 'SELECT count(*) FROM sessions WHERE '
               . 'run_id IS NOT NULL') eq '0' }, 30), 'every run ended');

$t->stop;
$t->check_log;

done_testing;
