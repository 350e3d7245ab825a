// The load generator of the benchmarks: it runs outside nginx, speaks the
// contract's HTTP API (the nginx module and the LangGraph.js peer alike),
// reads each event stream to its last event, and prints JSON figures.
//
//   node loadgen.js MODE '{"base": "http://127.0.0.1:8080", ...}'
//
// For many streams (make bench-scale past one process's descriptors),
// several of these run at once, each with "local" (the loopback address
// its connections come from: a source address has 28,000 ports to one
// server), "models" (turns spread over models bench1 .. benchN, each a
// loopback address of the mock: nginx's side has the same limit) and
// "count" (a file its count of flowing streams is written to, four times
// a second, for the caller to sum).

'use strict';

const http = require('http');
const fs = require('fs');

const mode = process.argv[2];
const opt = JSON.parse(process.argv[3] || '{}');
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

function request(url, method, body, onData) {
    return new Promise((resolve) => {
        const u = new URL(url);
        const data = body === undefined ? null : JSON.stringify(body);
        const req = http.request({
            host: u.hostname, port: u.port, path: u.pathname + u.search,
            method: method, agent: agent, localAddress: opt.local,
            headers: data ? { 'Content-Type': 'application/json',
                              'Content-Length': Buffer.byteLength(data) }
                          : {}
        }, (res) => {
            const parts = [];
            res.on('data', (c) => {
                parts.push(c);
                if (onData) {
                    onData(c);
                }
            });
            res.on('end', () => resolve({
                status: res.statusCode, body: Buffer.concat(parts).toString()
            }));
            res.on('error', (e) => resolve({ status: 0, body: String(e) }));
        });
        req.on('error', (e) => resolve({ status: 0, body: String(e) }));
        req.setTimeout(opt.timeout || 120000, () => req.destroy());
        if (data) {
            req.write(data);
        }
        req.end();
    });
}

async function session(base) {
    const r = await request(base + '/api/sessions/', 'POST', {});
    return JSON.parse(r.body).id;
}

// the model of the next turn: the location's default, or the next of
// opt.models
let picked = 0;

function model() {
    return opt.models ? 'bench' + (1 + picked++ % opt.models) : undefined;
}

// one turn; ok when the stream's last event is "end"
async function turn(base, sid, message, onChunk) {
    const t0 = process.hrtime.bigint();
    let first = 0;
    const r = await request(base + '/api/chat/' + sid + '/message', 'POST',
                            { message: message, model: model() }, (c) => {
        if (!first) {
            first = Number(process.hrtime.bigint() - t0) / 1e6;
        }
        if (onChunk) {
            onChunk(c);
        }
    });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const ok = r.status === 200 && /"type":\s*"end"/.test(r.body);
    return { ok: ok, ms: ms, first: first, status: r.status,
             tail: ok ? '' : r.body.slice(-300) };
}

async function thread(base) {
    const r = await request(base + '/threads', 'POST', {});
    return JSON.parse(r.body).thread_id;
}

// one LangGraph run, streamed: ok when it ends with the answer in values
async function lgrun(base, tid, message, onChunk) {
    const t0 = process.hrtime.bigint();
    const r = await request(base + '/threads/' + tid + '/runs/stream',
        'POST', Object.assign({ assistant_id: 'react', input: { messages: [
                      { role: 'user', content: message }] },
                  stream_mode: ['messages-tuple', 'values'] },
                  opt.durability ? { durability: opt.durability } : {},
                  opt.models ? { config: { configurable: {
                      model: model() } } } : {}),
        onChunk);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const ok = r.status === 200 && !/event: error/.test(r.body)
               && /tok\d+ "/.test(r.body.slice(-4000));
    return { ok: ok, ms: ms, status: r.status,
             tail: ok ? '' : r.body.slice(-300) };
}

function pct(p, v) {
    const s = v.slice().sort((a, b) => a - b);
    return s.length ? s[Math.min(s.length - 1,
                                 Math.round(p / 100 * (s.length - 1)))] : 0;
}

