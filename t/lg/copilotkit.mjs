// CopilotKit's LangGraph agent (@ag-ui/langgraph's LangGraphAgent, from
// npm) against nginx's agent_langgraph_api, used as CopilotKit uses it:
// node copilotkit.mjs AGUI_DIR URL.  One JSON line per observation,
// {"k": NAME, "v": VALUE}; t/lg_copilotkit.t asserts on them.

import { randomUUID } from 'node:crypto';

const [dir, url] = process.argv.slice(2);
const { LangGraphAgent } = await import(
    `${dir}/node_modules/@ag-ui/langgraph/dist/index.mjs`);

function out(k, v) {
    console.log(JSON.stringify({ k, v }));
}

function agent(graphId, threadId) {
    const a = new LangGraphAgent({ deploymentUrl: url, graphId });
    a.threadId = threadId ?? randomUUID();
    return a;
}

function say(a, text) {
    a.addMessage({ id: randomUUID(), role: 'user', content: text });
}

// a run: the AG-UI events it gave (type and the fields tests read), the
// agent's messages after it, or the error it ended with
async function run(k, a, params = {}, onEvent) {
    const events = [];
    let error = null;
    try {
        await a.runAgent(params, {
            onEvent: ({ event }) => {
                events.push({
                    type: event.type, name: event.name ?? null,
                    delta: event.delta ?? null,
                    toolCallName: event.toolCallName ?? null,
                    content: event.content ?? null,
                    outcome: event.outcome ?? null,
                });
                if (onEvent) {
                    onEvent(event, a);
                }
            },
        });
    } catch (e) {
        error = String(e?.message ?? e);
    }
    out(k, {
        error, events,
        messages: a.messages.map((m) => ({
            role: m.role, content: m.content ?? null,
            toolCalls: (m.toolCalls ?? []).map((c) => c.function.name),
        })),
    });
}

async function state(k, threadId) {
    const r = await fetch(`${url}/threads/${threadId}/state`);
    out(k, await r.json());
}

async function runs(k, threadId) {
    const r = await fetch(`${url}/threads/${threadId}/runs`);
    out(k, await r.json());
}

try {
    // text, then a second run on the same thread
    const chat = agent('chat');
    say(chat, 'hi');
    await run('text', chat);
    say(chat, 'again');
    await run('again', chat);
    await state('again_state', chat.threadId);

    // tool calls streamed, their result
    const tools = agent('loop');
    say(tools, 'use the tool');
    await run('tools', tools);
    await state('tools_state', tools.threadId);

    // an abort: the server's run is cancelled
    const slow = agent('chat');
    say(slow, 'slow');
    let aborted = false;
    await run('abort', slow, {}, (event, a) => {
        if (event.type === 'TEXT_MESSAGE_CONTENT' && !aborted) {
            aborted = true;
            a.abortRun();
        }
    });
    await new Promise((r) => setTimeout(r, 1500));
    await runs('abort_runs', slow.threadId);

    // an interrupt, resumed through forwardedProps.command.resume
    const ask = agent('approval');
    say(ask, 'delete them');
    await run('ask', ask);
    await run('resume', ask, { forwardedProps: { command: { resume: 'yes' } } });
    await state('resume_state', ask.threadId);
} catch (e) {
    out('__died__', String(e?.stack ?? e));
}
