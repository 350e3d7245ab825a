// OTLP/HTTP JSON checked against OpenTelemetry's own encoder
// (@opentelemetry/otlp-transformer from npm): a span it encodes is the
// reference shape; every request body nginx sent (one per line of FILE,
// {"body": "..."}) must use only its fields, with the same JSON types,
// ids in its hex lengths and times as its decimal strings.
//   node shape.mjs TRANSFORMER_DIR FILE  ->  {"requests", "spans", "problems"}

import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const [dir, file] = process.argv.slice(2);
const require = createRequire(`${dir}/`);
const { JsonTraceSerializer } = require(
    `${dir}/node_modules/@opentelemetry/otlp-transformer`);

const ref = JSON.parse(new TextDecoder().decode(
    JsonTraceSerializer.serializeRequest([{
        name: 'chat m', kind: 2, status: { code: 1 },
        spanContext: () => ({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
                              spanId: '00f067aa0ba902b7', traceFlags: 1 }),
        parentSpanContext: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
                             spanId: '00f067aa0ba902b8', traceFlags: 1 },
        startTime: [1700000000, 5], endTime: [1700000001, 7],
        attributes: { s: 'x', d: 0.5 }, links: [], events: [],
        duration: [1, 2], ended: true,
        resource: { attributes: { 'service.name': 'x' },
                    asyncAttributesPending: false },
        instrumentationScope: { name: 'x' },
        droppedAttributesCount: 0, droppedEventsCount: 0,
        droppedLinksCount: 0 }])));

const problems = [];
const type = (v) => (Array.isArray(v) ? 'array' : v === null ? 'null'
                                                            : typeof v);

// ours must be the reference's shape: its fields, their JSON types
function like(ours, theirs, path) {
    if (type(theirs) === 'array') {
        if (type(ours) !== 'array') {
            problems.push(`${path}: ${type(ours)}, not an array`);
            return;
        }
        ours.forEach((o, i) => like(o, theirs[0], `${path}[${i}]`));
        return;
    }
    if (type(theirs) !== 'object') {
        if (type(ours) !== type(theirs)) {
            problems.push(`${path}: ${type(ours)}, not ${type(theirs)}`);
        }
        return;
    }
    for (const k of Object.keys(ours)) {
        if (path.endsWith('.value')) {
            continue;     /* one of stringValue, intValue, ... below */
        }
        if (!(k in theirs)) {
            problems.push(`${path}.${k}: not a field of OTLP's encoding`);
            continue;
        }
        like(ours[k], theirs[k], `${path}.${k}`);
    }
}

let requests = 0, spans = 0;
const rs = ref.resourceSpans[0];
const refSpan = rs.scopeSpans[0].spans[0];

for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) {
        continue;
    }
    const body = JSON.parse(JSON.parse(line).body);
    requests++;
    like(body, ref, 'request');
    for (const r of body.resourceSpans) {
        for (const ss of r.scopeSpans) {
            for (const s of ss.spans) {
                spans++;
                if (!/^[0-9a-f]{32}$/.test(s.traceId)) {
                    problems.push(`traceId ${s.traceId}`);
                }
                for (const k of ['spanId', 'parentSpanId']) {
                    if (k in s && !/^[0-9a-f]{16}$/.test(s[k])) {
                        problems.push(`${k} ${s[k]}`);
                    }
                }
                for (const k of ['startTimeUnixNano', 'endTimeUnixNano']) {
                    if (!/^[0-9]{19}$/.test(s[k])) {
                        problems.push(`${k} ${s[k]}`);
                    }
                }
                if (!Number.isInteger(s.kind) || s.kind < 1 || s.kind > 5) {
                    problems.push(`kind ${s.kind}`);
                }
                for (const a of s.attributes) {
                    const [vk] = Object.keys(a.value);
                    if (!['stringValue', 'intValue', 'doubleValue',
                          'boolValue'].includes(vk)) {
                        problems.push(`attribute ${a.key}: ${vk}`);
                    }
                }
                for (const k of Object.keys(refSpan)) {
                    if (['traceId', 'spanId', 'name', 'kind',
                         'startTimeUnixNano', 'endTimeUnixNano',
                         'attributes', 'status'].includes(k) && !(k in s)) {
                        problems.push(`a span without ${k}`);
                    }
                }
            }
        }
    }
}

console.log(JSON.stringify({ requests, spans, problems }));
