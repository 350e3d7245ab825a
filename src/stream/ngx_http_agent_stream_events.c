
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_store.h"


/*
 * "agent_stream events": LangGraph's astream_events(version="v2") on the
 * wire, so that clients written for a LangGraph server read our turns:
 * "event: on_chain_start" and so on, each data object with event, name,
 * run_id, parent_ids, tags, metadata (langgraph_node, langgraph_step, and
 * ls_provider, ls_model_name for a model's) and data.  A model's events
 * are named after the model, its start carries its input (the messages
 * as LangChain's dicts), and each step's update goes out as the graph's
 * on_chain_stream, {"chunk": {node: update}}.
 */


static ngx_int_t ngx_http_agent_events_write(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *name);
static void ngx_http_agent_events_head(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, ngx_str_t *sse, const char *event,
    ngx_str_t *name, ngx_str_t *run_id, ngx_uint_t depth);
static void ngx_http_agent_events_input(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, ngx_http_agent_event_t *ev);
static void ngx_http_agent_events_chunk(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, ngx_str_t *text, ngx_str_t *id,
    ngx_str_t *name, ngx_str_t *args);
static void ngx_http_agent_events_tool_message(ngx_http_agent_json_t *j,
    ngx_http_agent_event_t *ev);


ngx_http_agent_format_t  ngx_http_agent_events_format = {
    ngx_string("events"),
    ngx_http_agent_events_write,
    1
};


/* depth 3: a model in a node (as 2, with the model's metadata) */
#define NGX_HTTP_AGENT_EVENTS_MODEL  3


