#!/usr/bin/perl
# agent_langgraph_api: LangGraph's own JS SDK (npm) against nginx with two
# workers.  Assistants are the declared graphs, threads our sessions; runs
# stream in LangGraph's modes; interrupts answered with command.resume;
# tool calls approved, edited, rejected; a cancel mid-token cuts the model
# call; a double run is refused; the state at a checkpoint, an update as
# a node; a resumable run joined from the other worker after its client
# went away.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;
use IO::Socket::INET;
use Time::HiRes qw(sleep time);

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    my $last = $m[$u]{content};
    if (grep { $_->{tools} } $req) {
        my ($res) = grep { $_->{role} eq 'tool' } @m[$u .. $#m];
        return { text => "result: $res->{content}" } if $res;
        return { tools => [ [ 'q1', 'execute_sql_query',
                              '{"query": "SELECT 1 AS one"}' ] ] }
            if $last eq 'run it';
    }
    return { text => 'one two three four five six seven eight nine ten',
             pieces => [ map { "$_ " } qw(one two three four five six
                                           seven eight nine ten) ],
             delay => 0.3 } if $last =~ /^slow/;
    return { text => "Hello from the mock" };
});

my $conf = $t->conf(http => <<'HTTP');
agent_graph approval {
    channel plan     value scope=turn;
    channel approval value;
    node draft   template output=plan "text=Delete the rows of 2019?";
    node approve interrupt value=plan resume=approval;
    node act     template "text=Done: {{approval}}";
    node cancel  template "text=Cancelled.";
    edge START draft;
    edge draft approve;
    edge approve act "if=approval == 'yes'";
    edge approve cancel;
    edge act END;
    edge cancel END;
}
agent_graph chat {
    channel note value;
    node model llm;
    edge START model;
    edge model END;
}
agent_graph guarded {
    node model llm prompt=react_system.md tools=execute_sql_query;
    node tools tools approve=on;
    edge START model;
    edge model tools if=tool_calls;
    edge model END;
    edge tools model;
}
HTTP
$conf =~ s{(location /api/chat/)}{location /lg/ { agent_langgraph_api;
            agent_assistants approval chat guarded;
            add_header X-Worker \$pid; }
        $1};
# each new connection may go to either worker
$conf =~ s{listen (127\.0\.0\.1:%%PORT%%);}{listen $1 reuseport;};
$t->run($conf);

my $url = 'http://127.0.0.1:' . $t->port . '/lg';
my $o = $t->lg_sdk($url, 'basics');
plan skip_all => 'the LangGraph SDK is not installable here' unless $o;

sub events { [ map { $_->{event} } @{ $_[0] } ] }

# a request sent on a connection that a worker other than $pid serves:
# found with GET /lg/ok on keep-alive connections
sub other_worker {
    my ($pid, $request) = @_;
    for (1 .. 100) {
        my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                      PeerPort => $t->port) or die $!;
        print $s "GET /lg/ok HTTP/1.1\r\nHost: x\r\n\r\n";
        my $head = '';
        $head .= $_ while defined($_ = <$s>) && $_ ne "\r\n";
        my ($len) = $head =~ /Content-Length: (\d+)/i;
        read($s, my $body, $len);
        my ($w) = $head =~ /X-Worker: (\d+)/i;
        if ($w eq $pid) {
            close $s;
            next;
        }
        print $s $request;
        my $res = '';
        $res .= $_ while defined($_ = <$s>);
        close $s;
        my ($status) = $res =~ m{^HTTP/1\.1 (\d+)};
        return { worker => $w, status => $status, raw => $res };
    }
    return { worker => $pid };
}
sub of { my ($ev, $name) = @_; [ map { $_->{data} } grep { $_->{event} eq $name } @$ev ] }

# 1. basics: assistants, threads, a run in three modes, state, history
is_deeply($o->{ok}, { ok => JSON::PP::true }, 'GET /ok');
ok($o->{info}{flags}{assistants}, 'GET /info');
is(scalar @{ $o->{search} }, 1, 'assistants.search by graph id');
is($o->{search}[0]{graph_id}, 'chat', 'an assistant is a declared graph');
like($o->{assistant}{assistant_id},
     qr/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
     'its id a uuid5');
