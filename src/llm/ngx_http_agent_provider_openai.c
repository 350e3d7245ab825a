
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm_int.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_util.h"


/*
 * provider=openai: OpenAI's chat completions and every server that speaks
 * them (DeepSeek, vLLM, LM Studio, Ollama, llama.cpp's server).  The
 * request is the provider-neutral messages written in OpenAI's shapes; the
 * stream is "data:" events of deltas, then "[DONE]".
 *
 * provider=azure: an Azure OpenAI deployment speaks the same.  Its URL is
 * the deployment's chat completions URL with its api-version
 * (https://NAME.openai.azure.com/openai/deployments/DEPLOYMENT/chat/
 * completions?api-version=...), its embeddings' .../embeddings?api-
 * version=...; only its key goes elsewhere, in "api-key".
 */


static ngx_int_t ngx_http_agent_openai_request(ngx_http_agent_llm_t *llm,
    ngx_str_t *url, ngx_array_t *headers, ngx_str_t *body);
static ngx_int_t ngx_http_agent_openai_embed(ngx_http_agent_llm_t *llm,
    ngx_str_t *url, ngx_array_t *headers, ngx_str_t *body);
static ngx_int_t ngx_http_agent_openai_key(ngx_http_agent_llm_t *llm,
    ngx_array_t *headers);
static ngx_int_t ngx_http_agent_provider_openai_embed_body(
    ngx_http_agent_llm_t *llm, ngx_str_t *url, ngx_str_t *body);
static ngx_int_t ngx_http_agent_provider_openai_embedded(
    ngx_http_agent_llm_t *llm, yajl_val v);
static ngx_int_t ngx_http_agent_provider_openai_body(
    ngx_http_agent_llm_t *llm, ngx_str_t *body);
static ngx_int_t ngx_http_agent_provider_openai_event(
    ngx_http_agent_llm_t *llm, yajl_val v);
static ngx_int_t ngx_http_agent_openai_tool_delta(ngx_http_agent_llm_t *llm,
    yajl_val tc, size_t pos);
static void ngx_http_agent_llm_message_json(ngx_http_agent_json_t *j,
    ngx_http_agent_msg_t *m);
static void ngx_http_agent_llm_images(ngx_http_agent_json_t *j,
    ngx_http_agent_msg_t *m);
static void ngx_http_agent_llm_calls(ngx_http_agent_json_t *j,
    ngx_http_agent_msg_t *m);


ngx_http_agent_provider_t  ngx_http_agent_provider_openai = {
    ngx_string("openai"),
    ngx_null_string,
    ngx_http_agent_openai_request,
    ngx_http_agent_provider_openai_event,
    ngx_http_agent_openai_embed,
    ngx_http_agent_provider_openai_embedded
};


ngx_http_agent_provider_t  ngx_http_agent_provider_azure = {
    ngx_string("azure"),
    ngx_null_string,
    ngx_http_agent_openai_request,
    ngx_http_agent_provider_openai_event,
    ngx_http_agent_openai_embed,
    ngx_http_agent_provider_openai_embedded
};


