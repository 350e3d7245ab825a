
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_util.h"


/*
 * provider=gemini: generateContent, streamed as server-sent events
 * (streamGenerateContent?alt=sse).  The system prompt goes in
 * "systemInstruction", the assistant is the "model" role, tool calls are
 * "functionCall" parts (whole, with parsed args and no ids), results
 * "functionResponse" parts named after the tool, images "inlineData".
 * Gemini caches long prefixes by itself (implicit caching); its
 * "cachedContentTokenCount" is reported as cached tokens.
 */


static ngx_int_t ngx_http_agent_gemini_request(ngx_http_agent_llm_t *llm,
    ngx_str_t *url, ngx_array_t *headers, ngx_str_t *body);
static ngx_int_t ngx_http_agent_gemini_event(ngx_http_agent_llm_t *llm,
    yajl_val v);
static void ngx_http_agent_gemini_tools(ngx_http_agent_llm_t *llm,
    ngx_http_agent_json_t *j);
static void ngx_http_agent_gemini_parts(ngx_http_agent_llm_t *llm,
    ngx_http_agent_json_t *j, ngx_http_agent_msg_t *m, ngx_uint_t n);
static void ngx_http_agent_gemini_text(ngx_http_agent_json_t *j,
    ngx_str_t *text);

static ngx_int_t ngx_http_agent_gemini_url(ngx_http_agent_llm_t *llm,
    ngx_str_t *url, ngx_array_t *headers, const char *method);
static ngx_int_t ngx_http_agent_gemini_embed(ngx_http_agent_llm_t *llm,
    ngx_str_t *url, ngx_array_t *headers, ngx_str_t *body);
static ngx_int_t ngx_http_agent_gemini_embedded(ngx_http_agent_llm_t *llm,
    yajl_val v);

ngx_http_agent_provider_t  ngx_http_agent_provider_gemini = {
    ngx_string("gemini"),
    ngx_string("https://generativelanguage.googleapis.com/v1beta"),
    ngx_http_agent_gemini_request,
    ngx_http_agent_gemini_event,
    ngx_http_agent_gemini_embed,
    ngx_http_agent_gemini_embedded
};


static ngx_int_t
ngx_http_agent_gemini_request(ngx_http_agent_llm_t *llm, ngx_str_t *url,
    ngx_array_t *headers, ngx_str_t *body)
{
    ngx_http_agent_json_t   *j;
    ngx_http_agent_model_t  *model;

    static ngx_str_t  ai = ngx_string("model");

    model = llm->model;

    if (ngx_http_agent_gemini_url(llm, url, headers,
                                  "streamGenerateContent?alt=sse")
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    j = ngx_http_agent_json_create_obj(llm->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }


    if (llm->req->system && llm->req->system->len) {
        ngx_http_agent_json_key(j, "systemInstruction");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "parts");
        ngx_http_agent_json_arr(j);
        ngx_http_agent_gemini_text(j, llm->req->system);
        ngx_http_agent_json_arr_end(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_gemini_tools(llm, j);

    if (model->max_tokens) {
        ngx_http_agent_json_key(j, "generationConfig");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "maxOutputTokens");
        ngx_http_agent_json_int(j, model->max_tokens);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_key(j, "contents");
    ngx_http_agent_provider_turns(llm, j, "parts", &ai,
                                  ngx_http_agent_gemini_parts);

    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, body);
}


/* OpenAI's function tools as one {"functionDeclarations": [...]} */

static void
ngx_http_agent_gemini_tools(ngx_http_agent_llm_t *llm,
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
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "functionDeclarations");
    ngx_http_agent_json_arr(j);

    for (i = 0; i < tools->u.array.len; i++) {
        if (ngx_http_agent_provider_function(j, tools->u.array.values[i], &v)
            != NGX_OK)
        {
            continue;
        }

        if (v) {
            ngx_http_agent_json_key(j, "parameters");
            ngx_http_agent_json_val(j, v);
        }

        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_arr_end(j);

    /* the last round: declared, as in every earlier call, but not called */

    if (llm->req->tools_off) {
        ngx_http_agent_json_key(j, "toolConfig");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "functionCallingConfig");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "mode");
        ngx_http_agent_json_cstr(j, "NONE");
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
    }
}


