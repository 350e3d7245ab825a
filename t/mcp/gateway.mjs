// The official MCP TypeScript SDK's client against an agent_mcp_server
// location that serves agent_tool locations too (agent_mcp_server_tools):
// node gateway.mjs SDK_DIR URL.  One JSON line per observation, {"k":
// NAME, "v": VALUE}; t/mcp_server_tools.t asserts on them.

const [dir, url] = process.argv.slice(2);
const { Client } = await import(
    `${dir}/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(
    `${dir}/node_modules/@modelcontextprotocol/sdk/dist/esm/client/`
    + 'streamableHttp.js');

function out(k, v) {
    console.log(JSON.stringify({ k, v }));
}

async function call(k, client, name, args) {
    try {
        out(k, { result: await client.callTool({ name, arguments: args }) });
    } catch (e) {
        out(k, { error: String(e?.message ?? e), code: e?.code ?? null });
    }
}

try {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { 'X-User': 'alice' } } });
    const client = new Client({ name: 't88', version: '1' });
    await client.connect(transport);

    out('tools', (await client.listTools()).tools);
    await call('weather', client, 'weather', { city: 'Oslo', days: 2 });
    await call('text', client, 'plain', {});
    await call('broken', client, 'broken', { x: 1 });
    await call('graph', client, 'chat', { message: 'hi' });
    await call('unknown', client, 'nope', {});
    await client.close();
} catch (e) {
    out('__died__', String(e?.stack ?? e));
}
