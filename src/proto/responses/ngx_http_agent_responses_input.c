
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_responses.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_tools.h"


/*
 * Open Responses' create request, read: the graph in "model", the user's
 * input (a string, or the last input item: the user's message, its
 * "input_text" parts a line each), the conversation ("conversation", or
 * the one previous_response_id was made in), "stream".  A client keeps
 * the conversation with either: nginx keeps its history in the thread.
 * The client's function tools ("tools"), written anew as the graph's are
 * offered; the outputs of their calls (the last items, each a
 * function_call_output), which answer the run that waits for them (the
 * conversation of previous_response_id, or of our function_call items
 * the client sent back).  No I/O: the fuzz target calls it as it is.
 */


static ngx_int_t ngx_http_agent_responses_message(ngx_pool_t *pool,
    yajl_val item, ngx_http_agent_responses_input_t *in, ngx_str_t *why);
static ngx_int_t ngx_http_agent_responses_tools(ngx_pool_t *pool,
    yajl_val tools, ngx_http_agent_responses_input_t *in, ngx_str_t *why);
static ngx_int_t ngx_http_agent_responses_outputs(ngx_pool_t *pool,
    yajl_val input, ngx_http_agent_responses_input_t *in, ngx_str_t *why);
static ngx_int_t ngx_http_agent_responses_parts(ngx_pool_t *pool,
    yajl_val content, ngx_str_t *text);
static ngx_uint_t ngx_http_agent_responses_is(yajl_val item,
    const char *type);
static ngx_int_t ngx_http_agent_responses_call_thread(ngx_str_t *id,
    ngx_str_t *thread);


