// The peer: the same agent (the same tools, prompt, provider and API) in
// LangGraph.js on Node, as teams run it today.  The benchmark drives it with
// the same load generator as the nginx module.
//
//   PORT=8090 MOCK_URL=http://127.0.0.1:N/v1 DB=bench.db CKPT=peer.db \
//       MAX_ROUNDS=8 node server.mjs

import http from 'node:http';
import crypto from 'node:crypto';
import Database from 'better-sqlite3';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { HumanMessage } from '@langchain/core/messages';
import { builder } from './agent.mjs';

const store = new Database(process.env.CKPT + '.sessions');
store.exec('CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, '
           + 'title TEXT, created_at TEXT)');

const graph = builder.compile({
    checkpointer: SqliteSaver.fromConnString(process.env.CKPT) });

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
