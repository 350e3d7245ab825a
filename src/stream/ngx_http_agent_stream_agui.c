
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_util.h"


/*
 * "agent_stream agui": the AG-UI protocol's events (docs.ag-ui.com), one
 * {"type": ...} object per SSE "data:" line, as @ag-ui/client reads them.
 * AG-UI's client checks their order: a text message and a tool call are
 * opened and closed, a step finished before the next, nothing after
 * RUN_FINISHED or RUN_ERROR, and no field null; this file keeps that
 * order whatever the graph does (a node that fails mid-message, a run
 * that waits).
 */


typedef struct {
    ngx_str_t                  message_id;  /* the model call's message */
    ngx_str_t                  step;        /* a step started, or empty */
    ngx_str_t                  interrupt;   /* the run waits: {"node",
                                               "value"} */
    ngx_str_t                  interrupt_id;
    unsigned                   text:1;      /* a text message is open */
    unsigned                   streamed:1;  /* this call streamed text */
    unsigned                   state:1;     /* a snapshot was sent */
    unsigned                   over:1;      /* RUN_FINISHED or RUN_ERROR */
} ngx_http_agent_agui_t;


static ngx_int_t ngx_http_agent_agui_write(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *name);
static ngx_int_t ngx_http_agent_agui_send(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, ngx_uint_t now);
static void ngx_http_agent_agui_head(ngx_http_agent_json_t *j,
    const char *type);
static ngx_int_t ngx_http_agent_agui_text(ngx_http_agent_stream_t *s,
    ngx_http_agent_agui_t *a, ngx_http_agent_json_t *j, ngx_str_t *text);
static ngx_int_t ngx_http_agent_agui_close(ngx_http_agent_stream_t *s,
    ngx_http_agent_agui_t *a, ngx_http_agent_json_t *j, ngx_uint_t step);
static ngx_int_t ngx_http_agent_agui_calls(ngx_http_agent_stream_t *s,
    ngx_http_agent_agui_t *a, ngx_http_agent_json_t *j, ngx_str_t *json);
static ngx_int_t ngx_http_agent_agui_result(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j);
static ngx_int_t ngx_http_agent_agui_state(ngx_http_agent_stream_t *s,
    ngx_http_agent_agui_t *a, ngx_http_agent_event_t *ev,
    ngx_http_agent_json_t *j);
static ngx_uint_t ngx_http_agent_agui_shown(ngx_http_agent_run_t *run,
    const char *name);
static void ngx_http_agent_agui_finished(ngx_http_agent_stream_t *s,
    ngx_http_agent_agui_t *a, ngx_http_agent_json_t *j);


ngx_http_agent_format_t  ngx_http_agent_agui_format = {
    ngx_string("agui"),
    ngx_http_agent_agui_write,
    1
};