ngx_int_t
ngx_http_agent_responses_input(ngx_pool_t *pool, yajl_val v,
    ngx_http_agent_responses_input_t *in, ngx_str_t *why)
{
    yajl_val   input, conv, stream, bg, x;
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

        if (!ngx_http_agent_id_valid(&in->thread_id)) {
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

    x = ngx_http_agent_json_get(v, "instructions");

    if (x && !YAJL_IS_NULL(x)) {
        if (!YAJL_IS_STRING(x)) {
            ngx_str_set(&in->param, "instructions");
            ngx_str_set(why, "\"instructions\" must be a string");
            return NGX_DECLINED;
        }

        in->instructions.data = (u_char *) YAJL_GET_STRING(x);
        in->instructions.len = ngx_strlen(in->instructions.data);
    }

    x = ngx_http_agent_json_get(v, "tools");

    if (x && !YAJL_IS_NULL(x)) {
        if (ngx_http_agent_responses_tools(pool, x, in, why) != NGX_OK) {
            ngx_str_set(&in->param, "tools");
            return why->len ? NGX_DECLINED : NGX_ERROR;
        }
    }

    /* the input: a string, or the last item, the user's or outputs */

    input = ngx_http_agent_json_get(v, "input");

    if (input && YAJL_IS_STRING(input)) {
        in->text.data = (u_char *) YAJL_GET_STRING(input);
        in->text.len = ngx_strlen(in->text.data);

    } else if (input && YAJL_IS_ARRAY(input) && input->u.array.len
               && ngx_http_agent_responses_is(
                      input->u.array.values[input->u.array.len - 1],
                      "function_call_output"))
    {
        if (ngx_http_agent_responses_outputs(pool, input, in, why)
            != NGX_OK)
        {
            ngx_str_set(&in->param, "input");
            return why->len ? NGX_DECLINED : NGX_ERROR;
        }

    } else if (input && YAJL_IS_ARRAY(input) && input->u.array.len) {
        if (ngx_http_agent_responses_message(pool,
                input->u.array.values[input->u.array.len - 1], in, why)
            != NGX_OK)
        {
            ngx_str_set(&in->param, "input");
            return NGX_DECLINED;
        }
    }

    if (in->outputs && in->thread_id.len == 0) {
        ngx_str_set(&in->param, "input");
        ngx_str_set(why, "no response of this server asked for these "
                    "outputs: send previous_response_id, or the "
                    "function_call items with them");
        return NGX_DECLINED;
    }

    if (in->text.len == 0 && in->outputs == NULL) {
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
    yajl_val    content;
    ngx_int_t   rc;
    ngx_str_t   role;

    if (!YAJL_IS_OBJECT(item)
        || ngx_http_agent_json_get_str(item, "role", &role) != NGX_OK
        || role.len != 4 || ngx_strncmp(role.data, "user", 4) != 0)
    {
        ngx_str_set(why, "the last input item must be the user's message "
                    "or the outputs of function calls");
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

    rc = ngx_http_agent_responses_parts(pool, content, &in->text);

    if (rc == NGX_DECLINED) {
        ngx_str_set(why, "the user's message may hold \"input_text\" "
                    "parts only: images and files are taken by the "
                    "chat API and the LangGraph API");
    }

    return rc;
}


/* text parts, a line each: NGX_DECLINED for a part of another kind */

static ngx_int_t
ngx_http_agent_responses_parts(ngx_pool_t *pool, yajl_val content,
    ngx_str_t *text)
{
    u_char     *p;
    size_t      i, size;
    yajl_val    part;
    ngx_str_t   type, t;

    size = 0;

    for (i = 0; i < content->u.array.len; i++) {
        part = content->u.array.values[i];

        if (ngx_http_agent_json_get_str(part, "type", &type) != NGX_OK
            || !((type.len == 10
                  && ngx_strncmp(type.data, "input_text", 10) == 0)
                 || (type.len == 11
                     && ngx_strncmp(type.data, "output_text", 11) == 0))
            || ngx_http_agent_json_get_str(part, "text", &t) != NGX_OK)
        {
            return NGX_DECLINED;
        }

        size += t.len + 1;
    }

    p = ngx_pnalloc(pool, size + 1);
    if (p == NULL) {
        return NGX_ERROR;
    }

    text->data = p;

    for (i = 0; i < content->u.array.len; i++) {
        if (i) {
            *p++ = '\n';
        }

        (void) ngx_http_agent_json_get_str(content->u.array.values[i],
                                           "text", &t);
        p = ngx_cpymem(p, t.data, t.len);
    }

    text->len = p - text->data;

    return NGX_OK;
}


/*
 * "tools": function tools only, each written anew in the shape the
 * graph's tools are offered in ({"type": "function", "function": {...}})
 */

static ngx_int_t
ngx_http_agent_responses_tools(ngx_pool_t *pool, yajl_val tools,
    ngx_http_agent_responses_input_t *in, ngx_str_t *why)
{
    size_t         i, k;
    yajl_val       t, x;
    ngx_str_t      type, desc, *d;
    ngx_keyval_t  *kv, *seen;

    if (!YAJL_IS_ARRAY(tools)
        || tools->u.array.len > NGX_HTTP_AGENT_RESPONSES_TOOLS)
    {
        ngx_str_set(why, "\"tools\" must be an array of at most 128 "
                    "function tools");
        return NGX_DECLINED;
    }

    in->tools = ngx_array_create(pool, tools->u.array.len + 1,
                                 sizeof(ngx_keyval_t));
    if (in->tools == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < tools->u.array.len; i++) {
        t = tools->u.array.values[i];

        kv = ngx_array_push(in->tools);
        if (kv == NULL) {
            return NGX_ERROR;
        }

        if (ngx_http_agent_json_get_str(t, "type", &type) != NGX_OK
            || type.len != 8 || ngx_strncmp(type.data, "function", 8) != 0
            || ngx_http_agent_json_get_str(t, "name", &kv->key) != NGX_OK
            || !ngx_http_agent_id_valid(&kv->key))
        {
            ngx_str_set(why, "each tool must be {\"type\": \"function\", "
                        "\"name\"}: a name of 1 to 64 letters, digits, - "
                        "or _ (the server's own tools are the graph's)");
            return NGX_DECLINED;
        }

        seen = in->tools->elts;

        for (k = 0; k < i; k++) {
            if (seen[k].key.len == kv->key.len
                && ngx_strncmp(seen[k].key.data, kv->key.data,
                               kv->key.len) == 0)
            {
                ngx_str_set(why, "two tools have the same name");
                return NGX_DECLINED;
            }
        }

        x = ngx_http_agent_json_get(t, "parameters");

        if (x && !YAJL_IS_NULL(x) && !YAJL_IS_OBJECT(x)) {
            ngx_str_set(why, "a tool's \"parameters\" must be a JSON "
                        "schema object");
            return NGX_DECLINED;
        }

        d = (ngx_http_agent_json_get_str(t, "description", &desc) == NGX_OK)
            ? &desc : NULL;

        if (ngx_http_agent_tools_define(pool, &kv->key, d,
                                        (x && YAJL_IS_OBJECT(x)) ? x : NULL,
                                        &kv->value)
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    if (in->tools->nelts == 0) {
        in->tools = NULL;
    }

    return NGX_OK;
}


/*
 * The last items, function_call_output each: the outputs of the calls
 * the run waits for.  Without previous_response_id or a conversation,
 * the conversation is the one of the last function_call item of ours
 * the client sent back (a client that sends the whole history).
 */

static ngx_int_t
ngx_http_agent_responses_outputs(ngx_pool_t *pool, yajl_val input,
    ngx_http_agent_responses_input_t *in, ngx_str_t *why)
{
    size_t         i, first;
    yajl_val       item, out;
    ngx_str_t      id;
    ngx_keyval_t  *kv;

    first = input->u.array.len;

    while (first
           && ngx_http_agent_responses_is(input->u.array.values[first - 1],
                                          "function_call_output"))
    {
        first--;
    }

    in->outputs = ngx_array_create(pool, input->u.array.len - first,
                                   sizeof(ngx_keyval_t));
    if (in->outputs == NULL) {
        return NGX_ERROR;
    }

    for (i = first; i < input->u.array.len; i++) {
        item = input->u.array.values[i];

        kv = ngx_array_push(in->outputs);
        if (kv == NULL) {
            return NGX_ERROR;
        }

        out = ngx_http_agent_json_get(item, "output");

        if (ngx_http_agent_json_get_str(item, "call_id", &kv->key) != NGX_OK
            || kv->key.len == 0
            || kv->key.len > NGX_HTTP_AGENT_RESPONSES_CALL_ID
            || out == NULL
            || (YAJL_IS_STRING(out)
                ? ngx_http_agent_json_get_str(item, "output", &kv->value)
                : YAJL_IS_ARRAY(out)
                  ? ngx_http_agent_responses_parts(pool, out, &kv->value)
                  : NGX_DECLINED)
               != NGX_OK)
        {
            ngx_str_set(why, "a function_call_output has a \"call_id\" "
                        "and an \"output\": text, or text parts");
            return NGX_DECLINED;
        }
    }

    for (i = first; in->thread_id.len == 0 && i > 0; i--) {
        item = input->u.array.values[i - 1];

        if (ngx_http_agent_responses_is(item, "function_call")
            && ngx_http_agent_json_get_str(item, "id", &id) == NGX_OK)
        {
            (void) ngx_http_agent_responses_call_thread(&id, &in->thread_id);
        }
    }

    return NGX_OK;
}


static ngx_uint_t
ngx_http_agent_responses_is(yajl_val item, const char *type)
{
    ngx_str_t  t;

    return ngx_http_agent_json_get_str(item, "type", &t) == NGX_OK
           && t.len == ngx_strlen(type)
           && ngx_strncmp(t.data, type, t.len) == 0;
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

    return ngx_http_agent_id_valid(thread) ? NGX_OK : NGX_DECLINED;
}


/*
 * the thread of a function_call item of ours: fc{N}_{run}_{thread}, N
 * its place among the response's calls
 */

static ngx_int_t
ngx_http_agent_responses_call_thread(ngx_str_t *id, ngx_str_t *thread)
{
    u_char  *p, *last;

    p = id->data + 2;
    last = id->data + id->len;

    if (id->len < 3 || ngx_strncmp(id->data, "fc", 2) != 0) {
        return NGX_DECLINED;
    }

    while (p < last && *p >= '0' && *p <= '9') {
        p++;
    }

    if (p == id->data + 2
        || last - p <= NGX_HTTP_AGENT_RESPONSES_RUN_LEN + 2
        || p[0] != '_' || p[NGX_HTTP_AGENT_RESPONSES_RUN_LEN + 1] != '_')
    {
        return NGX_DECLINED;
    }

    thread->data = p + NGX_HTTP_AGENT_RESPONSES_RUN_LEN + 2;
    thread->len = last - thread->data;

    if (ngx_http_agent_id_valid(thread)) {
        return NGX_OK;
    }

    ngx_str_null(thread);

    return NGX_DECLINED;
}
