// Drives an Agent Server (LangGraph's reference, t/lg/reference.sh, or
// nginx's agent_langgraph_api) with LangGraph's JS SDK and prints a
// normalized transcript, one JSON line per observation, so that two
// servers' transcripts can be compared line by line (diff).
//
//   node t/lg/drive.mjs URL ASSISTANT MODE
//
// MODE chat: a thread; a run streamed in values, updates, messages-tuple;
// getState, getHistory (10), runs.list; a second run, values only.
// MODE approval: a thread; a run streamed in values, updates (it stops at
// the interrupt); getState, threads.get; the run resumed with
// command {resume: "yes"}; getState, threads.get.
//
// Lines: {"k": CALL, "v": VALUE}, a stream's chunks {"k": CALL, "event",
// "data"} each, a failed call {"k": CALL, "error": {"status", "message"}}
// (and the script goes on).  Ids (uuids, 32 hex digits, the values of
// run_id, thread_id, checkpoint_id, id, ... keys) become "<id>", times
// (ISO 8601, *_at keys) "<time>"; keys, event names, order, statuses
// and message contents are kept.
//
// The SDK: @langchain/langgraph-sdk in build/lgsdk (LG_SDK_DIR overrides).

import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const sdkDir = process.env.LG_SDK_DIR
    ?? path.resolve(here, '../../build/lgsdk');
const { Client } = await import(path.join(sdkDir,
    'node_modules/@langchain/langgraph-sdk/dist/index.js'));

const [url, assistant, mode] = process.argv.slice(2);
if (!url || !assistant || !mode) {
    console.error('usage: node drive.mjs URL ASSISTANT MODE(chat|approval)');
    process.exit(2);
}

const client = new Client({ apiUrl: url, defaultHeaders: {} });

// --- normalization -----------------------------------------------------

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?/g;
const HEX32 = /^[0-9a-f]{32}$/i;
const ID_KEYS = new Set(['id', 'run_id', 'thread_id', 'checkpoint_id',
    'parent_checkpoint_id', 'assistant_id', 'tool_call_id', 'checkpoint_ns',
    'langgraph_checkpoint_ns', 'parent_id', 'trace_id']);
const TIME_KEYS = /(^|_)(at|time|timestamp)$/;

function norm(v, key) {
    if (Array.isArray(v)) {
        return v.map((x) => norm(x, key));
    }
    if (v && typeof v === 'object') {
        const o = {};
        for (const [k, x] of Object.entries(v)) {
            // keys too: threads.get's interrupts are keyed by task id
            o[k.replace(UUID, '<id>')] = norm(x, k);
        }
        return o;
    }
    if (typeof v === 'string') {
        if (key && TIME_KEYS.test(key)) {
            return '<time>';
        }
        if (key && ID_KEYS.has(key)) {
            // keep the shape of composite ids: "model:<id>", "run--<id>"
            const s = v.replace(UUID, '<id>');
            return s === v && v !== '' ? '<id>' : s;
        }
        if (HEX32.test(v)) {
            return '<id>';
        }
        return v.replace(UUID, '<id>').replace(ISO, '<time>');
    }
    if (typeof v === 'number' && key && TIME_KEYS.test(key)) {
        return '<time>';
    }
    return v;
}

function line(o) {
    console.log(JSON.stringify(o));
}

function failed(k, e) {
    line({ k, error: { status: e?.status ?? null,
                       message: norm(String(e?.message ?? e)) } });
}

async function call(k, f) {
    try {
        const v = await f();
        line({ k, v: norm(v === undefined ? null : v) });
        return v;
    } catch (e) {
        failed(k, e);
        return undefined;
    }
}

async function stream(k, gen) {
    try {
        for await (const chunk of gen) {
            line({ k, event: chunk.event, data: norm(chunk.data) });
        }
    } catch (e) {
        failed(k, e);
    }
}

const human = (text) => ({ messages: [{ role: 'user', content: text }] });

// --- the modes ---------------------------------------------------------

const modes = {
    async chat() {
        const t = await call('threads.create', () => client.threads.create());
        if (!t) return;
        const id = t.thread_id;
        await stream('runs.stream', client.runs.stream(id, assistant, {
            input: human('hi'),
            streamMode: ['values', 'updates', 'messages-tuple'],
        }));
        await call('threads.getState', () => client.threads.getState(id));
        await call('threads.getHistory',
                   () => client.threads.getHistory(id, { limit: 10 }));
        await call('runs.list', () => client.runs.list(id));
        await stream('runs.stream#2', client.runs.stream(id, assistant, {
            input: human('again'), streamMode: 'values',
        }));
    },

    async approval() {
        const t = await call('threads.create', () => client.threads.create());
        if (!t) return;
        const id = t.thread_id;
        await stream('runs.stream', client.runs.stream(id, assistant, {
            input: human('go'), streamMode: ['values', 'updates'],
        }));
        await call('threads.getState', () => client.threads.getState(id));
        await call('threads.get', () => client.threads.get(id));
        await stream('runs.stream#resume', client.runs.stream(id, assistant, {
            command: { resume: 'yes' }, streamMode: ['values', 'updates'],
        }));
        await call('threads.getState#after',
                   () => client.threads.getState(id));
        await call('threads.get#after', () => client.threads.get(id));
    },
};

if (!modes[mode]) {
    console.error(`drive.mjs: no mode ${mode} (chat, approval)`);
    process.exit(2);
}
try {
    await modes[mode]();
} catch (e) {
    failed('__died__', e);
    process.exitCode = 1;
}
