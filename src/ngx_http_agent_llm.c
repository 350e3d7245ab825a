
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_message.h"
#include "ngx_http_agent_json.h"


/*
 * The OpenAI-compatible chat completions client: a streamed request, and an
 * incremental parser of the "data:" lines that gives the same result for any
 * split of the byte stream.
 */


#define NGX_HTTP_AGENT_LLM_MAX_LINE     (1024 * 1024)
#define NGX_HTTP_AGENT_LLM_MAX_TEXT     (4 * 1024 * 1024)
#define NGX_HTTP_AGENT_LLM_MAX_ERRBODY  4096


static ngx_int_t ngx_http_agent_llm_buf_add(ngx_pool_t *pool,
    ngx_http_agent_llm_buf_t *b, u_char *p, size_t len, size_t max);
static ngx_int_t ngx_http_agent_llm_line(ngx_http_agent_llm_t *llm,
    u_char *p, size_t len);
static ngx_int_t ngx_http_agent_llm_payload(ngx_http_agent_llm_t *llm,
    u_char *p, size_t len);
static ngx_int_t ngx_http_agent_llm_tool_delta(ngx_http_agent_llm_t *llm,
    yajl_val tc, size_t pos);
static ngx_int_t ngx_http_agent_llm_fail(ngx_http_agent_llm_t *llm,
    const char *fmt, ...);
static ngx_int_t ngx_http_agent_llm_data(void *data, u_char *p, size_t len);
static void ngx_http_agent_llm_done(void *data, ngx_int_t rc, long status,
    ngx_str_t *err);


ngx_http_agent_llm_t *
ngx_http_agent_llm_create(ngx_pool_t *pool, ngx_log_t *log)
{
    ngx_http_agent_llm_t  *llm;

    llm = ngx_pcalloc(pool, sizeof(ngx_http_agent_llm_t));
    if (llm == NULL) {
        return NULL;
    }

    llm->pool = pool;
    llm->log = log;

    return llm;
}


ngx_int_t
ngx_http_agent_llm_start(ngx_http_agent_llm_t *llm, ngx_str_t *url,
    ngx_str_t *key, ngx_str_t *body, ngx_msec_t connect_timeout,
    ngx_msec_t idle_timeout, ngx_msec_t timeout)
{
    if (llm->curl == NULL) {
        llm->curl = ngx_http_agent_curl_create(llm->pool, llm->log);
        if (llm->curl == NULL) {
            return NGX_ERROR;
        }
    }

    llm->curl->on_data = ngx_http_agent_llm_data;
    llm->curl->on_done = ngx_http_agent_llm_done;
    llm->curl->data = llm;
    llm->curl->idle_timeout = idle_timeout;

    return ngx_http_agent_curl_post(llm->curl, url, key, body,
                                    connect_timeout, timeout);
}


void
ngx_http_agent_llm_cancel(ngx_http_agent_llm_t *llm)
{
    if (llm->curl) {
        ngx_http_agent_curl_cancel(llm->curl);
    }
}


static ngx_int_t
ngx_http_agent_llm_data(void *data, u_char *p, size_t len)
{
    ngx_http_agent_llm_t *llm = data;

    if (llm->status == 0) {
        curl_easy_getinfo(llm->curl->easy, CURLINFO_RESPONSE_CODE,
                          &llm->status);
    }

    if (llm->status != 200) {
        /* keep the start of an error body to quote it */
        if (llm->errbody.len < NGX_HTTP_AGENT_LLM_MAX_ERRBODY) {
            len = ngx_min(len,
                          NGX_HTTP_AGENT_LLM_MAX_ERRBODY - llm->errbody.len);
            return ngx_http_agent_llm_buf_add(llm->pool, &llm->errbody, p,
                                              len, (size_t) -1);
        }

        return NGX_OK;
    }

    return ngx_http_agent_llm_parse(llm, p, len);
}


