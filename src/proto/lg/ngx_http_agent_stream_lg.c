
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_turn.h"


/*
 * The LangGraph Agent Server's stream: one event of the turn becomes an
 * event of each stream mode the run asked for, named as the SDK expects;
 * the format sends them itself and answers NGX_DECLINED (more than one
 * per event).  The step modes (tasks, checkpoints, debug, a subgraph's
 * steps): stream_lg_steps.c.
 */


static ngx_int_t ngx_http_agent_lg_events(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run);
static ngx_int_t ngx_http_agent_lg_write(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *name);
static ngx_int_t ngx_http_agent_lg_send(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, const char *name, ngx_uint_t now);
static void ngx_http_agent_lg_meta_make(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j);
static void ngx_http_agent_lg_meta(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j);
static ngx_int_t ngx_http_agent_lg_tools(ngx_http_agent_stream_t *s,
    ngx_http_agent_run_t *run, ngx_http_agent_json_t *j);
static void ngx_http_agent_lg_chunk(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, ngx_str_t *text, ngx_str_t *id,
    const char *type, ngx_http_agent_event_t *end);
static ngx_int_t ngx_http_agent_lg_partial(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *id);
static ngx_int_t ngx_http_agent_lg_complete(ngx_http_agent_stream_t *s,
    ngx_http_agent_run_t *run, ngx_http_agent_json_t *j);


#define NGX_HTTP_AGENT_LG_META_KEY  512


/* updates 2: the step's update from the run, no JSON of ours first */
ngx_http_agent_format_t  ngx_http_agent_lg_format = {
    ngx_string("langgraph"),
    ngx_http_agent_lg_write,
    2
};


