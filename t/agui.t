#!/usr/bin/perl
# AG-UI (issue 31, item 3): agent_agui driven by AG-UI's own client,
# @ag-ui/client's HttpAgent from npm, unchanged: text streamed, two runs
# on one thread, tool calls and their results, state both ways, an
# interrupt answered through resume, an abort that ends the server's
# turn, an unknown graph (404), another owner's threadId (a thread of
# one's own: ids are per owner), malformed requests (our JSON errors, never a crash); then the thread AG-UI made
# goes on through the LangGraph API and our chat API, and back.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $root = "$FindBin::Bin/..";
my $dir = AgentTest::npm('agui', '@ag-ui/client',
                         '@ag-ui/langgraph@0.0.43', '@ag-ui/client@1.0.0');

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    my $last = $m[$u]{content};
    if ($req->{tools}) {
        return { text => 'the tool said ' . $m[-1]{content} }
            if $m[-1]{role} eq 'tool';
        return { tools => [ [ 'c1', 'lookup', '{"q": "x"}' ] ] };
    }
    return { text => 'one two three four five six seven eight',
             pieces => [ map { "$_ " } qw(one two three four five six
                                           seven eight) ],
             delay => 0.3 } if $last eq 'slow';
    my $n = grep { $_->{role} eq 'user' } @m;
    return { text => "Hello, you said $last ($n)" };
});

my $conf = $t->conf(http => <<'HTTP');
agent_tool lookup location=/lookup "description=Looks up";
agent_graph chat {
    node model llm;
    edge START model;
    edge model END;
}
agent_graph loop {
    node agent llm tools=lookup;
    node tool tools;
    edge START agent;
    edge agent tool if=tool_calls;
    edge agent END;
    edge tool agent;
}
agent_graph approval {
    channel plan value 'default="Delete the rows?"';
    channel answer value;
    node ask interrupt value=plan resume=answer;
    node done template "text=you said {{answer}}";
    edge START ask;
    edge ask done;
    edge done END;
}
agent_graph notes {
    channel topic value;
    channel count sum;
    channel summary value;
    node note template "text=noted {{topic}}" output=summary;
    node say template "text=about {{topic}} ({{input}})";
    edge START note;
    edge note say;
    edge say END;
}
agent_use_graph chat;
HTTP
$conf =~ s{(location /api/chat/)}{location = /lookup { return 200 "found"; }
    location /agui/ { agent_agui; agent_assistants loop approval notes; }
    location /owned/ { agent_agui; agent_owner \$http_x_user; }
    location /lg/ { agent_langgraph_api; }
    $1};
$t->run($conf);

my $base = 'http://127.0.0.1:' . $t->port;
my %o = AgentTest::observe("$root/t/agui/agui.mjs", $dir, $base);

sub post {
    my ($path, $body, %h) = @_;
    return $t->http('POST', $path, $body,
                    'Content-Type' => 'application/json', %h);
}

sub types { [ map { $_->{type} } @{ $_[0]{events} } ] }
sub has { my ($r, $type) = @_; scalar grep { $_ eq $type } @{ types($r) } }
sub of { my ($r, $type) = @_; grep { $_->{type} eq $type } @{ $r->{events} } }
sub text { join '', map { $_->{delta} } of($_[0], 'TEXT_MESSAGE_CONTENT') }

# text
my $r = $o{text};
ok(!$r->{error}, 'a run: no error') or diag explain $r;
my @seq;
for (@{ types($r) }) {
    next if $_ eq 'STATE_SNAPSHOT'
            || ($_ eq 'TEXT_MESSAGE_CONTENT' && $seq[-1] eq $_);
    push @seq, $_;
}
is_deeply(\@seq, [ qw(RUN_STARTED STEP_STARTED TEXT_MESSAGE_START
                      TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END
                      STEP_FINISHED RUN_FINISHED) ],
          'the events, in AG-UI\'s order') or diag explain types($r);
my ($started) = of($r, 'RUN_STARTED');
is($started->{threadId}, $r->{threadId}, 'RUN_STARTED: the client\'s threadId');
ok($started->{runId}, '... and a runId');
is((of($r, 'STEP_STARTED'))[0]{stepName}, 'model', 'a step is a node');
is(text($r), 'Hello, you said hi (1)', 'the answer streamed');
is((of($r, 'RUN_FINISHED'))[0]{outcome}{type}, 'success', 'outcome: success');
is_deeply([ map { [ $_->{role}, $_->{content} ] } @{ $r->{messages} } ],
          [ [ 'user', 'hi' ], [ 'assistant', 'Hello, you said hi (1)' ] ],
          'the agent\'s messages');

