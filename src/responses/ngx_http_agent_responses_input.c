
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_responses_input.h"


/*
 * Open Responses' create request, read: the graph in "model", the user's
 * input (a string, or the last input item: the user's message, its
 * "input_text" parts a line each), the conversation ("conversation", or
 * the one previous_response_id was made in), "stream".  A client keeps
 * the conversation with either: nginx keeps its history in the thread.
 * No I/O: the fuzz target calls it as it is.
 */


static ngx_int_t ngx_http_agent_responses_message(ngx_pool_t *pool,
    yajl_val item, ngx_http_agent_responses_input_t *in, ngx_str_t *why);
static ngx_uint_t ngx_http_agent_responses_id(ngx_str_t *id);


ngx_int_t
ngx_http_agent_responses_input(ngx_pool_t *pool, yajl_val v,
    ngx_http_agent_responses_input_t *in, ngx_str_t *why)
{
    yajl_val   input, conv, stream, bg;
    ngx_str_t  id;

    ngx_memzero(in, sizeof(ngx_http_agent_responses_input_t));

    if (ngx_http_agent_json_get_str(v, "model", &in->model) != NGX_OK
        || in->model.len == 0)
    {
        ngx_str_set(&in->param, "model");
        ngx_str_set(why, "\"model\" must name a graph this location runs");
        return NGX_DECLINED;
    }

    stream = ngx_http_agent_json_get(v, "stream");

    if (stream && !YAJL_IS_NULL(stream)) {
        if (!YAJL_IS_TRUE(stream) && !YAJL_IS_FALSE(stream)) {
            ngx_str_set(&in->param, "stream");
            ngx_str_set(why, "\"stream\" must be a boolean");
            return NGX_DECLINED;
        }

        in->stream = YAJL_IS_TRUE(stream);
    }

    bg = ngx_http_agent_json_get(v, "background");

    if (bg && !YAJL_IS_NULL(bg)) {
        if (!YAJL_IS_TRUE(bg) && !YAJL_IS_FALSE(bg)) {
            ngx_str_set(&in->param, "background");
            ngx_str_set(why, "\"background\" must be a boolean");
            return NGX_DECLINED;
        }

        in->background = YAJL_IS_TRUE(bg);
    }

    /* the conversation: named, or the previous response's */

    conv = ngx_http_agent_json_get(v, "conversation");

    if (conv && YAJL_IS_OBJECT(conv)) {
        conv = ngx_http_agent_json_get(conv, "id");
    }

    if (conv && !YAJL_IS_NULL(conv)) {
        if (!YAJL_IS_STRING(conv)) {
            goto conversation;
        }

        in->thread_id.data = (u_char *) YAJL_GET_STRING(conv);
        in->thread_id.len = ngx_strlen(in->thread_id.data);

        if (!ngx_http_agent_responses_id(&in->thread_id)) {
            goto conversation;
        }
    }

    if (ngx_http_agent_json_get_str(v, "previous_response_id", &id)
        == NGX_OK && id.len)
    {
        if (in->thread_id.len) {
            ngx_str_set(&in->param, "previous_response_id");
            ngx_str_set(why, "\"previous_response_id\" and \"conversation\" "
                        "cannot be used together");
            return NGX_DECLINED;
        }

        if (ngx_http_agent_responses_thread(&id, &in->thread_id) != NGX_OK) {
            ngx_str_set(&in->param, "previous_response_id");
            ngx_str_set(why, "\"previous_response_id\" is not the id of a "
                        "response of this server");
            return NGX_DECLINED;
        }

        in->previous = id;
    }

    /* the input: a string, or the last item, the user's */

    input = ngx_http_agent_json_get(v, "input");

    if (input && YAJL_IS_STRING(input)) {
        in->text.data = (u_char *) YAJL_GET_STRING(input);
        in->text.len = ngx_strlen(in->text.data);

    } else if (input && YAJL_IS_ARRAY(input) && input->u.array.len) {
        if (ngx_http_agent_responses_message(pool,
                input->u.array.values[input->u.array.len - 1], in, why)
            != NGX_OK)
        {
            ngx_str_set(&in->param, "input");
            return NGX_DECLINED;
        }
    }

    if (in->text.len == 0) {
        ngx_str_set(&in->param, "input");
        ngx_str_set(why, "\"input\" must be text, or end with the user's "
                    "message");
        return NGX_DECLINED;
    }

    return NGX_OK;

conversation:

    ngx_str_set(&in->param, "conversation");
    ngx_str_set(why, "\"conversation\" must be an id: 1 to 64 letters, "
                "digits, - or _");

    return NGX_DECLINED;
}