static ngx_int_t
ngx_http_agent_events_write(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *name)
{
    switch (ev->type) {

    case NGX_HTTP_AGENT_EV_CHECKPOINT:
    case NGX_HTTP_AGENT_EV_SUBGRAPH:
        /* not an event of astream_events */
        return NGX_DECLINED;

    case NGX_HTTP_AGENT_EV_START:
        ngx_http_agent_events_head(s, j, name, "on_chain_start", &s->graph,
                                   &s->run_id, 0);
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "input");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "input");
        ngx_http_agent_json_str(j, ev->text);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
        break;

    case NGX_HTTP_AGENT_EV_NODE_START:
    case NGX_HTTP_AGENT_EV_NODE_END:
        ngx_http_agent_events_head(s, j, name,
                                   ev->type == NGX_HTTP_AGENT_EV_NODE_START
                                   ? "on_chain_start" : "on_chain_end",
                                   &s->node, &s->node_run_id, 1);
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_end(j);
        break;

    case NGX_HTTP_AGENT_EV_MODEL_START:
        ngx_http_agent_events_head(s, j, name, "on_chat_model_start", ev->name,
                                   &s->model_run_id,
                                   NGX_HTTP_AGENT_EVENTS_MODEL);
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "input");
        ngx_http_agent_events_input(s, j, ev);
        ngx_http_agent_json_end(j);
        break;

    case NGX_HTTP_AGENT_EV_UPDATE:
        ngx_http_agent_events_head(s, j, name, "on_chain_stream", &s->graph,
                                   &s->run_id, 0);
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "chunk");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_str(j, &s->node);
        ngx_http_agent_stream_payload(j, ev);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
        break;

    case NGX_HTTP_AGENT_EV_CHUNK:
        /* a template's chunk has no model: it is the node's */

        if (s->model_run_id.len) {
            ngx_http_agent_events_head(s, j, name, "on_chat_model_stream",
                                       &s->model, &s->model_run_id,
                                       NGX_HTTP_AGENT_EVENTS_MODEL);

        } else {
            ngx_http_agent_events_head(s, j, name, "on_chat_model_stream",
                                       &s->node, &s->node_run_id, 2);
        }

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "chunk");
        ngx_http_agent_events_chunk(s, j, ev->text, NULL, NULL, NULL);
        ngx_http_agent_json_end(j);
        break;

    case NGX_HTTP_AGENT_EV_MODEL_END:
        ngx_http_agent_events_head(s, j, name, "on_chat_model_end", ev->name,
                                   &s->model_run_id,
                                   NGX_HTTP_AGENT_EVENTS_MODEL);
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "output");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "content");
        ngx_http_agent_json_str(j, ev->text);
        ngx_http_agent_json_key(j, "tool_calls");
        ngx_http_agent_stream_payload(j, ev);
        ngx_http_agent_json_key(j, "usage_metadata");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "input_tokens");
        ngx_http_agent_json_int(j, ev->prompt_tokens);
        ngx_http_agent_json_key(j, "output_tokens");
        ngx_http_agent_json_int(j, ev->completion_tokens);
        ngx_http_agent_json_key(j, "input_token_details");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "cache_read");
        ngx_http_agent_json_int(j, ev->cached_tokens);
        ngx_http_agent_json_key(j, "cache_creation");
        ngx_http_agent_json_int(j, ev->cache_write_tokens);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
        break;

    case NGX_HTTP_AGENT_EV_TOOL_START:
    case NGX_HTTP_AGENT_EV_TOOL_END:
        ngx_http_agent_events_head(s, j, name,
                                   ev->type == NGX_HTTP_AGENT_EV_TOOL_START
                                   ? "on_tool_start" : "on_tool_end",
                                   ev->name, ev->id, 2);
        ngx_http_agent_json_obj(j);

        if (ev->type == NGX_HTTP_AGENT_EV_TOOL_START) {
            ngx_http_agent_json_key(j, "input");
            ngx_http_agent_stream_payload(j, ev);
            ngx_http_agent_json_end(j);
            break;
        }

        /*
         * LangChain's end repeats the input: a client that missed the
         * start (a run resumed after an approval) reads the arguments
         * there; those that did not parse ran nothing, {} then
         */

        ngx_http_agent_json_key(j, "input");

        if (ev->input) {
            ngx_http_agent_json_val(j, ev->input);

        } else {
            ngx_http_agent_json_obj(j);
            ngx_http_agent_json_end(j);
        }

        if (s->lc) {
            /* LangChain's ToolMessage, its content the result as text */
            ngx_http_agent_json_key(j, "output");
            ngx_http_agent_events_tool_message(j, ev);

        } else {
            ngx_http_agent_json_key(j, "output");
            ngx_http_agent_stream_payload(j, ev);
        }

        ngx_http_agent_json_end(j);
        break;

    case NGX_HTTP_AGENT_EV_INTERRUPT:
        /* as LangGraph streams it: the graph's chunk {"__interrupt__"} */
        ngx_http_agent_events_head(s, j, name, "on_chain_stream", &s->graph,
                                   &s->run_id, 0);
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "chunk");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "__interrupt__");
        ngx_http_agent_json_arr(j);
        ngx_http_agent_stream_payload(j, ev);
        ngx_http_agent_json_arr_end(j);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
        break;

    case NGX_HTTP_AGENT_EV_CUSTOM:
        ngx_http_agent_events_head(s, j, name, "on_custom_event", ev->name,
                                   &s->node_run_id, 1);
        ngx_http_agent_stream_payload(j, ev);
        break;

    case NGX_HTTP_AGENT_EV_END:
        ngx_http_agent_events_head(s, j, name, "on_chain_end", &s->graph,
                                   &s->run_id, 0);
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "output");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "full_response");
        ngx_http_agent_json_str(j, ev->text);
        ngx_http_agent_json_key(j, "usage");
        ngx_http_agent_stream_usage(j, ev);
        ngx_http_agent_json_key(j, "checkpoint_id");
        ngx_http_agent_json_str(j, ev->checkpoint_id);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
        break;

    default: /* NGX_HTTP_AGENT_EV_ERROR */
        ngx_http_agent_events_head(s, j, name, "error", &s->graph, &s->run_id,
                                   0);
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "error");
        ngx_http_agent_json_str(j, ev->text);
        ngx_http_agent_json_key(j, "code");
        ngx_http_agent_json_str(j, ev->code);
        ngx_http_agent_json_end(j);
        break;
    }

    ngx_http_agent_json_end(j);

    return NGX_OK;
}


