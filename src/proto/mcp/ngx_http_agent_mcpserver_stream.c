
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_mcpserver_int.h"
#include "ngx_http_agent_mcpserver.h"
#include "ngx_http_agent_engine.h"


/*
 * A graph run as an MCP tool: its stream is the answer to tools/call, SSE
 * events of JSON-RPC messages: notifications/progress at each step when
 * the client asked for progress (a progressToken), notifications/message
 * of what the run does when it asked for a log level, then the call's
 * result, {"content": [{"type": "text", "text": the answer}],
 * "structuredContent": {"answer", "thread_id", "status", "values",
 * "interrupt"}};
 * a run that fails is a result with "isError": true (MCP: a tool's error
 * is the model's to read, not a protocol error).  A run that waits, on a
 * session whose client takes elicitation, asks it instead, and the call
 * waits for the answer (mcpserver_elicit.c).
 */


static ngx_int_t ngx_http_agent_mcpserver_write(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *name);
static ngx_int_t ngx_http_agent_mcpserver_log(ngx_http_agent_stream_t *s,
    ngx_http_agent_mcpserver_out_t *o, ngx_http_agent_event_t *ev);
static void ngx_http_agent_mcpserver_result(ngx_http_agent_stream_t *s,
    ngx_http_agent_mcpserver_out_t *o, ngx_http_agent_event_t *ev,
    ngx_http_agent_json_t *j);
static void ngx_http_agent_mcpserver_values(ngx_http_agent_run_t *run,
    ngx_http_agent_json_t *j);


ngx_http_agent_format_t  ngx_http_agent_mcpserver_format = {
    ngx_string("mcp"),
    ngx_http_agent_mcpserver_write,
    0
};


static ngx_int_t
ngx_http_agent_mcpserver_write(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *name)
{
    ngx_http_agent_mcpserver_out_t  *o;

    o = s->format_data;

    if (o == NULL || o->over) {
        return NGX_DECLINED;
    }

    /* the log's message goes first, on its own: the event may have one */

    if (o->log && ngx_http_agent_mcpserver_log(s, o, ev) != NGX_OK) {
        return NGX_ERROR;
    }

    switch (ev->type) {

    case NGX_HTTP_AGENT_EV_NODE_START:
        if (o->progress.len == 0) {
            return NGX_DECLINED;
        }

        /* progress grows with each step; the total is not known */

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "jsonrpc");
        ngx_http_agent_json_cstr(j, "2.0");
        ngx_http_agent_json_key(j, "method");
        ngx_http_agent_json_cstr(j, "notifications/progress");
        ngx_http_agent_json_key(j, "params");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "progressToken");
        ngx_http_agent_json_raw(j, &o->progress);
        ngx_http_agent_json_key(j, "progress");
        ngx_http_agent_json_int(j, ++o->steps);
        ngx_http_agent_json_key(j, "message");
        ngx_http_agent_json_str(j, &s->node);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
        return NGX_OK;

    case NGX_HTTP_AGENT_EV_INTERRUPT:
        if (ev->json) {
            o->interrupt = *ev->json;
        }

        if (ev->checkpoint_id) {
            o->checkpoint = *ev->checkpoint_id;
        }

        return NGX_DECLINED;

    case NGX_HTTP_AGENT_EV_END:
    case NGX_HTTP_AGENT_EV_ERROR:
        ngx_http_agent_mcpserver_result(s, o, ev, j);
        o->over = 1;
        return NGX_OK;

    default:
        return NGX_DECLINED;
    }
}


/*
 * notifications/message: a step, a model's or a tool's call, a wait, a
 * failure, at its level, if the client asked for that level or a lower
 * one; data is ours, {"event", and names}, never a model's text
 */

