// The official openai npm client's Responses API (responses.create,
// responses.stream) against nginx's agent_responses, as any app that has
// its base URL at nginx would: node client.mjs OPENAI_DIR BASE_URL.  One
// JSON line per observation, {"k": NAME, "v": VALUE}; t/responses.t asserts.

const [dir, base] = process.argv.slice(2);
const { default: OpenAI } = await import(
    `${dir}/node_modules/openai/index.mjs`);

function out(k, v) {
    console.log(JSON.stringify({ k, v }));
}

function client(user) {
    return new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused',
                        defaultHeaders: { 'X-User': user }, maxRetries: 0 });
}

function shape(r) {
    return { id: r.id, status: r.status, model: r.model,
             output_text: r.output_text, conversation: r.conversation,
             previous_response_id: r.previous_response_id,
             output: r.output, usage: r.usage,
             incomplete_details: r.incomplete_details };
}

async function create(k, c, params) {
    try {
        const r = await c.responses.create(params);
        out(k, shape(r));
        return r;
    } catch (e) {
        out(k, { error: String(e?.message ?? e), status: e?.status ?? null,
                 code: e?.code ?? null, param: e?.param ?? null });
        return null;
    }
}

try {
    const alice = client('alice');
    const hi = await create('hi', alice, { model: 'chat', input: 'hi' });
    await create('again', alice, { model: 'chat', input: 'again',
                                   previous_response_id: hi?.id });

    // streamed, in the same conversation named as such
    const events = [];
    const s = alice.responses.stream({ model: 'chat', input: [
        { role: 'user', content: [{ type: 'input_text', text: 'streamed' }] }],
        conversation: hi?.conversation?.id });
    s.on('event', (e) => events.push({ type: e.type, delta: e.delta ?? null,
                                       seq: e.sequence_number }));
    const fin = await s.finalResponse();
    out('stream', { events, final: shape(fin) });

    // an interrupt: the response is incomplete, the next input answers it
    const ask = await create('ask', alice, { model: 'approval', input: 'go' });
    await create('answer', alice, { model: 'approval', input: 'yes',
                                    previous_response_id: ask?.id });

    // refusals
    await create('unknown', alice, { model: 'nope', input: 'hi' });
    await create('bob', client('bob'), { model: 'chat', input: 'hi',
                                         previous_response_id: hi?.id });
    await create('no_input', alice, { model: 'chat' });
    await create('tool_output', alice, { model: 'chat', input: [
        { type: 'function_call_output', call_id: 'x', output: '1' }] });

    // a stream the client leaves: the conversation is free at once
    const slow = alice.responses.stream({ model: 'chat', input: 'slow',
                                          conversation: hi?.conversation?.id });
    let left = false;
    slow.on('response.output_text.delta', () => {
        if (!left) {
            left = true;
            slow.abort();
        }
    });
    try {
        await slow.finalResponse();
    } catch (e) {
        out('aborted', String(e?.message ?? e));
    }
    await new Promise((r) => setTimeout(r, 1000));
    await create('after', alice, { model: 'chat', input: 'after',
                                   conversation: hi?.conversation?.id });
    out('conversation', hi?.conversation?.id);

    // kept responses: read, in the background, cancelled, deleted
    const call = async (k, f) => {
        try {
            const r = await f();
            out(k, r && typeof r === 'object' && 'status' in r ? shape(r)
                                                                : r ?? null);
            return r;
        } catch (e) {
            out(k, { error: String(e?.message ?? e),
                     status: e?.status ?? null });
            return null;
        }
    };
    await call('get_hi', () => alice.responses.retrieve(hi.id));
    await call('get_ask', () => alice.responses.retrieve(ask.id));
    await call('get_bob', () => client('bob').responses.retrieve(hi.id));
    const bg = await call('bg', () => alice.responses.create({
        model: 'chat', input: 'in the background', background: true }));
    let done = null;
    for (let i = 0; i < 100; i++) {
        done = await alice.responses.retrieve(bg.id);
        if (done.status !== 'in_progress' && done.status !== 'queued') {
            break;
        }
        await new Promise((r) => setTimeout(r, 50));
    }
    out('bg_done', shape(done));
    const slowbg = await call('slow_bg', () => alice.responses.create({
        model: 'chat', input: 'slow', background: true }));
    await new Promise((r) => setTimeout(r, 300));
    await call('delete_running', () => alice.responses.delete(slowbg.id));
    await call('cancel', () => alice.responses.cancel(slowbg.id));
    await new Promise((r) => setTimeout(r, 500));
    await call('cancel_get', () => alice.responses.retrieve(slowbg.id));
    await call('cancel_again', () => alice.responses.cancel(slowbg.id));
    // a background stream its client leaves: the run goes on to its end
    const bgs = alice.responses.stream({ model: 'chat', input: 'slow',
                                         background: true });
    let bgid = null;
    bgs.on('response.created', (e) => {
        bgid = e.response.id;
    });
    bgs.on('response.output_text.delta', () => bgs.abort());
    try {
        await bgs.finalResponse();
    } catch (e) {
        // aborted
    }
    let kept = null;
    for (let i = 0; i < 100 && bgid; i++) {
        kept = await alice.responses.retrieve(bgid);
        if (kept.status !== 'in_progress') {
            break;
        }
        await new Promise((r) => setTimeout(r, 100));
    }
    out('bg_stream_left', kept ? shape(kept) : null);

    await call('delete', () => alice.responses.delete(hi.id));
    await call('deleted_get', () => alice.responses.retrieve(hi.id));
} catch (e) {
    out('__died__', String(e?.stack ?? e));
}