/* an input item: the user's message, its text parts a line each */

static ngx_int_t
ngx_http_agent_responses_message(ngx_pool_t *pool, yajl_val item,
    ngx_http_agent_responses_input_t *in, ngx_str_t *why)
{
    u_char     *p;
    size_t      i, size;
    yajl_val    content, part;
    ngx_str_t   role, type, text;

    if (!YAJL_IS_OBJECT(item)
        || ngx_http_agent_json_get_str(item, "role", &role) != NGX_OK
        || role.len != 4 || ngx_strncmp(role.data, "user", 4) != 0)
    {
        ngx_str_set(why, "the last input item must be the user's message "
                    "(a function_call_output is for tools the client "
                    "runs: this server runs the graph's own)");
        return NGX_DECLINED;
    }

    content = ngx_http_agent_json_get(item, "content");

    if (content && YAJL_IS_STRING(content)) {
        in->text.data = (u_char *) YAJL_GET_STRING(content);
        in->text.len = ngx_strlen(in->text.data);
        return NGX_OK;
    }

    if (content == NULL || !YAJL_IS_ARRAY(content)) {
        ngx_str_set(why, "the user's message has no content");
        return NGX_DECLINED;
    }

    size = 0;

    for (i = 0; i < content->u.array.len; i++) {
        part = content->u.array.values[i];

        if (ngx_http_agent_json_get_str(part, "type", &type) != NGX_OK
            || type.len != 10 || ngx_strncmp(type.data, "input_text", 10)
            || ngx_http_agent_json_get_str(part, "text", &text) != NGX_OK)
        {
            ngx_str_set(why, "the user's message may hold \"input_text\" "
                        "parts only: images and files are taken by the "
                        "chat API and the LangGraph API");
            return NGX_DECLINED;
        }

        size += text.len + 1;
    }

    p = ngx_pnalloc(pool, size + 1);
    if (p == NULL) {
        return NGX_ERROR;
    }

    in->text.data = p;

    for (i = 0; i < content->u.array.len; i++) {
        if (i) {
            *p++ = '\n';
        }

        (void) ngx_http_agent_json_get_str(content->u.array.values[i],
                                           "text", &text);
        p = ngx_cpymem(p, text.data, text.len);
    }

    in->text.len = p - in->text.data;

    return NGX_OK;
}


/* the thread of a response's id: resp_{run}_{thread} */

ngx_int_t
ngx_http_agent_responses_thread(ngx_str_t *id, ngx_str_t *thread)
{
    size_t  head;

    head = sizeof("resp_") - 1 + NGX_HTTP_AGENT_RESPONSES_RUN_LEN + 1;

    if (id->len <= head || ngx_strncmp(id->data, "resp_", 5) != 0
        || id->data[head - 1] != '_')
    {
        return NGX_DECLINED;
    }

    thread->data = id->data + head;
    thread->len = id->len - head;

    return ngx_http_agent_responses_id(thread) ? NGX_OK : NGX_DECLINED;
}


static ngx_uint_t
ngx_http_agent_responses_id(ngx_str_t *id)
{
    size_t  i;

    if (id->len == 0 || id->len > 64) {
        return 0;
    }

    for (i = 0; i < id->len; i++) {
        if (!(isalnum(id->data[i]) || id->data[i] == '-'
              || id->data[i] == '_'))
        {
            return 0;
        }
    }

    return 1;
}