static ngx_int_t
ngx_http_agent_mcpserver_log(ngx_http_agent_stream_t *s,
    ngx_http_agent_mcpserver_out_t *o, ngx_http_agent_event_t *ev)
{
    char                   *event;
    ngx_str_t               name, json;
    ngx_uint_t              level;
    ngx_http_agent_json_t  *j;

    static const char  *levels[] = NGX_HTTP_AGENT_MCPSERVER_LEVELS;

    switch (ev->type) {

    case NGX_HTTP_AGENT_EV_NODE_START:
        level = 1;
        event = "node_start";
        break;

    case NGX_HTTP_AGENT_EV_MODEL_START:
        level = 0;
        event = "model_start";
        break;

    case NGX_HTTP_AGENT_EV_TOOL_START:
        level = 1;
        event = "tool_start";
        break;

    case NGX_HTTP_AGENT_EV_TOOL_END:
        level = 0;
        event = "tool_end";
        break;

    case NGX_HTTP_AGENT_EV_INTERRUPT:
        level = 2;
        event = "interrupt";
        break;

    case NGX_HTTP_AGENT_EV_ERROR:
        level = 4;
        event = "error";
        break;

    default:
        return NGX_OK;
    }

    if (level + 1 < o->log) {
        return NGX_OK;
    }

    j = s->json;

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "jsonrpc");
    ngx_http_agent_json_cstr(j, "2.0");
    ngx_http_agent_json_key(j, "method");
    ngx_http_agent_json_cstr(j, "notifications/message");
    ngx_http_agent_json_key(j, "params");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "level");
    ngx_http_agent_json_cstr(j, levels[level]);
    ngx_http_agent_json_key(j, "logger");
    ngx_http_agent_json_str(j, &o->graph);
    ngx_http_agent_json_key(j, "data");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "event");
    ngx_http_agent_json_cstr(j, event);
    ngx_http_agent_json_key(j, "node");
    ngx_http_agent_json_str(j, &s->node);

    if (ev->type == NGX_HTTP_AGENT_EV_MODEL_START && s->model.len) {
        ngx_http_agent_json_key(j, "model");
        ngx_http_agent_json_str(j, &s->model);
    }

    if (ev->name) {
        ngx_http_agent_json_key(j, "tool");
        ngx_http_agent_json_str(j, ev->name);
    }

    if (ev->type == NGX_HTTP_AGENT_EV_ERROR) {
        if (ev->code) {
            ngx_http_agent_json_key(j, "code");
            ngx_http_agent_json_str(j, ev->code);
        }

        if (ev->text) {
            ngx_http_agent_json_key(j, "message");
            ngx_http_agent_json_str(j, ev->text);
        }
    }

    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_scratch(j, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_str_null(&name);

    /* with the event that follows it, as that one leaves */
    return s->sink(s->sink_data, &name, &json, 0);
}


static void
ngx_http_agent_mcpserver_result(ngx_http_agent_stream_t *s,
    ngx_http_agent_mcpserver_out_t *o, ngx_http_agent_event_t *ev,
    ngx_http_agent_json_t *j)
{
    yajl_val                          v;
    ngx_str_t                         text;
    ngx_http_agent_mcpserver_answer_t  a;

    ngx_memzero(&a, sizeof(ngx_http_agent_mcpserver_answer_t));

    a.id = &o->id;
    a.thread = &s->session_id;
    a.run = s->state;

    v = o->interrupt.len
        ? ngx_http_agent_json_parse(s->pool, o->interrupt.data,
                                    o->interrupt.len, NULL)
        : NULL;

    ngx_str_set(&text, "");

    if (ev->type == NGX_HTTP_AGENT_EV_ERROR) {
        a.error = 1;
        a.code = ev->code;

        if (ev->text) {
            text = *ev->text;
        }

    } else if (v) {
        a.interrupt = v;

        if (o->elicit) {
            /* the client's user asked, the call held open for the answer */
            o->held = 1;

            ngx_http_agent_mcpserver_stream_elicit(j, s->pool, v,
                                                   &s->session_id,
                                                   &o->checkpoint,
                                                   &o->graph);
            return;
        }

        if (ngx_http_agent_mcpserver_stream_waits(s->pool, v, &s->session_id,
                                                  &text)
            != NGX_OK)
        {
            ngx_str_set(&text, "");
        }

    } else if (ev->text) {
        text = *ev->text;
    }

    a.text = &text;

    ngx_http_agent_mcpserver_stream_answer(j, &a);
}