static ngx_int_t
ngx_http_agent_lg_write(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *name)
{
    u_char                 buf[NGX_HTTP_AGENT_LG_MSG_ID];
    ngx_str_t              id;
    ngx_uint_t             k;
    ngx_http_agent_run_t  *run;

    run = s->state;

    switch (ev->type) {

    case NGX_HTTP_AGENT_EV_START:

        if (run) {
            /* the messages mode shows whole those the run adds */
            s->messages_seen =
                        run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages->nelts;
        }

        if (s->again) {
            /* taken over: the lost worker's start and values are kept */
            break;
        }

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "run_id");
        ngx_http_agent_json_str(j, &s->run_id);
        ngx_http_agent_json_key(j, "attempt");
        ngx_http_agent_json_int(j, 1);
        ngx_http_agent_json_end(j);

        if (ngx_http_agent_lg_send(s, j, "metadata", 1) != NGX_OK) {
            return NGX_ERROR;
        }

        /* the input step's values: the state the first node starts with */

        if ((s->modes & NGX_HTTP_AGENT_MODE_VALUES) && run) {
            ngx_http_agent_lg_values(j, run, &s->session_id, 1);

            if (ngx_http_agent_lg_send(s, j, "values", 1) != NGX_OK) {
                return NGX_ERROR;
            }
        }

        break;

    case NGX_HTTP_AGENT_EV_UPDATE:
        if (run && run->interrupt.len
            && (run->update == NULL || run->update->nelts == 0))
        {
            /* a node that waits, no update: its interrupt says so, next */
            break;
        }

        /* a tool's result first, as LangGraph's message handler sends it */

        if ((s->modes & NGX_HTTP_AGENT_MODE_MESSAGES)
            && ngx_http_agent_lg_tools(s, run, j) != NGX_OK)
        {
            return NGX_ERROR;
        }

        if (s->modes & NGX_HTTP_AGENT_MODE_UPDATES) {
            ngx_http_agent_json_obj(j);
            ngx_http_agent_json_str(j, &s->node);
            ngx_http_agent_lg_update(j, run, &s->session_id, 1);
            ngx_http_agent_json_end(j);

            if (ngx_http_agent_lg_send(s, j, "updates", 1) != NGX_OK) {
                return NGX_ERROR;
            }
        }

        if (s->modes & NGX_HTTP_AGENT_MODE_VALUES) {
            ngx_http_agent_lg_values(j, run, &s->session_id, 1);

            if (ngx_http_agent_lg_send(s, j, "values", 1) != NGX_OK) {
                return NGX_ERROR;
            }
        }

        if ((s->modes & NGX_HTTP_AGENT_MODE_PARTIAL)
            && ngx_http_agent_lg_complete(s, run, j) != NGX_OK)
        {
            return NGX_ERROR;
        }

        break;

    case NGX_HTTP_AGENT_EV_CHUNK:

        /*
         * the model's own event first, its tuple after, as the Python
         * server's callbacks send them: CopilotKit reads a text from the
         * first it sees; a template's text is no model's chunk: a
         * message, "ai" (LangGraph sends a function node's whole)
         */

        if ((s->modes & NGX_HTTP_AGENT_MODE_EVENTS)
            && ngx_http_agent_lg_events(s, ev, j, run) != NGX_OK)
        {
            return NGX_ERROR;
        }

        if (run == NULL) {
            break;
        }

        /* the chunk's id is the one the message will have when appended */

        ngx_http_agent_lg_message_id(buf, &s->session_id,
                 run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages->nelts, &id);

        if (s->modes & NGX_HTTP_AGENT_MODE_MESSAGES) {
            ngx_http_agent_json_arr(j);
            ngx_http_agent_lg_chunk(s, j, ev->text, &id,
                                    (s->modes & NGX_HTTP_AGENT_MODE_JS)
                                    || s->model_run_id.len == 0
                                    ? "ai" : "AIMessageChunk", NULL);
            ngx_http_agent_lg_meta(s, j);
            ngx_http_agent_json_arr_end(j);

            if (ngx_http_agent_lg_send(s, j, "messages", 0) != NGX_OK) {
                return NGX_ERROR;
            }
        }

        if ((s->modes & NGX_HTTP_AGENT_MODE_PARTIAL)
            && ngx_http_agent_lg_partial(s, ev, j, &id) != NGX_OK)
        {
            return NGX_ERROR;
        }

        break;

    case NGX_HTTP_AGENT_EV_MODEL_END:

        /*
         * the model's last chunk, as Python's LangChain streams it: no
         * text, its finish_reason (CopilotKit ends a text message there)
         */

        if ((s->modes & NGX_HTTP_AGENT_MODE_EVENTS)
            && ngx_http_agent_lg_events(s, ev, j, run) != NGX_OK)
        {
            return NGX_ERROR;
        }

        if (run == NULL || !(s->modes & NGX_HTTP_AGENT_MODE_MESSAGES)
            || (s->modes & NGX_HTTP_AGENT_MODE_JS))
        {
            break;
        }

        ngx_http_agent_lg_message_id(buf, &s->session_id,
                 run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages->nelts, &id);

        ngx_http_agent_json_arr(j);
        ngx_http_agent_lg_chunk(s, j, NULL, &id, "AIMessageChunk", ev);
        ngx_http_agent_lg_meta(s, j);
        ngx_http_agent_json_arr_end(j);

        if (ngx_http_agent_lg_send(s, j, "messages", 0) != NGX_OK) {
            return NGX_ERROR;
        }

        break;

    case NGX_HTTP_AGENT_EV_CUSTOM:
        if (!(s->modes & NGX_HTTP_AGENT_MODE_CUSTOM)) {
            break;
        }

        ngx_http_agent_stream_payload(j, ev);

        if (ngx_http_agent_lg_send(s, j, "custom", 1) != NGX_OK) {
            return NGX_ERROR;
        }

        break;

    case NGX_HTTP_AGENT_EV_INTERRUPT:

        /* the run waits: __interrupt__ in updates and in values */

        for (k = 0; k < 2; k++) {
            if (!(s->modes & (k ? NGX_HTTP_AGENT_MODE_VALUES
                                : NGX_HTTP_AGENT_MODE_UPDATES)))
            {
                continue;
            }

            ngx_http_agent_json_obj(j);
            ngx_http_agent_json_key(j, "__interrupt__");
            ngx_http_agent_lg_interrupts(j, ev->json);
            ngx_http_agent_json_end(j);

            if (ngx_http_agent_lg_send(s, j, k ? "values" : "updates", 1)
                != NGX_OK)
            {
                return NGX_ERROR;
            }
        }

        break;

    case NGX_HTTP_AGENT_EV_SUBGRAPH:
        return ngx_http_agent_lg_subgraph_event(s, ev, j) == NGX_OK
               ? NGX_DECLINED : NGX_ERROR;

    default:
        break;
    }

    if ((s->modes & (NGX_HTTP_AGENT_MODE_DEBUG|NGX_HTTP_AGENT_MODE_TASKS))
        && ngx_http_agent_lg_task(s, ev, j) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (ev->type == NGX_HTTP_AGENT_EV_CHECKPOINT) {
        return ngx_http_agent_lg_checkpoint_event(s, ev, j) == NGX_OK
               ? NGX_DECLINED : NGX_ERROR;
    }

    if ((s->modes & NGX_HTTP_AGENT_MODE_EVENTS)
        && ev->type != NGX_HTTP_AGENT_EV_CHUNK
        && ev->type != NGX_HTTP_AGENT_EV_MODEL_END
        && ngx_http_agent_lg_events(s, ev, j, run) != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* a run's error is its last event, after the other modes' (LangGraph) */

    if (ev->type == NGX_HTTP_AGENT_EV_ERROR) {
        ngx_http_agent_lg_error(j, ev->code, ev->text);

        if (ngx_http_agent_lg_send(s, j, "error", 1) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    return NGX_DECLINED;
}


static ngx_int_t
ngx_http_agent_lg_send(ngx_http_agent_stream_t *s, ngx_http_agent_json_t *j,
    const char *name, ngx_uint_t now)
{
    return ngx_http_agent_lg_send_as(s, j, name, NULL, now);
}


/*
 * a message's chunk as LangGraph's servers serialize it; its type as the
 * Python server (the platform) says it, unless agent_langgraph_server js:
 * a messages-tuple chunk is the class, "AIMessageChunk" (CopilotKit reads
 * no other; the JS server says "ai"), the message so far of
 * messages/partial a message, "ai"
 */

static void
ngx_http_agent_lg_chunk(ngx_http_agent_stream_t *s, ngx_http_agent_json_t *j,
    ngx_str_t *text, ngx_str_t *id, const char *type,
    ngx_http_agent_event_t *end)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "content");

    if (text) {
        ngx_http_agent_json_str(j, text);

    } else {
        ngx_http_agent_json_cstr(j, "");
    }

    ngx_http_agent_json_key(j, "additional_kwargs");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "response_metadata");
    ngx_http_agent_json_obj(j);

    if (end) {
        ngx_http_agent_json_key(j, "finish_reason");
        ngx_http_agent_json_cstr(j, end->json ? "tool_calls" : "stop");
        ngx_http_agent_json_key(j, "model_name");
        ngx_http_agent_json_str(j, &s->model_remote);
    }

    ngx_http_agent_json_end(j);

    if (end) {
        ngx_http_agent_json_key(j, "usage_metadata");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "input_tokens");
        ngx_http_agent_json_int(j, end->prompt_tokens);
        ngx_http_agent_json_key(j, "output_tokens");
        ngx_http_agent_json_int(j, end->completion_tokens);
        ngx_http_agent_json_key(j, "total_tokens");
        ngx_http_agent_json_int(j, end->prompt_tokens
                                   + end->completion_tokens);
        ngx_http_agent_json_end(j);
    }
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, type);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, id);
    ngx_http_agent_json_key(j, "tool_calls");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "invalid_tool_calls");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "tool_call_chunks");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);
}


