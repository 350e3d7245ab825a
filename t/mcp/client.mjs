// The official MCP TypeScript SDK's client (@modelcontextprotocol/sdk,
// npm) against nginx's agent_mcp_server: node client.mjs SDK_DIR URL.
// One JSON line per observation, {"k": NAME, "v": VALUE};
// t/mcp_server.t asserts on them.

const [dir, url] = process.argv.slice(2);
const { Client } = await import(
    `${dir}/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(
    `${dir}/node_modules/@modelcontextprotocol/sdk/dist/esm/client/`
    + 'streamableHttp.js');

function out(k, v) {
    console.log(JSON.stringify({ k, v }));
}

async function connect(user) {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { 'X-User': user } } });
    const client = new Client({ name: 't81', version: '1' });
    await client.connect(transport);
    return { client, transport };
}

async function call(k, client, name, args, opts = {}) {
    const progress = [];
    try {
        const r = await client.callTool({ name, arguments: args }, undefined,
            { onprogress: (p) => progress.push(p), ...opts });
        out(k, { result: r, progress });
        return r;
    } catch (e) {
        out(k, { error: String(e?.message ?? e), code: e?.code ?? null,
                 progress });
        return null;
    }
}

try {
    const { client, transport } = await connect('alice');
    out('session', transport.sessionId);
    out('version', client.getServerVersion());
    out('tools', (await client.listTools()).tools);

    // a run, then another on its thread
    const first = await call('hi', client, 'chat', { message: 'hi' });
    const tid = first?.structuredContent?.thread_id;
    await call('again', client, 'chat', { message: 'again', thread_id: tid });

    // tools inside the graph
    await call('loop', client, 'loop', { message: 'use the tool' });

    // an interrupt, answered with resume
    const ask = await call('ask', client, 'approval', { message: 'go' });
    await call('resume', client, 'approval', {
        thread_id: ask?.structuredContent?.thread_id, resume: 'yes' });

    // a channel as an argument; a wrong argument
    await call('notes', client, 'notes', { message: 'n', topic: 'cats' });
    await call('bad_arg', client, 'notes', { message: 'n', nope: 1 });

    // an unknown tool; another owner's thread
    await call('unknown', client, 'nope', { message: 'hi' });
    const bob = await connect('bob');
    await call('bob', bob.client, 'chat', { message: 'hi', thread_id: tid });

    // a client that goes away mid-run: the thread is free again
    const gone = await connect('alice');
    const slow = call('slow', gone.client, 'chat', { message: 'slow',
                                                     thread_id: tid });
    await new Promise((r) => setTimeout(r, 700));
    await gone.transport.close();
    await slow;
    await new Promise((r) => setTimeout(r, 1000));
    await call('after', client, 'chat', { message: 'after', thread_id: tid });

    // a cancel: the SDK's, an aborted call (it sends
    // notifications/cancelled), then the wire by hand, the stream kept
    const ac = new AbortController();
    const aborted = call('abort', client, 'chat', { message: 'slow',
        thread_id: tid }, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 600));
    ac.abort('enough');
    await aborted;
    const head = { 'Content-Type': 'application/json',
                   'Accept': 'application/json, text/event-stream',
                   'Mcp-Session-Id': transport.sessionId, 'X-User': 'alice',
                   'MCP-Protocol-Version': '2025-11-25' };
    const t0 = Date.now();
    const running = fetch(url, { method: 'POST', headers: head,
        body: JSON.stringify({ jsonrpc: '2.0', id: 9001,
            method: 'tools/call', params: { name: 'chat', arguments: {
                message: 'slow' } } }) })
        .then((r) => r.text());
    await new Promise((r) => setTimeout(r, 600));
    const c = await fetch(url, { method: 'POST', headers: head,
        body: JSON.stringify({ jsonrpc: '2.0',
            method: 'notifications/cancelled',
            params: { requestId: 9001, reason: 'enough' } }) });
    out('cancel_status', c.status);
    out('cancelled_stream', await running);
    out('cancelled_ms', Date.now() - t0);
    // the aborted call's thread: free once its cancel is through
    for (let i = 0; i < 50; i++) {
        let r = null;
        try {
            r = { result: await client.callTool({ name: 'chat', arguments: {
                message: 'after cancel', thread_id: tid } }) };
        } catch (e) {
            r = { error: String(e?.message ?? e) };
        }
        if (!/already running/.test(r.error ?? '') || i === 49) {
            out('after_cancel', r);
            break;
        }
        await new Promise((res) => setTimeout(res, 100));
    }
    out('tid', tid);
    await bob.client.close();
    await client.close();
} catch (e) {
    out('__died__', String(e?.stack ?? e));
}
