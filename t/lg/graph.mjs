// The graphs of t/lg_oracle.t's comparison in LangGraph.js, for
// LangGraph's own Agent Server (langgraphjs dev): the same nodes, edges
// and channels as the agent_graph blocks t/lg_oracle.t gives nginx, the
// model a ChatOpenAI on the same scripted provider: MOCK_OPENAI_URL or
// MOCK_URL, e.g. http://127.0.0.1:PORT/v1.

import { StateGraph, MessagesAnnotation, Annotation, START, END, interrupt }
    from '@langchain/langgraph';
import { ChatOpenAI } from '@langchain/openai';
import { AIMessage } from '@langchain/core/messages';

const model = new ChatOpenAI({
    model: 'mock-1', apiKey: 'test', streaming: true, maxRetries: 0,
    configuration: {
        baseURL: process.env.MOCK_OPENAI_URL ?? process.env.MOCK_URL },
});

const last = (a, b) => b ?? a;

// agent_graph chat { channel note value; node model llm; ... }
export const chat = new StateGraph(Annotation.Root({
    ...MessagesAnnotation.spec,
    note: Annotation({ reducer: last, default: () => null }),
}))
    .addNode('model', async (state) => ({
        messages: [await model.invoke(state.messages)],
    }))
    .addEdge(START, 'model')
    .addEdge('model', END)
    .compile();

// agent_graph approval { draft -> approve (interrupt) -> act | cancel }
export const approval = new StateGraph(Annotation.Root({
    ...MessagesAnnotation.spec,
    plan: Annotation({ reducer: last, default: () => null }),
    approval: Annotation({ reducer: last, default: () => null }),
}))
    .addNode('draft', () => ({ plan: 'Delete the rows of 2019?' }))
    .addNode('approve', (state) => ({ approval: interrupt(state.plan) }))
    .addNode('act', (state) => ({
        messages: [new AIMessage(`Done: ${state.approval}`)],
    }))
    .addNode('cancel', () => ({ messages: [new AIMessage('Cancelled.')] }))
    .addEdge(START, 'draft')
    .addEdge('draft', 'approve')
    .addConditionalEdges('approve',
        (state) => (state.approval === 'yes' ? 'act' : 'cancel'),
        ['act', 'cancel'])
    .addEdge('act', END)
    .addEdge('cancel', END)
    .compile();
