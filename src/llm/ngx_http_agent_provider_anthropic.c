
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_util.h"


/*
 * provider=anthropic: the Messages API, streamed.  The system prompt goes
 * in "system", tool calls are "tool_use" blocks of the assistant, results
 * "tool_result" blocks of a user message, images base64 "image" blocks.
 * Messages of one role in a row are one message.  Prompt caching: with
 * cache=on (the default) "cache_control" marks the end of the tools, of
 * the system prompt, of the history before this turn and of the request,
 * so each call of a tool loop reads what the one before it wrote.
 */


static ngx_int_t ngx_http_agent_anthropic_request(ngx_http_agent_llm_t *llm,
    ngx_str_t *url, ngx_array_t *headers, ngx_str_t *body);
static ngx_int_t ngx_http_agent_anthropic_event(ngx_http_agent_llm_t *llm,
    yajl_val v);
static void ngx_http_agent_anthropic_tools(ngx_http_agent_llm_t *llm,
    ngx_http_agent_json_t *j);
static void ngx_http_agent_anthropic_blocks(ngx_http_agent_llm_t *llm,
    ngx_http_agent_json_t *j, ngx_http_agent_msg_t *m, ngx_uint_t i);
static void ngx_http_agent_anthropic_cache(ngx_http_agent_json_t *j);


ngx_http_agent_provider_t  ngx_http_agent_provider_anthropic = {
    ngx_string("anthropic"),
    ngx_string("https://api.anthropic.com"),
    ngx_http_agent_anthropic_request,
    ngx_http_agent_anthropic_event,
    NULL,                                  /* no embeddings API */
    NULL
};


static ngx_int_t
ngx_http_agent_anthropic_request(ngx_http_agent_llm_t *llm, ngx_str_t *url,
    ngx_array_t *headers, ngx_str_t *body)
{
    u_char                  *p;
    ngx_http_agent_json_t   *j;
    ngx_http_agent_model_t  *model;

    static ngx_str_t  ai = ngx_string("assistant");

    model = llm->model;

    p = ngx_pnalloc(llm->pool, model->url.len + sizeof("/v1/messages"));
    if (p == NULL) {
        return NGX_ERROR;
    }

    url->data = p;
    url->len = ngx_sprintf(p, "%V/v1/messages", &model->url) - p;

    if (llm->key.len
        && ngx_http_agent_provider_header(llm, headers, "x-api-key: %V",
                                          &llm->key)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (ngx_http_agent_provider_header(llm, headers,
                                       "anthropic-version: 2023-06-01")
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    j = ngx_http_agent_json_create_obj(llm->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_key(j, "model");
    ngx_http_agent_json_str(j, &model->model);
    ngx_http_agent_json_key(j, "max_tokens");
    ngx_http_agent_json_int(j, model->max_tokens ? model->max_tokens : 4096);
    ngx_http_agent_json_key(j, "stream");
    ngx_http_agent_json_bool(j, 1);

    ngx_http_agent_anthropic_tools(llm, j);

    if (llm->req->system && llm->req->system->len) {
        ngx_http_agent_json_key(j, "system");
        ngx_http_agent_json_arr(j);
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "text");
        ngx_http_agent_json_key(j, "text");
        ngx_http_agent_json_str(j, llm->req->system);

        if (model->cache) {
            ngx_http_agent_anthropic_cache(j);
        }

        ngx_http_agent_json_end(j);
        ngx_http_agent_json_arr_end(j);
    }

    ngx_http_agent_json_key(j, "messages");
    ngx_http_agent_provider_turns(llm, j, "content", &ai,
                                  ngx_http_agent_anthropic_blocks);

    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, body);
}


/* OpenAI's function tools as Anthropic's {"name", "description", ...} */

static void
ngx_http_agent_anthropic_tools(ngx_http_agent_llm_t *llm,
    ngx_http_agent_json_t *j)
{
    size_t    i;
    yajl_val  tools, v;

    tools = ngx_http_agent_provider_tools(llm);
    if (tools == NULL) {
        return;
    }

    ngx_http_agent_json_key(j, "tools");
    ngx_http_agent_json_arr(j);

    for (i = 0; i < tools->u.array.len; i++) {
        if (ngx_http_agent_provider_function(j, tools->u.array.values[i], &v)
            != NGX_OK)
        {
            continue;
        }

        ngx_http_agent_json_key(j, "input_schema");

        if (v) {
            ngx_http_agent_json_val(j, v);

        } else {
            ngx_http_agent_json_obj(j);
            ngx_http_agent_json_key(j, "type");
            ngx_http_agent_json_cstr(j, "object");
            ngx_http_agent_json_end(j);
        }

        if (llm->model->cache && i + 1 == tools->u.array.len) {
            ngx_http_agent_anthropic_cache(j);
        }

        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);

    /*
     * the last round still declares the tools: Anthropic refuses tool_use
     * and tool_result blocks in a request without them
     */

    if (llm->req->tools_off) {
        ngx_http_agent_json_key(j, "tool_choice");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "none");
        ngx_http_agent_json_end(j);
    }
}