/*
 * An event up to its "data" key, named on the SSE line too (sse, unless
 * NULL).  depth 0: the graph; 1: a node in it; 2: a model or tool in the
 * node
 */

static void
ngx_http_agent_events_head(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, ngx_str_t *sse, const char *event,
    ngx_str_t *name, ngx_str_t *run_id, ngx_uint_t depth)
{
    u_char     buf[NGX_INT_T_LEN + 16];
    ngx_str_t  tag;

    if (sse) {
        sse->data = (u_char *) event;
        sse->len = ngx_strlen(event);
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "event");
    ngx_http_agent_json_cstr(j, event);
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, name);
    ngx_http_agent_json_key(j, "run_id");
    ngx_http_agent_json_str(j, run_id);
    ngx_http_agent_json_key(j, "parent_ids");
    ngx_http_agent_json_arr(j);

    if (depth > 0) {
        ngx_http_agent_json_str(j, &s->run_id);
    }

    if (depth > 1) {
        ngx_http_agent_json_str(j, &s->node_run_id);
    }

    ngx_http_agent_json_arr_end(j);

    /* LangGraph tags the runs of a step, and what runs in them, so */

    ngx_http_agent_json_key(j, "tags");
    ngx_http_agent_json_arr(j);

    if (depth > 0) {
        tag.data = buf;
        tag.len = ngx_sprintf(buf, "graph:step:%ui", s->step) - buf;
        ngx_http_agent_json_str(j, &tag);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "metadata");
    ngx_http_agent_json_obj(j);

    if (depth == NGX_HTTP_AGENT_EVENTS_MODEL) {
        ngx_http_agent_json_key(j, "ls_provider");
        ngx_http_agent_json_str(j, &s->provider);
        ngx_http_agent_json_key(j, "ls_model_name");
        ngx_http_agent_json_str(j, &s->model_remote);
        ngx_http_agent_json_key(j, "ls_model_type");
        ngx_http_agent_json_cstr(j, "chat");
    }

    ngx_http_agent_json_key(j, "langgraph_node");

    if (depth > 0) {
        ngx_http_agent_json_str(j, &s->node);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_key(j, "langgraph_step");
    ngx_http_agent_json_int(j, s->step);
    ngx_http_agent_json_key(j, "session_id");
    ngx_http_agent_json_bytes(j, s->session_id.data,
                              ngx_http_agent_store_id_shown(&s->session_id));

    /*
     * LangGraph's servers name the run in every event's metadata: a
     * client that aborts before the first token cancels it by that id
     */

    if (s->lc) {
        ngx_http_agent_json_key(j, "thread_id");
        ngx_http_agent_json_bytes(j, s->session_id.data,
                          ngx_http_agent_store_id_shown(&s->session_id));
        ngx_http_agent_json_key(j, "run_id");
        ngx_http_agent_json_str(j, &s->run_id);
        ngx_http_agent_json_key(j, "graph_id");
        ngx_http_agent_json_str(j, &s->graph);
        ngx_http_agent_json_key(j, "assistant_id");
        ngx_http_agent_json_str(j, &s->assistant);
    }

    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "data");
}


/* {"messages": [[the system prompt, then the conversation]]}, as LangChain */

static void
ngx_http_agent_events_input(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, ngx_http_agent_event_t *ev)
{
    ngx_uint_t             i;
    ngx_http_agent_msg_t  *m, sys;

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "messages");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_arr(j);

    if (ev->text && ev->text->len) {
        ngx_memzero(&sys, sizeof(ngx_http_agent_msg_t));
        ngx_str_set(&sys.role, "system");
        sys.content = *ev->text;
        ngx_http_agent_message_lc(j, s->pool, &sys, NULL);
    }

    m = ev->messages ? ev->messages->elts : NULL;

    for (i = 0; m && i < ev->messages->nelts; i++) {
        ngx_http_agent_message_lc(j, s->pool, &m[i], NULL);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);
}


