
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_message.h"
#include "ngx_http_agent_json.h"


/*
 * The chat completions request: the provider-neutral messages written in
 * OpenAI's shapes, with the tools and the stream options.
 */


static void ngx_http_agent_llm_message_json(ngx_http_agent_json_t *j,
    ngx_http_agent_msg_t *m);
static void ngx_http_agent_llm_images(ngx_http_agent_json_t *j,
    ngx_http_agent_msg_t *m);
static void ngx_http_agent_llm_calls(ngx_http_agent_json_t *j,
    ngx_http_agent_msg_t *m);


ngx_int_t
ngx_http_agent_llm_build(ngx_pool_t *pool, ngx_str_t *model,
    ngx_str_t *system, ngx_array_t *messages, ngx_str_t *tools,
    ngx_str_t *body)
{
    size_t                  size;
    ngx_uint_t              i;
    ngx_http_agent_msg_t   *m;
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    /* one buffer of about the right size, not a trail of doubled ones */

    size = 256 + model->len + (system ? system->len + system->len / 8 : 0)
           + (tools ? tools->len : 0);
    m = messages->elts;

    for (i = 0; i < messages->nelts; i++) {
        size += 64 + m[i].content.len + m[i].tool_calls.len
                + m[i].tool_call_id.len + m[i].images.len;
    }

    if (ngx_http_agent_json_reserve(j, size + size / 8) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);

    ngx_http_agent_json_key(j, "model");
    ngx_http_agent_json_str(j, model);
    ngx_http_agent_json_key(j, "stream");
    ngx_http_agent_json_bool(j, 1);
    ngx_http_agent_json_key(j, "stream_options");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "include_usage");
    ngx_http_agent_json_bool(j, 1);
    ngx_http_agent_json_end(j);

    ngx_http_agent_json_key(j, "messages");
    ngx_http_agent_json_arr(j);

    if (system && system->len) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "role");
        ngx_http_agent_json_cstr(j, "system");
        ngx_http_agent_json_key(j, "content");
        ngx_http_agent_json_str(j, system);
        ngx_http_agent_json_end(j);
    }

    m = messages->elts;

    for (i = 0; i < messages->nelts; i++) {
        ngx_http_agent_llm_message_json(j, &m[i]);
    }

    ngx_http_agent_json_arr_end(j);

    if (tools && tools->len) {
        ngx_http_agent_json_key(j, "tools");
        ngx_http_agent_json_raw(j, tools);
    }

    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, body);
}


static void
ngx_http_agent_llm_message_json(ngx_http_agent_json_t *j,
    ngx_http_agent_msg_t *m)
{
    ngx_http_agent_json_obj(j);

    ngx_http_agent_json_key(j, "role");
    ngx_http_agent_json_str(j, &m->role);

    ngx_http_agent_json_key(j, "content");

    if (m->images.len) {
        ngx_http_agent_llm_images(j, m);

    } else if (m->content.len == 0 && m->tool_calls.len) {
        ngx_http_agent_json_null(j);

    } else {
        ngx_http_agent_json_str(j, &m->content);
    }

    if (m->tool_calls.len) {
        ngx_http_agent_json_key(j, "tool_calls");
        ngx_http_agent_llm_calls(j, m);
    }

    if (m->tool_call_id.len) {
        ngx_http_agent_json_key(j, "tool_call_id");
        ngx_http_agent_json_str(j, &m->tool_call_id);
    }

    ngx_http_agent_json_end(j);
}


/*
 * The stored images, [{"mime_type", "data"}], as OpenAI's content parts:
 * the text, then each image as a data URL (the mime types were checked).
 * Messages stored before images were provider-neutral hold the parts.
 */

static void
ngx_http_agent_llm_images(ngx_http_agent_json_t *j, ngx_http_agent_msg_t *m)
{
    u_char    *p;
    size_t     i;
    yajl_val   v, img;
    ngx_str_t  data, mime, url;

    v = ngx_http_agent_json_parse(j->pool, m->images.data, m->images.len,
                                  NULL);

    if (v == NULL || !YAJL_IS_ARRAY(v) || v->u.array.len == 0
        || ngx_http_agent_json_get(v->u.array.values[0], "type"))
    {
        ngx_http_agent_json_raw(j, &m->images);
        return;
    }

    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "text");
    ngx_http_agent_json_key(j, "text");
    ngx_http_agent_json_str(j, &m->content);
    ngx_http_agent_json_end(j);

    for (i = 0; i < v->u.array.len; i++) {
        img = v->u.array.values[i];

        if (ngx_http_agent_json_get_str(img, "mime_type", &mime) != NGX_OK
            || ngx_http_agent_json_get_str(img, "data", &data) != NGX_OK)
        {
            continue;
        }

        p = ngx_pnalloc(j->pool, data.len + mime.len + 16);
        if (p == NULL) {
            j->failed = 1;
            return;
        }

        url.data = p;
        url.len = ngx_sprintf(p, "data:%V;base64,%V", &mime, &data) - p;

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "image_url");
        ngx_http_agent_json_key(j, "image_url");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "url");
        ngx_http_agent_json_str(j, &url);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
}


/*
 * The stored tool calls as OpenAI's: {"id", "type": "function", "function":
 * {"name", "arguments"}}, the arguments as a JSON string; the same bytes
 * from call to call, so the provider's prompt cache sees the same prefix
 */

static void
ngx_http_agent_llm_calls(ngx_http_agent_json_t *j, ngx_http_agent_msg_t *m)
{
    ngx_uint_t              i;
    ngx_str_t               args;
    ngx_array_t            *calls;
    ngx_http_agent_call_t  *c;

    if (ngx_http_agent_message_calls(j->pool, &m->tool_calls, &calls, 0)
        != NGX_OK)
    {
        j->failed = 1;
        return;
    }

    c = calls->elts;

    ngx_http_agent_json_arr(j);

    for (i = 0; i < calls->nelts; i++) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_str(j, &c[i].id);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "function");
        ngx_http_agent_json_key(j, "function");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &c[i].name);
        ngx_http_agent_json_key(j, "arguments");

        if (c[i].arguments.len) {
            ngx_http_agent_json_str(j, &c[i].arguments);

        } else {
            ngx_str_set(&args, "{}");
            ngx_http_agent_json_str(j, &args);
        }

        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
}
