#!/usr/bin/perl
# Runs that outlive their worker (issue 32): a LangGraph API run whose
# worker is killed (SIGKILL) in the middle of a tool round is taken over
# by another worker, which continues it from its last checkpoint under the
# same run id: the model call that was cut is made again, no other one is;
# the tool that had answered does not run again; the thread holds each
# message once; the run ends "success", its kept events joined from any
# worker end with its answer once; its attempt is counted.  A run taken
# over more often than agent_run_attempts allows ends "error", its
# thread let go.  At a reload, a worker whose shutdown time runs out hands
# its run over to the new workers.  A host killed whole (its own PID
# namespace) has its run taken over by another once its lease runs out.
# An A2A task, a background Open Responses response and an MCP call,
# their worker killed mid-round, are finished by another worker too: their
# protocol reads the end (GetTask, GET /v1/responses/{id}).  The cache's
# manager and loader processes take nothing over.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use MockLLM;
use JSON::PP;
use Time::HiRes qw(sleep);
use IO::Socket::INET;
use POSIX ();

my $t = AgentTest->new;
my $dir = $t->dir;

# the model: a tool call, then (after the tool's answer) an answer that
# hangs the first time it is asked for, and comes at once the next
$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my ($tool) = grep { $_->{role} eq 'tool' } @m;
    if (AgentTest::last_user($req) eq 'cut it') {
        return { text => 'after the cut' } if $tool;
        return { tools => [ [ 'k1', 'svc', '{"which": "cutbody"}' ] ] };
    }
    if (AgentTest::last_user($req) eq 'pair them') {
        return { text => 'paired: ' . join(', ', map { $_->{content} }
                                          grep { $_->{role} eq 'tool' } @m) }
            if $tool;
        return { tools => [ [ 'p1', 'svc', '{"which": "fast"}' ],
                            [ 'p2', 'svc', '{"which": "slow"}' ] ] };
    }
    return { tools => [ [ 'q1', 'execute_sql_query',
                          '{"query": "SELECT 41 + 1 AS answer"}' ] ] }
        unless $tool;
    if (!-e "$dir/cut") {
        open my $fh, '>', "$dir/cut" or die;
        close $fh;
        # slow tokens: the mock sees the worker go between two
        return { text => 'never ' x 60, pieces => [ ('never ') x 60 ],
                 delay => 0.5 };
    }
    return { text => "the answer is $tool->{content}" };
});

# a service behind an agent_tool location: "slow" hangs the first time
my $svc = MockLLM->new(dir => $dir, name => 'svc', script => sub {
    my ($body) = @_;
    my $which = $body->{which} // '';
    # hangs the first time; then its body is cut short after its headers
    if ($which eq 'cutbody') {
        return { status => 200, body => '{"cut": true}', delay => 60 }
            unless -e "$dir/bodycut";
        return { status => 200, body => '{"cut": ', short => 100 };
    }
    if ($which eq 'slow' && !-e "$dir/slowcut") {
        open my $fh, '>', "$dir/slowcut" or die;
        close $fh;
        return { status => 200, body => '{"late": true}', delay => 60 };
    }
    return { status => 200, body => "{\"$which\": true}" };
});
my $sp = $svc->port;

my $conf = $t->conf(http => <<"HTTP" . <<'HTTP');
agent_tool svc location=/internal/svc "description=A service"
    idempotent=on;