/*
 * stream_mode "messages": the message so far at each chunk
 * (messages/partial), its metadata before its first, and each message of
 * a step whole after the step's values (messages/complete)
 */

static ngx_int_t
ngx_http_agent_lg_partial(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *id)
{
    u_char  *p;
    size_t   size;

    if (s->partial.len == 0) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_str(j, id);
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "metadata");
        ngx_http_agent_lg_meta(s, j);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);

        if (ngx_http_agent_lg_send(s, j, "messages/metadata", 0) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    /* the text so far, in a buffer that doubles */

    if (s->partial.len + ev->text->len > s->partial_size) {
        size = ngx_max(2 * s->partial_size,
                       s->partial.len + ev->text->len + 256);

        p = ngx_pnalloc(s->pool, size);
        if (p == NULL) {
            return NGX_ERROR;
        }

        ngx_memcpy(p, s->partial.data, s->partial.len);
        s->partial.data = p;
        s->partial_size = size;
    }

    ngx_memcpy(s->partial.data + s->partial.len, ev->text->data,
               ev->text->len);
    s->partial.len += ev->text->len;

    ngx_http_agent_json_arr(j);
    ngx_http_agent_lg_chunk(s, j, &s->partial, id, "ai", NULL);
    ngx_http_agent_json_arr_end(j);

    return ngx_http_agent_lg_send(s, j, "messages/partial", 0);
}