static void
ngx_http_agent_llm_done(void *data, ngx_int_t rc, long status,
    ngx_str_t *err)
{
    ngx_http_agent_llm_t *llm = data;

    u_char     *p;
    yajl_val    v, e;
    ngx_str_t   msg;

    if (llm->failed) {
        /* the parser or the consumer already said why */
        llm->on_done(llm->data, NGX_ERROR);
        return;
    }

    if (rc != NGX_OK) {
        ngx_http_agent_llm_fail(llm, "the model provider failed: %V", err);
        llm->on_done(llm->data, NGX_ERROR);
        return;
    }

    if (status != 200) {
        ngx_str_null(&msg);

        if (llm->errbody.len) {
            v = ngx_http_agent_json_parse(llm->pool, llm->errbody.data,
                                          llm->errbody.len, NULL);
            e = ngx_http_agent_json_get(v, "error");

            /*
             * only a message the provider put in its JSON error, and only
             * its start: an HTML page or any other body is not passed on
             */
            if (ngx_http_agent_json_get_str(e, "message", &msg) != NGX_OK
                && ngx_http_agent_json_get_str(v, "error", &msg) != NGX_OK)
            {
                ngx_str_null(&msg);
            }

            msg.len = ngx_min(msg.len, 200);
        }

        for (p = msg.data; p < msg.data + msg.len; p++) {
            if (*p < 0x20) {
                *p = ' ';
            }
        }

        ngx_http_agent_llm_fail(llm, "the model provider answered %l%s%V",
                                status, msg.len ? ": " : "", &msg);
        llm->on_done(llm->data, NGX_ERROR);
        return;
    }

    if (llm->line.len) {
        /* a last line without its newline */
        if (ngx_http_agent_llm_line(llm, llm->line.data, llm->line.len)
            != NGX_OK)
        {
            llm->on_done(llm->data, NGX_ERROR);
            return;
        }

        llm->line.len = 0;
    }

    if (!llm->seen_done && llm->finish_reason.len == 0) {
        ngx_http_agent_llm_fail(llm, "the model's stream ended before "
                                "the answer was complete");
        llm->on_done(llm->data, NGX_ERROR);
        return;
    }

    llm->on_done(llm->data, NGX_OK);
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
        /* "event:", "id:", "retry:" carry nothing the chat stream needs */
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
                                       "after [DONE]");
    }

    return ngx_http_agent_llm_payload(llm, p, len);
}


static ngx_int_t
ngx_http_agent_llm_payload(ngx_http_agent_llm_t *llm, u_char *p, size_t len)
{
    size_t      i;
    yajl_val    v, choices, choice, delta, calls, usage, n, e;
    ngx_str_t   s;
    ngx_int_t   rc;
    char        err[128];

    /*
     * yajl wants a NUL-terminated text: a copy in a buffer reused for every
     * event, and the tree freed as soon as it is read, so a long stream
     * does not grow the pool
     */

    llm->text.len = 0;

    /* the line ends at len: a reassembled one has no byte after it */
    if (ngx_http_agent_llm_buf_add(llm->pool, &llm->text, p, len,
                                   NGX_HTTP_AGENT_LLM_MAX_LINE)
        != NGX_OK
        || ngx_http_agent_llm_buf_add(llm->pool, &llm->text, (u_char *) "",
                                      1, NGX_HTTP_AGENT_LLM_MAX_LINE + 1)
           != NGX_OK)
    {
        return ngx_http_agent_llm_fail(llm, "out of memory");
    }

    if (ngx_http_agent_json_depth(llm->text.data, len) != NGX_OK) {
        return ngx_http_agent_llm_fail(llm, "the model's stream has an event "
                                       "nested deeper than %d levels",
                                       NGX_HTTP_AGENT_JSON_MAX_DEPTH);
    }

    rc = NGX_OK;
    err[0] = '\0';

    v = yajl_tree_parse((char *) llm->text.data, err, sizeof(err));

    if (v == NULL || !YAJL_IS_OBJECT(v)) {
        for (i = 0; err[i]; i++) {
            if (err[i] == '\n') {
                err[i] = '\0';
                break;
            }
        }

        rc = ngx_http_agent_llm_fail(llm, "the model's stream has an event "
                                     "that is not a JSON object (%s)", err);
        goto done;
    }

    e = ngx_http_agent_json_get(v, "error");
    if (e) {
        if (ngx_http_agent_json_get_str(e, "message", &s) != NGX_OK) {
            ngx_str_set(&s, "unknown error");
        }

        rc = ngx_http_agent_llm_fail(llm, "the model provider reported: %V",
                                     &s);
        goto done;
    }

    usage = ngx_http_agent_json_get(v, "usage");
    if (usage && YAJL_IS_OBJECT(usage)) {
        n = ngx_http_agent_json_get(usage, "prompt_tokens");
        if (n && YAJL_IS_INTEGER(n)) {
            llm->prompt_tokens = YAJL_GET_INTEGER(n);
        }

        n = ngx_http_agent_json_get(usage, "completion_tokens");
        if (n && YAJL_IS_INTEGER(n)) {
            llm->completion_tokens = YAJL_GET_INTEGER(n);
        }
    }

    choices = ngx_http_agent_json_get(v, "choices");
    if (choices == NULL || !YAJL_IS_ARRAY(choices)
        || choices->u.array.len == 0)
    {
        goto done;
    }

    choice = choices->u.array.values[0];

    if (ngx_http_agent_json_get_str(choice, "finish_reason", &s) == NGX_OK) {
        llm->finish_reason.data = ngx_pstrdup(llm->pool, &s);
        if (llm->finish_reason.data == NULL) {
            rc = ngx_http_agent_llm_fail(llm, "out of memory");
            goto done;
        }

        llm->finish_reason.len = s.len;
    }

    delta = ngx_http_agent_json_get(choice, "delta");
    if (delta == NULL || !YAJL_IS_OBJECT(delta)) {
        goto done;
    }

    calls = ngx_http_agent_json_get(delta, "tool_calls");
    if (calls && YAJL_IS_ARRAY(calls)) {
        for (i = 0; i < calls->u.array.len; i++) {
            rc = ngx_http_agent_llm_tool_delta(llm, calls->u.array.values[i],
                                               i);
            if (rc != NGX_OK) {
                goto done;
            }
        }
    }

    if (ngx_http_agent_json_get_str(delta, "content", &s) == NGX_OK
        && s.len)
    {
        if (ngx_http_agent_llm_buf_add(llm->pool, &llm->content, s.data,
                                       s.len, NGX_HTTP_AGENT_LLM_MAX_TEXT)
            != NGX_OK)
        {
            rc = ngx_http_agent_llm_fail(llm, "the model's answer is too "
                                         "long");
            goto done;
        }

        if (llm->on_chunk && llm->on_chunk(llm->data, &s) != NGX_OK) {
            llm->failed = 1;
            rc = NGX_ERROR;
        }
    }

done:

    if (v) {
        yajl_tree_free(v);
    }

    return rc;
}