static ngx_int_t
ngx_http_agent_agui_write(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *name)
{
    yajl_val                v;
    ngx_str_t               text;
    ngx_http_agent_agui_t  *a;

    a = s->format_data;

    if (a == NULL) {
        a = ngx_pcalloc(s->pool, sizeof(ngx_http_agent_agui_t));
        if (a == NULL) {
            return NGX_ERROR;
        }

        s->format_data = a;
    }

    if (a->over) {
        return NGX_DECLINED;
    }

    switch (ev->type) {

    case NGX_HTTP_AGENT_EV_START:
        ngx_http_agent_agui_head(j, "RUN_STARTED");
        ngx_http_agent_json_key(j, "threadId");
        ngx_http_agent_json_bytes(j, s->session_id.data,
                           ngx_http_agent_store_id_shown(&s->session_id));
        ngx_http_agent_json_key(j, "runId");
        ngx_http_agent_json_str(j, &s->run_id);
        ngx_http_agent_json_end(j);
        break;

    case NGX_HTTP_AGENT_EV_NODE_START:
        if (ngx_http_agent_agui_close(s, a, j, 1) != NGX_OK) {
            return NGX_ERROR;
        }

        a->step = s->node;

        ngx_http_agent_agui_head(j, "STEP_STARTED");
        ngx_http_agent_json_key(j, "stepName");
        ngx_http_agent_json_str(j, &a->step);
        ngx_http_agent_json_end(j);
        break;

    case NGX_HTTP_AGENT_EV_NODE_END:
        return ngx_http_agent_agui_close(s, a, j, 1) == NGX_OK
               ? NGX_DECLINED : NGX_ERROR;

    case NGX_HTTP_AGENT_EV_MODEL_START:
        if (ngx_http_agent_agui_close(s, a, j, 0) != NGX_OK) {
            return NGX_ERROR;
        }

        a->message_id = s->model_run_id;
        a->streamed = 0;
        return NGX_DECLINED;

    case NGX_HTTP_AGENT_EV_CHUNK:
        a->streamed = 1;
        return ngx_http_agent_agui_text(s, a, j, ev->text) == NGX_OK
               ? NGX_DECLINED : NGX_ERROR;

    case NGX_HTTP_AGENT_EV_MODEL_END:

        /* an answer that came whole is one content event */

        if (!a->streamed
            && ngx_http_agent_agui_text(s, a, j, ev->text) != NGX_OK)
        {
            return NGX_ERROR;
        }

        if (ngx_http_agent_agui_close(s, a, j, 0) != NGX_OK) {
            return NGX_ERROR;
        }

        /* the calls the model asked for, on its message */

        if (ev->json && ev->json->len
            && ngx_http_agent_agui_calls(s, a, j, ev->json) != NGX_OK)
        {
            return NGX_ERROR;
        }

        ngx_str_null(&a->message_id);
        return NGX_DECLINED;

    case NGX_HTTP_AGENT_EV_TOOL_END:
        return ngx_http_agent_agui_result(s, ev, j);

    case NGX_HTTP_AGENT_EV_UPDATE:
        return ngx_http_agent_agui_state(s, a, ev, j);

    case NGX_HTTP_AGENT_EV_CUSTOM:
        ngx_http_agent_agui_head(j, "CUSTOM");
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, ev->name);
        ngx_http_agent_json_key(j, "value");

        ngx_http_agent_stream_payload(j, ev);

        ngx_http_agent_json_end(j);
        break;

    case NGX_HTTP_AGENT_EV_INTERRUPT:

        /*
         * the run waits: RUN_FINISHED says so (its "interrupt" outcome);
         * before it, CopilotKit's "on_interrupt" event, its value the
         * interrupt's value as a JSON text, as LangGraph's AG-UI adapter
         * sends it
         */

        if (ev->json == NULL) {
            return NGX_DECLINED;
        }

        a->interrupt = *ev->json;

        if (ev->checkpoint_id && ev->checkpoint_id->len) {
            a->interrupt_id = *ev->checkpoint_id;

        } else {
            a->interrupt_id = s->run_id;
        }

        v = ngx_http_agent_json_parse(s->pool, ev->json->data, ev->json->len,
                                      NULL);
        v = v ? ngx_http_agent_json_get(v, "value") : NULL;

        ngx_http_agent_agui_head(j, "CUSTOM");
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_cstr(j, "on_interrupt");
        ngx_http_agent_json_key(j, "value");

        if (v && YAJL_IS_STRING(v)) {
            ngx_http_agent_json_val(j, v);

        } else if (v && ngx_http_agent_json_encode(s->pool, v, &text)
                        == NGX_OK)
        {
            ngx_http_agent_json_str(j, &text);

        } else {
            ngx_http_agent_json_cstr(j, "null");
        }

        ngx_http_agent_json_end(j);
        break;

    case NGX_HTTP_AGENT_EV_END:
        if (ngx_http_agent_agui_close(s, a, j, 1) != NGX_OK) {
            return NGX_ERROR;
        }

        ngx_http_agent_agui_finished(s, a, j);
        a->over = 1;
        break;

    case NGX_HTTP_AGENT_EV_ERROR:

        /* after RUN_ERROR nothing is sent: what is open stays open */

        ngx_http_agent_agui_head(j, "RUN_ERROR");
        ngx_http_agent_json_key(j, "message");
        ngx_http_agent_json_str(j, ev->text);

        if (ev->code && ev->code->len) {
            ngx_http_agent_json_key(j, "code");
            ngx_http_agent_json_str(j, ev->code);
        }

        ngx_http_agent_json_end(j);
        a->over = 1;
        break;

    default:
        /* a tool's start is said with its model's message; checkpoints */
        return NGX_DECLINED;
    }

    return ngx_http_agent_agui_send(s, j, 1) == NGX_OK ? NGX_DECLINED
                                                       : NGX_ERROR;
}