static ngx_int_t
ngx_http_agent_lg_complete(ngx_http_agent_stream_t *s,
    ngx_http_agent_run_t *run, ngx_http_agent_json_t *j)
{
    u_char                 buf[NGX_HTTP_AGENT_LG_MSG_ID];
    ngx_str_t              id;
    ngx_uint_t             n;
    ngx_array_t           *msgs;
    ngx_http_agent_msg_t  *m;

    s->partial.len = 0;

    if (run == NULL) {
        return NGX_OK;
    }

    msgs = run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages;
    m = msgs->elts;

    for (n = s->messages_seen; n < msgs->nelts; n++) {
        ngx_http_agent_lg_message_id(buf, &s->session_id, n, &id);

        ngx_http_agent_json_arr(j);
        ngx_http_agent_message_lc(j, run->pool, &m[n], &id);
        ngx_http_agent_json_arr_end(j);

        if (ngx_http_agent_lg_send(s, j, "messages/complete", 1) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    s->messages_seen = msgs->nelts;

    return NGX_OK;
}


/*
 * What LangGraph tells of a message chunk: where in the graph it is.  It
 * is the same for every token of a node's model call, so the stream keeps
 * the last one it made (its key the fields it is made of) and copies it
 * in: made per token, it was a fifth of a runs/stream turn's instructions.
 * A copy per worker missed on every token once streams interleave, and
 * each miss left its text in the stream's pool: 150 KiB an open stream
 */

static void
ngx_http_agent_lg_meta(ngx_http_agent_stream_t *s, ngx_http_agent_json_t *j)
{
    u_char                 key[NGX_HTTP_AGENT_LG_META_KEY], *p;
    ngx_str_t              meta;
    ngx_http_agent_json_t  *m;

    p = ngx_snprintf(key, sizeof(key),
                     "%uz:%V%uz:%V%uz:%V%uz:%V%uz:%V%uz:%V%uz:%V%uz:%V%ui",
                     s->node.len, &s->node, s->node_run_id.len,
                     &s->node_run_id, s->session_id.len, &s->session_id,
                     s->run_id.len, &s->run_id, s->graph.len, &s->graph,
                     s->assistant.len, &s->assistant, s->provider.len,
                     &s->provider, s->model_remote.len, &s->model_remote,
                     s->step);

    if (p == key + sizeof(key)) {
        /* too long to keep: made in place */
        ngx_http_agent_lg_meta_make(s, j);
        return;
    }

    if ((size_t) (p - key) == s->meta_key.len
        && ngx_memcmp(key, s->meta_key.data, p - key) == 0)
    {
        ngx_http_agent_json_raw(j, &s->meta);
        return;
    }

    m = ngx_http_agent_json_create(s->pool);

    if (m == NULL) {
        ngx_http_agent_lg_meta_make(s, j);
        return;
    }

    ngx_http_agent_lg_meta_make(s, m);

    if (ngx_http_agent_json_done(m, &meta) != NGX_OK) {
        ngx_http_agent_lg_meta_make(s, j);
        return;
    }

    s->meta_key.data = ngx_pnalloc(s->pool, p - key);

    if (s->meta_key.data) {
        s->meta_key.len = ngx_cpymem(s->meta_key.data, key, p - key)
                          - s->meta_key.data;
        s->meta = meta;

    } else {
        s->meta_key.len = 0;
    }

    ngx_http_agent_json_raw(j, &meta);
}


static void
ngx_http_agent_lg_meta_make(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j)
{
    u_char     buf[256], *p;
    ngx_str_t  ns;

    p = ngx_snprintf(buf, sizeof(buf), "%V:%V", &s->node, &s->node_run_id);
    ns.data = buf;
    ns.len = p - buf;

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "tags");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "created_by");
    ngx_http_agent_json_cstr(j, "system");
    ngx_http_agent_json_key(j, "run_attempt");
    ngx_http_agent_json_int(j, 1);
    ngx_http_agent_json_key(j, "thread_id");
    ngx_http_agent_json_bytes(j, s->session_id.data,
                              ngx_http_agent_store_id_shown(&s->session_id));
    ngx_http_agent_json_key(j, "run_id");
    ngx_http_agent_json_str(j, &s->run_id);
    ngx_http_agent_json_key(j, "graph_id");
    ngx_http_agent_json_str(j, &s->graph);
    ngx_http_agent_json_key(j, "assistant_id");
    ngx_http_agent_json_str(j, &s->assistant);
    ngx_http_agent_json_key(j, "langgraph_step");
    ngx_http_agent_json_int(j, s->step);
    ngx_http_agent_json_key(j, "langgraph_node");
    ngx_http_agent_json_str(j, &s->node);
    ngx_http_agent_json_key(j, "langgraph_triggers");
    ngx_http_agent_json_arr(j);
    p = ngx_snprintf(buf + ns.len, sizeof(buf) - ns.len, "branch:to:%V",
                     &s->node);
    ngx_http_agent_json_bytes(j, buf + ns.len, p - (buf + ns.len));
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "langgraph_path");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_cstr(j, "__pregel_pull");
    ngx_http_agent_json_str(j, &s->node);
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "langgraph_checkpoint_ns");
    ngx_http_agent_json_str(j, &ns);
    ngx_http_agent_json_key(j, "checkpoint_ns");
    ngx_http_agent_json_str(j, &ns);

    if (s->provider.len) {
        ngx_http_agent_json_key(j, "ls_provider");
        ngx_http_agent_json_str(j, &s->provider);
        ngx_http_agent_json_key(j, "ls_model_name");
        ngx_http_agent_json_str(j, &s->model_remote);
        ngx_http_agent_json_key(j, "ls_model_type");
        ngx_http_agent_json_cstr(j, "chat");
    }

    ngx_http_agent_json_end(j);
}