is($o->{thread}{status}, 'idle', 'threads.create: idle');
is_deeply($o->{thread}{metadata}, { user => 'u1' }, 'with its metadata');

my $ev = $o->{stream};
is($ev->[0]{event}, 'metadata', 'metadata first');
ok($ev->[0]{data}{run_id}, 'with the run id');
is_deeply([ grep { $_ ne 'messages' } @{ events($ev) } ],
          [qw(metadata values updates values)],
          'values (input), updates, values')
    or diag explain events($ev);
my $chunks = of($ev, 'messages');
is(scalar @$chunks, 5, 'four message chunks and the model\'s last');
is(join('', map { $_->[0]{content} } @$chunks), 'Hello from the mock',
   'the tokens');
is($chunks->[0][0]{type}, 'AIMessageChunk',
   'as the Python server sends chunks (type AIMessageChunk)');
is($chunks->[0][1]{langgraph_node}, 'model', 'metadata: the node');
is($chunks->[0][1]{langgraph_step}, 1, 'and the step');
my $vals = of($ev, 'values');
is_deeply([ map { $_->{type} } @{ $vals->[-1]{messages} } ], [qw(human ai)],
          'the last values: human then ai');
is($vals->[-1]{messages}[1]{id}, $chunks->[0][0]{id},
   'the chunks carry the message id');
is_deeply(of($ev, 'updates')->[0]{model}{messages}[0]{content},
          'Hello from the mock', 'updates: the node and its write');
ok(!exists $vals->[-1]{input} && !exists $vals->[-1]{session_id},
   'our own channels are not shown');

is(scalar @{ $o->{state}{values}{messages} }, 2, 'getState: the values');
is_deeply($o->{state}{next}, [], 'nothing next');
ok($o->{state}{checkpoint}{checkpoint_id}, 'the checkpoint');
is(scalar @{ $o->{history} }, 3,
   'getHistory: before the input, the input, the model, newest first')
    or diag explain $o->{history};
is_deeply([ map { $_->{metadata}{step} } @{ $o->{history} } ], [ 1, 0, -1 ],
          '... steps 1, 0, -1');
is_deeply($o->{history}[-1]{next}, [ '__start__' ],
          'the first: before the input, next __start__');
is($o->{history}[-1]{metadata}{source}, 'input', '... its source "input"');
is_deeply($o->{history}[-1]{values}{messages}, [], '... no message yet');
is($o->{history}[0]{checkpoint}{checkpoint_id},
   $o->{state}{checkpoint}{checkpoint_id}, 'the newest is the state');
is($o->{history}[0]{parent_checkpoint}{checkpoint_id},
   $o->{history}[1]{checkpoint}{checkpoint_id}, 'each has its parent');
is(scalar @{ $o->{runs} }, 1, 'runs.list');
is($o->{runs}[0]{status}, 'success', 'the run succeeded');
is($o->{run}{run_id}, $ev->[0]{data}{run_id}, 'runs.get');
is(scalar @{ $o->{wait}{messages} }, 4, 'runs.wait: the values at the end');
is($o->{got}{status}, 'idle', 'threads.get');
is(scalar @{ $o->{got}{values}{messages} }, 4, 'with the values');

my $modes = events($o->{modes});
ok((grep { $_ eq 'events' } @$modes), 'events mode');
ok((grep { $_ eq 'debug' } @$modes), 'debug mode');
my ($stream_ev) = grep { $_->{event} eq 'events'
                         && $_->{data}{event} eq 'on_chat_model_stream' }
                  @{ $o->{modes} };
ok($stream_ev, 'events: on_chat_model_stream');
is(scalar @{ $o->{stateless}{messages} }, 2, 'a stateless run (wait)');
is_deeply(events($o->{stateless_stream}), [qw(metadata updates)],
          'a stateless run (stream)')
    or diag explain $o->{stateless_stream};
