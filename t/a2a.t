#!/usr/bin/perl
# A2A (issue 31, item 2): agent_a2a serves the location's graph as an A2A
# agent, driven by A2A's own JavaScript SDK (@a2a-js/sdk 1.x, npm,
# unchanged) over its JSON-RPC binding of A2A 1.0 and of 0.3: the agent
# card, SendMessage and SendStreamingMessage (message/send,
# message/stream), a context continued, an interrupt as input-required
# answered by the next message, an unknown skill and another owner's
# context (errors), malformed JSON-RPC; the task methods (GetTask,
# ListTasks, CancelTask of a task another stream runs and a third
# follows with SubscribeToTask, and 0.3's tasks/get, tasks/cancel,
# tasks/resubscribe); then the thread A2A made goes on through our chat
# API.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $root = "$FindBin::Bin/..";
my $dir = AgentTest::npm('a2a', '@a2a-js/sdk', '@a2a-js/sdk@1.3.0');

my $t = AgentTest->new;
$t->mock(sub {
    my ($req) = @_;
    my @m = @{ $req->{messages} };
    my ($u) = grep { $m[$_]{role} eq 'user' } reverse 0 .. $#m;
    my $n = grep { $_->{role} eq 'user' } @m;
    return { text => "slow, at last", delay => 3 }
        if $m[$u]{content} eq 'slow';
    return { text => "Hello, you said $m[$u]{content} ($n)" };
});