/* what a run waits for, and how to answer it, as text */

ngx_int_t
ngx_http_agent_mcpserver_stream_waits(ngx_pool_t *pool, yajl_val interrupt,
    ngx_str_t *thread, ngx_str_t *text)
{
    u_char     *p;
    yajl_val    value;
    ngx_str_t   shown;

    value = ngx_http_agent_json_get(interrupt, "value");

    ngx_str_set(&shown, "null");

    if (value && YAJL_IS_STRING(value)) {
        shown.data = (u_char *) YAJL_GET_STRING(value);
        shown.len = ngx_strlen(shown.data);

    } else if (value
               && ngx_http_agent_json_encode(pool, value, &shown) != NGX_OK)
    {
        return NGX_ERROR;
    }

    p = ngx_pnalloc(pool, shown.len + thread->len + 160);
    if (p == NULL) {
        return NGX_ERROR;
    }

    text->data = p;
    text->len = ngx_sprintf(p, "The run waits for an answer: %V\n"
                            "Answer it: call this tool again with "
                            "\"thread_id\": \"%V\" and \"resume\": "
                            "the answer.", &shown, thread)
                - p;

    return NGX_OK;
}


/* an elicitation's id: what it asks about (mcpserver_rpc.c) */

ngx_int_t
ngx_http_agent_mcpserver_stream_elicit_id(ngx_pool_t *pool, ngx_str_t *thread,
    ngx_str_t *checkpoint, ngx_str_t *graph, ngx_str_t *id)
{
    u_char  *p;

    p = ngx_pnalloc(pool, sizeof(NGX_HTTP_AGENT_MCPSERVER_ELICIT)
                          + thread->len + checkpoint->len + graph->len + 2);
    if (p == NULL) {
        return NGX_ERROR;
    }

    id->data = p;
    id->len = ngx_sprintf(p, NGX_HTTP_AGENT_MCPSERVER_ELICIT "%V/%V/%V",
                          thread, checkpoint, graph)
              - p;

    return NGX_OK;
}


/*
 * elicitation/create: the interrupt's value as the message (a string as
 * it is, else its JSON), one string field "answer" asked for
 */

void
ngx_http_agent_mcpserver_stream_elicit(ngx_http_agent_json_t *j,
    ngx_pool_t *pool, yajl_val interrupt, ngx_str_t *thread,
    ngx_str_t *checkpoint, ngx_str_t *graph)
{
    yajl_val   value;
    ngx_str_t  id, shown;

    static ngx_str_t  schema = ngx_string(
        "{\"type\":\"object\",\"properties\":{\"answer\":{\"type\":"
        "\"string\",\"title\":\"Answer\"}},\"required\":[\"answer\"]}");

    value = ngx_http_agent_json_get(interrupt, "value");

    ngx_str_set(&shown, "The run waits for an answer.");

    if (value && YAJL_IS_STRING(value)) {
        shown.data = (u_char *) YAJL_GET_STRING(value);
        shown.len = ngx_strlen(shown.data);

    } else if (value && !YAJL_IS_NULL(value)) {
        (void) ngx_http_agent_json_encode(pool, value, &shown);
    }

    if (ngx_http_agent_mcpserver_stream_elicit_id(pool, thread, checkpoint,
                                                  graph, &id)
        != NGX_OK)
    {
        ngx_str_set(&id, "");
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "jsonrpc");
    ngx_http_agent_json_cstr(j, "2.0");
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, &id);
    ngx_http_agent_json_key(j, "method");
    ngx_http_agent_json_cstr(j, "elicitation/create");
    ngx_http_agent_json_key(j, "params");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "message");
    ngx_http_agent_json_str(j, &shown);
    ngx_http_agent_json_key(j, "requestedSchema");
    ngx_http_agent_json_raw(j, &schema);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);
}