static ngx_int_t
ngx_http_agent_agui_send(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, ngx_uint_t now)
{
    ngx_str_t  name, json;

    if (ngx_http_agent_json_scratch(j, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_str_null(&name);

    return s->sink(s->sink_data, &name, &json, now);
}


static void
ngx_http_agent_agui_head(ngx_http_agent_json_t *j, const char *type)
{
    ngx_time_t  *tp;

    tp = ngx_timeofday();

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, type);
    ngx_http_agent_json_key(j, "timestamp");
    ngx_http_agent_json_int(j, (int64_t) tp->sec * 1000 + tp->msec);
}


/* text of the model's message: opened at its first piece */

static ngx_int_t
ngx_http_agent_agui_text(ngx_http_agent_stream_t *s,
    ngx_http_agent_agui_t *a, ngx_http_agent_json_t *j, ngx_str_t *text)
{
    if (text == NULL || text->len == 0) {
        return NGX_OK;
    }

    if (!a->text) {

        /* a template's text has no model call: a message of its own */

        if (a->message_id.len == 0
            && ngx_http_agent_id_make(s->pool, &a->message_id) != NGX_OK)
        {
            return NGX_ERROR;
        }

        ngx_http_agent_agui_head(j, "TEXT_MESSAGE_START");
        ngx_http_agent_json_key(j, "messageId");
        ngx_http_agent_json_str(j, &a->message_id);
        ngx_http_agent_json_key(j, "role");
        ngx_http_agent_json_cstr(j, "assistant");
        ngx_http_agent_json_end(j);

        if (ngx_http_agent_agui_send(s, j, 0) != NGX_OK) {
            return NGX_ERROR;
        }

        a->text = 1;
    }

    ngx_http_agent_agui_head(j, "TEXT_MESSAGE_CONTENT");
    ngx_http_agent_json_key(j, "messageId");
    ngx_http_agent_json_str(j, &a->message_id);
    ngx_http_agent_json_key(j, "delta");
    ngx_http_agent_json_str(j, text);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_agui_send(s, j, 0);
}


/* the open text message ended; with step, the step too */

static ngx_int_t
ngx_http_agent_agui_close(ngx_http_agent_stream_t *s,
    ngx_http_agent_agui_t *a, ngx_http_agent_json_t *j, ngx_uint_t step)
{
    if (a->text) {
        ngx_http_agent_agui_head(j, "TEXT_MESSAGE_END");
        ngx_http_agent_json_key(j, "messageId");
        ngx_http_agent_json_str(j, &a->message_id);
        ngx_http_agent_json_end(j);

        if (ngx_http_agent_agui_send(s, j, 0) != NGX_OK) {
            return NGX_ERROR;
        }

        a->text = 0;

        if (step) {
            /* a template's message is the step's */
            ngx_str_null(&a->message_id);
        }
    }

    if (!step || a->step.len == 0) {
        return NGX_OK;
    }

    ngx_http_agent_agui_head(j, "STEP_FINISHED");
    ngx_http_agent_json_key(j, "stepName");
    ngx_http_agent_json_str(j, &a->step);
    ngx_http_agent_json_end(j);

    ngx_str_null(&a->step);

    return ngx_http_agent_agui_send(s, j, 0);
}


/*
 * The tool calls of the model's message (our own stored JSON): each
 * started, its arguments in one piece, ended, on the message's id
 */

static ngx_int_t
ngx_http_agent_agui_calls(ngx_http_agent_stream_t *s,
    ngx_http_agent_agui_t *a, ngx_http_agent_json_t *j, ngx_str_t *json)
{
    ngx_uint_t              i;
    ngx_array_t            *calls;
    ngx_http_agent_call_t  *c;

    if (ngx_http_agent_message_calls(s->pool, json, &calls, 0) != NGX_OK
        || calls == NULL)
    {
        return NGX_OK;
    }

    c = calls->elts;

    for (i = 0; i < calls->nelts; i++) {
        ngx_http_agent_agui_head(j, "TOOL_CALL_START");
        ngx_http_agent_json_key(j, "toolCallId");
        ngx_http_agent_json_str(j, &c[i].id);
        ngx_http_agent_json_key(j, "toolCallName");
        ngx_http_agent_json_str(j, &c[i].name);

        if (a->message_id.len) {
            ngx_http_agent_json_key(j, "parentMessageId");
            ngx_http_agent_json_str(j, &a->message_id);
        }

        ngx_http_agent_json_end(j);

        if (ngx_http_agent_agui_send(s, j, 0) != NGX_OK) {
            return NGX_ERROR;
        }

        if (c[i].arguments.len) {
            ngx_http_agent_agui_head(j, "TOOL_CALL_ARGS");
            ngx_http_agent_json_key(j, "toolCallId");
            ngx_http_agent_json_str(j, &c[i].id);
            ngx_http_agent_json_key(j, "delta");
            ngx_http_agent_json_str(j, &c[i].arguments);
            ngx_http_agent_json_end(j);

            if (ngx_http_agent_agui_send(s, j, 0) != NGX_OK) {
                return NGX_ERROR;
            }
        }

        ngx_http_agent_agui_head(j, "TOOL_CALL_END");
        ngx_http_agent_json_key(j, "toolCallId");
        ngx_http_agent_json_str(j, &c[i].id);
        ngx_http_agent_json_end(j);

        if (ngx_http_agent_agui_send(s, j, 1) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* a tool's answer: a JSON string is its text, any other value its JSON */

static ngx_int_t
ngx_http_agent_agui_result(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j)
{
    yajl_val   v;
    ngx_str_t  id, content;

    if (ngx_http_agent_id_make(s->pool, &id) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_str_set(&content, "");
    v = NULL;

    if (ev->json && ev->json->len) {
        v = ngx_http_agent_json_parse(s->pool, ev->json->data, ev->json->len,
                                      NULL);
        content = *ev->json;

    } else if (ev->value) {
        v = ev->value;

        if (ngx_http_agent_json_encode(s->pool, v, &content) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    ngx_http_agent_agui_head(j, "TOOL_CALL_RESULT");
    ngx_http_agent_json_key(j, "messageId");
    ngx_http_agent_json_str(j, &id);
    ngx_http_agent_json_key(j, "toolCallId");
    ngx_http_agent_json_str(j, ev->id);
    ngx_http_agent_json_key(j, "role");
    ngx_http_agent_json_cstr(j, "tool");
    ngx_http_agent_json_key(j, "content");

    if (v && YAJL_IS_STRING(v)) {
        ngx_http_agent_json_val(j, v);

    } else {
        ngx_http_agent_json_str(j, &content);
    }

    ngx_http_agent_json_end(j);

    return ngx_http_agent_agui_send(s, j, 1) == NGX_OK ? NGX_DECLINED
                                                       : NGX_ERROR;
}


/*
 * A step's update: the graph's channels but messages (AG-UI's messages are
 * events of their own) and the turn's own input and session_id, whole the
 * first time, then as a JSON Patch of the channels the step wrote, each to
 * its value after the reducers
 */

static ngx_int_t
ngx_http_agent_agui_state(ngx_http_agent_stream_t *s,
    ngx_http_agent_agui_t *a, ngx_http_agent_event_t *ev,
    ngx_http_agent_json_t *j)
{
    size_t                  i;
    yajl_val                update, state, v;
    ngx_str_t               json, key;
    ngx_uint_t              any;
    ngx_http_agent_run_t   *run;
    ngx_http_agent_json_t  *sj;

    run = s->state;

    if (run == NULL || ev->json == NULL) {
        return NGX_DECLINED;
    }

    update = ngx_http_agent_json_parse(s->pool, ev->json->data, ev->json->len,
                                       NULL);
    if (update == NULL || !YAJL_IS_OBJECT(update)) {
        return NGX_DECLINED;
    }

    any = 0;

    for (i = 0; i < update->u.object.len; i++) {
        any |= ngx_http_agent_agui_shown(run, update->u.object.keys[i]);
    }

    if (!any && a->state) {
        return NGX_DECLINED;
    }

    sj = ngx_http_agent_json_create(s->pool);
    if (sj == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_state_values(sj, run);

    if (ngx_http_agent_json_done(sj, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    state = ngx_http_agent_json_parse(s->pool, json.data, json.len, NULL);
    if (state == NULL || !YAJL_IS_OBJECT(state)) {
        return NGX_ERROR;
    }

    if (!a->state) {
        a->state = 1;

        ngx_http_agent_agui_head(j, "STATE_SNAPSHOT");
        ngx_http_agent_json_key(j, "snapshot");
        ngx_http_agent_json_obj(j);

        for (i = 0; i < state->u.object.len; i++) {
            if (ngx_http_agent_agui_shown(run, state->u.object.keys[i])) {
                ngx_http_agent_json_cstr(j, state->u.object.keys[i]);
                ngx_http_agent_json_val(j, state->u.object.values[i]);
            }
        }

        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);

        return ngx_http_agent_agui_send(s, j, 1) == NGX_OK ? NGX_DECLINED
                                                           : NGX_ERROR;
    }

    ngx_http_agent_agui_head(j, "STATE_DELTA");
    ngx_http_agent_json_key(j, "delta");
    ngx_http_agent_json_arr(j);

    for (i = 0; i < update->u.object.len; i++) {
        if (!ngx_http_agent_agui_shown(run, update->u.object.keys[i])) {
            continue;
        }

        v = ngx_http_agent_json_get(state, update->u.object.keys[i]);

        if (v == NULL) {
            continue;
        }

        /* "add" sets a member that is there as well; names have no / ~ */

        key.len = ngx_strlen(update->u.object.keys[i]) + 1;
        key.data = ngx_pnalloc(s->pool, key.len);
        if (key.data == NULL) {
            return NGX_ERROR;
        }

        key.data[0] = '/';
        ngx_memcpy(key.data + 1, update->u.object.keys[i], key.len - 1);

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "op");
        ngx_http_agent_json_cstr(j, "add");
        ngx_http_agent_json_key(j, "path");
        ngx_http_agent_json_str(j, &key);
        ngx_http_agent_json_key(j, "value");
        ngx_http_agent_json_val(j, v);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_agui_send(s, j, 1) == NGX_OK ? NGX_DECLINED
                                                       : NGX_ERROR;
}


/* a channel of the graph's state, as AG-UI shows it */

static ngx_uint_t
ngx_http_agent_agui_shown(ngx_http_agent_run_t *run, const char *name)
{
    ngx_int_t  n;
    ngx_str_t  key;

    key.data = (u_char *) name;
    key.len = ngx_strlen(name);

    n = ngx_http_agent_graph_channel(run->graph, &key);

    return n != NGX_ERROR && n != NGX_HTTP_AGENT_CH_MESSAGES
           && n != NGX_HTTP_AGENT_CH_INPUT
           && n != NGX_HTTP_AGENT_CH_SESSION_ID;
}


/* RUN_FINISHED: its outcome a success, or the interrupt the run waits at */

static void
ngx_http_agent_agui_finished(ngx_http_agent_stream_t *s,
    ngx_http_agent_agui_t *a, ngx_http_agent_json_t *j)
{
    yajl_val  v, value, node;

    ngx_http_agent_agui_head(j, "RUN_FINISHED");
    ngx_http_agent_json_key(j, "threadId");
    ngx_http_agent_json_bytes(j, s->session_id.data,
                              ngx_http_agent_store_id_shown(&s->session_id));
    ngx_http_agent_json_key(j, "runId");
    ngx_http_agent_json_str(j, &s->run_id);
    ngx_http_agent_json_key(j, "outcome");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");

    if (a->interrupt.len == 0) {
        ngx_http_agent_json_cstr(j, "success");
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
        return;
    }

    v = ngx_http_agent_json_parse(s->pool, a->interrupt.data,
                                  a->interrupt.len, NULL);
    value = v ? ngx_http_agent_json_get(v, "value") : NULL;
    node = v ? ngx_http_agent_json_get(v, "node") : NULL;

    ngx_http_agent_json_cstr(j, "interrupt");
    ngx_http_agent_json_key(j, "interrupts");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, &a->interrupt_id);
    ngx_http_agent_json_key(j, "reason");
    ngx_http_agent_json_cstr(j, "input_required");

    if (value && YAJL_IS_STRING(value)) {
        ngx_http_agent_json_key(j, "message");
        ngx_http_agent_json_val(j, value);
    }

    ngx_http_agent_json_key(j, "metadata");
    ngx_http_agent_json_obj(j);

    if (node && YAJL_IS_STRING(node)) {
        ngx_http_agent_json_key(j, "node");
        ngx_http_agent_json_val(j, node);
    }

    if (value) {
        ngx_http_agent_json_key(j, "value");
        ngx_http_agent_json_val(j, value);
    }

    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);
}
