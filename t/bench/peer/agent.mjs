// The peer's agent: its graph, tools, prompt and provider, shared by the
// peer's own server (server.mjs, our API, with a SQLite checkpointer) and
// LangGraph's Agent Server (langgraphjs dev, langgraph.json), which brings
// the API and persistence.
//
//   MOCK_URL=http://127.0.0.1:N/v1 DB=bench.db MAX_ROUNDS=8

import Database from 'better-sqlite3';
import { z } from 'zod';
import { StateGraph, MessagesAnnotation, Annotation, START, END }
    from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { SystemMessage } from '@langchain/core/messages';

const MAX_ROUNDS = parseInt(process.env.MAX_ROUNDS || '8', 10);
const db = new Database(process.env.DB, { readonly: true });

const SYSTEM = 'You are a data analyst working inside a chat session. '
    + 'Answer the user\'s questions about their data with the tools you '
    + 'have: load_csv_data describes a CSV table, execute_sql_query runs '
    + 'one read-only SQLite SELECT statement.';

const executeSql = tool(async ({ query }) => {
    const stmt = db.prepare(query);
    if (!stmt.reader) {
        return JSON.stringify({ error: 'only reading is allowed' });
    }
    const rows = stmt.raw().all().slice(0, 1000);
    return JSON.stringify({ columns: stmt.columns().map((c) => c.name),
                            rows: rows, row_count: rows.length,
                            truncated: false });
}, { name: 'execute_sql_query', description: 'Run one read-only SQLite '
     + 'SELECT statement.', schema: z.object({ query: z.string() }) });

const loadCsv = tool(async () => JSON.stringify({ error: 'no CSV' }),
    { name: 'load_csv_data', description: 'Describe a CSV table.',
      schema: z.object({ table: z.string().optional() }) });

const tools = [loadCsv, executeSql];

const model = new ChatOpenAI({
    model: 'bench', apiKey: 'bench', streaming: true,
    streamUsage: true, configuration: { baseURL: process.env.MOCK_URL },
    maxRetries: 0
});

const State = Annotation.Root({
    ...MessagesAnnotation.spec,
    sessionId: Annotation({ reducer: (x, y) => y ?? x, default: () => '' }),
    csvResourcesMetadata: Annotation({ reducer: (x, y) => y ?? x,
                                       default: () => [] }),
    modelCalls: Annotation({ reducer: (x, y) => x + y, default: () => 0 }),
    callsAtStart: Annotation({ reducer: (x, y) => y ?? x,
                               default: () => 0 })
});

async function loadCsvMetadata() {
    return { csvResourcesMetadata: [] };
}

async function callModel(state) {
    const rounds = state.modelCalls - state.callsAtStart;
    const m = rounds + 1 < MAX_ROUNDS ? model.bindTools(tools) : model;
    const msg = await m.invoke([new SystemMessage(SYSTEM),
                                ...state.messages]);
    return { messages: [msg], modelCalls: 1 };
}

function shouldContinue(state) {
    const last = state.messages[state.messages.length - 1];
    return last.tool_calls && last.tool_calls.length ? 'tools' : END;
}

// the graph; server.mjs compiles it with its checkpointer
export const builder = new StateGraph(State)
    .addNode('load_csv_metadata', loadCsvMetadata)
    .addNode('model', callModel)
    .addNode('tools', new ToolNode(tools, { handleToolErrors: true }))
    .addEdge(START, 'load_csv_metadata')
    .addEdge('load_csv_metadata', 'model')
    .addConditionalEdges('model', shouldContinue, { tools: 'tools', [END]: END })
    .addEdge('tools', 'model');

export const graph = builder.compile();