agent_graph pair {
    node model llm tools=svc;
    node tools tools;
    edge START model;
    edge model tools if=tool_calls;
    edge model END;
    edge tools model;
}
HTTP
agent_graph looper {
    node model llm tools=execute_sql_query;
    node tools tools;
    edge START model;
    edge model tools if=tool_calls;
    edge model END;
    edge tools model;
}
agent_graph once {
    node model llm;
    edge START model;
    edge model END;
}
HTTP
$conf =~ s{(location /api/chat/ \{ agent_chat;)}{$1 agent_turn_lease 3s;};
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
            agent_use_graph looper; agent_assistants once;
            agent_turn_lease 3s; }
        location /lgp/ { agent_langgraph_api; agent_use_graph pair;
            agent_turn_lease 3s; }
        location /internal/svc { internal;
            proxy_pass http://127.0.0.1:$sp/svc; }
        location /a2a/ { agent_a2a; agent_use_graph looper;
            agent_turn_lease 3s; }
        location /v1/ { agent_responses; agent_use_graph looper;
            agent_turn_lease 3s; }
        location /mcp { agent_mcp_server; agent_use_graph looper;
            agent_turn_lease 3s; }
        location /lg0/ { agent_langgraph_api; agent_use_graph once;
            agent_turn_lease 3s; agent_run_attempts 0; }
        $1};
