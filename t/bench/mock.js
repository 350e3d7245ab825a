// A fast OpenAI-compatible chat completions mock for the benchmarks.
// A request whose last message is the user's gets one execute_sql_query
// tool call (QUERY); a request after a tool result gets a TOKENS-token
// answer, TOKEN_DELAY ms apart (0: one write).  Keep-alive, chunked SSE.
// A model named benchN is served the same as any other.  It answers
// OpenAI's /v1/embeddings as t/lib/MockLLM.pm does: a bag of words, each
// word (lowercase \w+) hashed (FNV-1a) to one of the request's
// dimensions (256 without), so that texts sharing words score higher.
//
//   PORT=0 QUERY='SELECT 1' TOKENS=50 TOKEN_DELAY=0 node mock.js
//   prints "port N" when listening

'use strict';

const http = require('http');

const QUERY = process.env.QUERY || 'SELECT 1';
const TOKENS = parseInt(process.env.TOKENS || '50', 10);
const DELAY = parseInt(process.env.TOKEN_DELAY || '0', 10);
const SQL_FIRST = process.env.SQL_FIRST !== '0';
const SLOW_QUERY = process.env.SLOW_QUERY || 'SELECT 1';
// the tool the model calls, and its arguments (default: the SQL tool)
const TOOL_NAME = process.env.TOOL_NAME || 'execute_sql_query';
const TOOL_ARGS = process.env.TOOL_ARGS;

function frame(delta, finish) {
    return 'data: ' + JSON.stringify({
        id: 'chatcmpl-bench', object: 'chat.completion.chunk',
        created: 1700000000, model: 'bench',
        choices: [{ index: 0, delta: delta, finish_reason: finish || null }]
    }) + '\n\n';
}

function usage(p, c) {
    return 'data: ' + JSON.stringify({
        id: 'chatcmpl-bench', object: 'chat.completion.chunk', choices: [],
        usage: { prompt_tokens: p, completion_tokens: c,
                 total_tokens: p + c } }) + '\n\n';
}

function toolCall(query, name, args) {
    return frame({ role: 'assistant', content: null })
        + frame({ tool_calls: [{ index: 0, id: 'call_1', type: 'function',
                                 function: { name: name || 'execute_sql_query',
                                             arguments: '' } }] })
        + frame({ tool_calls: [{ index: 0, function: {
            arguments: args || JSON.stringify({ query: query }) } }] })
        + frame({}, 'tool_calls') + usage(100, 20) + 'data: [DONE]\n\n';
}

const slowAnswer = toolCall(SLOW_QUERY);

const toolAnswer = toolCall(QUERY, TOOL_NAME, TOOL_ARGS);

const tokens = [];
for (let i = 0; i < TOKENS; i++) {
    tokens.push(frame({ content: 'tok' + i + ' ' }));
}
const textHead = frame({ role: 'assistant', content: '' });
const textTail = frame({}, 'stop') + usage(120, TOKENS) + 'data: [DONE]\n\n';
const textAll = textHead + tokens.join('') + textTail;

function embedVector(text, dims) {
    const v = new Array(dims).fill(0);
    for (const w of String(text).toLowerCase().match(/\w+/g) || []) {
        let h = 2166136261;
        for (const ch of Buffer.from(w)) {
            h = Math.imul(h ^ ch, 16777619) >>> 0;
        }
        v[h % dims] += 1;
    }
    return v;
}

function embeddings(body) {
    const req = JSON.parse(body);
    const input = Array.isArray(req.input) ? req.input : [req.input];
    return JSON.stringify({ object: 'list', model: req.model,
        data: input.map((t, i) => ({ object: 'embedding', index: i,
            embedding: embedVector(t, req.dimensions || 256) })),
        usage: { prompt_tokens: 3, total_tokens: 3 } });
}

function handle(req, res) {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
        // only the last message's role and whether tools were offered
        // matter: found from the end of the body, not by parsing it all,
        // so a long conversation costs the mock nothing more
        const body = Buffer.concat(chunks).toString();

        // an OTLP collector too: the bench's traces land here
        if (req.url.startsWith('/v1/traces')) {
            res.writeHead(200, { 'Content-Type': 'application/json' });
            res.end('{}');
            return;
        }

        if (req.url.startsWith('/v1/embeddings')) {
            let out;
            try {
                out = embeddings(body);
            } catch (e) {
                res.writeHead(400, { 'Content-Type': 'application/json' });
                res.end('{"error":{"message":"bad request"}}');
                return;
            }
            res.writeHead(200, { 'Content-Type': 'application/json' });
            res.end(out);
            return;
        }

        const at = body.lastIndexOf('"role":"');
        if (at < 0) {
            res.writeHead(400, { 'Content-Type': 'application/json' });
            res.end('{"error":{"message":"bad request"}}');
            return;
        }
        const role = body.slice(at + 8, body.indexOf('"', at + 8));
        const tail = body.slice(at - 200 > 0 ? at - 200 : 0);
        const wantSlow = role === 'user'
                         && tail.includes('"content":"slowsql"');
        const wantTool = SQL_FIRST && role === 'user'
                         && body.includes('"tools":');

        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.socket.setNoDelay(true);

        if (wantSlow) {
            res.end(slowAnswer);
            return;
        }

        if (wantTool) {
            res.end(toolAnswer);
            return;
        }

        if (DELAY === 0) {
            res.end(textAll);
            return;
        }

        res.write(textHead);
        let i = 0;
        const timer = setInterval(() => {
            if (res.destroyed) {
                clearInterval(timer);
                return;
            }
            res.write(tokens[i++]);
            if (i === TOKENS) {
                clearInterval(timer);
                res.end(textTail);
            }
        }, DELAY);
        res.on('close', () => clearInterval(timer));
    });
}

// HOSTS: the loopback addresses to listen on (one address has 28,000
// ports for one client address); PROCS: that many processes (Node's
// cluster: the first hands each connection to the next), for more
// connections than one process has descriptors
const HOSTS = (process.env.HOSTS || '127.0.0.1').split(',');
const PROCS = parseInt(process.env.PROCS || '1', 10);
const cluster = require('cluster');

if (PROCS > 1 && cluster.isPrimary) {
    for (let i = 0; i < PROCS; i++) {
        cluster.fork();
    }
} else {
    for (const host of HOSTS) {
        const server = http.createServer(handle);
        server.keepAliveTimeout = 60000;
        server.maxConnections = 100000;
        // a burst of connections must not overflow the accept queue
        server.listen({ port: parseInt(process.env.PORT || '0', 10),
                        host: host, backlog: 65535 }, () => {
            console.log('port ' + server.address().port);
        });
    }
}
