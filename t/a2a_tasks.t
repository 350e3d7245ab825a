#!/usr/bin/perl
# A2A's tasks and ids as the spec has them (issue 50): ids are strings (a
# URN, the TCK's 67 characters, up to 1024 bytes, no control character); a
# message with taskId alone continues its task in the task's context;
# returnImmediately (1.0) and blocking false (0.3) answer the task as it
# starts and the run goes on; an input-required task is continued by a
# message that names it (one task, GetTask no longer input-required) and can
# be cancelled, and a message to a terminal task is -32004; ListTasks
# without contextId lists the caller's tasks; historyLength, messageId
# required, GetExtendedAgentCard -32004, -32600 and -32700 answered 200; the
# HTTP+JSON (REST) binding. Driven by A2A's JavaScript SDK (@a2a-js/sdk 1.x,
# npm) where it can, by hand on the wire where a client would never send it.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use AgentTest;
use JSON::PP;

my $sdk = AgentTest::npm('a2a', '@a2a-js/sdk', '@a2a-js/sdk@1.3.0');

my $t = AgentTest->new;
my $dir = $t->dir;
$t->mock(sub {
    my ($req) = @_;
    my $q = AgentTest::last_user($req);
    return { text => "slow, at last", delay => 1 } if $q eq 'slow';
    return { text => "you said $q" };
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

# the SDK's flows, one JSON line an observation
open my $fh, '>', "$dir/flows.mjs" or die;
print $fh <<'JS';
import { randomUUID } from 'node:crypto';
const [dir, base] = process.argv.slice(2);
const sdk = `${dir}/node_modules/@a2a-js/sdk/dist`;
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory,
        RestTransportFactory } = await import(`${sdk}/client/index.js`);
const { SendMessageRequest, Task, GetTaskRequest, CancelTaskRequest,
        ListTasksRequest, ListTasksResponse, StreamResponse } =
    await import(`${sdk}/index.js`);
const out = (k, v) => console.log(JSON.stringify({ k, v }));
const user = (u) => (url, init = {}) => fetch(url, { ...init,
    headers: { ...(init.headers ?? {}), 'X-User': u } });
const req = (text, m = {}, configuration) => SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: 'ROLE_USER',
               parts: [{ text }], ...m },
    ...(configuration ? { configuration } : {}) });