ok(!(grep { @{ $_->{values}{messages} // [] } == 2
            && $_->{values}{messages}[0]{content} =~ /^[xy]$/ }
     @{ $o->{threads} }), 'its thread is gone after it');
is($o->{unknown}{error}{status}, 404, 'an unknown thread: 404');
is($o->{bad_assistant}{error}{status}, 404, 'an unknown assistant: 404');
is($o->{deleted}{error}{status}, 404, 'threads.delete');

# the run's end is stored before its answer ends: the run asked for at
# once on a new connection (as the SDK does, to know whether to join it
# again) has ended, and a stateless run's thread is gone.  On PostgreSQL
# the run's end is made slow (a trigger that sleeps) so that an answer
# ending before it is seen each time.
{
    my $db = $t->dir . '/agent.db';
    $t->sqlite($db, q{CREATE FUNCTION slow_end() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN IF NEW.status <> 'running' THEN
        PERFORM pg_sleep(0.1); END IF; RETURN NEW; END $$;
        CREATE TRIGGER slow_end BEFORE UPDATE ON runs FOR EACH ROW
        EXECUTE FUNCTION slow_end()}) if $ENV{AGENT_PG};
    my $th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
    my ($ended, $gone, $waited) = (0, 0, 0);
    for my $i (1 .. 10) {
        my $in = { messages => [ { role => 'user', content => "n$i" } ] };
        my $r = $t->http('POST', "/lg/threads/$th/runs/stream",
                         { assistant_id => 'chat', input => $in });
        my $run = $t->http('GET', '/lg' . $r->{headers}{'content-location'});
        $ended++ if $run->{status} == 200
                    && $run->{json}{status} eq 'success';

        $r = $t->http('POST', '/lg/runs/stream',
                      { assistant_id => 'chat', input => $in });
        my ($tid) = ($r->{headers}{'content-location'} // '')
                    =~ m{^/threads/([^/]+)/runs/};
        $gone++ if $tid
                   && $t->http('GET', "/lg/threads/$tid")->{status} == 404;

        $r = $t->http('POST', '/lg/runs/wait',
                      { assistant_id => 'chat', input => $in });
        my @left = grep { ($_->{values}{messages}[0]{content} // '') eq "n$i"
                          && $_->{thread_id} ne $th }
                   @{ $t->http('POST', '/lg/threads/search',
                               { limit => 1000 })->{json} // [] };
        $waited++ if $r->{status} == 200 && !@left;
    }
    is($ended, 10, 'a run asked for as its stream ends has ended');
    is($gone, 10, "a stateless run's thread is gone as its stream ends");
    is($waited, 10, '... and as its runs/wait answers');
    $t->sqlite($db, 'DROP TRIGGER slow_end ON runs') if $ENV{AGENT_PG};
}

# 2. interrupts: answered yes, then no; interrupt_before in the request
$o = $t->lg_sdk($url, 'approval');
for my $a (qw(yes no)) {
    my $ask = $o->{"ask_$a"};
    my $upd = of($ask, 'updates');
    is_deeply($upd->[-1]{__interrupt__}[0]{value}, 'Delete the rows of 2019?',
              "$a: updates end with __interrupt__");
    is_deeply(of($ask, 'values')->[-1]{__interrupt__}[0]{value},
              'Delete the rows of 2019?', "$a: so do values");
    my $st = $o->{"waiting_$a"};
    is_deeply($st->{next}, ['approve'], "$a: next is the interrupt's node");
    is($st->{tasks}[0]{interrupts}[0]{value}, 'Delete the rows of 2019?',
       "$a: tasks[].interrupts");
    is($o->{"status_$a"}{status}, 'interrupted', "$a: thread interrupted");
    my $res = $o->{"resume_$a"};
    is(of($res, 'values')->[-1]{messages}[-1]{content},
       $a eq 'yes' ? 'Done: yes' : 'Cancelled.', "$a: routed on the answer");
    is_deeply($o->{"after_$a"}{next}, [], "$a: done");
    is($o->{"idle_$a"}{status}, 'idle', "$a: thread idle again");
}
is_deeply($o->{before}, { __interrupt__ => [] },
          'interrupt_before: runs.wait answers an empty interrupt');
is_deeply($o->{before_state}{next}, ['model'], 'it waits before model');
is($o->{continued}{messages}[-1]{content}, 'Hello from the mock',
   'input null continues it');
is($o->{nothing}{error}{status}, 409, 'a resume with nothing waiting: 409');

# 3. tool approval: approved, edited, rejected
$o = $t->lg_sdk($url, 'tools');
my $hitl = $o->{approve_ask}{__interrupt__}[0]{value};
is($hitl->{action_requests}[0]{name}, 'execute_sql_query',
   'the calls are the interrupt, as LangChain\'s HITLRequest');
ok($hitl->{action_requests}[0]{args}{query}, '... with their arguments');
like($hitl->{action_requests}[0]{description},
     qr/^Tool execution requires approval\n\nTool: execute_sql_query\nArgs: /,
     '... described as LangChain describes them');
is_deeply($hitl->{review_configs}, [ { action_name => 'execute_sql_query',
    allowed_decisions => [ qw(approve edit reject respond) ] } ],
    '... each with its review config');
is($o->{approve_state}{tasks}[0]{name}, 'tools', 'waiting at tools');
my @tools = map { $_->[0] } grep { $_->[0]{type} eq 'tool' }
            @{ of($o->{approve_resume}, 'messages') };
like($tools[0]{content}, qr/one/, 'approved: the tool ran')
    or diag explain $o->{approve_resume};
@tools = map { $_->[0] } grep { $_->[0]{type} eq 'tool' }
         @{ of($o->{edit_resume}, 'messages') };
like($tools[0]{content}, qr/two/, 'edited: the edited query ran');
@tools = map { $_->[0] } grep { $_->[0]{type} eq 'tool' }
         @{ of($o->{reject_resume}, 'messages') };
like($tools[0]{content}, qr/rejected it \(not today\)/,
     'rejected: the model is told why');
my %want = (d_approve => qr/one/, d_edit => qr/three/, d_reject => qr/not now/,
            d_respond => qr/^I did it by hand$/,
            d_wrong => qr/not one per tool call/);
for my $d (sort keys %want) {
    @tools = map { $_->[0] } grep { $_->[0]{type} eq 'tool' }
             @{ of($o->{"${d}_resume"}, 'messages') };
    like($tools[0]{content} // '', $want{$d}, "decisions, $d")
        or diag explain $o->{"${d}_resume"};
}

# 3b. Agent Chat UI's calls, as its useStream makes them
$o = $t->lg_sdk($url, 'chatui');
sub contents { [ map { ref $_->{content} ? 'blocks' : $_->{content} }
                     @{ $_[0]{values}{messages} // [] } ] }
is_deeply(contents($o->{regenerated}), [ 'one', 'Hello from the mock' ],
          'regenerate: the answer made again from its parent checkpoint, '
          . 'not appended') or diag explain $o->{regenerate};
my %kids;
$kids{ $_->{parent_checkpoint}{checkpoint_id} // '' }++
    for @{ $o->{regenerated_history} };
is(scalar(grep { $_ == 2 } values %kids), 1,
   '... a branch: the parent has the old answer and the new as children');
is_deeply(contents($o->{edited}), [ 'uno', 'Hello from the mock' ],
          'edit of the first message: a fork from the input checkpoint');
is_deeply($o->{resolved}{next}, [], 'mark as resolved (goto __end__): '
          . 'nothing waits') or diag explain $o->{resolve};
is($o->{resolved_thread}{status}, 'idle', '... the thread is idle');
is(scalar @{ $o->{open_calls} // [] }, 1, 'an approval waits with its call');
is_deeply([ map { $_->{type} } @{ $o->{after_waiting}{values}{messages} } ],
          [ qw(human ai tool human ai) ],
          'a tool message the UI adds before a new message: taken, the '
          . 'wait dropped') or diag explain $o->{while_waiting};
is($o->{after_waiting}{values}{messages}[-1]{content}, 'Hello from the mock',
   '... and the model answers the new message');
is($o->{after_waiting_thread}{status}, 'idle', '... the thread is idle');
my $img = $o->{imaged}{values}{messages}[0]{content};
is_deeply([ map { $_->{type} } @{ ref $img ? $img : [] } ],
          [ qw(text image) ], 'an image attached: kept with its message')
    or diag explain $o->{image};
is($o->{imaged}{values}{messages}[-1]{content}, 'Hello from the mock',
   '... and answered');
my $pdf = $o->{pdfed}{values}{messages}[0]{content};
is_deeply([ map { $_->{type} } @{ ref $pdf ? $pdf : [] } ],
          [ qw(text file) ], 'a PDF attached: kept with its message')
    or diag explain $o->{pdf};
is($o->{pdfed}{values}{messages}[-1]{content}, 'Hello from the mock',
   '... and answered');

# 4. cancel mid-token; a double run
$o = $t->lg_sdk($url, 'cancel');
ok(!exists $o->{cancel}{error}, 'runs.cancel(wait)')
    or diag explain $o->{cancel};
my $n = grep { $_ eq 'messages' } @{ $o->{cancelled_events} };
ok($n >= 2 && $n < 10, "the stream stopped after $n of 10 tokens")
    or diag explain $o;
is($o->{cancelled_run}{status}, 'interrupted', 'the run is interrupted');
is($o->{cancelled_thread}{status}, 'idle', 'the thread is free');
my ($closed) = grep { $_->{event} eq 'closed' } $t->{mock}->log_lines;
ok($closed && $closed->{at} < 10,
   'the model call was cut (no tokens paid after the cancel)')
    or diag explain [ $t->{mock}->log_lines ];
is($o->{double}{error}{status}, 409, 'a second run while one runs: 409');
is_deeply($o->{first_rest}, ['updates'], 'the first run goes on');

# 4b. multitask strategies; a background run joined
$o = $t->lg_sdk($url, 'multitask');
for my $s (qw(interrupt rollback enqueue)) {
    my $msgs = $o->{"${s}_state"}{values}{messages};
    is($o->{"${s}_second"}{messages}[-1]{content}, 'Hello from the mock',
       "$s: the second run ran") or diag explain $o->{"${s}_second"};
    my @human = map { $_->{content} } grep { $_->{type} eq 'human' } @$msgs;
    if ($s eq 'enqueue') {
        is_deeply($o->{"${s}_first_rest"}, ['updates'],
                  "$s: the first run ran to its end");
        is($o->{"${s}_first_run"}{status}, 'success', "$s: and succeeded");
        is_deeply(\@human, ["slow $s", "after $s"], "$s: one after the other");
    } elsif ($s eq 'interrupt') {
        is_deeply($o->{"${s}_first_rest"}, ['error'],
                  "$s: the first run's stream ends with an error");
        is($o->{"${s}_first_run"}{status}, 'interrupted',
           "$s: the first run is interrupted");
        is_deeply(\@human, ["slow $s", "after $s"], "$s: its input kept");
    } else {
        is($o->{"${s}_first_run"}{error}{status}, 404,
           "$s: the first run is gone");
        is_deeply(\@human, ["after $s"], "$s: and so is its input");
    }
}
is($o->{created}{status}, 'running', 'runs.create: the run, running');
is($o->{joined}{messages}[-1]{content}, 'Hello from the mock',
   'runs.join: its values at the end');
is($o->{created_run}{status}, 'success', 'it ran to its end');

# 4c. time travel: a run forked from an earlier checkpoint
$o = $t->lg_sdk($url, 'fork');
sub texts { [ map { $_->{content} } @{ $_[0]{messages} // [] } ] }
is_deeply(texts($o->{forked}),
          [ 'one', 'Hello from the mock', 'three', 'Hello from the mock' ],
          'forked: the run starts from the earlier checkpoint')
    or diag explain $o;
is_deeply(texts($o->{after_fork}{values}), texts($o->{forked}),
          'the thread goes on from the fork');
my ($fork_input) = grep { ($_->{parent_checkpoint}{checkpoint_id} // '')
                          eq $o->{first} } @{ $o->{history_after} };
ok($fork_input, "the fork's first checkpoint has the earlier one as parent");
is(scalar(grep { ($_->{parent_checkpoint}{checkpoint_id} // '')
                 eq $o->{first} } @{ $o->{history_after} }), 2,
   'two children: the old branch and the new');
is_deeply(texts($o->{old_branch}{values}),
          [ 'one', 'Hello from the mock', 'two', 'Hello from the mock' ],
          'the old branch is still there to read');
is_deeply(texts($o->{again}),
          [ 'one', 'Hello from the mock', 'three', 'Hello from the mock',
            'four', 'Hello from the mock' ], 'a next run goes on the new one');
is($o->{bad_fork}{error}{status}, 404, 'an unknown checkpoint: 404');

# 5. the state at a checkpoint, an update as a node
$o = $t->lg_sdk($url, 'update');
is(scalar @{ $o->{at}{values}{messages} }, 2,
   'getState at an earlier checkpoint');
ok($o->{update}{checkpoint}{checkpoint_id}, 'updateState: a checkpoint');
is($o->{updated}{values}{note}, 'set by hand', 'the value is written');
is($o->{updated}{metadata}{step}, 5,
   'as a step of its own (after -1 to 4: two runs, each with its input)');
is($o->{bad_update}{error}{status}, 422, 'an unknown channel: 422');

# an update refused under the thread's lease is answered once the lease is
# let go: a run at once, on any worker, is not refused with 409 (on
# PostgreSQL the unlock is made slow by a trigger that sleeps)
{
    $t->slow_unlock(0.2);
    my $th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
    my $in = { messages => [ { role => 'user', content => 'hi' } ] };
    my @got = ($t->http('POST', "/lg/threads/$th/runs/wait",
                        { assistant_id => 'chat', input => $in })->{status});
    for (1 .. 4) {
        push @got, $t->http('POST', "/lg/threads/$th/state",
                            { values => { nope => 1 } })->{status};
        push @got, $t->http('POST', "/lg/threads/$th/runs/wait",
                            { assistant_id => 'chat', input => $in })
                      ->{status};
    }
    is("@got", '200 422 200 422 200 422 200 422 200',
       'a refused update lets the lease go before it is answered');
    $t->slow_unlock(0);
}

# 6. a resumable run outlives its client and is joined from the other
# worker, from the event after the last one seen
my $th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
my $first = $t->stream("/lg/threads/$th/runs/stream", encode_json({
    assistant_id => 'chat', input => { messages => [
        { role => 'user', content => 'slow but resumable' } ] },
    stream_mode => ['messages-tuple', 'values'], stream_resumable => \1,
    on_disconnect => 'continue' }), stop_after => 4);
ok($first->{stopped}, 'the client goes away after 4 events');
my $run_id = $first->{events}[0]{_json}{run_id};
my $last = $first->{events}[-1]{id};
my $pid = $first->{headers}{'x-worker'};
like($first->{headers}{location}, qr{^/threads/$th/runs/$run_id/stream$},
     'Location: where to join, relative to the API root');

my $join;
for (1 .. 60) {
    $join = $t->stream("/lg/threads/$th/runs/$run_id/stream", '',
                       method => 'GET', timeout => 30,
                       headers => { 'Last-Event-ID' => $last });
    last if ($join->{headers}{'x-worker'} // $pid) ne $pid;
}
isnt($join->{headers}{'x-worker'}, $pid, 'joined through the other worker');
is($join->{events}[0]{id}, $last + 1, 'from the event after Last-Event-ID');
my $text = join '', map { $_->{_json}[0]{content} }
           grep { ($_->{_event} // '') eq 'messages' }
           @{ $first->{events} }, @{ $join->{events} };
is($text, 'one two three four five six seven eight nine ten ',
   'every token once, across the two connections');
is($join->{events}[-1]{_event}, 'values', 'to the end');
ok($join->{last_chunk}, 'and the join ends with the run');
my $run = $t->http('GET', "/lg/threads/$th/runs/$run_id")->{json};
is($run->{status}, 'success', 'the run finished without its client');
my $all = $t->stream("/lg/threads/$th/runs/$run_id/stream", '',
                     method => 'GET', headers => { 'Last-Event-ID' => -1 });
is(scalar @{ $all->{events} }, $join->{events}[-1]{id} + 1,
   'Last-Event-ID -1: the whole run again');
is($all->{events}[0]{id}, 0, 'the ids count from 0, as LangGraph\'s');

# a cancel through the other worker: seen by the run's worker's poll
$th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
$first = $t->stream("/lg/threads/$th/runs/stream", encode_json({
    assistant_id => 'chat', input => { messages => [
        { role => 'user', content => 'slow, cancelled from afar' } ] },
    stream_mode => 'messages-tuple', on_disconnect => 'continue' }),
    stop_after => 2);
$run_id = $first->{events}[0]{_json}{run_id};
$pid = $first->{headers}{'x-worker'};
my $cancel = other_worker($pid,
    "POST /lg/threads/$th/runs/$run_id/cancel?wait=1 HTTP/1.1\r\n"
    . "Host: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
isnt($cancel->{worker}, $pid, 'a cancel on the other worker');
is($cancel->{status}, 204, 'waited for: 204');
is($t->sqlite($t->dir . '/agent.db',
              "SELECT cancel FROM runs WHERE run_id = '$run_id'"),
   'interrupt', 'asked through the store');
is($t->http('GET', "/lg/threads/$th/runs/$run_id")->{json}{status},
   'interrupted', 'the run is interrupted');
my @closed = grep { $_->{event} eq 'closed' } $t->{mock}->log_lines;
ok(@closed >= 2 && $closed[-1]{at} < 10, 'its model call cut short')
    or diag explain \@closed;

# on_disconnect cancel (the default): the run ends with its client
$th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
$first = $t->stream("/lg/threads/$th/runs/stream", encode_json({
    assistant_id => 'chat', input => { messages => [
        { role => 'user', content => 'slow, then gone' } ] },
    stream_mode => 'messages-tuple' }), stop_after => 3);
$run_id = $first->{events}[0]{_json}{run_id};
ok(AgentTest::wait_for(sub {
    ($t->http('GET', "/lg/threads/$th/runs/$run_id")->{json}{status} // '')
        eq 'interrupted' }, 10),
   'a client that goes: its run is interrupted');
is($t->http('GET', "/lg/threads/$th")->{json}{status}, 'idle',
   'and the thread free');

# 7. an interrupt answered after nginx -s reload
$th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
my $w = $t->http('POST', "/lg/threads/$th/runs/wait", {
    assistant_id => 'approval',
    input => { messages => [ { role => 'user', content => 'go' } ] } });
is($w->{json}{__interrupt__}[0]{value}, 'Delete the rows of 2019?',
   'runs.wait: the values with __interrupt__');
my @old = $t->worker_pids;
kill 'HUP', $t->{nginx};
ok(AgentTest::wait_for(sub {
    my %o = map { $_ => 1 } @old;
    my @new = $t->worker_pids;
    @new && !grep { $o{$_} } @new }, 10), 'reloaded');
$w = $t->http('POST', "/lg/threads/$th/runs/wait", {
    assistant_id => 'approval', command => { resume => 'yes' } });
is($w->{json}{messages}[-1]{content}, 'Done: yes', 'resumed after it');

# command goto: the waiting run goes on at another node; command update
$th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
$t->http('POST', "/lg/threads/$th/runs/wait", { assistant_id => 'approval',
    input => { messages => [ { role => 'user', content => 'go' } ] } });
$w = $t->http('POST', "/lg/threads/$th/runs/wait", {
    assistant_id => 'approval', command => { goto => 'cancel' } });
is($w->{json}{messages}[-1]{content}, 'Cancelled.',
   'command.goto: on at the node named');
$th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
$t->http('POST', "/lg/threads/$th/runs/wait", { assistant_id => 'approval',
    input => { messages => [ { role => 'user', content => 'go' } ] } });
$w = $t->http('POST', "/lg/threads/$th/runs/wait", {
    assistant_id => 'approval',
    command => { resume => 'yes', update => { plan => 'Keep 2019.' } } });
is($w->{json}{plan}, 'Keep 2019.', 'command.update: written with the answer');
is($w->{json}{messages}[-1]{content}, 'Done: yes', 'and the answer routed');
is($t->http('POST', "/lg/threads/$th/runs/wait", {
    assistant_id => 'approval', command => { goto => 'nowhere' } })->{status},
   422, 'a goto to no node: 422');

# a client that leaves before it has seen the run's id: the run ends too
$th = $t->http('POST', '/lg/threads', {})->{json}{thread_id};
{
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                  PeerPort => $t->port) or die $!;
    my $b = encode_json({ assistant_id => 'chat', input => { messages => [
        { role => 'user', content => 'slow and gone at once' } ] } });
    print $s "POST /lg/threads/$th/runs/stream HTTP/1.1\r\nHost: x\r\n"
             . "Content-Type: application/json\r\nContent-Length: "
             . length($b) . "\r\n\r\n$b";
    close $s;
}
ok(AgentTest::wait_for(sub {
    my $runs = $t->http('GET', "/lg/threads/$th/runs")->{json} // [];
    @$runs && $runs->[0]{status} eq 'interrupted' }, 10),
   'a client gone before the metadata event: its run is interrupted');
ok(AgentTest::wait_for(sub {
    $t->http('GET', "/lg/threads/$th")->{json}{status} eq 'idle' }, 10),
   'and the thread free');

# bad requests: 422 with the sentence as text (LangGraph's JS server), or
# {"detail"} when JSON is asked for (its Python server); unknown routes
# 404, methods 405
my $bad = $t->http('POST', "/lg/threads/$th/runs/wait", { input => {} });
is($bad->{status}, 422, 'no assistant_id: 422');
like($bad->{headers}{'content-type'}, qr{^text/plain}, 'as text');
like($bad->{content}, qr/assistant_id/, '... that says what is wrong');
$bad = $t->http('POST', "/lg/threads/$th/runs/wait", { input => {} },
                Accept => 'application/json');
like($bad->{json}{detail} // '', qr/assistant_id/,
     'with Accept: application/json, in "detail"');
is($t->http('GET', '/lg/assistants/nope')->{content}, "Assistant not found\n",
   'a 404 says what the JS SDK shows ("HTTP 404: Assistant not found")');
is($t->http('POST', "/lg/threads/$th/runs/wait", {
    assistant_id => 'chat', stream_mode => ['nope'],
    input => { messages => [] } })->{status}, 422, 'an unknown mode: 422');
is($t->http('POST', "/lg/threads/$th/runs/wait", {
    assistant_id => 'chat', input => { messages => [
        { role => 'robot', content => 'x' } ] } })->{status}, 422,
   'an unknown role: 422');
is($t->http('POST', "/lg/threads/$th/runs/wait", '[1,2')->{status}, 400,
   'bad JSON: 400');
my $r = $t->http('POST', "/lg/threads/$th/runs/wait", {
    assistant_id => 'chat', input => { nope => 1, tools => [ 'x' ],
    messages => [ { role => 'user', content => 'hi' } ] } });
is($r->{status}, 200, 'input keys that are no channel: dropped, as '
                      . 'LangGraph\'s input schema drops them');
ok(!exists $r->{json}{nope} && !exists $r->{json}{tools}, '... not kept');
is($t->http('GET', '/lg/nope')->{status}, 404, 'an unknown route: 404');
is($t->http('DELETE', '/lg/ok')->{status}, 405, 'a wrong method: 405');
is($t->http('GET', "/lg/threads/$th/runs/" . ('x' x 65))->{status}, 404,
   'an id too long: 404');

$t->check_log;

done_testing;