/*
 * The blocks of message n; the last message, and the last before this
 * turn, get a cache breakpoint on their last block.
 */

static void
ngx_http_agent_anthropic_blocks(ngx_http_agent_llm_t *llm,
    ngx_http_agent_json_t *j, ngx_http_agent_msg_t *m, ngx_uint_t n)
{
    size_t                  i;
    yajl_val                images;
    ngx_str_t               mime, data;
    ngx_uint_t              k, mark;
    ngx_array_t            *calls;
    ngx_http_agent_call_t  *c;

    mark = llm->model->cache
           && (n + 1 == llm->req->messages->nelts
               || n + 1 == llm->req->history);

    if (m->tool_call_id.len) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "tool_result");
        ngx_http_agent_json_key(j, "tool_use_id");
        ngx_http_agent_json_str(j, &m->tool_call_id);
        ngx_http_agent_json_key(j, "content");
        ngx_http_agent_json_str(j, &m->content);

        if (mark) {
            ngx_http_agent_anthropic_cache(j);
        }

        ngx_http_agent_json_end(j);
        return;
    }

    images = ngx_http_agent_provider_images(llm, m);

    for (i = 0; images && i < images->u.array.len; i++) {
        if (ngx_http_agent_provider_image(images, i, &mime, &data) != NGX_OK) {
            continue;
        }

        /* a PDF: a document block, its source as an image's */

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, ngx_http_agent_message_document(&mime)
                                    ? "document" : "image");
        ngx_http_agent_json_key(j, "source");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "base64");
        ngx_http_agent_json_key(j, "media_type");
        ngx_http_agent_json_str(j, &mime);
        ngx_http_agent_json_key(j, "data");
        ngx_http_agent_json_str(j, &data);
        ngx_http_agent_json_end(j);

        if (mark && m->content.len == 0 && m->tool_calls.len == 0
            && i + 1 == images->u.array.len)
        {
            ngx_http_agent_anthropic_cache(j);
        }

        ngx_http_agent_json_end(j);
    }

    if (m->content.len) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "text");
        ngx_http_agent_json_key(j, "text");
        ngx_http_agent_json_str(j, &m->content);

        if (mark && m->tool_calls.len == 0) {
            ngx_http_agent_anthropic_cache(j);
        }

        ngx_http_agent_json_end(j);
    }

    calls = ngx_http_agent_provider_calls(j, m);
    if (calls == NULL) {
        return;
    }

    c = calls->elts;

    for (k = 0; k < calls->nelts; k++) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "tool_use");
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_str(j, &c[k].id);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &c[k].name);
        ngx_http_agent_json_key(j, "input");

        /* the input must be an object: what did not parse is lost */
        ngx_http_agent_provider_object(j, c[k].args);

        if (mark && k + 1 == calls->nelts) {
            ngx_http_agent_anthropic_cache(j);
        }

        ngx_http_agent_json_end(j);
    }
}


static void
ngx_http_agent_anthropic_cache(ngx_http_agent_json_t *j)
{
    ngx_http_agent_json_key(j, "cache_control");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "ephemeral");
    ngx_http_agent_json_end(j);
}


/*
 * message_start (the usage of the prompt), content_block_start (text, or
 * a tool_use with its id and name), content_block_delta (text_delta, or
 * input_json_delta: a piece of the tool's input), message_delta (the stop
 * reason, the output tokens), message_stop; ping and others say nothing.
 */