static ngx_int_t
ngx_http_agent_llm_tool_delta(ngx_http_agent_llm_t *llm, yajl_val tc,
    size_t pos)
{
    size_t                      index;
    yajl_val                    n, fn;
    ngx_str_t                   s;
    ngx_http_agent_llm_call_t  *call;

    if (!YAJL_IS_OBJECT(tc)) {
        return ngx_http_agent_llm_fail(llm, "a tool call delta of the model "
                                       "is not an object");
    }

    n = ngx_http_agent_json_get(tc, "index");
    index = (n && YAJL_IS_INTEGER(n)) ? (size_t) YAJL_GET_INTEGER(n) : pos;

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

    if (index >= llm->ncalls) {
        llm->ncalls = index + 1;
    }

    call = &llm->calls[index];

    if (ngx_http_agent_json_get_str(tc, "id", &s) == NGX_OK
        && ngx_http_agent_llm_buf_add(llm->pool, &call->id, s.data, s.len,
                                      256) != NGX_OK)
    {
        return ngx_http_agent_llm_fail(llm, "a tool call id is too long");
    }

    fn = ngx_http_agent_json_get(tc, "function");

    if (ngx_http_agent_json_get_str(fn, "name", &s) == NGX_OK
        && ngx_http_agent_llm_buf_add(llm->pool, &call->name, s.data, s.len,
                                      256) != NGX_OK)
    {
        return ngx_http_agent_llm_fail(llm, "a tool name is too long");
    }

    if (ngx_http_agent_json_get_str(fn, "arguments", &s) == NGX_OK
        && ngx_http_agent_llm_buf_add(llm->pool, &call->arguments, s.data,
                                      s.len, NGX_HTTP_AGENT_LLM_MAX_LINE)
           != NGX_OK)
    {
        return ngx_http_agent_llm_fail(llm, "tool arguments are too long");
    }

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
            /* a provider that sends no ids still needs them paired */
            p = ngx_pnalloc(pool, 32);
            if (p == NULL) {
                return NGX_ERROR;
            }

            s.data = p;
            s.len = ngx_sprintf(p, "call_%ui", i) - p;
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


static ngx_int_t
ngx_http_agent_llm_buf_add(ngx_pool_t *pool, ngx_http_agent_llm_buf_t *b,
    u_char *p, size_t len, size_t max)
{
    size_t   cap;
    u_char  *n;

    if (len == 0) {
        /* an empty buffer has no memory yet: no pointer sums on NULL */
        return NGX_OK;
    }

    if (b->len + len > max) {
        return NGX_ERROR;
    }

    if (b->len + len > b->cap) {
        cap = ngx_max(b->cap * 2, b->len + len);
        cap = ngx_max(cap, 64);

        n = ngx_pnalloc(pool, cap);
        if (n == NULL) {
            return NGX_ERROR;
        }

        if (b->len) {
            ngx_memcpy(n, b->data, b->len);
        }

        b->data = n;
        b->cap = cap;
    }

    ngx_memcpy(b->data + b->len, p, len);
    b->len += len;

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_llm_fail(ngx_http_agent_llm_t *llm, const char *fmt, ...)
{
    u_char   *p, buf[512];
    va_list   args;

    if (llm->failed) {
        return NGX_ERROR;
    }

    llm->failed = 1;

    va_start(args, fmt);
    p = ngx_vslprintf(buf, buf + sizeof(buf), fmt, args);
    va_end(args);

    llm->error.data = ngx_pnalloc(llm->pool, p - buf);
    if (llm->error.data) {
        llm->error.len = p - buf;
        ngx_memcpy(llm->error.data, buf, p - buf);
    }

    ngx_log_error(NGX_LOG_ERR, llm->log, 0, "agent: %V", &llm->error);

    return NGX_ERROR;
}