# a reload: the old workers hand their runs over 0.5s before this
$conf =~ s{(worker_processes \d+;)}{$1\nworker_shutdown_timeout 3s;};
# a cache: nginx starts its manager and loader, which take over nothing
$conf =~ s{(http \{)}{$1\nproxy_cache_path $dir/cache keys_zone=c:1m;};
$t->run($conf);

sub lg { my ($m, $p, $b) = @_; return $t->http($m, "/lg$p", $b) }

my $db = "$dir/agent.db";

# --- a run killed in the middle of its tool round ---------------------------

my $th = lg('POST', '/threads', {})->{json}{thread_id};
my $r = lg('POST', "/threads/$th/runs", { assistant_id => 'looper',
    input => { messages => [ { role => 'user', content => 'add them' } ] },
    stream_resumable => JSON::PP::true });
is($r->{status}, 200, 'a background run');
my $run = $r->{json}{run_id};

ok(AgentTest::wait_for(sub { -e "$dir/cut" }, 20),
   'the model is asked again after the tool round, and hangs');

my $holder = $t->sqlite($db, "SELECT run_pid FROM sessions WHERE id = '$th'");
like($holder, qr/^\d+$/, 'a worker holds the thread');
my @before = $t->worker_pids;
kill 'KILL', $holder;

my $state;
ok(AgentTest::wait_for(sub {
    $state = lg('GET', "/threads/$th/runs/$run")->{json}{status} // '';
    $state eq 'success' }, 30), 'another worker finished the run')
    or diag("status: $state\n" . $t->slurp('error.log'));

like($t->slurp('error.log'),
     qr/run "$run" of thread "$th" lost its worker, taken over \(attempt 1\)/,
     'the take-over is logged');
is($t->sqlite($db, "SELECT attempts FROM runs WHERE run_id = '$run'"), 1,
   'its attempt is counted');
my $after = $t->sqlite($db, "SELECT run_pid FROM sessions WHERE id = '$th'");
is($after, '', 'the thread is let go at its end');

# the model: asked once before the tools, twice after (the cut call again)
my @asked = map { $_->{body}{messages} }
            grep { ($_->{event} // '') eq 'request' && $_->{body}{tools} }
            $t->{mock}->log_lines;
my @first = grep { !grep { $_->{role} eq 'tool' } @$_ } @asked;
my @second = grep { grep { $_->{role} eq 'tool' } @$_ } @asked;
is(scalar @first, 1, 'the first model call was not made again');
is(scalar @second, 2, 'the call that was cut was made again, once');
is_deeply($second[1], $second[0], 'with the same messages');

# the thread: each message once
my $st = lg('GET', "/threads/$th/state")->{json};
is_deeply([ map { $_->{type} } @{ $st->{values}{messages} } ],
          [ qw(human ai tool ai) ], 'the thread holds each message once');
like($st->{values}{messages}[-1]{content}, qr/^the answer is .*\b42\b/,
     'the answer from the tool\'s result');
is(scalar(grep { $_->{type} eq 'tool' } @{ $st->{values}{messages} }), 1,
   'the tool ran once');

# its events, joined after its end: the answer once, at the end
my $j = $t->stream("/lg/threads/$th/runs/$run/stream", '', method => 'GET');
is($j->{status}, 200, 'the run joined');
my @names = map { $_->{_event} } @{ $j->{events} };
my @vals = grep { $_->{_event} eq 'values' } @{ $j->{events} };
ok(@vals, 'its values were kept');
like($vals[-1]{_json}{messages}[-1]{content}, qr/^the answer is /,
     'the last values hold the answer');
is(scalar(grep { ($_->{_json}{messages}[-1]{content} // '')
                 =~ /^the answer is / } @vals), 1,
   'the answer once');
my %seen;
my @ids = grep { defined } map { $_->{id} } @{ $j->{events} };
is(scalar(grep { $seen{$_}++ } @ids), 0, 'each event id once');
isnt($names[-1], 'error', 'no error at its end');

# the next run on the thread goes as usual
$r = lg('POST', "/threads/$th/runs/wait", { assistant_id => 'once',
    input => { messages => [ { role => 'user', content => 'thanks' } ] } });
is($r->{status}, 200, 'the thread takes a new run');

# --- a tool round cut with one call answered: only the other runs again --

$th = $t->http('POST', '/lgp/threads', {})->{json}{thread_id};
$r = $t->http('POST', "/lgp/threads/$th/runs", { assistant_id => 'pair',
    input => { messages => [ { role => 'user', content => 'pair them' } ] } });
my $prun = $r->{json}{run_id};
ok(AgentTest::wait_for(sub {
    -e "$dir/slowcut" && $t->sqlite($db, "SELECT count(*) FROM run_events "
        . "WHERE run_id = '$prun' AND event = 'write'"
        . " AND data LIKE '%\"result\"%'") == 1 }, 20),
   'a round of two calls: the fast one\'s result kept before its step')
    or diag($t->sqlite($db, "SELECT seq, data FROM run_events"));
like($t->sqlite($db, "SELECT data FROM run_events"
                . " WHERE run_id = '$prun' AND event = 'write'"),
     qr/"id":"p1","result":".*fast/, '... keyed by its call, of our generator');
# the cut one was claimed before it ran (issue 52): its claim alone
like($t->sqlite($db, "SELECT data FROM run_events"
                . " WHERE run_id = '$prun' AND event = 'write'"),
     qr/"id":"p2"\}/, 'the cut call claimed before it ran, unanswered');
kill 'KILL', $t->sqlite($db, "SELECT run_pid FROM sessions WHERE id = '$th'");
ok(AgentTest::wait_for(sub {
    ($t->http('GET', "/lgp/threads/$th/runs/$prun")->{json}{status} // '')
        eq 'success' }, 30), 'another worker finished the run');
my %called;
$called{ $_->{body}{which} // '' }++ for $svc->requests;
is($called{fast}, 1, 'the call that had answered did not run again');
is($called{slow}, 2, 'the call that was cut ran again');
my $pst = $t->http('GET', "/lgp/threads/$th/state")->{json};
is_deeply([ map { $_->{type} } @{ $pst->{values}{messages} } ],
          [ qw(human ai tool tool ai) ], 'each message once');
like($pst->{values}{messages}[-1]{content}, qr/fast.*slow/,
     'the answer from both results');
like($t->slurp('error.log'), qr/tool call "p1" of run "$prun" answered before/,
     'the kept call is logged');
is($t->sqlite($db, "SELECT count(*) FROM run_events WHERE run_id = '$prun' "
              . "AND seq < 0"), 0, 'its pending writes go with its end');

# --- a taken-over run whose location tool's body is cut after its headers --
# the subrequest fails late, under the request without a client that
# drives the run: the tool's error is the call's result, the run ends, and
# that request is closed once, without nginx's alert

$th = $t->http('POST', '/lgp/threads', {})->{json}{thread_id};
$r = $t->http('POST', "/lgp/threads/$th/runs", { assistant_id => 'pair',
    input => { messages => [ { role => 'user', content => 'cut it' } ] } });
my $krun = $r->{json}{run_id};
ok(AgentTest::wait_for(sub {
    grep { ($_->{body}{which} // '') eq 'cutbody' } $svc->requests }, 20),
   'a run in its tool call');
open my $bc, '>', "$dir/bodycut" or die;
close $bc;
kill 'KILL', $t->sqlite($db, "SELECT run_pid FROM sessions WHERE id = '$th'");
ok(AgentTest::wait_for(sub {
    $t->slurp('error.log') =~ /upstream prematurely closed/ }, 30),
   'the run was taken over, and its tool\'s body cut short');
my $kst;
ok(AgentTest::wait_for(sub {
    $kst = $t->http('GET', "/lgp/threads/$th/runs/$krun")->{json}{status}
           // '';
    $kst ne 'running' && $kst ne 'pending' }, 30),
   "the run ended: $kst");
is($kst, 'success', 'the run ended');
my ($kt) = grep { $_->{type} eq 'tool' } @{ $t->http('GET',
    "/lgp/threads/$th/state")->{json}{values}{messages} };
like($kt->{content}, qr/the tool's location answered 502/,
     'the tool\'s body cut short is an error result');
unlike($t->slurp('error.log'), qr/connection already closed/,
       'the request without a client closed once');

# --- our own API's turn, killed mid-round: taken over too --------------------

unlink "$dir/cut";
my $sid = $t->session;
my $cpid = fork() // die;
if ($cpid == 0) {
    $t->turn($sid, 'add them', timeout => 30);
    POSIX::_exit(0);
}
ok(AgentTest::wait_for(sub { -e "$dir/cut" }, 20),
   'a chat turn in its second model call');
my $cholder = $t->sqlite($db, "SELECT run_pid FROM sessions WHERE id = '$sid'");
my $crun = $t->sqlite($db, "SELECT run_id FROM sessions WHERE id = '$sid'");
kill 'KILL', $cholder;
waitpid($cpid, 0);
ok(AgentTest::wait_for(sub {
    $t->sqlite($db, "SELECT status FROM runs WHERE run_id = '$crun'")
        eq 'success' }, 30), 'another worker finished the turn');
my $msgs = $t->http('GET', "/api/sessions/$sid/messages")->{json}{messages};
like($msgs->[-1]{content}, qr/^the answer is /,
     'the next GET /messages holds the answer');
is(scalar(grep { $_->{role} eq 'user' } @$msgs), 1,
   'and the question once');
is($t->turn($sid, 'thanks')->{types}[-1], 'end', 'the session goes on');

# --- our own API's turn killed, its client's next message at once -----------

unlink "$dir/cut";
$sid = $t->session;
$cpid = fork() // die;
if ($cpid == 0) {
    $t->turn($sid, 'add them', timeout => 30);
    POSIX::_exit(0);
}
ok(AgentTest::wait_for(sub { -e "$dir/cut" }, 20),
   'another chat turn in its second model call');
$cholder = $t->sqlite($db, "SELECT run_pid FROM sessions WHERE id = '$sid'");
$crun = $t->sqlite($db, "SELECT run_id FROM sessions WHERE id = '$sid'");
kill 'KILL', $cholder;
waitpid($cpid, 0);
my $next = $t->turn($sid, 'never mind');
is($next->{types}[-1], 'end',
   'the client\'s next message takes the session at once');
ok(AgentTest::wait_for(sub {
    $t->sqlite($db, "SELECT status FROM runs WHERE run_id = '$crun'")
        eq 'error' }, 15), 'the lost turn ends, superseded')
    or diag($t->sqlite($db, "SELECT status FROM runs WHERE run_id = '$crun'"));
like($t->sqlite($db, "SELECT data FROM run_events WHERE run_id = '$crun'"),
     qr/another turn took its thread/, 'its outcome says so');
sleep 4;
unlike($t->slurp('error.log'), qr/run "$crun" of thread "$sid" lost its/,
       'and it was not taken over');

# --- A2A, Open Responses and MCP: their runs taken over too -----------------

# a kept run of each, its worker killed in its second model call: another
# worker finishes it from its last checkpoint; its protocol reads its end
sub killed_mid_round {
    my ($origin, $send) = @_;
    unlink "$dir/cut";
    my $pid = fork() // die;
    if ($pid == 0) {
        $send->();
        POSIX::_exit(0);
    }
    AgentTest::wait_for(sub { -e "$dir/cut" }, 20) or return;
    my ($run, $thread) = split /\|/, $t->sqlite($db, "SELECT run_id, "
        . "thread_id FROM runs WHERE origin = '$origin' AND status = "
        . "'running'");
    my $holder = $t->sqlite($db, "SELECT run_pid FROM sessions WHERE id = "
                            . "'$thread'");
    return unless $holder =~ /^\d+$/;
    kill 'KILL', $holder;
    waitpid($pid, 0);
    AgentTest::wait_for(sub {
        $t->sqlite($db, "SELECT status FROM runs WHERE run_id = '$run'")
            eq 'success' }, 30) or return;
    return ($run, $thread);
}

sub rpc_to {
    my ($path, $body) = @_;
    return $t->http('POST', $path, encode_json($body), 'Content-Type' =>
                    'application/json', 'Accept' =>
                    'application/json, text/event-stream');
}

my $ctx = 'ctx-taken-over';
my ($arun) = killed_mid_round('/a2a/', sub {
    rpc_to('/a2a/', { jsonrpc => '2.0', id => 1, method => 'SendMessage',
        params => { message => { role => 'ROLE_USER', messageId => 'm1',
            contextId => $ctx, parts => [ { text => 'add them' } ] } } });
});
ok($arun, 'A2A: a task whose worker was killed is finished by another');
my $task = rpc_to('/a2a/', { jsonrpc => '2.0', id => 2, method => 'GetTask',
                             params => { id => $arun // '' } })->{json};
is($task->{result}{status}{state}, 'TASK_STATE_COMPLETED',
   'A2A: GetTask reads it completed')
    or diag explain $task;
like(encode_json($task->{result}{artifacts} // []), qr/the answer is /,
     'A2A: its artifact holds the answer');
is($task->{result}{contextId}, $ctx, 'A2A: on its context');
my @am = split /\n/, $t->sqlite($db, "SELECT role FROM messages WHERE "
                                . "session_id = '$ctx' ORDER BY seq");
is_deeply(\@am, [ qw(user assistant tool assistant) ],
          'A2A: its thread holds each message once');

unlink "$dir/cut";
my $resp = $t->http('POST', '/v1/responses', encode_json({ model => 'looper',
    input => 'add them', background => JSON::PP::true }), 'Content-Type' =>
    'application/json');
like($resp->{json}{status} // '', qr/^(queued|in_progress)$/,
     'Responses: a background response')
    or diag explain $resp->{json};
my ($rrun, $rthread) = ($resp->{json}{id} // '') =~ /^resp_([^_]+)_(.+)$/;
ok(AgentTest::wait_for(sub { -e "$dir/cut" }, 20),
   'Responses: in its second model call');
my $rholder = $t->sqlite($db, "SELECT run_pid FROM sessions WHERE id = "
                         . "'$rthread'");
like($rholder, qr/^\d+$/, 'Responses: a worker holds its conversation');
kill 'KILL', $rholder if $rholder =~ /^\d+$/;
my $got;
ok(AgentTest::wait_for(sub {
    $got = $t->http('GET', "/v1/responses/$resp->{json}{id}")->{json};
    ($got->{status} // '') eq 'completed' }, 30),
   'Responses: another worker completes it')
    or diag explain $got;
like(encode_json($got->{output} // []), qr/the answer is /,
     'Responses: GET holds its answer');

my ($mrun, $mthread) = killed_mid_round('/mcp', sub {
    rpc_to('/mcp', { jsonrpc => '2.0', id => 1, method => 'tools/call',
        params => { name => 'looper', arguments => { message => 'add them' } }
    });
});
ok($mrun, 'MCP: a call whose worker was killed is finished by another');
like($t->sqlite($db, "SELECT data FROM run_events WHERE run_id = "
                . "'" . ($mrun // '') . "' AND seq = 0"),
     qr/the answer is /, 'MCP: its run\'s outcome holds the answer');
like($t->slurp('error.log'), qr/run "$arun" of thread "$ctx" lost its worker/,
     'the take-overs are logged');

# --- agent_run_attempts 0: a lost run ends -----------------------------------

unlink "$dir/cut";
sub lg0 { my ($m, $p, $b) = @_; return $t->http($m, "/lg0$p", $b) }
my $th0 = lg0('POST', '/threads', {})->{json}{thread_id};
$r = lg0('POST', "/threads/$th0/runs", { assistant_id => 'once',
    input => { messages => [ { role => 'user', content => 'slow' } ] } });
my $run0 = $r->{json}{run_id};

# the mock hangs on any call while "cut" is missing and a tool answered; a
# call with no tool answers at once with a tool call: "once" has no tools
# node, so its run ends after one call; hold it with the thread's lease
ok(AgentTest::wait_for(sub {
    lg0('GET', "/threads/$th0/runs/$run0")->{json}{status} ne 'pending' }),
   'the second run started');

# a run that is running and whose holder is gone: made by hand, as a killed
# worker leaves it (the run above may have ended already)
my $lost = '00000000-0000-4000-8000-00000000beef';
my $dead = 999999;
$t->sqlite($db, "INSERT INTO runs (run_id, thread_id, assistant_id, status,"
    . " created_at, updated_at, events, origin) VALUES ('$lost', '$th0',"
    . " 'once', 'running', '2026-01-01T00:00:00.000Z',"
    . " '2026-01-01T00:00:00.000Z', 1, '/lg0/')");
ok(AgentTest::wait_for(sub {
    lg0('GET', "/threads/$th0/runs/$run0")->{json}{status}
        =~ /^(success|error|interrupted)$/ }, 20), 'the second run ended');
$t->sqlite($db, "UPDATE sessions SET run_id = '$lost', run_pid = $dead,"
    . " run_expires = 1, run_host = 'elsewhere' WHERE id = '$th0'");

ok(AgentTest::wait_for(sub {
    (lg0('GET', "/threads/$th0/runs/$lost")->{json}{status} // '')
        eq 'error' }, 20), 'a run lost more often than allowed ends');
like($t->slurp('error.log'),
     qr/run "$lost" of thread "$th0" ended: its worker was lost more often/,
     'why, in the log');
ok(AgentTest::wait_for(sub {
    $t->sqlite($db, "SELECT run_id FROM sessions WHERE id = '$th0'") eq '' }),
   'its thread is let go');
$r = lg0('POST', "/threads/$th0/runs/wait", { assistant_id => 'once',
    input => { messages => [ { role => 'user', content => 'again' } ] } });
is($r->{status}, 200, 'the thread takes a new run');

# --- a reload: the old worker hands its run over ------------------------------

unlink "$dir/cut";
my $th2 = lg('POST', '/threads', {})->{json}{thread_id};
$r = lg('POST', "/threads/$th2/runs", { assistant_id => 'looper',
    input => { messages => [ { role => 'user', content => 'add them' } ] },
    stream_resumable => JSON::PP::true });
my $run2 = $r->{json}{run_id};
ok(AgentTest::wait_for(sub { -e "$dir/cut" }, 20),
   'a run in its second model call');
my $old = $t->sqlite($db, "SELECT run_pid FROM sessions WHERE id = '$th2'");
kill 'HUP', $t->{nginx};

ok(AgentTest::wait_for(sub {
    (lg('GET', "/threads/$th2/runs/$run2")->{json}{status} // '') eq 'success'
}, 30), 'a worker of the new configuration finished it');
like($t->slurp('error.log'),
     qr/shutting down, run "$run2" on session "$th2" is handed over/,
     'the old worker handed it over');
isnt($t->sqlite($db, "SELECT attempts FROM runs WHERE run_id = '$run2'"),
     '0', 'as a take-over');
# it exits once it has handed its run over; its pid is there until the
# master reaps it, which may be after the new worker finished the run
ok(AgentTest::wait_for(sub { !kill(0, $old) }), 'the old worker is gone');
$st = lg('GET', "/threads/$th2/state")->{json};
is_deeply([ map { $_->{type} } @{ $st->{values}{messages} } ],
          [ qw(human ai tool ai) ], 'its thread holds each message once');

# --- another host, killed whole: this one takes its run over ----------------

my $unshare = `command -v unshare 2>/dev/null`;
chomp $unshare;
my $can = $unshare && $> == 0
          && system("$unshare -p -f --mount-proc true >/dev/null 2>&1") == 0;

SKIP: {
    skip 'unshare -p needs root and util-linux', 5 unless $can;

    # the same configuration, on the same store, in its own PID namespace
    my $b = AgentTest->new;
    my $mock = $t->{mock}->port;
    (my $bconf = $conf) =~ s/%%MOCK%%/$mock/g;
    $bconf =~ s{agent_checkpoint_db \S+;}{agent_checkpoint_db $db;};
    $b->write_conf($bconf);

    my $bpid = fork() // die;
    if ($bpid == 0) {
        open STDOUT, '>>', $b->dir . '/nginx.out';
        open STDERR, '>&', \*STDOUT;
        $ENV{LD_PRELOAD} = $ENV{AGENT_PRELOAD} if $ENV{AGENT_PRELOAD};
        exec $unshare, '-p', '-f', '--mount-proc', $AgentTest::NGINX,
             '-p', $b->dir . '/', '-c', $b->dir . '/nginx.conf',
             '-e', $b->dir . '/error.log', '-g', 'daemon off;';
        exit 1;
    }
    my $up = AgentTest::wait_for(sub {
        IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                              PeerPort => $b->port) }, 20);
    ok($up, 'another host on the same store')
        or diag($b->slurp('nginx.out') . $b->slurp('error.log'));
    skip 'the other host did not start', 4 unless $up;

    unlink "$dir/cut";
    my $th3 = $b->http('POST', '/lg/threads', {})->{json}{thread_id};
    $r = $b->http('POST', "/lg/threads/$th3/runs", { assistant_id => 'looper',
        input => { messages => [ { role => 'user', content => 'add them' } ] },
        stream_resumable => JSON::PP::true });
    my $run3 = $r->{json}{run_id};
    ok(AgentTest::wait_for(sub { -e "$dir/cut" }, 20),
       'its run is in its second model call');

    # the whole host goes: its master and its workers
    my @all = ($bpid);
    for (1 .. 3) {
        push @all, map { s/\s+//gr } map { `ps -o pid= --ppid $_` } @all;
        my %u; @all = grep { /^\d+$/ && !$u{$_}++ } @all;
    }
    kill 'KILL', @all;
    waitpid($bpid, 0);

    ok(AgentTest::wait_for(sub {
        (lg('GET', "/threads/$th3/runs/$run3")->{json}{status} // '')
            eq 'success' }, 30),
       'this host finished it once its lease ran out');
    like($t->slurp('error.log'),
         qr/run "$run3" of thread "$th3" lost its worker, taken over/,
         'taken over here');
    $st = lg('GET', "/threads/$th3/state")->{json};
    is_deeply([ map { $_->{type} } @{ $st->{values}{messages} } ],
              [ qw(human ai tool ai) ], 'its thread holds each message once');
}

$t->stop;
# the cache's processes run no requests: none took a run or a thread over
my $log = $t->slurp('error.log');
my %helper = map { $_ => 1 }
             $log =~ /start cache (?:manager|loader) process (\d+)/g;
ok(%helper, 'nginx ran the cache\'s manager and loader');
my @by = grep { $helper{$_} }
         $log =~ /\] (\d+)#\d+: agent: .*(?:taken over|taking it over)/g;
is(scalar @by, 0, 'none of them took over a run or a thread');

$t->check_log(allow => qr/exited on signal 9|lost its worker|ended: its |held by process|handed over/);
done_testing;