static void
ngx_http_agent_gemini_parts(ngx_http_agent_llm_t *llm,
    ngx_http_agent_json_t *j, ngx_http_agent_msg_t *m, ngx_uint_t n)
{
    size_t                  i;
    yajl_val                images, res;
    ngx_str_t               mime, data;
    ngx_uint_t              k;
    ngx_array_t            *calls;
    ngx_http_agent_call_t  *c;

    if (m->tool_call_id.len) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "functionResponse");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &m->name);
        ngx_http_agent_json_key(j, "response");

        /* the response must be an object: other results are wrapped */

        res = m->content.len ? ngx_http_agent_json_parse(j->pool,
                                                         m->content.data,
                                                         m->content.len,
                                                         NULL)
                             : NULL;

        if (res && YAJL_IS_OBJECT(res)) {
            ngx_http_agent_json_val(j, res);

        } else {
            ngx_http_agent_json_obj(j);
            ngx_http_agent_json_key(j, "result");
            ngx_http_agent_json_str(j, &m->content);
            ngx_http_agent_json_end(j);
        }

        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
        return;
    }

    if (m->content.len) {
        ngx_http_agent_gemini_text(j, &m->content);
    }

    images = ngx_http_agent_provider_images(llm, m);

    for (i = 0; images && i < images->u.array.len; i++) {
        if (ngx_http_agent_provider_image(images, i, &mime, &data) != NGX_OK) {
            continue;
        }

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "inlineData");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "mimeType");
        ngx_http_agent_json_str(j, &mime);
        ngx_http_agent_json_key(j, "data");
        ngx_http_agent_json_str(j, &data);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
    }

    calls = ngx_http_agent_provider_calls(j, m);
    if (calls == NULL) {
        return;
    }

    c = calls->elts;

    for (k = 0; k < calls->nelts; k++) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "functionCall");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &c[k].name);
        ngx_http_agent_json_key(j, "args");
        ngx_http_agent_provider_object(j, c[k].args);

        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
    }
}


static void
ngx_http_agent_gemini_text(ngx_http_agent_json_t *j, ngx_str_t *text)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "text");
    ngx_http_agent_json_str(j, text);
    ngx_http_agent_json_end(j);
}


/*
 * Each event is a whole GenerateContentResponse: the first candidate's
 * parts (text, or a functionCall with its args whole), its finishReason,
 * the usageMetadata so far.  The stream ends when the server closes it.
 */