function rss(pids) {
    let kb = 0;
    for (const pid of pids || []) {
        const m = /VmRSS:\s+(\d+)/.exec(
            fs.readFileSync('/proc/' + pid + '/status', 'utf8'));
        kb += m ? parseInt(m[1], 10) : 0;
    }
    return kb;
}

async function pool(n, c, fn) {
    let next = 0;
    const workers = [];
    for (let w = 0; w < c; w++) {
        workers.push((async () => {
            while (next < n) {
                await fn(next++);
            }
        })());
    }
    await Promise.all(workers);
}

async function streamSse(url, body) {
    // a direct provider call, read to [DONE]
    const r = await request(url, 'POST', body);
    return r.status === 200 && r.body.includes('[DONE]');
}

// n streams opened at once (run(i, onChunk) resolves {ok, status, tail});
// one flows once a chunk holds mark; RSS of opt.pids at the moment the
// most flow, less their RSS before
async function openStreams(run, mark) {
    const base = rss(opt.pids);
    let streaming = 0, errors = 0, peak = 0, most = 0, tail = '';
    const seen = new Array(opt.n).fill(false);
    // opt.ramp: at most that many opened and not flowing yet (a burst of
    // tens of thousands of connects overflows the listen queues: reset)
    let next = 0, pending = 0, done = 0, finished;
    const over = new Promise((resolve) => { finished = resolve; });
    const open = () => {
        while (next < opt.n && (!opt.ramp || pending < opt.ramp)) {
            const i = next++;
            let waits = true;
            const flows = () => {
                if (waits) {
                    waits = false;
                    pending--;
                    open();
                }
            };
            pending++;
            run(i, (c) => {
                if (!seen[i] && c.toString().includes(mark)) {
                    seen[i] = true;
                    streaming++;
                    flows();
                }
            }).then((r) => {
                if (!r.ok) {
                    errors++;
                    tail = r.status + ' ' + r.tail;
                }
                if (opt.ramp && seen[i]) {
                    // flowing no more: "at once" counts the open ones
                    streaming--;
                }
                flows();
                if (++done === opt.n) {
                    finished();
                }
            });
        }
    };
    open();
    const watch = setInterval(() => {
        if (opt.count) {
            fs.writeFileSync(opt.count, String(streaming));
        }
        if (streaming >= most && streaming > 0) {
            most = streaming;
            peak = Math.max(peak, rss(opt.pids));
        }
    }, 250);
    await over;
    clearInterval(watch);
    return { n: opt.n, errors: errors, tail: tail, all_streamed:
             seen.every((x) => x), most_streaming: most, rss_kb: peak,
             rss_idle_kb: base,
             per_stream_kb: most ? (peak - base) / most : 0 };
}

// the semantic rows' items: a fact of a few words from a small
// vocabulary, the same for the same k on every run
const WORDS = ('tea coffee cats dogs chess jazz hiking sailing opera '
    + 'tennis pottery baking cycling poetry rugby climbing painting '
    + 'gardening cinema football swimming knitting skiing running '
    + 'fishing astronomy history robots trains birds').split(' ');

function fact(k) {
    const w = (n) => WORDS[(k * n + (k >> n % 5)) % WORDS.length];
    return 'user ' + (k % 997) + ' likes ' + w(3) + ' and ' + w(11)
           + ', not ' + w(17) + '; lives in town ' + (k % 113);
}