# twice on one thread: the thread keeps the history, the client's copy is
# not sent to the model again
$r = $o{again};
ok(!$r->{error}, 'a second run on the thread') or diag explain $r;
is(text($r), 'Hello, you said again (2)',
   '... the model saw the thread\'s two user messages, none twice');
is(scalar @{ $r->{messages} }, 4, '... the agent has four messages');

# tools
$r = $o{tools};
ok(!$r->{error}, 'a run with a tool call') or diag explain $r;
my ($ts) = of($r, 'TOOL_CALL_START');
is($ts->{toolCallName}, 'lookup', 'TOOL_CALL_START names the tool');
is($ts->{toolCallId}, 'c1', '... with the model\'s call id');
is((of($r, 'TOOL_CALL_ARGS'))[0]{delta}, '{"q":"x"}', 'TOOL_CALL_ARGS');
ok(has($r, 'TOOL_CALL_END'), 'TOOL_CALL_END');
my ($res) = of($r, 'TOOL_CALL_RESULT');
is($res->{content}, 'found', 'TOOL_CALL_RESULT: the tool\'s answer');
is($res->{toolCallId}, 'c1', '... for its call');
like(text($r), qr/^the tool said "?found"?$/, 'then the answer');
is_deeply([ map { $_->{role} } @{ $r->{messages} } ],
          [ qw(user assistant tool assistant) ],
          'the agent\'s messages: the call, its result, the answer')
    or diag explain $r->{messages};
is_deeply($r->{messages}[1]{toolCalls}, [ [ 'lookup', '{"q":"x"}' ] ],
          '... the call on the model\'s message');

# state
$r = $o{state};
ok(!$r->{error}, 'a run with state') or diag explain $r;
my ($snap) = of($r, 'STATE_SNAPSHOT');
is($snap->{snapshot}{topic}, 'cats', 'the client\'s state: a value channel '
   . 'written');
is($snap->{snapshot}{count}, 0, '... a sum channel not (it would grow by '
   . 'each echo)');
ok(!exists $snap->{snapshot}{ignored}, '... a key that is no channel not');
is($snap->{snapshot}{summary}, 'noted cats', 'STATE_SNAPSHOT after the step');
is($r->{state}{summary}, 'noted cats', 'the agent\'s state');
is(text($r), 'about cats (note it)', 'a template\'s text as a text message');
ok(!exists $snap->{snapshot}{input} && !exists $snap->{snapshot}{session_id},
   '... the turn\'s own channels are not the state shown');
my $sse = post('/agui/notes', encode_json({ threadId => $r->{threadId},
    runId => 'n2', state => { topic => 'dogs', input => 'evil',
                              session_id => 'other' },
    messages => [ { id => 'n2m', role => 'user', content => 'more' } ] }));
is(join('', $sse->{content} =~ /"delta":"([^"]*)"/g), 'about dogs (more)',
   '... nor written from the client\'s state');

# interrupt
$r = $o{ask};
ok(!$r->{error}, 'a run that stops at an interrupt') or diag explain $r;
my ($fin) = of($r, 'RUN_FINISHED');
is($fin->{outcome}{type}, 'interrupt', 'RUN_FINISHED: outcome interrupt');
is($fin->{outcome}{interrupts}[0]{message}, 'Delete the rows?',
   '... its question');