async function call(k, f, conv = (r) => Task.toJSON(r)) {
    try {
        const r = await f();
        out(k, { result: conv(r) });
        return conv(r);
    } catch (e) {
        out(k, { error: String(e?.message ?? e), code: e?.code ?? null });
        return null;
    }
}
async function flows(p, client) {
    const get = (id) => client.getTask(GetTaskRequest.fromJSON({ id }));
    // item 1: long ids, a URN of a context
    const long = 'tck-' + 'x'.repeat(63);
    const urn = `urn:example:ctx:${randomUUID()}:${'y'.repeat(40)}`;
    await call(`${p}long`, () => client.sendMessage(SendMessageRequest
        .fromJSON({ message: { messageId: long + randomUUID().slice(0, 4),
                               role: 'ROLE_USER', parts: [{ text: 'hi' }],
                               contextId: urn } })));
    out(`${p}urn`, urn);
    // items 2 and 4: an input-required task continued by its taskId alone
    const ask = await call(`${p}ask`, () => client.sendMessage(
        req('go', { metadata: { skill: 'approval' } })));
    if (ask) {
        await call(`${p}answer`, () => client.sendMessage(
            req('yes', { taskId: ask.id })));
        await call(`${p}get_answered`, () => get(ask.id));
        await call(`${p}again`, () => client.sendMessage(
            req('more', { taskId: ask.id })));
    }
    // item 4: an input-required task cancelled
    const ask2 = await call(`${p}ask2`, () => client.sendMessage(
        req('go', { metadata: { skill: 'approval' } })));
    if (ask2) {
        await call(`${p}cancel_ask`, () => client.cancelTask(
            CancelTaskRequest.fromJSON({ id: ask2.id })));
        await call(`${p}get_cancelled`, () => get(ask2.id));
        await call(`${p}after_cancel`, () => client.sendMessage(
            req('yes', { taskId: ask2.id })));
    }
    // item 3: returnImmediately, then the task followed to its end
    const now = await call(`${p}now`, () => client.sendMessage(
        req('slow', {}, { returnImmediately: true })));
    let last = null;
    for (let i = 0; now && i < 600; i++) {
        last = Task.toJSON(await get(now.id));
        if (last.status.state === 'TASK_STATE_COMPLETED') {
            break;
        }
        await new Promise((r) => setTimeout(r, 50));
    }
    out(`${p}now_end`, last);
    // a streamed message: its events, each a StreamResponse
    const events = [];
    try {
        for await (const ev of client.sendMessageStream(req('streamed'))) {
            events.push(StreamResponse.toJSON(ev));
        }
        out(`${p}stream`, { events });
    } catch (e) {
        out(`${p}stream`, { error: String(e?.message ?? e), events });
    }
    return { ask, ask2, now };
}
try {
    const card = await (await fetch(`${base}/a2a/.well-known/agent-card.json`))
        .json();
    out('card', card);
    const v1 = await new ClientFactory(ClientFactoryOptions.createFrom(
        ClientFactoryOptions.default, { transports: [
            new JsonRpcTransportFactory({ fetchImpl: user('alice') }) ] }))
        .createFromAgentCard(card);
    const got = await flows('v1_', v1);
    // item 5: ListTasks without a context: the caller's, in every context
    await call('list_all', () => v1.listTasks(ListTasksRequest.fromJSON(
        { pageSize: 100 })), (r) => ListTasksResponse.toJSON(r));
    const bob = await new ClientFactory(ClientFactoryOptions.createFrom(
        ClientFactoryOptions.default, { transports: [
            new JsonRpcTransportFactory({ fetchImpl: user('bob') }) ] }))
        .createFromAgentCard(card);
    await call('list_bob', () => bob.listTasks(ListTasksRequest.fromJSON(
        {})), (r) => ListTasksResponse.toJSON(r));
    await call('bob_continue', () => bob.sendMessage(
        req('yes', { taskId: got.ask2?.id })));
    // 0.3: blocking false
    const legacy = { ...card, supportedInterfaces: card.supportedInterfaces
        .filter((i) => i.protocolVersion === '0.3'
                       && i.protocolBinding === 'JSONRPC') };
    const v03 = await new ClientFactory(ClientFactoryOptions.createFrom(
        ClientFactoryOptions.default, { transports: [
            new JsonRpcTransportFactory({ fetchImpl: user('alice'),
                legacyCompat: { enabled: true } }) ] }))
        .createFromAgentCard(legacy);
    const now03 = await call('v03_now', () => v03.sendMessage(
        req('slow', {}, { returnImmediately: true })));
    for (let i = 0; now03 && i < 600; i++) {
        const t = Task.toJSON(await v03.getTask(GetTaskRequest.fromJSON(
            { id: now03.id })));
        out('v03_now_end', t);
        if (t.status.state === 'TASK_STATE_COMPLETED') {
            break;
        }
        await new Promise((r) => setTimeout(r, 50));
    }
    const ask03 = await call('v03_ask', () => v03.sendMessage(
        req('go', { metadata: { skill: 'approval' } })));
    if (ask03) {
        await call('v03_answer', () => v03.sendMessage(
            req('yes', { taskId: ask03.id })));
    }
    // item 7: the REST binding, through the SDK's REST transport
    if (RestTransportFactory && card.supportedInterfaces.some(
            (i) => i.protocolBinding === 'HTTP+JSON')) {
        const rest = { ...card, supportedInterfaces: card.supportedInterfaces
            .filter((i) => i.protocolBinding === 'HTTP+JSON') };
        const r1 = await new ClientFactory(ClientFactoryOptions.createFrom(
            ClientFactoryOptions.default, { transports: [
                new RestTransportFactory({ fetchImpl: user('alice') }) ] }))
            .createFromAgentCard(rest);
        await flows('rest_', r1);
        await call('rest_list', () => r1.listTasks(ListTasksRequest.fromJSON(
            { pageSize: 100 })), (r) => ListTasksResponse.toJSON(r));
    }
} catch (e) {
    out('__died__', String(e?.stack ?? e));
}
JS
close $fh;

