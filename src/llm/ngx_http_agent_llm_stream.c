
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_util.h"


/*
 * A provider's answer as it streams: server-sent events cut into lines the
 * same way for any split of the byte stream, each event's JSON parsed and
 * handed to the provider, which adds text, tool call pieces and usage
 * here.  Every provider streams server-sent events; only their JSON
 * differs.
 */


#define NGX_HTTP_AGENT_LLM_MAX_LINE     (1024 * 1024)
#define NGX_HTTP_AGENT_LLM_MAX_TEXT     (4 * 1024 * 1024)


static ngx_int_t ngx_http_agent_llm_line(ngx_http_agent_llm_t *llm,
    u_char *p, size_t len);
static ngx_uint_t ngx_http_agent_llm_refused(yajl_val e);
static ngx_int_t ngx_http_agent_llm_payload(ngx_http_agent_llm_t *llm,
    u_char *p, size_t len);


/*
 * An event's tree: one pool per worker, emptied after each event.  Events
 * are parsed one at a time from curl's callbacks, which never nest, so an
 * open stream need not keep a pool of its own
 */
static ngx_pool_t  *ngx_http_agent_llm_scratch;


/* before an attempt: nothing of an earlier one is kept */

void
ngx_http_agent_llm_reset(ngx_http_agent_llm_t *llm)
{
    ngx_uint_t  i;

    llm->line.len = 0;
    llm->content.len = 0;
    llm->errbody.len = 0;

    for (i = 0; i < llm->ncalls; i++) {
        llm->calls[i].id.len = 0;
        llm->calls[i].name.len = 0;
        llm->calls[i].arguments.len = 0;
    }

    llm->ncalls = 0;
    llm->block = -1;
    ngx_str_null(&llm->finish_reason);
    llm->prompt_tokens = 0;
    llm->completion_tokens = 0;
    llm->cached_tokens = 0;
    llm->cache_write_tokens = 0;
    llm->status = 0;
    llm->retry_after = -1;
    ngx_str_null(&llm->error);
    llm->seen_done = 0;
    llm->answered = 0;
    llm->failed = 0;
    llm->retryable = 0;
}