/*
 * A model's chunk as LangChain's AIMessageChunk: its text, or a piece of
 * a tool call (tool_call_chunks: its name and id, then its arguments),
 * with the id of the message it becomes when the protocol names one
 */

static void
ngx_http_agent_events_chunk(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, ngx_str_t *text, ngx_str_t *id,
    ngx_str_t *name, ngx_str_t *args)
{
    ngx_str_t  *mid;

    mid = s->chunk_id.len ? &s->chunk_id : &s->model_run_id;

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "content");

    if (text) {
        ngx_http_agent_json_str(j, text);

    } else {
        ngx_http_agent_json_cstr(j, "");
    }

    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "AIMessageChunk");
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, mid);
    ngx_http_agent_json_key(j, "additional_kwargs");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "response_metadata");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "tool_calls");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "invalid_tool_calls");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "tool_call_chunks");
    ngx_http_agent_json_arr(j);

    if (name || args) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "tool_call_chunk");
        ngx_http_agent_json_key(j, "index");
        ngx_http_agent_json_int(j, 0);
        ngx_http_agent_json_key(j, "id");

        if (id) {
            ngx_http_agent_json_str(j, id);

        } else {
            ngx_http_agent_json_null(j);
        }

        ngx_http_agent_json_key(j, "name");

        if (name) {
            ngx_http_agent_json_str(j, name);

        } else {
            ngx_http_agent_json_null(j);
        }

        ngx_http_agent_json_key(j, "args");

        if (args) {
            ngx_http_agent_json_str(j, args);

        } else {
            ngx_http_agent_json_cstr(j, "");
        }

        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "usage_metadata");
    ngx_http_agent_json_null(j);
    ngx_http_agent_json_end(j);
}


/*
 * A model's tool call as on_chat_model_stream events, LangChain's way:
 * one with its name and id (args NULL), one with its arguments (name
 * NULL), one with neither (the call is over).  A protocol sends them
 * after the model's text, before its on_chat_model_end.
 */

void
ngx_http_agent_stream_events_call(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, ngx_str_t *id, ngx_str_t *name,
    ngx_str_t *args)
{
    ngx_str_t  *mname, *mrun;

    mname = s->model.len ? &s->model : &s->node;
    mrun = s->model_run_id.len ? &s->model_run_id : &s->node_run_id;

    ngx_http_agent_events_head(s, j, NULL, "on_chat_model_stream", mname,
                               mrun, s->model_run_id.len
                                     ? NGX_HTTP_AGENT_EVENTS_MODEL : 2);
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "chunk");
    ngx_http_agent_events_chunk(s, j, NULL, id, name, args);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);
}


/* a tool's result as LangChain's ToolMessage: {"type": "tool", ...} */

static void
ngx_http_agent_events_tool_message(ngx_http_agent_json_t *j,
    ngx_http_agent_event_t *ev)
{
    yajl_val   v;
    ngx_str_t  text;

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "tool");
    ngx_http_agent_json_key(j, "tool_call_id");
    ngx_http_agent_json_str(j, ev->id);
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, ev->name);
    ngx_http_agent_json_key(j, "content");

    /* text as text; anything else as its JSON text */

    if (ev->value && YAJL_IS_STRING(ev->value)) {
        ngx_http_agent_json_val(j, ev->value);

    } else if (ev->json) {
        /* a string result as its text, parsed; anything else its JSON */
        text = *ev->json;
        v = (text.len > 1 && text.data[0] == '"')
            ? ngx_http_agent_json_parse(j->pool, text.data, text.len, NULL)
            : NULL;

        if (v && YAJL_IS_STRING(v)) {
            ngx_http_agent_json_val(j, v);

        } else {
            ngx_http_agent_json_str(j, &text);
        }

    } else if (ev->value
               && ngx_http_agent_json_encode(j->pool, ev->value, &text)
                  == NGX_OK)
    {
        ngx_http_agent_json_str(j, &text);

    } else {
        ngx_http_agent_json_cstr(j, "");
    }

    ngx_http_agent_json_key(j, "status");
    ngx_http_agent_json_cstr(j, "success");
    ngx_http_agent_json_end(j);
}

