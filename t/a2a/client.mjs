// A2A's JavaScript SDK (@a2a-js/sdk 1.x, npm) as a client of nginx's
// agent_a2a: node client.mjs SDK_DIR BASE_URL.  The card is read from
// {location}.well-known/agent-card.json; the same scenarios run over the
// JSON-RPC binding of A2A 1.0 (the card's preferred interface) and of
// A2A 0.3 (legacyCompat, the card's 0.3 interface).  One JSON line per
// observation, {"k": NAME, "v": VALUE}; t/a2a.t asserts on them.

import { randomUUID } from 'node:crypto';

const [dir, base] = process.argv.slice(2);
const sdk = `${dir}/node_modules/@a2a-js/sdk/dist`;
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } =
    await import(`${sdk}/client/index.js`);
const { SendMessageRequest, StreamResponse, Task, Message, GetTaskRequest,
        CancelTaskRequest, ListTasksRequest, SubscribeToTaskRequest,
        ListTasksResponse } = await import(`${sdk}/index.js`);

let lastHi = null;

function out(k, v) {
    console.log(JSON.stringify({ k, v }));
}

function request(text, contextId, skill) {
    return SendMessageRequest.fromJSON({ message: {
        messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }],
        ...(contextId ? { contextId } : {}),
        ...(skill ? { metadata: { skill } } : {}) } });
}

function json(r) {
    if (r && 'status' in r && 'artifacts' in r) {
        return Task.toJSON(r);
    }
    return Message.toJSON(r);
}

async function send(k, client, req) {
    try {
        const r = await client.sendMessage(req);
        out(k, { result: json(r) });
        return json(r);
    } catch (e) {
        out(k, { error: String(e?.message ?? e), code: e?.code ?? null });
        return null;
    }
}

async function stream(k, client, req) {
    const events = [];
    try {
        for await (const ev of client.sendMessageStream(req)) {
            events.push(StreamResponse.toJSON(ev));
        }
        out(k, { events });
    } catch (e) {
        out(k, { error: String(e?.message ?? e), events });
    }
}

async function call(k, f, conv) {
    try {
        const r = await f();
        out(k, { result: conv(r) });
        return r;
    } catch (e) {
        out(k, { error: String(e?.message ?? e), code: e?.code ?? null });
        return null;
    }
}

// the task methods: read, listed, cancelled while a client follows it
async function tasks(prefix, client, hi, ask) {
    await call(`${prefix}get`, () => client.getTask(
        GetTaskRequest.fromJSON({ id: hi.id })), (r) => Task.toJSON(r));
    await call(`${prefix}get_ask`, () => client.getTask(
        GetTaskRequest.fromJSON({ id: ask.id })), (r) => Task.toJSON(r));
    await call(`${prefix}get_none`, () => client.getTask(
        GetTaskRequest.fromJSON({ id: 'no-such-task' })),
        (r) => Task.toJSON(r));
    await call(`${prefix}cancel_done`, () => client.cancelTask(
        CancelTaskRequest.fromJSON({ id: hi.id })), (r) => Task.toJSON(r));
    if (prefix === 'v1_') {
        await call(`${prefix}list`, () => client.listTasks(
            ListTasksRequest.fromJSON({ contextId: hi.contextId,
                                        pageSize: 2 })),
            (r) => ListTasksResponse.toJSON(r));
    }

    // a slow task: followed by a second stream, cancelled by a third call
    const first = [], follow = [];
    let id = null;
    const slow = (async () => {
        try {
            for await (const ev of client.sendMessageStream(
                               request('slow', hi.contextId))) {
                const j = StreamResponse.toJSON(ev);
                first.push(j);
                id = id ?? j.task?.id ?? j.id ?? null;
            }
        } catch (e) {
            first.push({ error: String(e?.message ?? e) });
        }
    })();
    for (let i = 0; i < 100 && !id; i++) {
        await new Promise((r) => setTimeout(r, 20));
    }
    const sub = (async () => {
        try {
            for await (const ev of client.resubscribeTask(
                               SubscribeToTaskRequest.fromJSON({ id }))) {
                follow.push(StreamResponse.toJSON(ev));
            }
        } catch (e) {
            follow.push({ error: String(e?.message ?? e) });
        }
    })();
    await new Promise((r) => setTimeout(r, 300));
    await call(`${prefix}cancel`, () => client.cancelTask(
        CancelTaskRequest.fromJSON({ id })), (r) => Task.toJSON(r));
    await Promise.all([slow, sub]);
    out(`${prefix}cancel_first`, first);
    out(`${prefix}cancel_follow`, follow);
    await call(`${prefix}cancel_get`, () => client.getTask(
        GetTaskRequest.fromJSON({ id })), (r) => Task.toJSON(r));
    return id;
}