static ngx_int_t
ngx_http_agent_openai_request(ngx_http_agent_llm_t *llm, ngx_str_t *url,
    ngx_array_t *headers, ngx_str_t *body)
{
    *url = llm->model->url;

    if (ngx_http_agent_openai_key(llm, headers) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_agent_provider_openai_body(llm, body);
}


static ngx_int_t
ngx_http_agent_openai_embed(ngx_http_agent_llm_t *llm, ngx_str_t *url,
    ngx_array_t *headers, ngx_str_t *body)
{
    if (ngx_http_agent_openai_key(llm, headers) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_agent_provider_openai_embed_body(llm, url, body);
}


static ngx_int_t
ngx_http_agent_openai_key(ngx_http_agent_llm_t *llm, ngx_array_t *headers)
{
    if (llm->key.len == 0) {
        return NGX_OK;
    }

    return ngx_http_agent_provider_header(llm, headers,
                                   llm->provider
                                   == &ngx_http_agent_provider_azure
                                   ? "api-key: %V"
                                   : "Authorization: Bearer %V", &llm->key);
}


/*
 * POST /v1/embeddings {model, input: [texts], dimensions}: the model's
 * URL with its ".../chat/completions" made ".../embeddings" (its query,
 * Azure's api-version, kept); a URL that ends otherwise is the embeddings
 * URL itself.  OpenAI embeds queries and documents alike.
 */

static ngx_int_t
ngx_http_agent_provider_openai_embed_body(ngx_http_agent_llm_t *llm,
    ngx_str_t *url, ngx_str_t *body)
{
    u_char                 *p, *q;
    ngx_str_t              *in, *m;
    ngx_uint_t              i;
    ngx_http_agent_json_t  *j;

    static ngx_str_t  chat = ngx_string("/chat/completions");

    m = &llm->model->url;
    *url = *m;

    q = ngx_strlchr(m->data, m->data + m->len, '?');
    if (q == NULL) {
        q = m->data + m->len;
    }

    if ((size_t) (q - m->data) > chat.len
        && ngx_strncmp(q - chat.len, chat.data, chat.len) == 0)
    {
        p = ngx_pnalloc(llm->pool, m->len);
        if (p == NULL) {
            return NGX_ERROR;
        }

        url->data = p;
        p = ngx_cpymem(p, m->data, q - chat.len - m->data);
        p = ngx_cpymem(p, "/embeddings", sizeof("/embeddings") - 1);
        p = ngx_cpymem(p, q, m->data + m->len - q);
        url->len = p - url->data;
    }

    j = ngx_http_agent_json_create_obj(llm->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_key(j, "model");
    ngx_http_agent_json_str(j, &llm->model->model);
    ngx_http_agent_json_key(j, "encoding_format");
    ngx_http_agent_json_cstr(j, "float");

    if (llm->req->dims) {
        ngx_http_agent_json_key(j, "dimensions");
        ngx_http_agent_json_int(j, llm->req->dims);
    }

    ngx_http_agent_json_key(j, "input");
    ngx_http_agent_json_arr(j);

    in = llm->req->inputs->elts;

    for (i = 0; i < llm->req->inputs->nelts; i++) {
        ngx_http_agent_json_str(j, &in[i]);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, body);
}


/* {data: [{index, embedding: [...]}], usage: {prompt_tokens}} */

static ngx_int_t
ngx_http_agent_provider_openai_embedded(ngx_http_agent_llm_t *llm,
    yajl_val v)
{
    yajl_val  usage;

    usage = ngx_http_agent_json_get(v, "usage");
    llm->prompt_tokens = ngx_http_agent_provider_int(usage, "prompt_tokens");

    return ngx_http_agent_provider_vectors(llm,
                                           ngx_http_agent_json_get(v, "data"),
                                           "embedding");
}


static ngx_int_t
ngx_http_agent_provider_openai_body(ngx_http_agent_llm_t *llm,
    ngx_str_t *body)
{
    size_t                  size, start;
    ngx_str_t              *model, *system, *tools, prefix;
    ngx_uint_t              i, reused, split;
    ngx_array_t            *messages;
    ngx_http_agent_msg_t   *m;
    ngx_http_agent_json_t  *j;

    model = &llm->model->model;
    system = llm->req->system;
    /* OpenAI takes tool calls in the history of a request without tools */
    tools = llm->req->tools_off ? NULL : llm->req->tools;
    messages = llm->req->messages;

    j = ngx_http_agent_json_create(llm->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    /* one buffer of about the right size, not a trail of doubled ones */

    size = 256 + model->len + (system ? system->len + system->len / 8 : 0)
           + (tools ? tools->len : 0);
    m = messages->elts;

    /*
     * the history's text as the session's last request sent it, where its
     * messages are those (llm_prefix.c), then the new ones; all of it
     * kept for the next request.  The kept text is sent from where it is
     * kept (pinned until the request is sent), not copied into the body;
     * the response cache's key is made of the whole body
     */

    reused = ngx_http_agent_llm_prefix_find(llm, &prefix);
    split = (reused && llm->req->cache == 0 && prefix.len);

    for (i = split ? reused : 0; i < messages->nelts; i++) {
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

    if (llm->model->max_tokens) {
        ngx_http_agent_json_key(j, "max_tokens");
        ngx_http_agent_json_int(j, llm->model->max_tokens);
    }

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

    if (split) {
        if (ngx_http_agent_grow_pin(llm->pool, prefix.data) != NGX_OK) {
            return NGX_ERROR;
        }

        llm->body_at = ngx_http_agent_json_gap(j);
        llm->body_kept = prefix;

    } else if (reused) {
        ngx_http_agent_json_raw(j, &prefix);
    }

    start = j->pos - j->start;

    for (i = reused; i < messages->nelts; i++) {
        ngx_http_agent_llm_message_json(j, &m[i]);
    }

    if (!j->failed && j->last == NULL) {
        ngx_http_agent_llm_prefix_keep(llm, reused ? &prefix : NULL,
                                       j->start + start,
                                       (j->pos - j->start) - start);
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
 * the text, then each image as a data URL (the mime types were checked),
 * each PDF as a file part.
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

    /* an image alone has no text part: providers refuse an empty one */

    if (m->content.len) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "text");
        ngx_http_agent_json_key(j, "text");
        ngx_http_agent_json_str(j, &m->content);
        ngx_http_agent_json_end(j);
    }

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

        if (ngx_http_agent_message_document(&mime)) {

            /* a PDF: a file part, the data URL its file_data */

            ngx_http_agent_json_cstr(j, "file");
            ngx_http_agent_json_key(j, "file");
            ngx_http_agent_json_obj(j);
            ngx_http_agent_json_key(j, "filename");
            ngx_http_agent_json_cstr(j, "document.pdf");
            ngx_http_agent_json_key(j, "file_data");
            ngx_http_agent_json_str(j, &url);
            ngx_http_agent_json_end(j);
            ngx_http_agent_json_end(j);
            continue;
        }

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


/* one event of the stream: a chunk of deltas, or the usage at the end */

static ngx_int_t
ngx_http_agent_provider_openai_event(ngx_http_agent_llm_t *llm, yajl_val v)
{
    size_t     i;
    yajl_val   choices, choice, delta, calls, usage;
    ngx_str_t  s;
    ngx_int_t  rc;

    usage = ngx_http_agent_json_get(v, "usage");
    if (usage && YAJL_IS_OBJECT(usage)) {
        llm->prompt_tokens = ngx_http_agent_provider_int(usage,
                                                         "prompt_tokens");
        llm->completion_tokens =
                 ngx_http_agent_provider_int(usage, "completion_tokens");
        llm->cached_tokens = ngx_http_agent_provider_int(
                   ngx_http_agent_json_get(usage, "prompt_tokens_details"),
                   "cached_tokens");
    }

    choices = ngx_http_agent_json_get(v, "choices");
    if (choices == NULL || !YAJL_IS_ARRAY(choices)
        || choices->u.array.len == 0)
    {
        return NGX_OK;
    }

    choice = choices->u.array.values[0];

    if (ngx_http_agent_json_get_str(choice, "finish_reason", &s) == NGX_OK
        && ngx_http_agent_llm_finish(llm, &s) != NGX_OK)
    {
        return NGX_ERROR;
    }

    delta = ngx_http_agent_json_get(choice, "delta");
    if (delta == NULL || !YAJL_IS_OBJECT(delta)) {
        return NGX_OK;
    }

    calls = ngx_http_agent_json_get(delta, "tool_calls");
    if (calls && YAJL_IS_ARRAY(calls)) {
        for (i = 0; i < calls->u.array.len; i++) {
            rc = ngx_http_agent_openai_tool_delta(llm,
                                                  calls->u.array.values[i],
                                                  i);
            if (rc != NGX_OK) {
                return rc;
            }
        }
    }

    if (ngx_http_agent_json_get_str(delta, "content", &s) == NGX_OK) {
        return ngx_http_agent_llm_text(llm, &s);
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_openai_tool_delta(ngx_http_agent_llm_t *llm, yajl_val tc,
    size_t pos)
{
    size_t      index;
    yajl_val    n, fn;
    ngx_str_t   id, name, args;

    if (!YAJL_IS_OBJECT(tc)) {
        return ngx_http_agent_llm_fail(llm, "a tool call delta of the model "
                                       "is not an object");
    }

    n = ngx_http_agent_json_get(tc, "index");
    index = (n && YAJL_IS_INTEGER(n) && YAJL_GET_INTEGER(n) >= 0)
            ? (size_t) ngx_min(YAJL_GET_INTEGER(n),
                               NGX_HTTP_AGENT_LLM_MAX_TOOL_CALLS)
            : pos;

    fn = ngx_http_agent_json_get(tc, "function");

    return ngx_http_agent_llm_tool(llm, index,
               ngx_http_agent_json_get_str(tc, "id", &id) == NGX_OK
               ? &id : NULL,
               ngx_http_agent_json_get_str(fn, "name", &name) == NGX_OK
               ? &name : NULL,
               ngx_http_agent_json_get_str(fn, "arguments", &args) == NGX_OK
               ? &args : NULL);
}