/* messages mode: the messages a step appended that were not streamed */

static ngx_int_t
ngx_http_agent_lg_tools(ngx_http_agent_stream_t *s, ngx_http_agent_run_t *run,
    ngx_http_agent_json_t *j)
{
    u_char                   buf[NGX_HTTP_AGENT_LG_MSG_ID];
    ngx_str_t                id;
    ngx_uint_t               i, n, base;
    ngx_http_agent_msg_t    *m;
    ngx_http_agent_write_t  *w;

    if (run == NULL || run->update == NULL) {
        return NGX_OK;
    }

    w = run->update->elts;
    base = run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages->nelts;

    for (i = 0; i < run->update->nelts; i++) {
        if (w[i].channel != NGX_HTTP_AGENT_CH_MESSAGES
            || w[i].value.messages == NULL)
        {
            continue;
        }

        m = w[i].value.messages->elts;
        base -= ngx_min(base, w[i].value.messages->nelts);

        for (n = 0; n < w[i].value.messages->nelts; n++) {
            if (m[n].role.len == 0 || m[n].role.data[0] != 't') {
                continue;
            }

            ngx_http_agent_lg_message_id(buf, &s->session_id,
                                         base + n, &id);

            ngx_http_agent_json_arr(j);
            ngx_http_agent_message_lc(j, run->pool, &m[n], &id);
            ngx_http_agent_lg_meta(s, j);
            ngx_http_agent_json_arr_end(j);

            if (ngx_http_agent_lg_send(s, j, "messages", 1) != NGX_OK) {
                return NGX_ERROR;
            }
        }
    }

    return NGX_OK;
}


