
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_responses_int.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_util.h"


/*
 * A turn as an Open Responses response: each model call's text an output
 * message (its text streamed as output_text deltas when asked), the
 * response created, then completed, failed, or incomplete when the run
 * waits at an interrupt (what it waits for as the last message; the next
 * input of the conversation answers it).  The same object, whole, is the
 * answer of a request that does not stream (the answers hook): the format
 * keeps the output items as it goes, its sink drops the events then.
 */


static ngx_int_t ngx_http_agent_responses_write(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *name);
static void ngx_http_agent_responses_started(ngx_http_agent_turn_t *turn);
static ngx_int_t ngx_http_agent_responses_answer(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev);
static void ngx_http_agent_responses_part(ngx_http_agent_json_t *j,
    ngx_http_agent_responses_out_t *o, const char *type);
static ngx_int_t ngx_http_agent_responses_text(ngx_http_agent_stream_t *s,
    ngx_http_agent_responses_out_t *o, ngx_http_agent_json_t *j,
    ngx_str_t *text);
static ngx_int_t ngx_http_agent_responses_close(ngx_http_agent_stream_t *s,
    ngx_http_agent_responses_out_t *o, ngx_http_agent_json_t *j);
static ngx_str_t *ngx_http_agent_responses_keep(ngx_pool_t *pool,
    ngx_http_agent_responses_out_t *o, ngx_str_t *text);
static void ngx_http_agent_responses_item(ngx_http_agent_json_t *j,
    ngx_str_t *id, ngx_str_t *text, ngx_uint_t done);
static void ngx_http_agent_responses_object(ngx_http_agent_json_t *j,
    ngx_http_agent_responses_out_t *o, ngx_str_t *thread,
    ngx_http_agent_event_t *ev);


ngx_http_agent_format_t  ngx_http_agent_responses_format = {
    ngx_string("responses"),
    ngx_http_agent_responses_write,
    0
};


ngx_http_agent_turn_hooks_t  ngx_http_agent_responses_hooks = {
    NULL,
    NULL,
    ngx_http_agent_responses_started,
    ngx_http_agent_responses_poll,
    ngx_http_agent_responses_done,
    ngx_http_agent_responses_answer,
    NULL
};