const modes = {

    // sequential turns, a new session each
    async seq() {
        const lat = [];
        let errors = 0;
        for (let i = 0; i < opt.n; i++) {
            const sid = await session(opt.base);
            const r = await turn(opt.base, sid, 'question ' + i);
            if (r.ok) {
                lat.push(r.ms);
            } else {
                errors++;
            }
        }
        return { n: opt.n, errors: errors, p50: pct(50, lat),
                 p99: pct(99, lat) };
    },

    // n turns at concurrency c, a new session per turn (made beforehand)
    async load() {
        const sids = [];
        await pool(opt.n, 32, async (i) => {
            sids[i] = await session(opt.base);
        });
        const lat = [];
        let errors = 0, tail = '';
        const t0 = Date.now();
        await pool(opt.n, opt.c, async (i) => {
            const r = await turn(opt.base, sids[i], 'question ' + i);
            if (r.ok) {
                lat.push(r.ms);
            } else {
                errors++;
                tail = r.status + ' ' + r.tail;
            }
        });
        const secs = (Date.now() - t0) / 1000;
        return { n: opt.n, c: opt.c, errors: errors, tail: tail,
                 tps: lat.length / secs, p50: pct(50, lat),
                 p99: pct(99, lat) };
    },

    // n turns open at once on a slow provider; RSS when all are streaming
    async open() {
        const sids = [];
        await pool(opt.n, 64, async (i) => {
            sids[i] = await session(opt.base);
        });
        return openStreams((i, onChunk) => turn(opt.base, sids[i],
                                                'slow ' + i, onChunk),
                           '"chunk"');
    },

    // n turns in one session (opt.sid's, its turns counted on from
    // opt.from); the checkpoint file's size at some turns; with
    // opt.storage (a LangGraph API's base) the session's bytes in the
    // store after them, per turn (GET /threads/{id}/storage)
    async long() {
        const sid = opt.sid || await session(opt.base);
        const lat = [], sizes = {};
        let errors = 0;
        for (let i = 1; i <= opt.n; i++) {
            const r = await turn(opt.base, sid,
                                 'turn ' + (i + (opt.from || 0)));
            lat.push(r.ms);
            if (!r.ok) {
                errors++;
            }
            if ((opt.at || []).includes(i)) {
                let size = 0;
                for (const f of opt.files || []) {
                    try {
                        size += fs.statSync(f).size;
                    } catch (e) {
                        /* a WAL file may not be there */
                    }
                }
                sizes[i] = size;
            }
        }
        const med = (a) => pct(50, a);
        let storage = null;
        // a prune runs behind the last run's end: read until it settles
        for (let k = 0; opt.storage && k < 30; k++) {
            const s = await request(opt.storage + '/threads/' + sid
                                    + '/storage', 'GET');
            const j = s.status === 200 ? JSON.parse(s.body) : null;
            const was = storage;
            storage = j && { checkpoints: j.checkpoints.count,
                             per_turn: j.checkpoints.bytes / opt.n,
                             total_per_turn: j.total_bytes / opt.n };
            if (!storage || (was && was.checkpoints === storage.checkpoints)) {
                break;
            }
            await new Promise((r) => setTimeout(r, 100));
        }
        return { n: opt.n, sid: sid, errors: errors,
                 first10: med(lat.slice(0, 10)),
                 last10: med(lat.slice(-10)), sizes: sizes,
                 storage: storage };
    },

    // m streams flow while one session runs a long query
    async isolation() {
        const sids = [];
        for (let i = 0; i <= opt.m; i++) {
            sids.push(await session(opt.base));
        }
        const gaps = [];
        let errors = 0;
        const streams = [];
        for (let i = 0; i < opt.m; i++) {
            let last = 0;
            streams.push(turn(opt.base, sids[i], 'stream ' + i, (c) => {
                const now = Number(process.hrtime.bigint()) / 1e6;
                if (last && c.toString().includes('"chunk"')) {
                    gaps.push(now - last);
                }
                last = now;
            }).then((r) => { if (!r.ok) { errors++; } }));
        }
        await new Promise((r) => setTimeout(r, opt.delay || 500));
        const slow = await turn(opt.base, sids[opt.m], 'slowsql');
        await Promise.all(streams);
        return { m: opt.m, errors: errors, slow_ms: slow.ms,
                 slow_ok: slow.ok, gaps: gaps.length, p50: pct(50, gaps),
                 p99: pct(99, gaps), max: pct(100, gaps) };
    },

    // the floor: the two provider calls of a turn, then the SQL statement;
    // with opt.base, a turn through the server after each floor sample
    async floor() {
        const Database = require(opt.sqlite_module);
        const db = new Database(opt.db, { readonly: true });
        const stmt = db.prepare(opt.query);
        const user = { model: 'bench', stream: true, messages: [
            { role: 'user', content: 'question' }], tools: [
            { type: 'function', function: { name: 'execute_sql_query',
              parameters: { type: 'object' } } }] };
        const tool = { model: 'bench', stream: true, messages: [
            { role: 'user', content: 'question' },
            { role: 'tool', tool_call_id: 'call_1', content: '{}' }] };
        const http_ms = [], sql_ms = [], total = [], turns = [];
        let errors = 0;
        for (let i = 0; i < opt.n; i++) {
            if (opt.base) {
                const sid = await session(opt.base);
                const r = await turn(opt.base, sid, 'question ' + i);
                if (r.ok) {
                    turns.push(r.ms);
                } else {
                    errors++;
                }
            }
            let t0 = process.hrtime.bigint();
            await streamSse(opt.mock, user);
            await streamSse(opt.mock, tool);
            const h = Number(process.hrtime.bigint() - t0) / 1e6;
            t0 = process.hrtime.bigint();
            stmt.all();
            const s = Number(process.hrtime.bigint() - t0) / 1e6;
            http_ms.push(h);
            sql_ms.push(s);
            total.push(h + s);
        }
        return { n: opt.n, p50: pct(50, total), p99: pct(99, total),
                 http_p50: pct(50, http_ms), sql_p50: pct(50, sql_ms),
                 turn_p50: pct(50, turns), turn_p99: pct(99, turns),
                 errors: errors };
    },

    // n sequential turns, each in a new session: their median and p99;
    // opt.message: the same question each time (a cache's hits)
    async turns() {
        const ms = [];
        let errors = 0;
        for (let i = 0; i < opt.n; i++) {
            const sid = await session(opt.base);
            const r = await turn(opt.base, sid,
                                 opt.message || 'question ' + i);
            if (r.ok) {
                ms.push(r.ms);
            } else {
                errors++;
            }
        }
        return { n: opt.n, turn_p50: pct(50, ms), turn_p99: pct(99, ms),
                 errors: errors };
    },

    // an MCP server called directly: a session, then n tools/call in turn
    async mcpdirect() {
        const head = { 'Content-Type': 'application/json',
                       'Accept': 'application/json, text/event-stream' };
        const post = async (body, sid) => {
            const h = Object.assign({}, head);
            if (sid) {
                h['Mcp-Session-Id'] = sid;
                h['MCP-Protocol-Version'] = '2025-11-25';
            }
            const r = await fetch(opt.mcp, { method: 'POST', headers: h,
                                             body: JSON.stringify(body) });
            await r.text();
            return r.headers.get('mcp-session-id');
        };
        const sid = await post({ jsonrpc: '2.0', id: 1, method: 'initialize',
            params: { protocolVersion: '2025-11-25', capabilities: {},
                      clientInfo: { name: 'bench', version: '1' } } });
        await post({ jsonrpc: '2.0', method: 'notifications/initialized' },
                   sid);
        const ms = [];
        for (let i = 0; i < opt.n; i++) {
            const t0 = process.hrtime.bigint();
            await post({ jsonrpc: '2.0', id: i + 2, method: 'tools/call',
                         params: { name: 'search_docs',
                                   arguments: { query: 'bench' } } }, sid);
            ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
        }
        return { n: opt.n, p50: pct(50, ms), p99: pct(99, ms) };
    },

    // the LangGraph API (nginx's agent_langgraph_api or LangGraph's own
    // Agent Server): n runs/stream at concurrency c, a thread per run
    async lgload() {
        const tids = [];
        await pool(opt.n, 32, async (i) => {
            tids[i] = await thread(opt.base);
        });
        const lat = [];
        let errors = 0, tail = '';
        const t0 = Date.now();
        await pool(opt.n, opt.c, async (i) => {
            const r = await lgrun(opt.base, tids[i], 'question ' + i);
            if (r.ok) {
                lat.push(r.ms);
            } else {
                errors++;
                tail = r.status + ' ' + r.tail;
            }
        });
        const secs = (Date.now() - t0) / 1000;
        return { n: opt.n, c: opt.c, errors: errors, tail: tail,
                 tps: lat.length / secs, p50: pct(50, lat),
                 p99: pct(99, lat) };
    },

    // one graph through each protocol (opt.proto: chat, lg, agui, mcp,
    // a2a, responses):
    // n turns at concurrency c, a new thread each
    async protoload() {
        const lat = [];
        let errors = 0, tail = '';
        const one = async (i) => {
            const msg = 'question ' + i;
            const t0 = process.hrtime.bigint();
            let r, ok;
            if (opt.proto === 'chat') {
                const sid = await session(opt.base);
                const t = await turn(opt.base, sid, msg);
                return { ok: t.ok, ms: t.ms, tail: t.tail };
            }
            if (opt.proto === 'lg') {
                const tid = await thread(opt.base + '/lg');
                const t = await lgrun(opt.base + '/lg', tid, msg);
                return { ok: t.ok, ms: t.ms, tail: t.tail };
            }
            if (opt.proto === 'agui') {
                r = await request(opt.base + '/agui/', 'POST', {
                    threadId: 'b' + process.pid + '-' + i, runId: 'r' + i,
                    messages: [{ id: 'm' + i, role: 'user', content: msg }],
                    tools: [], context: [], state: {} });
                ok = r.status === 200 && /"RUN_FINISHED"/.test(r.body);
            } else if (opt.proto === 'responses') {
                r = await request(opt.base + '/v1/responses', 'POST', {
                    model: 'react', input: msg });
                ok = r.status === 200 && /"status":"completed"/.test(r.body);
            } else if (opt.proto === 'a2a') {
                r = await request(opt.base + '/a2a/', 'POST', {
                    jsonrpc: '2.0', id: i, method: 'SendMessage',
                    params: { message: { messageId: 'm' + i,
                        role: 'ROLE_USER', parts: [{ text: msg }] } } });
                ok = r.status === 200
                     && /"TASK_STATE_COMPLETED"/.test(r.body);
            } else {
                r = await request(opt.base + '/mcp', 'POST', {
                    jsonrpc: '2.0', id: i, method: 'tools/call',
                    params: { name: 'react', arguments: { message: msg } } });
                ok = r.status === 200 && /"isError":false/.test(r.body);
            }
            return { ok: ok, ms: Number(process.hrtime.bigint() - t0) / 1e6,
                     tail: ok ? '' : r.status + ' ' + r.body.slice(-300) };
        };
        const t0 = Date.now();
        await pool(opt.n, opt.c, async (i) => {
            const r = await one(i);
            if (r.ok) {
                lat.push(r.ms);
            } else {
                errors++;
                tail = r.tail;
            }
        });
        const secs = (Date.now() - t0) / 1000;
        return { n: opt.n, c: opt.c, errors: errors, tail: tail,
                 tps: lat.length / secs, p50: pct(50, lat),
                 p99: pct(99, lat) };
    },

    // n runs/stream open at once on a slow provider; RSS per open stream
    async lgopen() {
        const tids = [];
        await pool(opt.n, 64, async (i) => {
            tids[i] = await thread(opt.base);
        });
        return openStreams((i, onChunk) => lgrun(opt.base, tids[i],
                                                 'slow ' + i, onChunk),
                           'tok0');
    },

    // the floor: n model answers proxied at once (opt.base is a proxy
    // to the mock's chat completions); RSS per open stream
    async proxyopen() {
        const body = { model: 'bench', stream: true, messages: [
            { role: 'tool', content: '{}' }] };
        return openStreams(async (i, onChunk) => {
            const r = await request(opt.base + '/v1/chat/completions',
                                    'POST', body, onChunk);
            const ok = r.status === 200 && r.body.includes('[DONE]');
            return { ok: ok, status: r.status,
                     tail: ok ? '' : r.body.slice(-300) };
        }, 'tok0');
    },

    // semantic search: items opt.from .. opt.to - 1 put at concurrency
    // opt.c under one namespace, each embedded from its "text"
    async semfill() {
        let errors = 0, tail = '';
        const t0 = Date.now();
        await pool(opt.to - opt.from, opt.c, async (i) => {
            const k = opt.from + i;
            const r = await request(opt.base + '/store/items', 'PUT', {
                namespace: ['memories', 'bench'], key: 'm' + k,
                value: { text: fact(k) }, index: ['text'] });
            if (r.status !== 204) {
                errors++;
                tail = r.status + ' ' + r.body.slice(-300);
            }
        });
        return { n: opt.to - opt.from, errors: errors, tail: tail,
                 per_s: (opt.to - opt.from) / ((Date.now() - t0) / 1000) };
    },

    // opt.n searches by meaning one after another, limit 10: ok when
    // opt.expect items come back, each with its score
    async semsearch() {
        const lat = [];
        let errors = 0, tail = '';
        for (let i = 0; i < opt.n; i++) {
            const t0 = process.hrtime.bigint();
            const r = await request(opt.base + '/store/items/search', 'POST',
                { namespace_prefix: ['memories'], limit: 10,
                  query: 'who likes ' + WORDS[(i * 7) % WORDS.length]
                         + ' or ' + WORDS[(i * 13 + 5) % WORDS.length] });
            const ms = Number(process.hrtime.bigint() - t0) / 1e6;
            let items = null;
            try {
                items = JSON.parse(r.body).items;
            } catch (e) {
                items = null;
            }
            if (r.status === 200 && items && items.length === opt.expect
                && items.every((it) => typeof it.score === 'number'))
            {
                lat.push(ms);
            } else {
                errors++;
                tail = r.status + ' ' + r.body.slice(0, 300);
            }
        }
        return { n: opt.n, errors: errors, tail: tail, p50: pct(50, lat),
                 p99: pct(99, lat) };
    },

    // the mock's /v1/embeddings called directly, one query at a time
    async embeddirect() {
        const lat = [];
        let errors = 0;
        for (let i = 0; i < opt.n; i++) {
            const t0 = process.hrtime.bigint();
            const r = await request(opt.mock, 'POST', { model: 'embed',
                input: ['who likes ' + WORDS[i % WORDS.length]],
                encoding_format: 'float', dimensions: opt.dims });
            if (r.status === 200) {
                lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
            } else {
                errors++;
            }
        }
        return { n: opt.n, errors: errors, p50: pct(50, lat),
                 p99: pct(99, lat) };
    },

    // the mock alone: turns (two calls) per second at concurrency c
    async mockcap() {
        const user = { model: 'bench', stream: true, messages: [
            { role: 'user', content: 'q' }], tools: [{ type: 'function' }] };
        const tool = { model: 'bench', stream: true, messages: [
            { role: 'tool', content: '{}' }] };
        const t0 = Date.now();
        let errors = 0;
        await pool(opt.n, opt.c, async () => {
            if (!(await streamSse(opt.mock, user))
                || !(await streamSse(opt.mock, tool)))
            {
                errors++;
            }
        });
        return { n: opt.n, c: opt.c, errors: errors,
                 tps: opt.n / ((Date.now() - t0) / 1000) };
    }
};

modes[mode]().then((r) => {
    console.log(JSON.stringify(r));
    process.exit(0);
});