is($fin->{outcome}{interrupts}[0]{metadata}{node}, 'ask', '... its node');
is(scalar @{ $r->{pending} }, 1, 'the client holds it as pending');
my ($oi) = grep { ($_->{name} // '') eq 'on_interrupt' } of($r, 'CUSTOM');
ok($oi, 'CopilotKit\'s on_interrupt event too');
$r = $o{resume};
ok(!$r->{error}, 'answered through resume') or diag explain $r;
is(text($r), 'you said yes', '... and the graph went on');
is((of($r, 'RUN_FINISHED'))[0]{outcome}{type}, 'success', '... to its end');

# an answer for an interrupt answered already: 409
my $ask = $o{ask};
$sse = post('/agui/approval', encode_json({ threadId => $ask->{threadId},
    runId => 'a3', messages => [ { id => 'a3m', role => 'user',
                                   content => 'delete again' } ] }));
my ($again) = $sse->{content} =~ /"interrupts":\[\{"id":"([^"]+)"/;
ok($again && $again ne $ask->{pending}[0]{id},
   'the thread waits at a new interrupt');
my $stale = post('/agui/approval', encode_json({ threadId => $ask->{threadId},
    runId => 'a4', messages => [],
    resume => [ { interruptId => $ask->{pending}[0]{id},
                  status => 'resolved', payload => 'no' } ] }));
is($stale->{status}, 409, 'an answer to the old one: 409');
like($stale->{content}, qr/the answer is for the interrupt/, '... says why');
$sse = post('/agui/approval', encode_json({ threadId => $ask->{threadId},
    runId => 'a5', messages => [],
    resume => [ { interruptId => $again, status => 'resolved',
                  payload => 'no' } ] }));
is(join('', $sse->{content} =~ /"delta":"([^"]*)"/g), 'you said no',
   'an answer to the new one goes on');

# abort
ok(has($o{abort}, 'TEXT_MESSAGE_CONTENT'), 'a slow run streams');
ok(!has($o{abort}, 'RUN_FINISHED'), '... aborted before its end');
$r = $o{after_abort};
ok(!$r->{error}, 'the thread takes the next run: the turn ended')
    or diag explain $r;

# unknown graph, another owner
like($o{unknown}{error} // '', qr/404/, 'an unknown graph: 404');
ok(!$o{alice}{error}, 'an owner\'s run') or diag explain $o{alice};
# ids are per owner (t/access_ids_per_owner.t): another owner's threadId
# is a thread of his own
ok(!$o{bob}{error}, 'another owner\'s threadId: his own thread')
    or diag explain $o{bob};

# malformed requests: our JSON errors
my $res2 = post('/agui/', '{"threadId": ');
is($res2->{status}, 400, 'bad JSON: 400');
like($res2->{content}, qr/"error"/, '... our JSON error');
$res2 = post('/agui/', '[' x 100000);
is($res2->{status}, 400, 'deep nesting: 400');
$res2 = post('/agui/', '{"runId": "r", "messages": []}');
is($res2->{status}, 422, 'no threadId: 422');
like($res2->{content}, qr/threadId/, '... says so');
$res2 = post('/agui/', '{"threadId": "a/b", "runId": "r", "messages": []}');
is($res2->{status}, 422, 'a threadId that is no id: 422');
$res2 = post('/agui/', encode_json({ threadId => 't1', runId => 'r1',
    messages => [ { id => 'm', role => 'user', content => 5 } ] }));
is($res2->{status}, 422, 'content of the wrong type: 422');
$res2 = post('/agui/', encode_json({ threadId => 't1', runId => 'r1',
    messages => [ { id => 'm', role => 'assistant', content => 'x' } ] }));
is($res2->{status}, 422, 'nothing to run: 422');
$res2 = post('/agui/', encode_json({ threadId => 't1', runId => 'r1',
    messages => 'x' }));
is($res2->{status}, 422, 'messages not an array: 422');
$res2 = $t->http('GET', '/agui/');
is($res2->{status}, 405, 'GET: 405');

# a run sent again with the same message (a retry): the message is not
# stored twice (its id replaces it, as LangGraph's add_messages)
for my $run (qw(rt1 rt2)) {
    post('/agui/', encode_json({ threadId => 'retry-1', runId => $run,
        messages => [ { id => 'same', role => 'user', content => 'once' } ] }));
}
my $st = $t->http('GET', '/lg/threads/retry-1/state');
is_deeply([ map { $_->{type} } @{ $st->{json}{values}{messages} } ],
          [ qw(human ai ai) ], 'a retry: the user message once')
    or diag explain $st->{json}{values}{messages};

# the thread AG-UI made goes on through the LangGraph API and our chat API
my $tid = $o{thread};
my $lg = $t->http('POST', "/lg/threads/$tid/runs/wait", encode_json({
    assistant_id => 'chat',
    input => { messages => [ { role => 'user', content => 'from lg' } ] } }),
    'Content-Type' => 'application/json');
is($lg->{status}, 200, 'the LangGraph API runs the AG-UI thread')
    or diag explain $lg;
like($lg->{content}, qr/Hello, you said from lg \(3\)/,
     '... with its history');
my $chat = $t->http('POST', "/api/chat/$tid/message",
                    encode_json({ message => 'from chat' }),
                    'Content-Type' => 'application/json',
                    'Accept' => 'application/json');
is($chat->{status}, 200, 'and so does our chat API') or diag explain $chat;
like($chat->{content}, qr/Hello, you said from chat \(4\)/, '... with it all');
$sse = post('/agui/', encode_json({ threadId => $tid, runId => 'back-1',
    messages => [ { id => 'x1', role => 'user', content => 'back' } ] }));
is(join('', $sse->{content} =~ /"delta":"([^"]*)"/g),
   'Hello, you said back (5)', 'and back through AG-UI');
like($sse->{content}, qr/"runId":"back-1"/, '... under the client\'s runId');

$t->stop;
$t->check_log;
done_testing;
