// MCP elicitation with the official MCP TypeScript SDK's client (npm,
// unchanged): node elicit.mjs SDK_DIR URL.  A client that declares the
// elicitation capability answers each elicitation/create as its handler
// is told (per call); one JSON line per observation, {"k", "v"};
// t/mcp_server_elicitation.t asserts on them.

const [dir, url] = process.argv.slice(2);
const sdk = `${dir}/node_modules/@modelcontextprotocol/sdk/dist/esm`;
const { Client } = await import(`${sdk}/client/index.js`);
const { StreamableHTTPClientTransport } = await import(
    `${sdk}/client/streamableHttp.js`);
const { ElicitRequestSchema } = await import(`${sdk}/types.js`);

function out(k, v) {
    console.log(JSON.stringify({ k, v }));
}

const asked = [];
let answers = [];
let lastId = null;

async function connect(user, caps, path = '') {
    const transport = new StreamableHTTPClientTransport(new URL(url + path),
        { requestInit: { headers: { 'X-User': user } } });
    const client = new Client({ name: 't90', version: '1' },
                              { capabilities: caps });
    if (caps.elicitation) {
        client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
            asked.push(req.params);
            lastId = extra.requestId;
            const a = answers.shift() ?? { action: 'cancel' };
            if (a.wait) {
                await new Promise((r) => setTimeout(r, a.wait));
            }
            return a.reply;
        });
    }
    await client.connect(transport);
    return { client, transport };
}

async function call(k, client, name, args, replies) {
    answers = replies.slice();
    asked.length = 0;
    try {
        const r = await client.callTool({ name, arguments: args }, undefined,
                                        { timeout: 60000 });
        out(k, { result: r, asked: asked.slice() });
        return r;
    } catch (e) {
        out(k, { error: String(e?.message ?? e), asked: asked.slice() });
        return null;
    }
}

const yes = (answer) => ({ reply: { action: 'accept',
                                    content: { answer } } });

// the wire by hand: a held call, and answers right and wrong
async function raw() {
    const head = (user, sid) => ({ 'Content-Type': 'application/json',
        'Accept': 'application/json, text/event-stream', 'X-User': user,
        'MCP-Protocol-Version': '2025-11-25',
        ...(sid ? { 'Mcp-Session-Id': sid } : {}) });
    const post = (user, sid, body) => fetch(url, { method: 'POST',
        headers: head(user, sid), body: JSON.stringify(body) });
    const init = async (user) => (await post(user, null, { jsonrpc: '2.0',
        id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25',
            capabilities: { elicitation: {} },
            clientInfo: { name: 'raw', version: '1' } } }))
        .headers.get('mcp-session-id');
    const sid = await init('alice');
    const bob = await init('bob');
    const res = await post('alice', sid, { jsonrpc: '2.0', id: 7,
        method: 'tools/call', params: { name: 'approval',
                                        arguments: { message: 'go' } } });
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    const next = async () => {
        for (;;) {
            const m = buf.match(/^data: (.*)$/m);
            if (m) {
                buf = buf.slice(buf.indexOf(m[0]) + m[0].length);
                return JSON.parse(m[1]);
            }
            const { value, done } = await reader.read();
            if (done) {
                return null;
            }
            buf += dec.decode(value);
        }
    };
    const ask = await next();
    out('raw_ask', ask);
    const answer = async (k, user, s, body) => {
        const r = await post(user, s, body);
        out(k, { status: r.status, body: await r.text() });
    };
    const id = ask.id;
    const ok = { action: 'accept', content: { answer: 42 } };
    await answer('raw_unknown', 'alice', sid, { jsonrpc: '2.0',
        id: 'elicit/nope', result: ok });
    await answer('raw_action', 'alice', sid, { jsonrpc: '2.0', id,
        result: { action: 'maybe' } });
    await answer('raw_content', 'alice', sid, { jsonrpc: '2.0', id,
        result: { action: 'accept', content: { answer: { a: 1 } } } });
    await answer('raw_bob', 'bob', bob, { jsonrpc: '2.0', id, result: ok });
    await answer('raw_nosession', 'alice', null, { jsonrpc: '2.0', id,
        result: ok });
    await answer('raw_noresult', 'alice', sid, { jsonrpc: '2.0', id,
        result: 5 });
    await answer('raw_accept', 'alice', sid, { jsonrpc: '2.0', id,
        result: ok });
    out('raw_result', await next());
    out('raw_end', await next());
    await answer('raw_again', 'alice', sid, { jsonrpc: '2.0', id,
        result: ok });

    // a client that goes away while its call is held: answered later
    const ac = new AbortController();
    const gone = await fetch(url, { method: 'POST', signal: ac.signal,
        headers: head('alice', sid), body: JSON.stringify({ jsonrpc: '2.0',
            id: 8, method: 'tools/call', params: { name: 'approval',
                arguments: { message: 'go' } } }) });
    const gr = gone.body.getReader();
    let got = '';
    while (!/elicitation\/create/.test(got)) {
        const { value, done } = await gr.read();
        if (done) {
            break;
        }
        got += dec.decode(value);
    }
    const gid = JSON.parse(got.match(/^data: (.*)$/m)[1]).id;
    ac.abort();
    await new Promise((r) => setTimeout(r, 300));
    await answer('gone_answer', 'alice', sid, { jsonrpc: '2.0', id: gid,
        result: { action: 'accept', content: { answer: 'anyway' } } });
    const thread = gid.split('/')[1];
    await new Promise((r) => setTimeout(r, 500));
    const after = await post('alice', sid, { jsonrpc: '2.0', id: 9,
        method: 'tools/call', params: { name: 'approval', arguments: {
            message: 'again', thread_id: thread } } });
    const ar = after.body.getReader();
    let text = '';
    while (!/elicitation\/create|"result"/.test(text)) {
        const { value, done } = await ar.read();
        if (done) {
            break;
        }
        text += dec.decode(value);
    }
    out('gone_after', text);
    await ar.cancel();
}

