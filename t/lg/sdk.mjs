// LangGraph's own JS SDK (@langchain/langgraph-sdk from npm) against an
// Agent Server: nginx's agent_langgraph_api, or the reference server.
// node sdk.mjs SDK_DIR URL SCENARIO [ARG...]: one JSON line per
// observation, {"k": NAME, "v": VALUE}; an SDK call that fails prints
// {"k": NAME, "error": {"status", "message"}}.  t/lg_api.t asserts on them.

const [sdkDir, url, scenario, ...args] = process.argv.slice(2);
const { Client } = await import(
    `${sdkDir}/node_modules/@langchain/langgraph-sdk/dist/index.js`);

// headers for every request (an owner's): AGENT_SDK_HEADERS, a JSON object
const client = new Client({
    apiUrl: url,
    defaultHeaders: JSON.parse(process.env.AGENT_SDK_HEADERS || '{}'),
});

function out(k, v) {
    console.log(JSON.stringify({ k, v }));
}

async function call(k, f) {
    try {
        const v = await f();
        out(k, v === undefined ? null : v);
        return v;
    } catch (e) {
        console.log(JSON.stringify({
            k, error: { status: e.status ?? null, message: String(e.message) }
        }));
        return undefined;
    }
}

async function events(k, gen) {
    const ev = [];
    try {
        for await (const p of gen) {
            ev.push({ event: p.event, data: p.data, id: p.id ?? null });
        }
    } catch (e) {
        ev.push({ event: '__error__', status: e.status ?? null,
                  data: String(e.message) });
    }
    out(k, ev);
    return ev;
}

const human = (text) => ({ messages: [{ role: 'user', content: text }] });