/*
 * "events": astream_events v2, as our "events" format words them, in
 * LangChain's shapes (a chunk with the id of the message it becomes, a
 * tool's end a ToolMessage, a model's tool calls as tool_call_chunks
 * before its end); not the graph's own on_chain_stream: LangGraph's
 * servers send those as the other modes' events only; nor a template's
 * text as a model's stream (a function node of LangGraph's has none)
 */

static ngx_int_t
ngx_http_agent_lg_events(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run)
{
    u_char                  buf[NGX_HTTP_AGENT_LG_MSG_ID];
    ngx_int_t               rc;
    ngx_str_t               ename;
    ngx_uint_t              i;
    ngx_array_t            *calls;
    ngx_http_agent_call_t  *c;

    if (ev->type == NGX_HTTP_AGENT_EV_UPDATE
        || ev->type == NGX_HTTP_AGENT_EV_INTERRUPT
        || (ev->type == NGX_HTTP_AGENT_EV_CHUNK && s->model_run_id.len == 0))
    {
        /* nor a template's text: no model streamed it */
        return NGX_OK;
    }

    s->lc = 1;
    ngx_str_null(&s->chunk_id);

    if (run && (ev->type == NGX_HTTP_AGENT_EV_CHUNK
                || ev->type == NGX_HTTP_AGENT_EV_MODEL_END))
    {
        ngx_http_agent_lg_message_id(buf, &s->session_id,
                 run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages->nelts,
                 &s->chunk_id);
    }

    if (ev->type == NGX_HTTP_AGENT_EV_MODEL_END && ev->json) {

        /* each call: its name and id, its arguments, its end */

        if (ngx_http_agent_message_calls(s->pool, ev->json, &calls, 0)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        c = calls->elts;

        /* the text streamed before ends first: a chunk of nothing */

        if (calls->nelts) {
            ngx_http_agent_stream_events_call(s, j, NULL, NULL, NULL);
            if (ngx_http_agent_lg_send(s, j, "events", 0) != NGX_OK) {
                return NGX_ERROR;
            }
        }

        for (i = 0; i < calls->nelts; i++) {
            ngx_http_agent_stream_events_call(s, j, &c[i].id, &c[i].name,
                                              NULL);
            if (ngx_http_agent_lg_send(s, j, "events", 0) != NGX_OK) {
                return NGX_ERROR;
            }

            ngx_http_agent_stream_events_call(s, j, NULL, NULL,
                                              &c[i].arguments);
            if (ngx_http_agent_lg_send(s, j, "events", 0) != NGX_OK) {
                return NGX_ERROR;
            }

            ngx_http_agent_stream_events_call(s, j, NULL, NULL, NULL);
            if (ngx_http_agent_lg_send(s, j, "events", 0) != NGX_OK) {
                return NGX_ERROR;
            }
        }
    }

    ngx_str_null(&ename);

    rc = ngx_http_agent_events_format.write(s, ev, j, &ename);

    /* the id is this frame's: not left to another writer */
    ngx_str_null(&s->chunk_id);

    switch (rc) {

    case NGX_OK:
        return ngx_http_agent_lg_send(s, j, "events",
                                      ev->type != NGX_HTTP_AGENT_EV_CHUNK);

    case NGX_DECLINED:
        return NGX_OK;

    default:
        return NGX_ERROR;
    }
}

