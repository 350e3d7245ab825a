// AG-UI's own client (@ag-ui/client's HttpAgent, from npm) against
// nginx's agent_agui: node agui.mjs AGUI_DIR BASE_URL.  One JSON line per
// observation, {"k": NAME, "v": VALUE}; t/agui.t asserts on them.

import { randomUUID } from 'node:crypto';

const [dir, base] = process.argv.slice(2);
const { HttpAgent } = await import(
    `${dir}/node_modules/@ag-ui/client/dist/index.mjs`);

function out(k, v) {
    console.log(JSON.stringify({ k, v }));
}

function agent(path, threadId, headers = {}) {
    return new HttpAgent({ url: `${base}${path}`, threadId: threadId
                           ?? randomUUID(), headers });
}

function say(a, text) {
    a.addMessage({ id: randomUUID(), role: 'user', content: text });
}

// a run: the events it gave (type and the fields tests read), the agent's
// messages and state after it, or the error it ended with
async function run(k, a, params = {}, onEvent) {
    const events = [];
    let error = null;
    try {
        await a.runAgent(params, {
            onEvent: ({ event }) => {
                events.push(event);
                if (onEvent) {
                    onEvent(event, a);
                }
            },
        });
    } catch (e) {
        error = String(e?.message ?? e);
    }
    out(k, {
        error, events, threadId: a.threadId, state: a.state,
        pending: a.pendingInterrupts,
        messages: a.messages.map((m) => ({
            id: m.id, role: m.role, content: m.content ?? null,
            toolCalls: (m.toolCalls ?? []).map((c) => [c.function.name,
                                                       c.function.arguments]),
            toolCallId: m.toolCallId ?? null,
        })),
    });
}

try {
    // text, then a second run on the same thread
    const chat = agent('/agui/');
    say(chat, 'hi');
    await run('text', chat);
    say(chat, 'again');
    await run('again', chat);
    out('thread', chat.threadId);

    // tool calls on the model's message, their result, the answer
    const tools = agent('/agui/loop');
    say(tools, 'use the tool');
    await run('tools', tools);

    // state: the client's written to a value channel, the graph's shown
    const st = agent('/agui/notes');
    st.setState({ topic: 'cats', count: 41, ignored: 1 });
    say(st, 'note it');
    await run('state', st);

    // an interrupt, answered through resume
    const ask = agent('/agui/approval');
    say(ask, 'delete them');
    await run('ask', ask);
    const id = ask.pendingInterrupts[0]?.id;
    await run('resume', ask, { resume: [ { interruptId: id,
                                           status: 'resolved',
                                           payload: 'yes' } ] });

    // an abort mid-stream: the server's turn ends, the thread is free
    const slow = agent('/agui/');
    say(slow, 'slow');
    let aborted = false;
    await run('abort', slow, {}, (event, a) => {
        if (event.type === 'TEXT_MESSAGE_CONTENT' && !aborted) {
            aborted = true;
            a.abortRun();
        }
    });
    await new Promise((r) => setTimeout(r, 1500));
    say(slow, 'after');
    await run('after_abort', slow);

    // an unknown graph, another owner's thread
    const none = agent('/agui/nope');
    say(none, 'hi');
    await run('unknown', none);
    const mine = agent('/owned/', undefined, { 'X-User': 'alice' });
    say(mine, 'hi');
    await run('alice', mine);
    const theirs = agent('/owned/', mine.threadId, { 'X-User': 'bob' });
    say(theirs, 'hi');
    await run('bob', theirs);
} catch (e) {
    out('__died__', String(e?.stack ?? e));
}