my %o = AgentTest::observe("$dir/flows.mjs", $sdk, $base);

for my $p (qw(v1_ rest_)) {
    SKIP: {
    skip 'no REST binding in the card', 17
        if $p eq 'rest_' && !grep { $_->{protocolBinding} eq 'HTTP+JSON' }
                              @{ $o{card}{supportedInterfaces} // [] };

    my $long = $o{"${p}long"}{result};
    is($long->{status}{state}, 'TASK_STATE_COMPLETED',
       "$p: a messageId of 71 characters and a URN context: taken")
        or diag explain $o{"${p}long"};
    is($long->{contextId}, $o{"${p}urn"}, "$p: ... the context is the URN");

    my $ask = $o{"${p}ask"}{result};
    is($ask->{status}{state}, 'TASK_STATE_INPUT_REQUIRED',
       "$p: an interrupt: input-required");
    my $answer = $o{"${p}answer"}{result};
    is($answer->{id}, $ask->{id}, "$p: taskId alone: the same task")
        or diag explain $o{"${p}answer"};
    is($answer->{contextId}, $ask->{contextId}, "$p: ... in its context");
    is($answer->{artifacts}[0]{parts}[0]{text}, 'you said yes',
       "$p: ... the answer goes on from the wait");
    is($o{"${p}get_answered"}{result}{status}{state},
       'TASK_STATE_COMPLETED', "$p: GetTask: no longer input-required")
        or diag explain $o{"${p}get_answered"};
    like($o{"${p}again"}{error} // '', qr/terminal|not supported/i,
         "$p: a message to the completed task: refused");

    is($o{"${p}cancel_ask"}{result}{status}{state}, 'TASK_STATE_CANCELED',
       "$p: CancelTask of an input-required task: canceled")
        or diag explain $o{"${p}cancel_ask"};
    is($o{"${p}get_cancelled"}{result}{status}{state}, 'TASK_STATE_CANCELED',
       "$p: ... GetTask reads it canceled");
    like($o{"${p}after_cancel"}{error} // '', qr/terminal|not supported/i,
         "$p: ... a message to it: refused")
        or diag explain $o{"${p}after_cancel"};

    my $now = $o{"${p}now"}{result};
    like($now->{status}{state} // '', qr/^TASK_STATE_(WORKING|SUBMITTED)$/,
         "$p: returnImmediately: the task as it starts")
        or diag explain $o{"${p}now"};
    ok(!$now->{artifacts}, "$p: ... no answer yet");
    is($o{"${p}now_end"}{artifacts}[0]{parts}[0]{text}, 'slow, at last',
       "$p: ... the run went on to its end")
        or diag explain $o{"${p}now_end"};

    my @ev = @{ $o{"${p}stream"}{events} // [] };
    is($ev[0]{task}{status}{state}, 'TASK_STATE_WORKING',
       "$p: SendStreamingMessage: the task first")
        or diag explain $o{"${p}stream"};
    is((grep { $_->{artifactUpdate} } @ev)[0]{artifactUpdate}{artifact}
       {parts}[0]{text}, 'you said streamed', "$p: ... the answer")
        or diag explain \@ev;
    is($ev[-1]{statusUpdate}{status}{state}, 'TASK_STATE_COMPLETED',
       "$p: ... completed last");
    }
}

my @all = @{ $o{list_all}{result}{tasks} // [] };
my %ids;
$ids{$_->{id}}++ for @all;
my %ctx = map { $_->{contextId} => 1 } @all;
ok(keys %ctx >= 3, 'ListTasks without contextId: tasks of every context')
    or diag explain $o{list_all};
ok($ids{ $o{v1_ask}{result}{id} // '' }, '... the continued task listed');
ok(!grep({ $_ > 1 } values %ids), '... each task once');
ok($o{list_bob}{result} && !@{ $o{list_bob}{result}{tasks} // [] },
   '... another owner lists none of them') or diag explain $o{list_bob};
like($o{bob_continue}{error} // '', qr/not found/i,
     'another owner\'s task named: not found');

like($o{v03_now}{result}{status}{state} // '', qr/WORKING|SUBMITTED/,
     '0.3: blocking false: the task as it starts')
    or diag explain $o{v03_now};
is($o{v03_now_end}{artifacts}[0]{parts}[0]{text}, 'slow, at last',
   '0.3: ... the run went on to its end') or diag explain $o{v03_now_end};
is($o{v03_answer}{result}{id}, $o{v03_ask}{result}{id},
   '0.3: taskId alone continues the task')
    or diag explain $o{v03_answer};

# on the wire, what a client would not send
sub rpc {
    my ($method, $params, %h) = @_;
    my $body = ref $params || !defined $params
             ? encode_json({ jsonrpc => '2.0', id => 9, method => $method,
                             defined $params ? (params => $params) : () })
             : $params;
    return $t->http('POST', '/a2a/', $body, 'Content-Type' =>
                    'application/json', 'X-User' => 'alice', %h);
}
sub msg {
    my (%m) = @_;
    return { message => { role => 'ROLE_USER', parts => [ { text => 'hi' } ],
                          messageId => 'm-' . rand(), %m } };
}

my $r = rpc('SendMessage', msg(messageId => undef));
is($r->{json}{error}{code}, -32602, 'no messageId: -32602');
$r = rpc('SendMessage', msg(messageId => 'x' x 1025));
is($r->{json}{error}{code}, -32602, 'an id over 1024 bytes: -32602');
$r = rpc('SendMessage', msg(contextId => "c\nforged"));
is($r->{json}{error}{code}, -32602, 'an id with a control character: -32602');
my $odd = 'ctx "quoted" <b>&</b> ' . ('é' x 10);
$r = rpc('SendMessage', msg(contextId => $odd));
is($r->{json}{result}{task}{contextId}, $odd,
   'a context id of quotes, markup and UTF-8: taken, given back as it was')
    or diag explain $r->{json};
my $done = $r->{json}{result}{task}{id} // '';
$r = rpc('SendMessage', msg(taskId => $done));
is($r->{json}{error}{code}, -32004, 'a message to a completed task: -32004');
$r = rpc('SendMessage', msg(taskId => 'no-such-task'));
is($r->{json}{error}{code}, -32001, 'a message to no task: -32001');
$r = rpc('SendMessage', msg(taskId => $done, contextId => 'another'));
is($r->{json}{error}{code}, -32602, 'a task of another context: -32602');
$r = rpc('GetTask', { id => $done, historyLength => -1 });
is($r->{json}{error}{code}, -32602, 'GetTask, historyLength -1: -32602');
$r = rpc('GetTask', { id => $done, historyLength => 1 });
is(scalar @{ $r->{json}{result}{history} // [ 1, 2 ] }, 1,
   'GetTask, historyLength 1: a history of one message')
    or diag explain $r->{json};
$r = rpc('GetTask', { id => $done, historyLength => 0 });
is_deeply($r->{json}{result}{history}, [],
          'GetTask, historyLength 0: an empty history');
$r = rpc('ListTasks', { historyLength => -1 });
is($r->{json}{error}{code}, -32602, 'ListTasks, historyLength -1: -32602');
$r = rpc('ListTasks', { statusTimestampAfter => 'yesterday' });
is($r->{json}{error}{code}, -32602, 'ListTasks, a time not ISO 8601: -32602');
$r = rpc('ListTasks', { statusTimestampAfter => '2999-01-01T00:00:00Z' });
is_deeply($r->{json}{result}{tasks}, [], '... one to come: no task')
    or diag explain $r->{json};
is($r->{json}{result}{pageSize}, 0, '... pageSize: the page\'s size');
$r = rpc('ListTasks', { statusTimestampAfter => '2000-01-01T00:00:00.5Z',
                        pageSize => 2 });
is(scalar @{ $r->{json}{result}{tasks} // [] }, 2, '... one long past: all, '
   . 'a page of 2');
ok(!grep({ $_->{artifacts} } @{ $r->{json}{result}{tasks} // [] }),
   '... without artifacts unless asked');
$r = rpc('ListTasks', { includeArtifacts => JSON::PP::true });
ok(grep({ $_->{artifacts} } @{ $r->{json}{result}{tasks} // [] }),
   'ListTasks, includeArtifacts: with them');
$r = rpc('SendMessage', { %{ msg() }, configuration =>
                          { historyLength => -3 } });
is($r->{json}{error}{code}, -32602, 'SendMessage, historyLength -3: -32602');
$r = rpc('GetExtendedAgentCard', {});
is($r->{json}{error}{code}, -32004, 'GetExtendedAgentCard: -32004');
$r = rpc('x', '{"jsonrpc": "2.0", "id": 1, "method": ');
is($r->{status}, 200, 'a parse error: 200');
is($r->{json}{error}{code}, -32700, '... -32700');
$r = rpc('x', '{"jsonrpc": "2.0", "id": {"bad": 1}, "method": "GetTask"}');
is($r->{status}, 200, 'an invalid request: 200');
is($r->{json}{error}{code}, -32600, '... -32600');
$r = rpc('x', '{"jsonrpc": "2.0", "id": 1, "method": 5}');
is($r->{json}{error}{code}, -32600, 'a method not a string: -32600');
$r = rpc('nope', {});
is($r->{status}, 200, 'an unknown method: 200');

# item 7 on the wire: the HTTP+JSON binding's answers and problems
ok(scalar @{ $o{rest_list}{result}{tasks} // [] } >= 3,
   'REST: GET tasks through the SDK lists the caller\'s tasks')
    or diag explain $o{rest_list};
sub rest {
    my ($method, $path, $body) = @_;
    return $t->http($method, "/a2a/$path", $body, 'X-User' => 'alice');
}
$r = rest('GET', "tasks/$done?historyLength=1");
is($r->{json}{id}, $done, 'REST: GET tasks/{id}: the task, no envelope')
    or diag explain $r;
is(scalar @{ $r->{json}{history} // [] }, 1,
   '... historyLength from the query');
$r = rest('GET', 'tasks/no-such-task');
is($r->{status}, 404, 'REST: an unknown task: 404');
is($r->{json}{error}{status}, 'NOT_FOUND', '... an error of google.rpc.Status')
    or diag explain $r->{json};
is($r->{json}{error}{details}[0]{reason}, 'TASK_NOT_FOUND',
   '... its reason A2A\'s');
$r = rest('POST', "tasks/$done:cancel", {});
is($r->{status}, 409, 'REST: cancel a completed task: 409');
$r = rest('POST', 'tasks/no-such-task:cancel', { id => $done });
is($r->{status}, 404, 'REST: the path names the task, not the body\'s id')
    or diag explain $r->{json};
$r = rest('POST', "tasks/$done:subscribe", {});
is($r->{json}{error}{details}[0]{reason}, 'UNSUPPORTED_OPERATION',
   'REST: subscribe to a completed task: UnsupportedOperation')
    or diag explain $r;
$r = rest('GET', "tasks/$done/pushNotificationConfigs");
is($r->{json}{error}{details}[0]{reason}, 'PUSH_NOTIFICATION_NOT_SUPPORTED',
   'REST: the push config routes, without agent_webhooks: not supported')
    or diag explain $r;
$r = rest('GET', 'tasks?historyLength=-1');
is($r->{status}, 400, 'REST: a query out of bounds: 400');
$r = rest('DELETE', 'message:send');
is($r->{status}, 405, 'REST: a route\'s other method: 405');
ok($r->{json} && $r->{json}{status} == 405 && !$r->{json}{jsonrpc},
   '... a problem, not a JSON-RPC error') or diag explain $r;
is($r->{json}{error}{status}, 'UNIMPLEMENTED', '... its gRPC code');
$r = rest('POST', 'message:send', '{"message": ');
is($r->{status}, 400, 'REST: a body not JSON: 400');
$r = rest('GET', 'tasks/x/y/z');
is($r->{status}, 404, 'REST: no such route: 404');

$t->stop;
$t->check_log;
done_testing;
