// A tiny OpenAI-compatible chat-completions mock for the reference server
// (t/lg/reference.sh): every POST .../chat/completions is answered with
// "Hello from the mock", streamed in 4 chunks plus a usage chunk when the
// request has stream=true (a plain completion otherwise).  Each completion
// has an id of its own (chatcmpl-mock-N).  Loopback only.
//
// node t/lg/mock.mjs [PORT] [LOGFILE]: prints "PORT" on its first line of
// stdout once it listens (PORT 0 or none: a free one); LOGFILE, if given,
// gets one JSON line per request body.

import http from 'node:http';
import fs from 'node:fs';

const [portArg = '0', logFile] = process.argv.slice(2);
const parts = ['Hello', ' from', ' the', ' mock'];
let n = 0;

const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
        let r = {};
        try { r = JSON.parse(body || '{}'); } catch { /* not JSON */ }
        if (logFile) {
            fs.appendFileSync(logFile, JSON.stringify({
                method: req.method, url: req.url, body: r }) + '\n');
        }
        if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
            res.writeHead(404, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ error: { message: 'not found',
                                              type: 'invalid_request_error' } }));
            return;
        }
        const id = `chatcmpl-mock-${++n}`;
        const created = Math.floor(Date.now() / 1000);
        const model = r.model ?? 'mock-model';
        const usage = { prompt_tokens: 5, completion_tokens: 4,
                        total_tokens: 9 };
        if (!r.stream) {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({
                id, object: 'chat.completion', created, model,
                choices: [{ index: 0, finish_reason: 'stop',
                            message: { role: 'assistant',
                                       content: parts.join('') } }],
                usage }));
            return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream',
                             'cache-control': 'no-cache' });
        const chunk = (choices, extra = {}) => res.write('data: '
            + JSON.stringify({ id, object: 'chat.completion.chunk', created,
                               model, choices, ...extra }) + '\n\n');
        chunk([{ index: 0, delta: { role: 'assistant', content: '' },
                 finish_reason: null }]);
        for (const p of parts) {
            chunk([{ index: 0, delta: { content: p }, finish_reason: null }]);
        }
        chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]);
        if (r.stream_options?.include_usage) {
            chunk([], { usage });
        }
        res.end('data: [DONE]\n\n');
    });
});

server.listen(Number(portArg), '127.0.0.1', () => {
    console.log(String(server.address().port));
});
process.on('SIGTERM', () => process.exit(0));