try {
    const { client, transport } = await connect('alice',
                                                { elicitation: {} });
    out('session', transport.sessionId);

    // asked, accepted: the call's result is the resumed run's
    await call('accept', client, 'approval', { message: 'go' },
               [yes('yes')]);

    // two interrupts: asked twice on the same call
    await call('twice', client, 'twice', { message: 'go' },
               [yes('red'), yes('big')]);

    // declined: what the run waits for; then answered by resume
    const d = await call('decline', client, 'approval', { message: 'go' },
                         [{ reply: { action: 'decline' } }]);
    const declinedId = lastId;
    const late = await fetch(url, { method: 'POST', headers: {
        'Content-Type': 'application/json', 'X-User': 'alice',
        'Accept': 'application/json, text/event-stream',
        'Mcp-Session-Id': transport.sessionId },
        body: JSON.stringify({ jsonrpc: '2.0', id: declinedId,
            result: { action: 'accept', content: { answer: 'no' } } }) });
    out('accept_declined', { status: late.status, body: await late.text() });
    await call('after_decline', client, 'approval', {
        thread_id: d?.structuredContent?.thread_id, resume: 'later' }, []);

    // the 2025-11-25 shape of the capability: {form: {}}
    const f = await connect('alice', { elicitation: { form: {} } });
    out('form_session', f.transport.sessionId);
    await call('form', f.client, 'approval', { message: 'go' },
               [yes('sure')]);

    // url mode only: not ours, the interrupt answered as text
    const u = await connect('alice', { elicitation: { url: {} } });
    out('url_session', u.transport.sessionId);
    await call('url', u.client, 'approval', { message: 'go' }, []);

    // an answer too late (agent_mcp_server_elicitation 2s there)
    const s = await connect('alice', { elicitation: {} }, '-short');
    await call('late', s.client, 'approval', { message: 'go' },
               [{ wait: 3500, reply: { action: 'accept',
                                       content: { answer: 'late' } } }]);
    await raw();
    await client.close();
    await f.client.close();
    await u.client.close();
    await s.client.close();
} catch (e) {
    out('__died__', String(e?.stack ?? e));
}