const scenarios = {

    async basics() {
        await call('ok', async () => (await fetch(`${url}/ok`)).json());
        await call('info', async () => (await fetch(`${url}/info`)).json());
        await call('search', () => client.assistants.search({ graphId: 'chat' }));
        await call('assistant', () => client.assistants.get('chat'));
        const t = await call('thread',
            () => client.threads.create({ metadata: { user: 'u1' } }));
        await events('stream', client.runs.stream(t.thread_id, 'chat', {
            input: human('hi'),
            streamMode: ['values', 'updates', 'messages-tuple'],
        }));
        await call('state', () => client.threads.getState(t.thread_id));
        await call('history',
            () => client.threads.getHistory(t.thread_id, { limit: 10 }));
        const runs = await call('runs', () => client.runs.list(t.thread_id));
        await call('run', () => client.runs.get(t.thread_id, runs[0].run_id));
        await call('wait', () => client.runs.wait(t.thread_id, 'chat',
                                                  { input: human('again') }));
        await call('got', () => client.threads.get(t.thread_id));
        await events('modes', client.runs.stream(t.thread_id, 'chat', {
            input: human('third'), streamMode: ['events', 'debug'],
        }));
        await call('stateless', () => client.runs.wait(null, 'chat',
                                                       { input: human('x') }));
        await events('stateless_stream', client.runs.stream(null, 'chat', {
            input: human('y'), streamMode: 'updates',
        }));
        await call('threads', () => client.threads.search({ limit: 100 }));
        await call('unknown', () => client.threads.get(
            '00000000-0000-4000-8000-000000000000'));
        await call('bad_assistant', () => client.runs.wait(t.thread_id,
                                                           'nope', {}));
        await call('delete', () => client.threads.delete(t.thread_id));
        await call('deleted', () => client.threads.get(t.thread_id));
    },

    async approval() {
        for (const answer of ['yes', 'no']) {
            const t = await client.threads.create();
            await events(`ask_${answer}`, client.runs.stream(t.thread_id,
                'approval', { input: human('go'),
                              streamMode: ['values', 'updates'] }));
            await call(`waiting_${answer}`,
                       () => client.threads.getState(t.thread_id));
            await call(`status_${answer}`,
                       () => client.threads.get(t.thread_id));
            await events(`resume_${answer}`, client.runs.stream(t.thread_id,
                'approval', { command: { resume: answer },
                              streamMode: ['values', 'updates'] }));
            await call(`after_${answer}`,
                       () => client.threads.getState(t.thread_id));
            await call(`idle_${answer}`,
                       () => client.threads.get(t.thread_id));
        }

        // interrupt_before in the run request, continued with no input
        const t = await client.threads.create();
        await call('before', () => client.runs.wait(t.thread_id, 'chat', {
            input: human('wait first'), interruptBefore: ['model'] }));
        await call('before_state', () => client.threads.getState(t.thread_id));
        await call('continued', () => client.runs.wait(t.thread_id, 'chat',
                                                       { input: null }));
        // a command to a thread that waits for nothing
        await call('nothing', () => client.runs.wait(t.thread_id, 'chat',
                                               { command: { resume: 1 } }));
    },

    async tools() {
        // a tools node with approve=on: approved, edited, rejected; ours,
        // then LangChain's decisions as Agent Chat UI sends them
        const answers = {
            approve: 'approve',
            edit: { action: 'edit',
                    args: { query: 'SELECT 2 AS two' } },
            reject: { action: 'reject', reason: 'not today' },
            d_approve: { decisions: [ { type: 'approve' } ] },
            d_edit: { decisions: [ { type: 'edit', edited_action: {
                name: 'execute_sql_query',
                args: { query: 'SELECT 3 AS three' } } } ] },
            d_reject: { decisions: [ { type: 'reject',
                                       message: 'not now' } ] },
            d_respond: { decisions: [ { type: 'respond',
                                        message: 'I did it by hand' } ] },
            d_wrong: { decisions: [] },
        };
        for (const [name, resume] of Object.entries(answers)) {
            const t = await client.threads.create();
            await call(`${name}_ask`, () => client.runs.wait(t.thread_id,
                'guarded', { input: human('run it') }));
            await call(`${name}_state`,
                       () => client.threads.getState(t.thread_id));
            await events(`${name}_resume`, client.runs.stream(t.thread_id,
                'guarded', { command: { resume },
                             streamMode: ['updates', 'messages-tuple'] }));
        }
    },

    async cancel() {
        // a cancel mid-token: the stream ends, the model call is cut
        const t = await client.threads.create();
        let runId;
        const ev = [];
        for await (const p of client.runs.stream(t.thread_id, 'chat', {
            input: human('slow'), streamMode: ['messages-tuple'],
        })) {
            ev.push(p.event);
            if (p.event === 'metadata') {
                runId = p.data.run_id;
            }
            if (p.event === 'messages' && ev.filter(
                    (e) => e === 'messages').length === 2) {
                await call('cancel', () => client.runs.cancel(
                    t.thread_id, runId, true));
            }
        }
        out('cancelled_events', ev);
        await call('cancelled_run', () => client.runs.get(t.thread_id, runId));
        await call('cancelled_thread', () => client.threads.get(t.thread_id));

        // a double run: the second is refused while the first runs
        const first = client.runs.stream(t.thread_id, 'chat', {
            input: human('slow again'), streamMode: ['updates'] });
        const it = first[Symbol.asyncIterator]();
        const meta = await it.next();
        out('first_meta', meta.value.event);
        await call('double', () => client.runs.wait(t.thread_id, 'chat',
                                                    { input: human('no') }));
        const rest = [];
        for (let r = await it.next(); !r.done; r = await it.next()) {
            rest.push(r.value.event);
        }
        out('first_rest', rest);
    },

    async multitask() {
        // a second run while one runs: interrupt, rollback, enqueue
        for (const strategy of ['interrupt', 'rollback', 'enqueue']) {
            const t = await client.threads.create();
            const first = client.runs.stream(t.thread_id, 'chat', {
                input: human(`slow ${strategy}`), streamMode: ['updates'] });
            const it = first[Symbol.asyncIterator]();
            const meta = (await it.next()).value;
            const second = client.runs.wait(t.thread_id, 'chat', {
                input: human(`after ${strategy}`),
                multitaskStrategy: strategy });
            const rest = [];
            for (let r = await it.next(); !r.done; r = await it.next()) {
                rest.push(r.value.event);
            }
            out(`${strategy}_first_rest`, rest);
            await call(`${strategy}_second`, () => second);
            await call(`${strategy}_first_run`,
                       () => client.runs.get(t.thread_id, meta.data.run_id));
            await call(`${strategy}_state`,
                       () => client.threads.getState(t.thread_id));
        }

        // a background run, joined
        const t = await client.threads.create();
        const run = await call('created', () => client.runs.create(
            t.thread_id, 'chat', { input: human('in the background') }));
        await call('joined', () => client.runs.join(t.thread_id,
                                                    run.run_id));
        await call('created_run', () => client.runs.get(t.thread_id,
                                                        run.run_id));
    },

    // the same calls against nginx and the reference server (t/lg_oracle.t)
    async oracle() {
        const t = await call('thread', () => client.threads.create());
        await events('stream', client.runs.stream(t.thread_id, 'chat', {
            input: human('hi'),
            streamMode: ['values', 'updates', 'messages-tuple'] }));
        await call('state', () => client.threads.getState(t.thread_id));
        await call('history',
                   () => client.threads.getHistory(t.thread_id, { limit: 10 }));
        await call('runs', () => client.runs.list(t.thread_id));
        await call('thread_after', () => client.threads.get(t.thread_id));
        await call('wait', () => client.runs.wait(t.thread_id, 'chat',
                                                  { input: human('again') }));
        const a = await client.threads.create();
        await events('ask', client.runs.stream(a.thread_id, 'approval', {
            input: human('go'), streamMode: ['values', 'updates'] }));
        await call('waiting', () => client.threads.getState(a.thread_id));
        await call('status', () => client.threads.get(a.thread_id));
        await events('resume', client.runs.stream(a.thread_id, 'approval', {
            command: { resume: 'yes' }, streamMode: ['values', 'updates'] }));
        await call('after', () => client.threads.getState(a.thread_id));
        await call('idle', () => client.threads.get(a.thread_id));
        const w = await client.threads.create();
        await call('ask_wait', () => client.runs.wait(w.thread_id,
            'approval', { input: human('go') }));
        await call('resume_wait', () => client.runs.wait(w.thread_id,
            'approval', { command: { resume: 'no' } }));
        const ib = await client.threads.create();
        await call('before_wait', () => client.runs.wait(ib.thread_id, 'chat',
            { input: human('wait first'), interruptBefore: ['model'] }));
        await call('before_state', () => client.threads.getState(ib.thread_id));
        await call('before_thread', () => client.threads.get(ib.thread_id));
        await call('no_thread', () => client.threads.get(
            '00000000-0000-4000-8000-000000000000'));
        await call('no_assistant', () => client.runs.wait(t.thread_id,
                                                         'nope', {}));
        await call('search', () => client.assistants.search(
            { graphId: 'chat' }));
    },

    async fork() {
        // time travel: a run from an earlier checkpoint; the old branch kept
        const t = await client.threads.create();
        await client.runs.wait(t.thread_id, 'chat', { input: human('one') });
        await client.runs.wait(t.thread_id, 'chat', { input: human('two') });
        const history = await client.threads.getHistory(t.thread_id,
                                                        { limit: 20 });
        const first = history.find((s) => s.next.length === 0
            && s.values.messages.length === 2);
        out('first', first.checkpoint.checkpoint_id);
        out('old_head', history[0].checkpoint.checkpoint_id);
        await call('forked', () => client.runs.wait(t.thread_id, 'chat', {
            input: human('three'),
            checkpointId: first.checkpoint.checkpoint_id }));
        await call('after_fork', () => client.threads.getState(t.thread_id));
        await call('history_after', () => client.threads.getHistory(
            t.thread_id, { limit: 50 }));
        await call('old_branch', () => client.threads.getState(t.thread_id,
            history[0].checkpoint.checkpoint_id));
        await call('again', () => client.runs.wait(t.thread_id, 'chat', {
            input: human('four') }));
        await call('bad_fork', () => client.runs.wait(t.thread_id, 'chat', {
            input: human('x'),
            checkpointId: '00000000-0000-4000-8000-000000000000' }));
    },

    async chatui() {
        // Agent Chat UI's calls (useStream's submit as it makes them):
        // regenerate, edit of the first message, "mark as resolved", a
        // tool message it adds while an interrupt waits, an image
        const firstSeen = (history, id) => [...history].reverse().find(
            (s) => s.values.messages?.some((m) => m.id === id));
        const t = await client.threads.create();
        await client.runs.wait(t.thread_id, 'chat', { input: human('one') });
        let history = await client.threads.getHistory(t.thread_id,
                                                      { limit: 20 });
        const [q, a] = history[0].values.messages;
        await events('regenerate', client.runs.stream(t.thread_id, 'chat', {
            checkpoint: firstSeen(history, a.id).parent_checkpoint,
            streamMode: ['values'] }));
        await call('regenerated', () => client.threads.getState(t.thread_id));
        await call('regenerated_history',
                   () => client.threads.getHistory(t.thread_id,
                                                   { limit: 20 }));
        history = await client.threads.getHistory(t.thread_id, { limit: 20 });
        await events('edit', client.runs.stream(t.thread_id, 'chat', {
            input: { messages: [{ type: 'human', content: 'uno' }] },
            checkpoint: firstSeen(history, q.id).parent_checkpoint,
            streamMode: ['values'] }));
        await call('edited', () => client.threads.getState(t.thread_id));

        const w = await client.threads.create();
        await client.runs.wait(w.thread_id, 'approval', {
            input: human('go') });
        await events('resolve', client.runs.stream(w.thread_id, 'approval', {
            input: {}, command: { goto: '__end__' },
            streamMode: ['values'] }));
        await call('resolved', () => client.threads.getState(w.thread_id));
        await call('resolved_thread', () => client.threads.get(w.thread_id));

        const g = await client.threads.create();
        const asked = await client.runs.wait(g.thread_id, 'guarded', {
            input: human('run it') });
        const st = await client.threads.getState(g.thread_id);
        const calls = st.values.messages.at(-1).tool_calls ?? [];
        out('open_calls', calls.map((c) => c.id));
        await events('while_waiting', client.runs.stream(g.thread_id,
            'guarded', { input: { messages: [
                ...calls.map((c) => ({ type: 'tool', tool_call_id: c.id,
                    id: `do-not-render-${c.id}`, name: c.name,
                    content: 'Successfully handled tool call.' })),
                { type: 'human', content: 'never mind' }] },
            streamMode: ['values'] }));
        await call('after_waiting', () => client.threads.getState(
            g.thread_id));
        await call('after_waiting_thread', () => client.threads.get(
            g.thread_id));

        const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQV'
                    + 'R42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
        const i = await client.threads.create();
        await events('image', client.runs.stream(i.thread_id, 'chat', {
            input: { messages: [{ type: 'human', content: [
                { type: 'text', text: 'what is this?' },
                { type: 'image', source_type: 'base64',
                  mime_type: 'image/png', data: png,
                  metadata: { name: 'dot.png' } }] }] },
            streamMode: ['values'] }));
        await call('imaged', () => client.threads.getState(i.thread_id));

        // a PDF, as Agent Chat UI's multimodal upload attaches it
        const f = await client.threads.create();
        await events('pdf', client.runs.stream(f.thread_id, 'chat', {
            input: { messages: [{ type: 'human', content: [
                { type: 'text', text: 'read this' },
                { type: 'file', source_type: 'base64',
                  mime_type: 'application/pdf', data: 'JVBERi0xLjQKJcfsj6IK',
                  metadata: { filename: 'a.pdf' } }] }] },
            streamMode: ['values'] }));
        await call('pdfed', () => client.threads.getState(f.thread_id));
    },

    async crons(assistant, threadId) {
        // client.crons: made for a thread and stateless, searched,
        // counted, updated, deleted; the errors as the SDK sees them
        const tick = (text) => ({ messages: [{ role: 'user', content: text }] });
        const mine = await call('create_thread',
            () => client.crons.createForThread(threadId, assistant, {
                schedule: '* * * * *', input: tick('tick-thread'),
                metadata: { job: 'thread' } }));
        await call('create_keep', () => client.crons.create(assistant, {
            schedule: '*/1 * * * *', input: tick('tick-keep'),
            onRunCompleted: 'keep', metadata: { job: 'keep' } }));
        await call('create_delete', () => client.crons.create(assistant, {
            schedule: '* * * * *', timezone: 'Asia/Kolkata',
            input: tick('tick-delete'), metadata: { job: 'delete' } }));
        const off = await call('create_off', () => client.crons.create(
            assistant, { schedule: '* * * * *', input: tick('tick-off'),
                         metadata: { job: 'off' } }));
        await call('create_ended', () => client.crons.create(assistant, {
            schedule: '* * * * *', input: tick('tick-ended'),
            endTime: '2020-01-01T00:00:00Z', metadata: { job: 'ended' } }));
        const gone = await call('create_gone', () => client.crons.create(
            assistant, { schedule: '* * * * *', input: tick('tick-gone') }));
        await call('disabled', () => client.crons.update(off.cron_id,
                                                         { enabled: false }));
        await call('updated', () => client.crons.update(mine.cron_id, {
            schedule: '* * * * *', timezone: 'Europe/Paris',
            metadata: { more: 1 } }));
        await call('delete', () => client.crons.delete(gone.cron_id));
        await call('delete_again', () => client.crons.delete(gone.cron_id));
        await call('search', () => client.crons.search({ limit: 100 }));
        await call('search_thread',
                   () => client.crons.search({ threadId }));
        await call('search_meta',
                   () => client.crons.search({ metadata: { job: 'keep' } }));
        await call('search_enabled',
                   () => client.crons.search({ enabled: false }));
        await call('search_sorted', () => client.crons.search({
            sortBy: 'cron_id', sortOrder: 'asc', limit: 2, offset: 1,
            select: ['cron_id', 'schedule'] }));
        await call('count', () => client.crons.count());
        await call('count_thread', () => client.crons.count({ threadId }));
        await call('bad_schedule', () => client.crons.create(assistant, {
            schedule: '61 * * * *' }));
        await call('bad_zone', () => client.crons.create(assistant, {
            schedule: '* * * * *', timezone: 'Mars/Olympus' }));
        await call('no_assistant', () => client.crons.create('nope', {
            schedule: '* * * * *' }));
        await call('no_thread', () => client.crons.createForThread(
            '00000000-0000-4000-8000-000000000000', assistant,
            { schedule: '* * * * *' }));
        await call('update_unknown', () => client.crons.update(
            '00000000-0000-4000-8000-000000000000', { enabled: false }));
    },

    async update() {
        // the state at an earlier checkpoint; an update as a node
        const t = await client.threads.create();
        await client.runs.wait(t.thread_id, 'chat', { input: human('one') });
        await client.runs.wait(t.thread_id, 'chat', { input: human('two') });
        const history = await call('history',
            () => client.threads.getHistory(t.thread_id, { limit: 20 }));
        const first = history.find((s) => s.next.length === 0
            && s.values.messages.length === 2);
        await call('at', () => client.threads.getState(t.thread_id,
            first.checkpoint.checkpoint_id));
        await call('update', () => client.threads.updateState(t.thread_id, {
            values: { note: 'set by hand' }, asNode: 'model' }));
        await call('updated', () => client.threads.getState(t.thread_id));
        await call('bad_update', () => client.threads.updateState(
            t.thread_id, { values: { nope: 1 } }));
    },

    async semantic() {
        // the store searched by meaning (agent_embeddings,
        // t/store_semantic_search.t)
        const ns = ['mem', 'sdk'];
        await call('put1', () => client.store.putItem(ns, 'pet',
            { text: 'my cat sleeps on the warm mat' }));
        await call('put2', () => client.store.putItem(ns, 'car',
            { text: 'the red car needs new tyres' }));
        await call('put3', () => client.store.putItem(ns, 'hidden',
            { text: 'cat mat cat mat' }, { index: false }));
        await call('put4', () => client.store.putItem(ns, 'own',
            { text: 'x', about: 'a cat on a mat' }, { index: ['about'] }));
        await call('search', () => client.store.searchItems(['mem'],
            { query: 'a cat sleeping on a mat', limit: 5 }));
    },
};

try {
    await scenarios[scenario](...args);
} catch (e) {
    // what failed, for the test's diagnostics
    out('__died__', { status: e.status ?? null, message: String(e.message),
                      stack: String(e.stack) });
}
