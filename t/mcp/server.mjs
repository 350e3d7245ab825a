// Seed 001's MCP server for the tests, written with the official
// TypeScript SDK (@modelcontextprotocol/sdk): its five tools over
// Streamable HTTP, stateful (a session per client, SSE answers) or
// stateless (no session, JSON answers).  Each call is logged as a JSON
// line; POST /expire forgets every session, as a restarted server would.
//
//   node server.mjs PORT stateful|stateless LOGFILE

import http from 'node:http';
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const [port, mode, logfile] = process.argv.slice(2);
const stateless = mode === 'stateless';

function log(rec) {
    fs.appendFileSync(logfile, JSON.stringify(rec) + '\n');
}

const text = (v) => ({ content: [{ type: 'text', text: JSON.stringify(v) }] });

function build() {
    const s = new McpServer({ name: 'seed-001', version: '1.0.0' });

    const suggestions = (sourceType, extra) => async ({ query }, req) => {
        log({ tool: 'search_' + sourceType, args: { query },
              key: req?._meta?.idempotencyKey });
        if (query === 'fail') {
            return { isError: true,
                     content: [{ type: 'text', text: 'the index is offline' }] };
        }
        if (query === 'slow') {
            await new Promise((r) => setTimeout(r, 3000));
        }
        return text([{ title: sourceType + ' about ' + query,
                       description: 'found for ' + query,
                       url: 'https://example.test/' + sourceType,
                       sourceType, ...extra }]);
    };

    s.registerTool('search_m365', {
        description: 'Search OneDrive, SharePoint and mail',
        inputSchema: { query: z.string() },
    }, suggestions('m365', { m365Source: 'sharepoint' }));

    s.registerTool('search_docs', {
        description: 'Search the documentation',
        inputSchema: { query: z.string() },
    }, suggestions('docs', {}));

    s.registerTool('search_issues', {
        description: 'Search the issue tracker',
        inputSchema: { query: z.string() },
    }, suggestions('issues', {}));

    s.registerTool('search_posts', {
        description: 'Search earlier posts of the board',
        inputSchema: { query: z.string(), excludePostId: z.string().optional() },
    }, async ({ query, excludePostId }) => {
        log({ tool: 'search_posts', args: { query, excludePostId } });
        const posts = [
            { id: 'p1', title: 'Workers restart', likeCount: 4, commentCount: 2 },
            { id: 'p2', title: 'Upstream timeouts', likeCount: 9, commentCount: 5 },
        ];
        return text(posts.filter((p) => p.id !== excludePostId));
    });

    s.registerTool('generate_action_hint', {
        description: 'One sentence: what the author should do next',
        inputSchema: {
            postText: z.string(),
            searchResults: z.array(z.object({ title: z.string(),
                description: z.string(), sourceType: z.string() })),
        },
    }, async ({ postText, searchResults }) => {
        log({ tool: 'generate_action_hint',
              args: { postText, n: searchResults.length } });
        return { content: [{ type: 'text',
                             text: 'Read "' + (searchResults[0] || {}).title
                                   + '" first.' }] };
    });

    return s;
}

const transports = {};

async function body(req) {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const s = Buffer.concat(chunks).toString();
    return s ? JSON.parse(s) : undefined;
}

http.createServer(async (req, res) => {
    try {
        if (req.url === '/expire') {
            for (const id of Object.keys(transports)) delete transports[id];
            res.writeHead(200).end('expired');
            return;
        }

        const msg = req.method === 'POST' ? await body(req) : undefined;

        if (stateless) {
            const server = build();
            const t = new StreamableHTTPServerTransport({
                sessionIdGenerator: undefined, enableJsonResponse: true });
            res.on('close', () => { t.close(); server.close(); });
            await server.connect(t);
            await t.handleRequest(req, res, msg);
            return;
        }

        const sid = req.headers['mcp-session-id'];
        let t = sid ? transports[sid] : undefined;

        if (!t) {
            if (sid || !isInitializeRequest(msg)) {
                res.writeHead(404, { 'Content-Type': 'application/json' })
                   .end(JSON.stringify({ jsonrpc: '2.0', id: null,
                       error: { code: -32001, message: 'Session not found' } }));
                return;
            }
            t = new StreamableHTTPServerTransport({
                sessionIdGenerator: () => randomUUID(),
                onsessioninitialized: (id) => { transports[id] = t; },
            });
            await build().connect(t);
        }

        await t.handleRequest(req, res, msg);
    } catch (e) {
        log({ error: String(e) });
        if (!res.headersSent) res.writeHead(500).end(String(e));
    }
}).listen(Number(port), '127.0.0.1', () => log({ listening: Number(port) }));