/* a tools/call's result, the JSON-RPC answer whole */

void
ngx_http_agent_mcpserver_stream_answer(ngx_http_agent_json_t *j,
    ngx_http_agent_mcpserver_answer_t *a)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "jsonrpc");
    ngx_http_agent_json_cstr(j, "2.0");
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_raw(j, a->id);
    ngx_http_agent_json_key(j, "result");
    ngx_http_agent_json_obj(j);

    ngx_http_agent_mcpserver_stream_content(j, a->text);

    /* the same, whole: a client may read only this */

    ngx_http_agent_json_key(j, "structuredContent");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "answer");
    ngx_http_agent_json_str(j, a->text);
    ngx_http_agent_json_key(j, "thread_id");
    ngx_http_agent_json_str(j, a->thread);
    ngx_http_agent_json_key(j, "status");
    ngx_http_agent_json_cstr(j, a->error ? "error"
                                : a->interrupt ? "interrupted" : "success");

    if (a->error && a->code) {
        ngx_http_agent_json_key(j, "code");
        ngx_http_agent_json_str(j, a->code);
    }

    if (!a->error && a->run) {
        ngx_http_agent_json_key(j, "values");
        ngx_http_agent_mcpserver_values(a->run, j);
    }

    if (a->interrupt) {
        ngx_http_agent_json_key(j, "interrupt");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "node");
        ngx_http_agent_json_val(j, ngx_http_agent_json_get(a->interrupt,
                                                           "node"));
        ngx_http_agent_json_key(j, "value");
        ngx_http_agent_json_val(j, ngx_http_agent_json_get(a->interrupt,
                                                           "value"));
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);

    ngx_http_agent_json_key(j, "isError");
    ngx_http_agent_json_bool(j, a->error);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);
}


/* the graph's channels but messages and the turn's own input, session_id */

static void
ngx_http_agent_mcpserver_values(ngx_http_agent_run_t *run,
    ngx_http_agent_json_t *j)
{
    size_t                  i;
    yajl_val                state;
    ngx_int_t               n;
    ngx_str_t               json, key;
    ngx_http_agent_json_t  *sj;

    state = NULL;

    sj = ngx_http_agent_json_create(run->pool);

    if (sj) {
        ngx_http_agent_state_values(sj, run);

        if (ngx_http_agent_json_done(sj, &json) == NGX_OK) {
            state = ngx_http_agent_json_parse(run->pool, json.data, json.len,
                                              NULL);
        }
    }

    ngx_http_agent_json_obj(j);

    for (i = 0; state && YAJL_IS_OBJECT(state) && i < state->u.object.len;
         i++)
    {
        key.data = (u_char *) state->u.object.keys[i];
        key.len = ngx_strlen(key.data);

        n = ngx_http_agent_graph_channel(run->graph, &key);

        if (n == NGX_ERROR || n == NGX_HTTP_AGENT_CH_MESSAGES
            || n == NGX_HTTP_AGENT_CH_INPUT
            || n == NGX_HTTP_AGENT_CH_SESSION_ID)
        {
            continue;
        }

        ngx_http_agent_json_str(j, &key);
        ngx_http_agent_json_val(j, state->u.object.values[i]);
    }

    ngx_http_agent_json_end(j);
}


/* a tool result's "content": one text part */

void
ngx_http_agent_mcpserver_stream_content(ngx_http_agent_json_t *j,
    ngx_str_t *text)
{
    ngx_http_agent_json_key(j, "content");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "text");
    ngx_http_agent_json_key(j, "text");
    ngx_http_agent_json_str(j, text);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_arr_end(j);
}