ngx_int_t
ngx_http_agent_llm_parse(ngx_http_agent_llm_t *llm, u_char *p, size_t len)
{
    u_char  *last, *nl;

    if (llm->failed) {
        return NGX_ERROR;
    }

    last = p + len;

    while (p < last) {
        nl = ngx_strlchr(p, last, '\n');

        if (nl == NULL) {
            return ngx_http_agent_llm_buf_add(llm->pool, &llm->line, p,
                                              last - p,
                                              NGX_HTTP_AGENT_LLM_MAX_LINE)
                   == NGX_OK ? NGX_OK
                             : ngx_http_agent_llm_fail(llm, "a line of the "
                                                       "model's stream is "
                                                       "too long");
        }

        if (llm->line.len) {
            if (ngx_http_agent_llm_buf_add(llm->pool, &llm->line, p, nl - p,
                                           NGX_HTTP_AGENT_LLM_MAX_LINE)
                != NGX_OK)
            {
                return ngx_http_agent_llm_fail(llm, "a line of the model's "
                                               "stream is too long");
            }

            if (ngx_http_agent_llm_line(llm, llm->line.data, llm->line.len)
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            llm->line.len = 0;

        } else if (ngx_http_agent_llm_line(llm, p, nl - p) != NGX_OK) {
            return NGX_ERROR;
        }

        p = nl + 1;
    }

    return NGX_OK;
}


/* the stream ended: a last line without its newline, and was it whole */

ngx_int_t
ngx_http_agent_llm_end(ngx_http_agent_llm_t *llm)
{
    if (llm->failed) {
        return NGX_ERROR;
    }

    if (llm->line.len) {
        if (ngx_http_agent_llm_line(llm, llm->line.data, llm->line.len)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        llm->line.len = 0;
    }

    if (!llm->seen_done && llm->finish_reason.len == 0) {
        return ngx_http_agent_llm_fail(llm, "the model's stream ended "
                                       "before the answer was complete");
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_llm_line(ngx_http_agent_llm_t *llm, u_char *p, size_t len)
{
    if (len && p[len - 1] == '\r') {
        len--;
    }

    if (len == 0 || p[0] == ':') {
        return NGX_OK;
    }

    if (len < 5 || ngx_strncmp(p, "data:", 5) != 0) {
        /*
         * "event:", "id:", "retry:" carry nothing the providers need: the
         * JSON of every event says what it is
         */
        if (ngx_strlchr(p, p + len, ':') != NULL) {
            return NGX_OK;
        }

        return ngx_http_agent_llm_fail(llm, "the model's stream has a line "
                                       "that is not server-sent events");
    }

    p += 5;
    len -= 5;

    if (len && p[0] == ' ') {
        p++;
        len--;
    }

    if (len == 6 && ngx_strncmp(p, "[DONE]", 6) == 0) {
        llm->seen_done = 1;
        return NGX_OK;
    }

    if (llm->seen_done) {
        return ngx_http_agent_llm_fail(llm, "the model's stream went on "
                                       "after its end");
    }

    return ngx_http_agent_llm_payload(llm, p, len);
}


static ngx_int_t
ngx_http_agent_llm_payload(ngx_http_agent_llm_t *llm, u_char *p, size_t len)
{
    yajl_val    v, e;
    ngx_str_t   s, err;
    ngx_int_t   rc;

    /*
     * the tree in the worker's scratch pool, emptied after each event, so
     * a long stream does not grow the turn's pool; the line is parsed
     * where it is
     */

    if (ngx_http_agent_llm_scratch == NULL) {
        ngx_http_agent_llm_scratch = ngx_create_pool(4096, ngx_cycle->log);
        if (ngx_http_agent_llm_scratch == NULL) {
            return ngx_http_agent_llm_fail(llm, "out of memory");
        }
    }

    ngx_str_set(&err, "not an object");

    v = ngx_http_agent_json_tree(ngx_http_agent_llm_scratch, p, len, &err);

    if (v == NULL || !YAJL_IS_OBJECT(v)) {
        rc = ngx_http_agent_llm_fail(llm, "the model's stream has an event "
                                     "that is not a JSON object (%V)", &err);
        goto done;
    }

    /* every provider reports a failure mid-stream as {"error": ...} */

    e = ngx_http_agent_json_get(v, "error");
    if (e) {
        if (ngx_http_agent_json_get_str(e, "message", &s) == NGX_OK) {
            ngx_http_agent_llm_excerpt(llm, &s);

        } else {
            ngx_str_set(&s, "unknown error");
        }

        rc = ngx_http_agent_llm_fail(llm, "the model provider reported: %V",
                                     &s);

        /* before any of the answer it is tried again, as a 5xx would be */
        llm->retryable = !llm->answered && !ngx_http_agent_llm_refused(e);
        goto done;
    }

    rc = llm->provider->event(llm, v);

done:

    ngx_reset_pool(ngx_http_agent_llm_scratch);

    return rc;
}


/* a piece of the answer's text */

ngx_int_t
ngx_http_agent_llm_text(ngx_http_agent_llm_t *llm, ngx_str_t *s)
{
    ngx_str_t  *piece;

    if (s->len == 0) {
        return NGX_OK;
    }

    llm->answered = 1;

    if (ngx_http_agent_llm_buf_add(llm->pool, &llm->content, s->data, s->len,
                                   NGX_HTTP_AGENT_LLM_MAX_TEXT)
        != NGX_OK)
    {
        return ngx_http_agent_llm_fail(llm, "the model's answer is too long");
    }

    /* the exact cache's record of the pieces (llm_cache.c) */
    if (llm->cache_text) {
        piece = ngx_array_push(llm->cache_text);

        if (piece == NULL
            || (piece->data = ngx_pstrdup(llm->pool, s)) == NULL)
        {
            return ngx_http_agent_llm_fail(llm, "out of memory");
        }

        piece->len = s->len;
    }

    if (llm->on_chunk && llm->on_chunk(llm->data, s) != NGX_OK) {
        llm->failed = 1;
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* a piece of tool call index: any of id, name and arguments, or NULL */

ngx_int_t
ngx_http_agent_llm_tool(ngx_http_agent_llm_t *llm, ngx_uint_t index,
    ngx_str_t *id, ngx_str_t *name, ngx_str_t *args)
{
    ngx_http_agent_llm_call_t  *call;

    if (index >= NGX_HTTP_AGENT_LLM_MAX_TOOL_CALLS) {
        return ngx_http_agent_llm_fail(llm, "the model made more than %d "
                                       "tool calls at once",
                                       NGX_HTTP_AGENT_LLM_MAX_TOOL_CALLS);
    }

    if (llm->calls == NULL) {
        /* most answers call no tool: no room for calls until one comes */
        llm->calls = ngx_pcalloc(llm->pool,
                                 NGX_HTTP_AGENT_LLM_MAX_TOOL_CALLS
                                 * sizeof(ngx_http_agent_llm_call_t));
        if (llm->calls == NULL) {
            return ngx_http_agent_llm_fail(llm, "out of memory");
        }
    }

    llm->answered = 1;

    if (index >= llm->ncalls) {
        llm->ncalls = index + 1;
    }

    call = &llm->calls[index];

    if (id && ngx_http_agent_llm_buf_add(llm->pool, &call->id, id->data,
                                         id->len, 256) != NGX_OK)
    {
        return ngx_http_agent_llm_fail(llm, "a tool call id is too long");
    }

    if (name && ngx_http_agent_llm_buf_add(llm->pool, &call->name,
                                           name->data, name->len, 256)
                != NGX_OK)
    {
        return ngx_http_agent_llm_fail(llm, "a tool name is too long");
    }

    if (args && ngx_http_agent_llm_buf_add(llm->pool, &call->arguments,
                                           args->data, args->len,
                                           NGX_HTTP_AGENT_LLM_MAX_LINE)
                != NGX_OK)
    {
        return ngx_http_agent_llm_fail(llm, "tool arguments are too long");
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_llm_finish(ngx_http_agent_llm_t *llm, ngx_str_t *reason)
{
    if (reason->len == 0) {
        return NGX_OK;
    }

    llm->finish_reason.data = ngx_pstrdup(llm->pool, reason);
    if (llm->finish_reason.data == NULL) {
        return ngx_http_agent_llm_fail(llm, "out of memory");
    }

    llm->finish_reason.len = reason->len;

    return NGX_OK;
}


/* the assistant message of the completed stream */

ngx_int_t
ngx_http_agent_llm_message(ngx_http_agent_llm_t *llm, ngx_pool_t *pool,
    ngx_http_agent_msg_t *msg)
{
    u_char                     *p;
    ngx_str_t                   s, name, args;
    ngx_uint_t                  i;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_llm_call_t  *c;

    ngx_memzero(msg, sizeof(ngx_http_agent_msg_t));
    ngx_str_set(&msg->role, "assistant");

    if (llm->content.len) {
        msg->content.data = ngx_pnalloc(pool, llm->content.len);
        if (msg->content.data == NULL) {
            return NGX_ERROR;
        }

        ngx_memcpy(msg->content.data, llm->content.data, llm->content.len);
        msg->content.len = llm->content.len;
    }

    if (llm->ncalls == 0) {
        return NGX_OK;
    }

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_arr(j);

    for (i = 0; i < llm->ncalls; i++) {
        c = &llm->calls[i];

        if (c->name.len == 0) {
            continue;
        }

        if (c->id.len) {
            s.data = c->id.data;
            s.len = c->id.len;

        } else {
            /*
             * a provider that sends no ids (Gemini) still needs them
             * paired, and unique in the conversation: another provider
             * may be given this history later
             */
            p = ngx_pnalloc(pool, 64);
            if (p == NULL) {
                return NGX_ERROR;
            }

            s.data = p;
            s.len = ngx_sprintf(p, "call_%xT%xi_%ui", ngx_time(),
                                (ngx_uint_t) ngx_random() & 0xffff, i)
                    - p;
        }

        name.data = c->name.data;
        name.len = c->name.len;
        args.data = c->arguments.data;
        args.len = c->arguments.len;

        ngx_http_agent_message_call_json(j, &s, &name, &args);
    }

    ngx_http_agent_json_arr_end(j);

    return ngx_http_agent_json_done(j, &msg->tool_calls);
}


/*
 * An error a provider reports in its stream says whose fault it is:
 * OpenAI and Anthropic by its "type", Gemini by its "code" and "status".
 * The request's own fault is not tried again; overload, rate limits and
 * the provider's own failures are.
 */

static ngx_uint_t
ngx_http_agent_llm_refused(yajl_val e)
{
    int64_t      code;
    yajl_val     n;
    ngx_str_t    s;
    ngx_uint_t   i, k;

    static const char  *keys[] = { "type", "status" };
    static ngx_str_t    faults[] = {
        ngx_string("invalid_request_error"),
        ngx_string("authentication_error"),
        ngx_string("permission_error"),
        ngx_string("not_found_error"),
        ngx_string("request_too_large"),
        ngx_string("invalid_argument"),
        ngx_string("failed_precondition"),
        ngx_string("permission_denied"),
        ngx_string("unauthenticated"),
        ngx_string("not_found")
    };

    n = ngx_http_agent_json_get(e, "code");

    if (n && YAJL_IS_INTEGER(n)) {
        code = YAJL_GET_INTEGER(n);

        if (code >= 400 && code < 500 && code != 408 && code != 429) {
            return 1;
        }
    }

    for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        if (ngx_http_agent_json_get_str(e, keys[k], &s) != NGX_OK) {
            continue;
        }

        for (i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
            if (s.len == faults[i].len
                && ngx_strncasecmp(s.data, faults[i].data, s.len) == 0)
            {
                return 1;
            }
        }
    }

    return 0;
}