static ngx_int_t
ngx_http_agent_responses_write(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *name)
{
    ngx_int_t                        rc;
    ngx_str_t                        text;
    ngx_http_agent_responses_out_t  *o;

    o = s->format_data;

    if (o == NULL || o->over) {
        return NGX_DECLINED;
    }

    switch (ev->type) {

    case NGX_HTTP_AGENT_EV_START:
        o->stream = s;
        ngx_http_agent_responses_head(j, o, "response.created");
        ngx_http_agent_json_key(j, "response");
        ngx_http_agent_responses_object(j, o, &s->session_id, NULL);
        ngx_http_agent_json_end(j);

        if (ngx_http_agent_responses_send(s, j, "response.created", 1)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        ngx_http_agent_responses_head(j, o, "response.in_progress");
        ngx_http_agent_json_key(j, "response");
        ngx_http_agent_responses_object(j, o, &s->session_id, NULL);
        ngx_http_agent_json_end(j);

        return ngx_http_agent_responses_send(s, j, "response.in_progress", 1)
               == NGX_OK ? NGX_DECLINED : NGX_ERROR;

    case NGX_HTTP_AGENT_EV_MODEL_START:
        o->item_id = s->model_run_id;
        o->streamed = 0;
        return NGX_DECLINED;

    case NGX_HTTP_AGENT_EV_CHUNK:
        o->streamed = 1;
        return ngx_http_agent_responses_text(s, o, j, ev->text) == NGX_OK
               ? NGX_DECLINED : NGX_ERROR;

    case NGX_HTTP_AGENT_EV_MODEL_END:
        if (!o->streamed
            && ngx_http_agent_responses_text(s, o, j, ev->text) != NGX_OK)
        {
            return NGX_ERROR;
        }

        return ngx_http_agent_responses_close(s, o, j) == NGX_OK
               ? NGX_DECLINED : NGX_ERROR;

    case NGX_HTTP_AGENT_EV_INTERRUPT:

        /* what the run waits for: the last message of the response */

        if (ev->json == NULL) {
            return NGX_DECLINED;
        }

        /* the client's own tools called: function_call items */

        if (ngx_http_agent_responses_close(s, o, j) != NGX_OK) {
            return NGX_ERROR;
        }

        rc = ngx_http_agent_responses_calls(s, s->pool, o, j, ev->json);
        if (rc != NGX_DECLINED) {
            return rc == NGX_OK ? NGX_DECLINED : NGX_ERROR;
        }

        o->interrupt = *ev->json;

        if (ngx_http_agent_turn_asks(s->pool, ev->json, &text) != NGX_OK) {
            return NGX_ERROR;
        }

        if (ngx_http_agent_responses_close(s, o, j) != NGX_OK
            || ngx_http_agent_id_make(s->pool, &o->item_id) != NGX_OK
            || ngx_http_agent_responses_text(s, o, j, &text) != NGX_OK
            || ngx_http_agent_responses_close(s, o, j) != NGX_OK)
        {
            return NGX_ERROR;
        }

        return NGX_DECLINED;

    case NGX_HTTP_AGENT_EV_END:
    case NGX_HTTP_AGENT_EV_ERROR:

        /* an answer no model call said (a template's, one not streamed) */

        if (ev->type == NGX_HTTP_AGENT_EV_END && o->items->nelts == 0
            && !o->open && o->interrupt.len == 0
            && ngx_http_agent_responses_text(s, o, j, ev->text) != NGX_OK)
        {
            return NGX_ERROR;
        }

        if (ngx_http_agent_responses_close(s, o, j) != NGX_OK) {
            return NGX_ERROR;
        }

        o->over = 1;

        text.data = (u_char *) (ev->type == NGX_HTTP_AGENT_EV_ERROR
                                ? "response.failed"
                                : o->interrupt.len ? "response.incomplete"
                                                   : "response.completed");

        ngx_http_agent_responses_head(j, o, (const char *) text.data);
        ngx_http_agent_json_key(j, "response");
        ngx_http_agent_responses_object(j, o, &s->session_id, ev);
        ngx_http_agent_json_end(j);

        return ngx_http_agent_responses_send(s, j, (const char *) text.data,
                                             1)
               == NGX_OK ? NGX_DECLINED : NGX_ERROR;

    default:
        return NGX_DECLINED;
    }
}


/*
 * background: the run outlives its client; without a stream the response
 * in progress is the answer now, the connection closing with it
 */

static void
ngx_http_agent_responses_started(ngx_http_agent_turn_t *turn)
{
    ngx_http_agent_json_t           *j;
    ngx_http_agent_turn_info_t       info;
    ngx_http_agent_responses_out_t  *o;

    o = ngx_http_agent_turn_in(turn)->data;

    if (!o->background
        || ngx_http_agent_turn_background(turn, o->answered) != NGX_OK)
    {
        return;
    }

    o->answered = 1;

    ngx_http_agent_turn_info(turn, &info);

    j = ngx_http_agent_json_create(info.request->pool);

    if (j) {
        ngx_http_agent_responses_object(j, o, info.session_id, NULL);
    }

    ngx_http_agent_turn_background_answer(turn, j);
}


/* a request that does not stream: the response at its end, whole */

static ngx_int_t
ngx_http_agent_responses_answer(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev)
{
    ngx_str_t                        text;
    ngx_http_request_t              *r;
    ngx_http_agent_json_t           *j;
    ngx_http_agent_turn_info_t       info;
    ngx_http_agent_responses_out_t  *o;

    o = ngx_http_agent_turn_in(turn)->data;
    ngx_http_agent_turn_info(turn, &info);
    r = info.request;

    if (o->answered) {
        /* a background response, answered when it began */
        return NGX_OK;
    }

    /*
     * no event ends the response here: the message a step left open (a
     * template's), or the answer no model call said, kept now
     */

    if (o->open) {
        text.data = o->text;
        text.len = o->text_len;
        o->open = 0;

        if (ngx_http_agent_responses_keep(r->pool, o, &text) == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

    } else if (ev->type == NGX_HTTP_AGENT_EV_END && o->items->nelts == 0
               && o->interrupt.len == 0 && ev->text && ev->text->len)
    {
        if (ngx_http_agent_responses_keep(r->pool, o, ev->text) == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_responses_object(j, o, info.session_id, ev);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/* an event of the open message's text part: which item, which part */

static void
ngx_http_agent_responses_part(ngx_http_agent_json_t *j,
    ngx_http_agent_responses_out_t *o, const char *type)
{
    ngx_http_agent_responses_head(j, o, type);
    ngx_http_agent_json_key(j, "item_id");
    ngx_http_agent_json_str(j, &o->item_id);
    ngx_http_agent_json_key(j, "output_index");
    ngx_http_agent_json_int(j, o->items->nelts);
    ngx_http_agent_json_key(j, "content_index");
    ngx_http_agent_json_int(j, 0);
}


/* a piece of the open message's text; the message opened at its first */

static ngx_int_t
ngx_http_agent_responses_text(ngx_http_agent_stream_t *s,
    ngx_http_agent_responses_out_t *o, ngx_http_agent_json_t *j,
    ngx_str_t *text)
{
    u_char     *p;
    size_t      size;
    ngx_str_t   none;

    if (text == NULL || text->len == 0) {
        return NGX_OK;
    }

    if (!o->open) {
        if (o->item_id.len == 0
            && ngx_http_agent_id_make(s->pool, &o->item_id) != NGX_OK)
        {
            return NGX_ERROR;
        }

        ngx_str_set(&none, "");
        o->text_len = 0;
        o->open = 1;

        ngx_http_agent_responses_head(j, o, "response.output_item.added");
        ngx_http_agent_json_key(j, "output_index");
        ngx_http_agent_json_int(j, o->items->nelts);
        ngx_http_agent_json_key(j, "item");
        ngx_http_agent_responses_item(j, &o->item_id, &none, 0);
        ngx_http_agent_json_end(j);

        if (ngx_http_agent_responses_send(s, j, "response.output_item.added",
                                          0)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        ngx_http_agent_responses_part(j, o, "response.content_part.added");
        ngx_http_agent_json_key(j, "part");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "output_text");
        ngx_http_agent_json_key(j, "text");
        ngx_http_agent_json_cstr(j, "");
        ngx_http_agent_json_key(j, "annotations");
        ngx_http_agent_json_arr(j);
        ngx_http_agent_json_arr_end(j);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);

        if (ngx_http_agent_responses_send(s, j,
                                          "response.content_part.added", 0)
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    /* the text kept for the item's end: doubled as it grows */

    if (o->text_len + text->len > o->text_size) {
        size = ngx_max(2 * o->text_size, o->text_len + text->len);

        p = ngx_pnalloc(s->pool, size);
        if (p == NULL) {
            return NGX_ERROR;
        }

        if (o->text_len) {
            ngx_memcpy(p, o->text, o->text_len);
        }

        o->text = p;
        o->text_size = size;
    }

    ngx_memcpy(o->text + o->text_len, text->data, text->len);
    o->text_len += text->len;

    ngx_http_agent_responses_part(j, o, "response.output_text.delta");
    ngx_http_agent_json_key(j, "delta");
    ngx_http_agent_json_str(j, text);
    ngx_http_agent_json_key(j, "logprobs");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_responses_send(s, j, "response.output_text.delta",
                                         0);
}


/* the open message's end: its text, its part and the item done, kept */

static ngx_int_t
ngx_http_agent_responses_close(ngx_http_agent_stream_t *s,
    ngx_http_agent_responses_out_t *o, ngx_http_agent_json_t *j)
{
    ngx_str_t  text, *item;

    if (!o->open) {
        return NGX_OK;
    }

    o->open = 0;

    text.data = o->text;
    text.len = o->text_len;

    ngx_http_agent_responses_part(j, o, "response.output_text.done");
    ngx_http_agent_json_key(j, "text");
    ngx_http_agent_json_str(j, &text);
    ngx_http_agent_json_key(j, "logprobs");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_responses_send(s, j, "response.output_text.done", 0)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    ngx_http_agent_responses_part(j, o, "response.content_part.done");
    ngx_http_agent_json_key(j, "part");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "output_text");
    ngx_http_agent_json_key(j, "text");
    ngx_http_agent_json_str(j, &text);
    ngx_http_agent_json_key(j, "annotations");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_responses_send(s, j, "response.content_part.done", 0)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    item = ngx_http_agent_responses_keep(s->pool, o, &text);
    if (item == NULL) {
        return NGX_ERROR;
    }

    ngx_str_null(&o->item_id);

    return ngx_http_agent_responses_item_done(s, j, o, item);
}


/* the open item, whole, kept for the response's output */

static ngx_str_t *
ngx_http_agent_responses_keep(ngx_pool_t *pool,
    ngx_http_agent_responses_out_t *o, ngx_str_t *text)
{
    ngx_str_t              *item;
    ngx_http_agent_json_t  *j;

    if (o->item_id.len == 0) {
        if (ngx_http_agent_id_make(pool, &o->item_id) != NGX_OK) {
            return NULL;
        }
    }

    j = ngx_http_agent_json_create(pool);
    item = ngx_array_push(o->items);

    if (j == NULL || item == NULL) {
        return NULL;
    }

    ngx_http_agent_responses_item(j, &o->item_id, text, 1);

    if (ngx_http_agent_json_done(j, item) != NGX_OK) {
        return NULL;
    }

    return item;
}


/* an output message: in progress and empty, or done with its text */

static void
ngx_http_agent_responses_item(ngx_http_agent_json_t *j, ngx_str_t *id,
    ngx_str_t *text, ngx_uint_t done)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, id);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "message");
    ngx_http_agent_json_key(j, "status");
    ngx_http_agent_json_cstr(j, done ? "completed" : "in_progress");
    ngx_http_agent_json_key(j, "role");
    ngx_http_agent_json_cstr(j, "assistant");
    ngx_http_agent_json_key(j, "content");
    ngx_http_agent_json_arr(j);

    if (done) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "output_text");
        ngx_http_agent_json_key(j, "text");
        ngx_http_agent_json_str(j, text);
        ngx_http_agent_json_key(j, "annotations");
        ngx_http_agent_json_arr(j);
        ngx_http_agent_json_arr_end(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);
}


/*
 * The response object: in progress (ev NULL), completed, incomplete (the
 * run waits), or failed with its error; its output the items so far
 */

static void
ngx_http_agent_responses_object(ngx_http_agent_json_t *j,
    ngx_http_agent_responses_out_t *o, ngx_str_t *thread,
    ngx_http_agent_event_t *ev)
{
    ngx_str_t   *item;
    ngx_uint_t   i, failed;

    failed = (ev && ev->type == NGX_HTTP_AGENT_EV_ERROR);

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, &o->id);
    ngx_http_agent_json_key(j, "object");
    ngx_http_agent_json_cstr(j, "response");
    ngx_http_agent_json_key(j, "created_at");
    ngx_http_agent_json_int(j, o->created);
    ngx_http_agent_json_key(j, "status");
    ngx_http_agent_json_cstr(j, o->status ? o->status
                                : ev == NULL ? "in_progress"
                                : failed ? "failed"
                                : o->interrupt.len ? "incomplete"
                                : "completed");
    ngx_http_agent_json_key(j, "model");
    ngx_http_agent_json_str(j, &o->model);
    ngx_http_agent_json_key(j, "conversation");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, thread);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "previous_response_id");

    if (o->previous.len) {
        ngx_http_agent_json_str(j, &o->previous);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_key(j, "instructions");

    if (o->instructions.len) {
        ngx_http_agent_json_str(j, &o->instructions);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_key(j, "output");
    ngx_http_agent_json_arr(j);

    item = o->items->elts;

    for (i = 0; ev && i < o->items->nelts; i++) {
        ngx_http_agent_json_raw(j, &item[i]);
    }

    ngx_http_agent_json_arr_end(j);

    ngx_http_agent_json_key(j, "error");

    if (failed) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "code");
        ngx_http_agent_json_str(j, ev->code);
        ngx_http_agent_json_key(j, "message");
        ngx_http_agent_json_str(j, ev->text);
        ngx_http_agent_json_end(j);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_key(j, "incomplete_details");

    if (ev && !failed && o->interrupt.len) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "reason");
        ngx_http_agent_json_cstr(j, "interrupt");
        ngx_http_agent_json_end(j);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_key(j, "usage");

    if (ev && !failed && !o->stored) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "input_tokens");
        ngx_http_agent_json_int(j, ev->prompt_tokens);
        ngx_http_agent_json_key(j, "input_tokens_details");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "cached_tokens");
        ngx_http_agent_json_int(j, ev->cached_tokens);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_key(j, "output_tokens");
        ngx_http_agent_json_int(j, ev->completion_tokens);
        ngx_http_agent_json_key(j, "output_tokens_details");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "reasoning_tokens");
        ngx_http_agent_json_int(j, 0);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_key(j, "total_tokens");
        ngx_http_agent_json_int(j, ev->prompt_tokens + ev->completion_tokens);
        ngx_http_agent_json_end(j);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_key(j, "metadata");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "tools");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "parallel_tool_calls");
    ngx_http_agent_json_bool(j, 1);
    ngx_http_agent_json_key(j, "tool_choice");
    ngx_http_agent_json_cstr(j, "auto");
    ngx_http_agent_json_key(j, "store");
    ngx_http_agent_json_bool(j, 1);
    ngx_http_agent_json_end(j);
}


