// The peer: the same agent (the same tools, prompt, provider and API) in
// LangGraph.js on Node, as teams run it today.  The benchmark drives it with
// the same load generator as the nginx module.
//
//   PORT=8090 MOCK_URL=http://127.0.0.1:N/v1 DB=bench.db CKPT=peer.db \
//       MAX_ROUNDS=8 node server.mjs

import http from 'node:http';
import crypto from 'node:crypto';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { StateGraph, MessagesAnnotation, Annotation, START, END }
    from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { SystemMessage, HumanMessage } from '@langchain/core/messages';

const MAX_ROUNDS = parseInt(process.env.MAX_ROUNDS || '8', 10);
const db = new Database(process.env.DB, { readonly: true });
const store = new Database(process.env.CKPT + '.sessions');
store.exec('CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, '
           + 'title TEXT, created_at TEXT)');

const SYSTEM = 'You are a data analyst working inside a chat session. '
    + 'Answer the user\'s questions about their data with the tools you '
    + 'have: load_csv_data describes a CSV table, execute_sql_query runs '
    + 'one read-only SQLite SELECT statement.';

const executeSql = tool(async ({ query }) => {
    const stmt = db.prepare(query);
    if (!stmt.reader) {
        return JSON.stringify({ error: 'only reading is allowed' });
    }
    const rows = stmt.raw().all().slice(0, 1000);
    return JSON.stringify({ columns: stmt.columns().map((c) => c.name),
                            rows: rows, row_count: rows.length,
                            truncated: false });
}, { name: 'execute_sql_query', description: 'Run one read-only SQLite '
     + 'SELECT statement.', schema: z.object({ query: z.string() }) });

const loadCsv = tool(async () => JSON.stringify({ error: 'no CSV' }),
    { name: 'load_csv_data', description: 'Describe a CSV table.',
      schema: z.object({ table: z.string().optional() }) });

const tools = [loadCsv, executeSql];

const model = new ChatOpenAI({
    model: 'bench', apiKey: 'bench', streaming: true,
    streamUsage: true, configuration: { baseURL: process.env.MOCK_URL },
    maxRetries: 0
});

const State = Annotation.Root({
    ...MessagesAnnotation.spec,
    sessionId: Annotation({ reducer: (x, y) => y ?? x, default: () => '' }),
    csvResourcesMetadata: Annotation({ reducer: (x, y) => y ?? x,
                                       default: () => [] }),
    modelCalls: Annotation({ reducer: (x, y) => x + y, default: () => 0 }),
    callsAtStart: Annotation({ reducer: (x, y) => y ?? x,
                               default: () => 0 })
});

async function loadCsvMetadata() {
    return { csvResourcesMetadata: [] };
}

async function callModel(state) {
    const rounds = state.modelCalls - state.callsAtStart;
    const m = rounds + 1 < MAX_ROUNDS ? model.bindTools(tools) : model;
    const msg = await m.invoke([new SystemMessage(SYSTEM),
                                ...state.messages]);
    return { messages: [msg], modelCalls: 1 };
}

function shouldContinue(state) {
    const last = state.messages[state.messages.length - 1];
    return last.tool_calls && last.tool_calls.length ? 'tools' : END;
}

const graph = new StateGraph(State)
    .addNode('load_csv_metadata', loadCsvMetadata)
    .addNode('model', callModel)
    .addNode('tools', new ToolNode(tools, { handleToolErrors: true }))
    .addEdge(START, 'load_csv_metadata')
    .addEdge('load_csv_metadata', 'model')
    .addConditionalEdges('model', shouldContinue, { tools: 'tools', [END]: END })
    .addEdge('tools', 'model')
    .compile({ checkpointer: SqliteSaver.fromConnString(process.env.CKPT) });

const running = new Set();

function json(res, status, obj) {
    const b = JSON.stringify(obj);
    res.writeHead(status, { 'Content-Type': 'application/json',
                            'Content-Length': Buffer.byteLength(b) });
    res.end(b);
}

async function chat(res, sid, message) {
    if (running.has(sid)) {
        return json(res, 409, { error: 'a turn is already running' });
    }
    running.add(sid);

    res.writeHead(200, { 'Content-Type': 'text/event-stream',
                         'Cache-Control': 'no-cache',
                         'X-Accel-Buffering': 'no' });
    res.socket.setNoDelay(true);
    let id = 0;
    const send = (o) => res.write('id: ' + (++id) + '\ndata: '
                                  + JSON.stringify(o) + '\n\n');
    send({ type: 'start', session_id: sid, run_id: crypto.randomUUID() });

    const config = { configurable: { thread_id: sid }, version: 'v2' };
    let full = '';
    let calls = 0;
    try {
        const snap = await graph.getState(config);
        calls = snap.values.modelCalls || 0;
        const events = graph.streamEvents({
            messages: [new HumanMessage(message)], sessionId: sid,
            callsAtStart: calls }, config);
        for await (const ev of events) {
            if (ev.event === 'on_chat_model_stream') {
                const c = ev.data.chunk.content;
                if (typeof c === 'string' && c.length) {
                    full += c;
                    send({ type: 'chunk', content: c });
                }
            } else if (ev.event === 'on_tool_start') {
                send({ type: 'tool_start', id: ev.run_id, name: ev.name,
                       input: ev.data.input });
            } else if (ev.event === 'on_tool_end') {
                const out = ev.data.output;
                let content = out && out.content !== undefined
                              ? out.content : out;
                try {
                    content = JSON.parse(content);
                } catch (e) {
                    /* a plain string */
                }
                send({ type: 'tool_result', id: ev.run_id, name: ev.name,
                       content: content });
            }
        }
        const state = await graph.getState(config);
        send({ type: 'end', full_response: full,
               usage: { prompt_tokens: 0, completion_tokens: 0 },
               checkpoint_id: state.config.configurable.checkpoint_id });
    } catch (e) {
        send({ type: 'error', error: String(e.message || e),
               code: 'llm_error' });
    }
    running.delete(sid);
    res.end();
}

const insert = store.prepare('INSERT INTO sessions VALUES (?, ?, ?)');

http.createServer((req, res) => {
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', () => {
        let body = {};
        try {
            body = parts.length ? JSON.parse(Buffer.concat(parts)) : {};
        } catch (e) {
            return json(res, 400, { error: 'bad JSON' });
        }
        const u = req.url.split('?')[0];
        if (req.method === 'POST' && u === '/api/sessions/') {
            const s = { id: crypto.randomUUID(), title: body.title || '',
                        created_at: new Date().toISOString() };
            insert.run(s.id, s.title, s.created_at);
            return json(res, 201, { ...s, updated_at: s.created_at,
                                    message_count: 0 });
        }
        const m = /^\/api\/chat\/([^/]+)\/message$/.exec(u);
        if (req.method === 'POST' && m) {
            return chat(res, m[1], body.message);
        }
        json(res, 404, { error: 'no such endpoint' });
    });
}).listen(parseInt(process.env.PORT || '8090', 10), '127.0.0.1', () => {
    console.log('port ' + (process.env.PORT || '8090'));
});