my $conf = $t->conf(http => <<'HTTP');
agent_graph chat {
    node model llm;
    edge START model;
    edge model END;
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
HTTP
$conf =~ s{(location /api/chat/)}{location /a2a/ { agent_a2a;
        agent_owner \$http_x_user; agent_use_graph chat;
        agent_assistants approval; }
    $1};
$t->run($conf);

my $base = 'http://127.0.0.1:' . $t->port;
my %o = AgentTest::observe("$root/t/a2a/client.mjs", $dir, $base);

my $card = $o{card};
is($card->{name}, 'chat', 'the card: the location\'s graph');
is_deeply([ map { $_->{id} } @{ $card->{skills} } ], [ qw(chat approval) ],
          '... a skill per graph');
is_deeply([ map { "$_->{protocolBinding} $_->{protocolVersion}" }
            @{ $card->{supportedInterfaces} } ],
          [ 'JSONRPC 1.0', 'JSONRPC 0.3', 'HTTP+JSON 1.0' ],
          '... JSON-RPC in 1.0 and 0.3, HTTP+JSON in 1.0');
is($card->{supportedInterfaces}[0]{url}, "$base/a2a/",
   '... at the location');
ok($card->{capabilities}{streaming}, '... streaming');

for my $v (qw(v1 v03)) {
    my $p = "${v}_";
    my $hi = $o{"${p}hi"}{result};
    ok($hi, "$v: SendMessage answers") or diag explain $o{"${p}hi"};
    is($hi->{status}{state}, 'TASK_STATE_COMPLETED', "$v: completed");
    is($hi->{artifacts}[0]{parts}[0]{text}, 'Hello, you said hi (1)',
       "$v: the answer as an artifact");
    ok($hi->{contextId}, "$v: a context");
    my $again = $o{"${p}again"}{result};
    is($again->{contextId}, $hi->{contextId}, "$v: the same context");
    is($again->{artifacts}[0]{parts}[0]{text}, 'Hello, you said again (2)',
       "$v: ... goes on in the thread");
    ok($again->{id} ne $hi->{id}, "$v: a new task");

    my $ev = $o{"${p}stream"}{events} // [];
    ok(!$o{"${p}stream"}{error}, "$v: SendStreamingMessage streams")
        or diag explain $o{"${p}stream"};
    ok($ev->[0]{task}, "$v: the task first") or diag explain $ev;
    my ($art) = grep { $_->{artifactUpdate} } @$ev;
    is($art->{artifactUpdate}{artifact}{parts}[0]{text},
       'Hello, you said streamed (3)', "$v: the answer as an artifact "
       . 'update');
    is($ev->[-1]{statusUpdate}{status}{state}, 'TASK_STATE_COMPLETED',
       "$v: a completed status last");
    ok((grep { ($_->{statusUpdate}{metadata}{step} // '') eq 'model' } @$ev),
       "$v: a status update per step");

    my $ask = $o{"${p}ask"}{result};
    is($ask->{status}{state}, 'TASK_STATE_INPUT_REQUIRED',
       "$v: an interrupt: input-required");
    is($ask->{status}{message}{parts}[0]{text}, 'Delete the rows?',
       "$v: ... with its question");
    my $answer = $o{"${p}answer"}{result};
    is($answer->{artifacts}[0]{parts}[0]{text}, 'you said yes',
       "$v: the next message answers it");
    like($o{"${p}unknown_skill"}{error} // '', qr/no skill "nope"/,
         "$v: an unknown skill: an error");

    # the task methods
    my $get = $o{"${p}get"}{result};
    is($get->{id}, $hi->{id}, "$v: GetTask reads the task");
    is($get->{status}{state}, 'TASK_STATE_COMPLETED', "$v: ... completed");
    is($get->{artifacts}[0]{parts}[0]{text}, 'Hello, you said hi (1)',
       "$v: ... with its answer");
    is($o{"${p}get_ask"}{result}{status}{state},
       'TASK_STATE_INPUT_REQUIRED', "$v: ... a task that asked: "
       . 'input-required');
    like($o{"${p}get_none"}{error} // '', qr/not found/i,
         "$v: ... an unknown task: not found");
    like($o{"${p}cancel_done"}{error} // '', qr/cannot be canceled/i,
         "$v: CancelTask of a task that is over: refused");
    is($o{"${p}cancel"}{result}{status}{state}, 'TASK_STATE_CANCELED',
       "$v: CancelTask of a working task: canceled")
        or diag explain $o{"${p}cancel"};
    my $first = $o{"${p}cancel_first"} // [];
    ok(!grep({ ($_->{artifactUpdate}{artifact}{parts}[0]{text} // '')
               =~ /at last/ } @$first),
       "$v: ... its stream has no answer");
    is($first->[-1]{statusUpdate}{status}{state}, 'TASK_STATE_FAILED',
       "$v: ... and ends, failed: cancelled")
        or diag explain $first;
    my $follow = $o{"${p}cancel_follow"} // [];
    is($follow->[0]{task}{status}{state}, 'TASK_STATE_WORKING',
       "$v: SubscribeToTask: the task as it is")
        or diag explain $follow;
    is($follow->[-1]{task}{status}{state}, 'TASK_STATE_CANCELED',
       "$v: ... then as it ended");
    is($o{"${p}cancel_get"}{result}{status}{state}, 'TASK_STATE_CANCELED',
       "$v: GetTask after: canceled");
}
my $list = $o{v1_list}{result};
is(scalar @{ $list->{tasks} // [] }, 2, 'ListTasks: a page of the context')
    or diag explain $o{v1_list};
ok($list->{nextPageToken}, '... and where the next begins');
ok($list->{totalSize} >= 3, '... of all its tasks');
like($o{bob_get}{error} // '', qr/not found/i,
     'GetTask of another owner\'s task: not found');
is_deeply([ sort @{ $o{v1_methods} } ],
          [ sort qw(SendMessage SendStreamingMessage GetTask CancelTask
                    ListTasks SubscribeToTask) ],
          'the 1.0 binding sent 1.0\'s methods');
is_deeply([ sort @{ $o{v03_methods} } ],
          [ sort qw(message/send message/stream tasks/get tasks/cancel
                    tasks/resubscribe) ],
          'the 0.3 binding sent 0.3\'s');
like($o{bob}{error} // '', qr/Context with ID .* not found/,
     'another owner\'s context: not found');

# the wire, by hand
sub rpc {
    my ($body, %h) = @_;
    return $t->http('POST', '/a2a/', $body, 'Content-Type' =>
                    'application/json', 'X-User' => 'alice', %h);
}
my $r = rpc('{"jsonrpc": "2.0", "id": 1, "method": ');
is($r->{json}{error}{code}, -32700, 'bad JSON: parse error');
$r = rpc('[' x 100000);
is($r->{json}{error}{code}, -32700, 'deep nesting: a parse error, no crash');
$r = rpc('{"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": '
         . '{"message": {"role": "ROLE_USER", "messageId": "m1", '
         . '"parts": [{"data": {}}]}}}');
is($r->{json}{error}{code}, -32005, 'a data part: content type not taken');
$r = rpc('{"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": '
         . '{"message": {"role": "ROLE_AGENT", "parts": [{"text": "x"}]}}}');
is($r->{json}{error}{code}, -32602, 'an agent\'s message: invalid params');
$r = rpc('{"jsonrpc": "2.0", "id": 4, "method": "GetTask", "params": '
         . '{"id": "x"}}');
is($r->{json}{error}{code}, -32001, 'GetTask of no task: -32001');
$r = rpc('{"jsonrpc": "2.0", "id": 4, "method": "SubscribeToTask", '
         . '"params": {"id": "' . $o{v1_get}{result}{id} . '"}}');
is($r->{json}{error}{code}, -32004,
   'SubscribeToTask of a task that is over: -32004');
$r = rpc('{"jsonrpc": "2.0", "id": 4, "method": "GetTask", "params": '
         . '{"id": 5}}');
is($r->{json}{error}{code}, -32602, 'GetTask, an id not a string: -32602');
$r = rpc('{"jsonrpc": "2.0", "id": 4, "method": "ListTasks", "params": '
         . '{"contextId": "' . $o{ctx} . '", "pageToken": "x"}}');
is($r->{json}{error}{code}, -32602, 'ListTasks, a bad page token: -32602');
$r = rpc('{"jsonrpc": "2.0", "id": 4, "method": "ListTasks", "params": '
         . '{"contextId": "' . $o{ctx} . '", "status": '
         . '"TASK_STATE_CANCELED"}}');
is(scalar @{ $r->{json}{result}{tasks} // [] }, 1,
   'ListTasks of a status: the cancelled task alone')
    or diag explain $r->{json};
$r = rpc('{"jsonrpc": "2.0", "id": 4, "method": "ListTasks", "params": '
         . '{"contextId": "' . $o{ctx} . '"}}', 'X-User' => 'bob');
is_deeply($r->{json}{result}{tasks} // [ 1 ], [],
          'ListTasks of another owner\'s context: none');
$r = rpc('{"jsonrpc": "2.0", "id": 4, "method": '
         . '"CreateTaskPushNotificationConfig", "params": {}}');
is($r->{json}{error}{code}, -32003, 'push notifications: not supported');
$r = rpc('{"jsonrpc": "2.0", "id": 5, "method": "nope"}');
is($r->{json}{error}{code}, -32601, 'an unknown method');
$r = rpc('{"jsonrpc": "2.0", "id": 6, "method": "SendMessage", "params": '
         . '{"message": {"role": "ROLE_USER", "messageId": "m2", '
         . '"taskId": "t1", "parts": [{"text": "x"}]}}}');
is($r->{json}{error}{code}, -32001,
   'a taskId of no task, without its contextId: not found, not a new '
   . 'thread');
$r = rpc('{"jsonrpc": "2.0", "method": "SendMessage", "params": 5}');
is($r->{status}, 204, 'a notification with bad params: not answered');
$r = $t->http('POST', '/a2a/', '{"jsonrpc": "2.0", "id": 7, "method": "x"}',
              'Content-Type' => 'application/json');
is($r->{status}, 401, 'no owner: 401');
is($r->{json}{error}{code}, -32000, '... as a JSON-RPC error');
$r = $t->http('GET', '/a2a/.well-known/agent-card.json');
is($r->{status}, 200, 'the card: no owner asked');
$r = $t->http('GET', '/a2a/.well-known/agent-card.json', undef,
              'Host' => 'evil.test/"x');
unlike($r->{content}, qr/evil/, 'a Host that is no host: not in the card');
$r = $t->http('GET', '/a2a/', undef, 'X-User' => 'alice');
is($r->{status}, 405, 'GET the endpoint: 405');
$r = $t->http('GET', '/a2a/other', undef, 'X-User' => 'alice');
is($r->{status}, 404, 'another path: 404');

# the context goes on through our chat API
my $chat = $t->http('POST', "/api/chat/$o{ctx}/message",
                    encode_json({ message => 'from chat' }),
                    'Content-Type' => 'application/json',
                    'Accept' => 'application/json');
like($chat->{json}{full_response} // '', qr/from chat \(5\)/,
     'the A2A context is a thread of our chat API too');

$t->stop;
$t->check_log;
done_testing;
