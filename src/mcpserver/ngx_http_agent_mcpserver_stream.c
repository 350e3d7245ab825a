
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_mcpserver_stream.h"
#include "ngx_http_agent_state.h"


/*
 * A graph run as an MCP tool: its stream is the answer to tools/call, SSE
 * events of JSON-RPC messages: notifications/progress at each step when
 * the client asked for progress (a progressToken), then the call's
 * result, {"content": [{"type": "text", "text": the answer}],
 * "structuredContent": {"answer", "thread_id", "status", "values",
 * "interrupt"}};
 * a run that fails is a result with "isError": true (MCP: a tool's error
 * is the model's to read, not a protocol error).
 */


static ngx_int_t ngx_http_agent_mcpserver_write(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *name);
static void ngx_http_agent_mcpserver_result(ngx_http_agent_stream_t *s,
    ngx_http_agent_mcpserver_out_t *o, ngx_http_agent_event_t *ev,
    ngx_http_agent_json_t *j);
static void ngx_http_agent_mcpserver_values(ngx_http_agent_stream_t *s,
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


static void
ngx_http_agent_mcpserver_result(ngx_http_agent_stream_t *s,
    ngx_http_agent_mcpserver_out_t *o, ngx_http_agent_event_t *ev,
    ngx_http_agent_json_t *j)
{
    u_char     *p;
    yajl_val    v, node, value;
    ngx_str_t   text, shown;
    ngx_uint_t  error;

    error = (ev->type == NGX_HTTP_AGENT_EV_ERROR);

    v = o->interrupt.len
        ? ngx_http_agent_json_parse(s->pool, o->interrupt.data,
                                    o->interrupt.len, NULL)
        : NULL;
    node = v ? ngx_http_agent_json_get(v, "node") : NULL;
    value = v ? ngx_http_agent_json_get(v, "value") : NULL;

    ngx_str_set(&text, "");

    if (error) {
        if (ev->text) {
            text = *ev->text;
        }

    } else if (v) {

        /* what the run waits for, and how to answer it */

        ngx_str_set(&shown, "null");

        if (value && YAJL_IS_STRING(value)) {
            shown.data = (u_char *) YAJL_GET_STRING(value);
            shown.len = ngx_strlen(shown.data);

        } else if (value) {
            (void) ngx_http_agent_json_encode(s->pool, value, &shown);
        }

        p = ngx_pnalloc(s->pool, shown.len + s->session_id.len + 160);

        if (p == NULL) {
            ngx_str_set(&text, "");

        } else {
            text.data = p;
            text.len = ngx_sprintf(p, "The run waits for an answer: %V\n"
                                   "Answer it: call this tool again with "
                                   "\"thread_id\": \"%V\" and \"resume\": "
                                   "the answer.", &shown, &s->session_id)
                       - p;
        }

    } else if (ev->text) {
        text = *ev->text;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "jsonrpc");
    ngx_http_agent_json_cstr(j, "2.0");
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_raw(j, &o->id);
    ngx_http_agent_json_key(j, "result");
    ngx_http_agent_json_obj(j);

    ngx_http_agent_mcpserver_stream_content(j, &text);

    /* the same, whole: a client may read only this */

    ngx_http_agent_json_key(j, "structuredContent");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "answer");
    ngx_http_agent_json_str(j, &text);
    ngx_http_agent_json_key(j, "thread_id");
    ngx_http_agent_json_str(j, &s->session_id);
    ngx_http_agent_json_key(j, "status");
    ngx_http_agent_json_cstr(j, error ? "error" : v ? "interrupted"
                                                    : "success");

    if (error && ev->code) {
        ngx_http_agent_json_key(j, "code");
        ngx_http_agent_json_str(j, ev->code);
    }

    if (!error) {
        ngx_http_agent_json_key(j, "values");
        ngx_http_agent_mcpserver_values(s, j);
    }

    if (v) {
        ngx_http_agent_json_key(j, "interrupt");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "node");
        ngx_http_agent_json_val(j, node);
        ngx_http_agent_json_key(j, "value");
        ngx_http_agent_json_val(j, value);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);

    ngx_http_agent_json_key(j, "isError");
    ngx_http_agent_json_bool(j, error);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);
}


/* the graph's channels but messages and the turn's own input, session_id */

static void
ngx_http_agent_mcpserver_values(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j)
{
    size_t                  i;
    yajl_val                state;
    ngx_int_t               n;
    ngx_str_t               json, key;
    ngx_http_agent_run_t   *run;
    ngx_http_agent_json_t  *sj;

    run = s->state;
    state = NULL;

    sj = run ? ngx_http_agent_json_create(s->pool) : NULL;

    if (sj) {
        ngx_http_agent_state_values(sj, run);

        if (ngx_http_agent_json_done(sj, &json) == NGX_OK) {
            state = ngx_http_agent_json_parse(s->pool, json.data, json.len,
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
