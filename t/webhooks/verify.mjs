// Standard Webhooks' own verifier (npm "standardwebhooks") on what a test
// receiver got: node verify.mjs DIR SECRET FORMAT LOG [PATH].  FORMAT:
// "whsec" (the secret as Standard Webhooks writes it) or "raw" (its
// bytes).  Each delivery of LOG (one JSON line each: path, body, headers)
// to PATH, or to any path, verified; then the last one replayed as an
// attacker could: under a new timestamp, under another id, its body
// changed.  One JSON line per observation, {"k": NAME, "v": VALUE}.

import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const [dir, secret, format, log, path] = process.argv.slice(2);
const require = createRequire(`${dir}/`);
const { Webhook } = require('standardwebhooks');

function out(k, v) {
    console.log(JSON.stringify({ k, v }));
}

function check(wh, body, headers) {
    try {
        const payload = wh.verify(body, headers);
        return { ok: true, payload };
    } catch (e) {
        return { ok: false, error: String(e?.message ?? e) };
    }
}

try {
    const wh = format === 'raw' ? new Webhook(secret, { format: 'raw' })
                                : new Webhook(secret);
    const got = readFileSync(log, 'utf8').split('\n').filter((l) => l)
        .map((l) => JSON.parse(l))
        .filter((d) => path === undefined || d.path === path);

    out('verified', got.map((d) => check(wh, d.body, d.headers)));

    const last = got[got.length - 1];
    const h = last.headers;
    out('new_timestamp', check(wh, last.body, { ...h,
        'webhook-timestamp': String(Number(h['webhook-timestamp']) + 1) }));
    out('other_id', check(wh, last.body, { ...h,
        'webhook-id': h['webhook-id'] + 'x' }));
    out('other_body', check(wh, last.body + ' ', h));
} catch (e) {
    out('__died__', String(e?.stack ?? e));
}