async function scenarios(prefix, client, user) {
    const hi = await send(`${prefix}hi`, client, request('hi'));
    const ctx = hi?.contextId;
    await send(`${prefix}again`, client, request('again', ctx));
    await stream(`${prefix}stream`, client, request('streamed', ctx));
    const ask = await send(`${prefix}ask`, client,
                           request('go', undefined, 'approval'));
    await send(`${prefix}answer`, client,
               request('yes', ask?.contextId, 'approval'));
    await send(`${prefix}unknown_skill`, client,
               request('hi', undefined, 'nope'));
    if (hi && ask) {
        out(`${prefix}slow_id`, await tasks(prefix, client, hi, ask));
    }
    lastHi = hi?.id;
    return ctx;
}

try {
    const card = await (await fetch(`${base}/a2a/.well-known/agent-card.json`,
        { headers: { 'X-User': 'alice' } })).json();
    out('card', card);

    // the methods each binding sent, as the wire has them
    const seen = [];
    const auth = (fetchImpl) => (url, init = {}) => {
        try {
            seen.push(JSON.parse(init.body).method);
        } catch (e) {
            // a GET
        }
        return fetchImpl(url, { ...init, headers: {
            ...(init.headers ?? {}), 'X-User': 'alice' } });
    };
    const factory = new ClientFactory(ClientFactoryOptions.createFrom(
        ClientFactoryOptions.default, { transports: [
            new JsonRpcTransportFactory({ fetchImpl: auth(fetch) }) ] }));
    const v1 = await factory.createFromAgentCard(card);
    const ctx = await scenarios('v1_', v1, 'alice');
    const firstTask = lastHi;
    out('ctx', ctx);
    out('v1_methods', [...new Set(seen.splice(0))]);

    // another owner's context
    const bobf = new ClientFactory(ClientFactoryOptions.createFrom(
        ClientFactoryOptions.default, { transports: [
            new JsonRpcTransportFactory({ fetchImpl: (url, init = {}) =>
                fetch(url, { ...init, headers: { ...(init.headers ?? {}),
                                                  'X-User': 'bob' } }) }) ]
        }));
    const bob = await bobf.createFromAgentCard(card);
    await send('bob', bob, request('hi', ctx));
    await call('bob_get', () => bob.getTask(GetTaskRequest.fromJSON(
        { id: firstTask })), (r) => Task.toJSON(r));

    // A2A 0.3: the card's 0.3 interface, through the SDK's legacy binding
    const legacy = { ...card, supportedInterfaces:
        card.supportedInterfaces.filter((i) => i.protocolVersion === '0.3') };
    const f03 = new ClientFactory(ClientFactoryOptions.createFrom(
        ClientFactoryOptions.default, { transports: [
            new JsonRpcTransportFactory({ fetchImpl: auth(fetch),
                                          legacyCompat: { enabled: true } })
        ] }));
    const v03 = await f03.createFromAgentCard(legacy);
    await scenarios('v03_', v03, 'alice');
    out('v03_methods', [...new Set(seen.splice(0))]);
} catch (e) {
    out('__died__', String(e?.stack ?? e));
}