/*
 * A kept response read again (responses_stored.c): its status from the
 * run's record, its answer, or what it waits for, as one output message
 * (the client's calls, as their items); its usage is not kept
 */

ngx_int_t
ngx_http_agent_responses_stored_object(ngx_pool_t *pool,
    ngx_http_agent_responses_out_t *o, ngx_http_agent_turn_outcome_t *out,
    ngx_str_t *json)
{
    ngx_int_t                rc;
    ngx_str_t                text;
    ngx_http_agent_json_t   *j;
    ngx_http_agent_event_t   ev, *evp;

    ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));
    ngx_str_null(&text);
    evp = &ev;
    o->stored = 1;

    o->items = ngx_array_create(pool, 1, sizeof(ngx_str_t));
    if (o->items == NULL) {
        return NGX_ERROR;
    }

    switch (ngx_http_agent_turn_record_state(out)) {

    case NGX_HTTP_AGENT_RUN_PENDING:
        o->status = "queued";
        evp = NULL;
        break;

    case NGX_HTTP_AGENT_RUN_RUNNING:
        evp = NULL;
        break;

    case NGX_HTTP_AGENT_RUN_ERROR:
        ev.type = NGX_HTTP_AGENT_EV_ERROR;
        ev.code = &out->code;
        ev.text = &out->error;
        break;

    case NGX_HTTP_AGENT_RUN_WAITS:
        ev.type = NGX_HTTP_AGENT_EV_END;

        rc = ngx_http_agent_responses_calls(NULL, pool, o, NULL,
                                            &out->interrupt);
        if (rc != NGX_DECLINED) {
            if (rc != NGX_OK) {
                return NGX_ERROR;
            }

            break;
        }

        o->interrupt = out->interrupt;

        if (ngx_http_agent_turn_asks(pool, &out->interrupt, &text)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        break;

    case NGX_HTTP_AGENT_RUN_SUCCESS:
        ev.type = NGX_HTTP_AGENT_EV_END;
        text = out->answer;
        break;

    default: /* NGX_HTTP_AGENT_RUN_CANCELLED */
        o->status = "cancelled";
        ev.type = NGX_HTTP_AGENT_EV_END;
        break;
    }

    if (text.len && ngx_http_agent_responses_keep(pool, o, &text) == NULL) {
        return NGX_ERROR;
    }

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_responses_object(j, o, &out->row.thread_id, evp);

    return ngx_http_agent_json_done(j, json);
}