static ngx_int_t
ngx_http_agent_gemini_event(ngx_http_agent_llm_t *llm, yajl_val v)
{
    size_t      i;
    yajl_val    cands, cand, parts, part, fc, usage, t;
    ngx_str_t   s, id, name, args;
    ngx_int_t   rc;

    usage = ngx_http_agent_json_get(v, "usageMetadata");

    if (usage && YAJL_IS_OBJECT(usage)) {
        llm->prompt_tokens = ngx_http_agent_provider_int(usage,
                                                         "promptTokenCount");
        llm->completion_tokens = ngx_http_agent_provider_int(usage,
                                                     "candidatesTokenCount")
                                 + ngx_http_agent_provider_int(usage,
                                                     "thoughtsTokenCount");
        llm->cached_tokens = ngx_http_agent_provider_int(usage,
                                                  "cachedContentTokenCount");
    }

    if (ngx_http_agent_json_get_str(ngx_http_agent_json_get(v,
                                                     "promptFeedback"),
                                    "blockReason", &s)
        == NGX_OK)
    {
        s.len = ngx_min(s.len, 64);
        return ngx_http_agent_llm_fail(llm, "the model provider blocked the "
                                       "prompt (%V)", &s);
    }

    cands = ngx_http_agent_json_get(v, "candidates");

    if (cands == NULL || !YAJL_IS_ARRAY(cands) || cands->u.array.len == 0) {
        return NGX_OK;
    }

    cand = cands->u.array.values[0];
    parts = ngx_http_agent_json_get(ngx_http_agent_json_get(cand, "content"),
                                    "parts");

    for (i = 0; parts && YAJL_IS_ARRAY(parts) && i < parts->u.array.len; i++)
    {
        part = parts->u.array.values[i];

        t = ngx_http_agent_json_get(part, "thought");
        if (t && YAJL_IS_TRUE(t)) {
            continue;
        }

        fc = ngx_http_agent_json_get(part, "functionCall");

        if (fc) {
            if (ngx_http_agent_json_get_str(fc, "name", &name) != NGX_OK) {
                return ngx_http_agent_llm_fail(llm, "a functionCall of the "
                                               "model has no name");
            }

            t = ngx_http_agent_json_get(fc, "args");
            ngx_str_set(&args, "{}");

            if (t && ngx_http_agent_json_encode(llm->pool, t, &args)
                     != NGX_OK)
            {
                return ngx_http_agent_llm_fail(llm, "out of memory");
            }

            rc = ngx_http_agent_llm_tool(llm, llm->ncalls,
                      ngx_http_agent_json_get_str(fc, "id", &id) == NGX_OK
                      && id.len ? &id : NULL,
                      &name, &args);

            if (rc != NGX_OK) {
                return rc;
            }

            continue;
        }

        if (ngx_http_agent_json_get_str(part, "text", &s) == NGX_OK
            && ngx_http_agent_llm_text(llm, &s) != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    if (ngx_http_agent_json_get_str(cand, "finishReason", &s) == NGX_OK) {
        return ngx_http_agent_llm_finish(llm, &s);
    }

    return NGX_OK;
}


/* the model's URL for method, and the key's header */

static ngx_int_t
ngx_http_agent_gemini_url(ngx_http_agent_llm_t *llm, ngx_str_t *url,
    ngx_array_t *headers, const char *method)
{
    u_char                  *p;
    ngx_http_agent_model_t  *model;

    model = llm->model;

    p = ngx_pnalloc(llm->pool, model->url.len + model->model.len
                               + sizeof("/models/:") + ngx_strlen(method));
    if (p == NULL) {
        return NGX_ERROR;
    }

    url->data = p;
    url->len = ngx_sprintf(p, "%V/models/%V:%s", &model->url, &model->model,
                           method)
               - p;

    if (llm->key.len == 0) {
        return NGX_OK;
    }

    return ngx_http_agent_provider_header(llm, headers, "x-goog-api-key: %V",
                                          &llm->key);
}


/*
 * POST models/M:batchEmbedContents, a request per text: Gemini embeds a
 * query and a document differently (taskType), so a search's query is
 * asked as RETRIEVAL_QUERY and an item as RETRIEVAL_DOCUMENT
 */

static ngx_int_t
ngx_http_agent_gemini_embed(ngx_http_agent_llm_t *llm, ngx_str_t *url,
    ngx_array_t *headers, ngx_str_t *body)
{
    ngx_str_t               *in, name;
    ngx_uint_t               i;
    ngx_http_agent_json_t   *j;
    ngx_http_agent_model_t  *model;

    model = llm->model;

    if (ngx_http_agent_gemini_url(llm, url, headers, "batchEmbedContents")
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* each request names its model too: the URL's "models/M" */
    name.len = sizeof("models/") - 1 + model->model.len;
    name.data = url->data + model->url.len + 1;

    j = ngx_http_agent_json_create_obj(llm->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_key(j, "requests");
    ngx_http_agent_json_arr(j);

    in = llm->req->inputs->elts;

    for (i = 0; i < llm->req->inputs->nelts; i++) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "model");
        ngx_http_agent_json_str(j, &name);
        ngx_http_agent_json_key(j, "taskType");
        ngx_http_agent_json_cstr(j, llm->req->query ? "RETRIEVAL_QUERY"
                                                    : "RETRIEVAL_DOCUMENT");

        if (llm->req->dims) {
            ngx_http_agent_json_key(j, "outputDimensionality");
            ngx_http_agent_json_int(j, llm->req->dims);
        }

        ngx_http_agent_json_key(j, "content");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "parts");
        ngx_http_agent_json_arr(j);
        ngx_http_agent_gemini_text(j, &in[i]);
        ngx_http_agent_json_arr_end(j);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, body);
}


/* {embeddings: [{values: [...]}]} */

static ngx_int_t
ngx_http_agent_gemini_embedded(ngx_http_agent_llm_t *llm, yajl_val v)
{
    return ngx_http_agent_provider_vectors(llm,
                                      ngx_http_agent_json_get(v, "embeddings"),
                                      "values");
}