static ngx_int_t
ngx_http_agent_anthropic_event(ngx_http_agent_llm_t *llm, yajl_val v)
{
    yajl_val   block, delta, usage;
    ngx_str_t  type, s, id, name;

    if (ngx_http_agent_json_get_str(v, "type", &type) != NGX_OK) {
        return ngx_http_agent_llm_fail(llm, "the model's stream has an event "
                                       "without a type");
    }

    if (type.len == 13 && ngx_strncmp(type.data, "message_start", 13) == 0) {
        usage = ngx_http_agent_json_get(ngx_http_agent_json_get(v, "message"),
                                        "usage");

        llm->cached_tokens = ngx_http_agent_provider_int(usage,
                                                   "cache_read_input_tokens");
        llm->cache_write_tokens = ngx_http_agent_provider_int(usage,
                                               "cache_creation_input_tokens");

        /* prompt_tokens counts the cached ones, as OpenAI's does */
        llm->prompt_tokens = ngx_http_agent_provider_int(usage,
                                                         "input_tokens")
                             + llm->cached_tokens + llm->cache_write_tokens;
        llm->completion_tokens = ngx_http_agent_provider_int(usage,
                                                             "output_tokens");
        return NGX_OK;
    }

    if (type.len == 19
        && ngx_strncmp(type.data, "content_block_start", 19) == 0)
    {
        block = ngx_http_agent_json_get(v, "content_block");

        if (ngx_http_agent_json_get_str(block, "type", &s) != NGX_OK) {
            return NGX_OK;
        }

        if (s.len == 8 && ngx_strncmp(s.data, "tool_use", 8) == 0) {
            if (ngx_http_agent_json_get_str(block, "id", &id) != NGX_OK
                || ngx_http_agent_json_get_str(block, "name", &name)
                   != NGX_OK)
            {
                return ngx_http_agent_llm_fail(llm, "a tool_use block of "
                                               "the model has no id or "
                                               "name");
            }

            llm->block = llm->ncalls;

            return ngx_http_agent_llm_tool(llm, llm->block, &id, &name,
                                           NULL);
        }

        llm->block = -1;

        if (s.len == 4 && ngx_strncmp(s.data, "text", 4) == 0
            && ngx_http_agent_json_get_str(block, "text", &s) == NGX_OK)
        {
            return ngx_http_agent_llm_text(llm, &s);
        }

        return NGX_OK;
    }

    if (type.len == 19
        && ngx_strncmp(type.data, "content_block_delta", 19) == 0)
    {
        delta = ngx_http_agent_json_get(v, "delta");

        if (ngx_http_agent_json_get_str(delta, "type", &s) != NGX_OK) {
            return NGX_OK;
        }

        if (s.len == 10 && ngx_strncmp(s.data, "text_delta", 10) == 0) {
            if (ngx_http_agent_json_get_str(delta, "text", &s) != NGX_OK) {
                return NGX_OK;
            }

            return ngx_http_agent_llm_text(llm, &s);
        }

        if (s.len == 16 && ngx_strncmp(s.data, "input_json_delta", 16) == 0) {
            if (llm->block < 0) {
                return ngx_http_agent_llm_fail(llm, "the model sent a tool "
                                               "input outside a tool_use "
                                               "block");
            }

            if (ngx_http_agent_json_get_str(delta, "partial_json", &s)
                != NGX_OK)
            {
                return NGX_OK;
            }

            return ngx_http_agent_llm_tool(llm, llm->block, NULL, NULL, &s);
        }

        /* thinking and signature deltas are not the answer */
        return NGX_OK;
    }

    if (type.len == 18
        && ngx_strncmp(type.data, "content_block_stop", 18) == 0)
    {
        llm->block = -1;
        return NGX_OK;
    }

    if (type.len == 13 && ngx_strncmp(type.data, "message_delta", 13) == 0) {
        usage = ngx_http_agent_json_get(v, "usage");

        if (usage) {
            llm->completion_tokens = ngx_http_agent_provider_int(usage,
                                                             "output_tokens");
        }

        if (ngx_http_agent_json_get_str(ngx_http_agent_json_get(v, "delta"),
                                        "stop_reason", &s)
            == NGX_OK)
        {
            return ngx_http_agent_llm_finish(llm, &s);
        }

        return NGX_OK;
    }

    if (type.len == 12 && ngx_strncmp(type.data, "message_stop", 12) == 0) {
        llm->seen_done = 1;
    }

    return NGX_OK;
}
