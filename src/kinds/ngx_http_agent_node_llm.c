
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_mcp.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_kinds_int.h"


/*
 * "node NAME llm": one call of the model with the rendered prompt as the
 * system message, then the conversation (history=on) or this turn's input
 * alone.  The answer goes to messages, or to a channel as text or JSON.
 */


#define NGX_HTTP_AGENT_LLM_JSON_RETRIES  2


typedef struct {
    ngx_http_agent_run_t       *run;
    ngx_http_agent_node_t      *node;
    ngx_http_agent_node_llm_conf_t  *conf;
    ngx_http_agent_llm_t       *llm;
    ngx_pool_t                 *pool;          /* the call's */
    ngx_http_agent_model_t     *model;
    ngx_http_agent_llm_req_t    req;
    ngx_str_t                   system;
    ngx_str_t                   summary;
    ngx_array_t                *messages;
    ngx_uint_t                  attempts;
    ngx_http_agent_mcp_waiter_t waiter;        /* for an MCP server */
    ngx_uint_t                  mcp_next;
    ngx_str_t                   tools;         /* with the MCP tools */
    unsigned                    tools_bound:1;
    unsigned                    stream:1;
} ngx_http_agent_node_llm_ctx_t;


static ngx_int_t ngx_http_agent_node_llm_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);
static ngx_int_t ngx_http_agent_node_llm_summary(
    ngx_http_agent_node_llm_ctx_t *ctx);
static ngx_int_t ngx_http_agent_node_llm_event(
    ngx_http_agent_node_llm_ctx_t *ctx, ngx_str_t *json);
static ngx_int_t ngx_http_agent_node_llm_system(
    ngx_http_agent_node_llm_ctx_t *ctx);
static ngx_int_t ngx_http_agent_node_llm_call(
    ngx_http_agent_node_llm_ctx_t *ctx);
static ngx_int_t ngx_http_agent_node_llm_chunk(void *data, ngx_str_t *text);
static void ngx_http_agent_node_llm_done(void *data, ngx_int_t rc);
static ngx_int_t ngx_http_agent_node_llm_answer(
    ngx_http_agent_node_llm_ctx_t *ctx, ngx_http_agent_msg_t *msg);
static void ngx_http_agent_node_llm_end(ngx_http_agent_node_llm_ctx_t *ctx);
static void ngx_http_agent_node_llm_cleanup(void *data);
static void ngx_http_agent_node_llm_cancel(ngx_http_agent_run_t *run);
static ngx_int_t ngx_http_agent_node_llm_mcp(
    ngx_http_agent_node_llm_ctx_t *ctx);
static void ngx_http_agent_node_llm_mcp_ready(void *data, ngx_int_t rc);
static void ngx_http_agent_node_llm_mcp_cancel(ngx_http_agent_run_t *run);
static ngx_str_t *ngx_http_agent_node_llm_offers(void *conf);


ngx_http_agent_kind_t  ngx_http_agent_llm_kind = {
    ngx_string("llm"),
    ngx_http_agent_node_llm_create_conf,
    ngx_http_agent_node_llm_params,
    ngx_http_agent_node_llm_check,
    ngx_http_agent_node_llm_run,
    0,
    ngx_http_agent_node_llm_offers,
    0
};


static ngx_str_t *
ngx_http_agent_node_llm_offers(void *conf)
{
    ngx_http_agent_node_llm_conf_t *lc = conf;

    return &lc->tools_list;
}


static ngx_int_t
ngx_http_agent_node_llm_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_env_t *env = run->data;

    ngx_int_t                         rc;
    ngx_str_t                         key;
    ngx_http_agent_msg_t             *m;
    ngx_http_agent_node_llm_ctx_t    *ctx;
    ngx_http_agent_node_llm_conf_t   *lc;

    lc = node->conf;

    ctx = ngx_pcalloc(run->pool, sizeof(ngx_http_agent_node_llm_ctx_t));
    if (ctx == NULL) {
        return NGX_ERROR;
    }

    ctx->run = run;
    ctx->node = node;
    ctx->conf = lc;
    ctx->stream = lc->stream;
    ctx->model = lc->model ? lc->model : env->model;

    /* the last call a turn may make of a node gets no tools: it answers */
    ctx->tools_bound = (!ngx_http_agent_toolset_empty(&lc->toolset)
                        && run->visits[node->index]
                           < env->services.max_tool_rounds);

    run->node_data = ctx;

    if (ngx_http_agent_llm_key(ctx->model, &key) != NGX_OK) {
        return ngx_http_agent_graph_fail(run, "no_api_key", "the model "
                                         "\"%V\" has no API key: set %V for "
                                         "nginx and add \"env %V;\" to "
                                         "nginx.conf", &ctx->model->name,
                                         &ctx->model->key_env,
                                         &ctx->model->key_env);
    }

    if (lc->history) {
        ctx->messages = run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages;

        if (lc->summary >= 0
            && ngx_http_agent_node_llm_summary(ctx) != NGX_OK)
        {
            return NGX_ERROR;
        }

    } else {
        ctx->messages = ngx_array_create(run->pool, 4,
                                         sizeof(ngx_http_agent_msg_t));
        if (ctx->messages == NULL) {
            return NGX_ERROR;
        }

        m = ngx_array_push(ctx->messages);
        if (m == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(m, sizeof(ngx_http_agent_msg_t));
        ngx_str_set(&m->role, "user");

        if (ngx_http_agent_graph_value(run, NGX_HTTP_AGENT_CH_INPUT,
                                       &m->content)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        /* the input channel holds a JSON string: the text itself */
        if (m->content.len >= 2 && m->content.data[0] == '"') {
            yajl_val  v;

            v = ngx_http_agent_json_parse(run->pool, m->content.data,
                                          m->content.len, NULL);
            if (v && YAJL_IS_STRING(v)) {
                m->content.data = (u_char *) YAJL_GET_STRING(v);
                m->content.len = ngx_strlen(m->content.data);
            }
        }
    }

    if (ngx_http_agent_toolset_waits(&lc->toolset)) {
        rc = ngx_http_agent_node_llm_mcp(ctx);

        if (rc != NGX_OK) {
            /* NGX_AGAIN: the call follows the servers' lists */
            return rc;
        }
    }

    if (ngx_http_agent_node_llm_call(ctx) != NGX_OK) {
        return NGX_ERROR;
    }

    return NGX_AGAIN;
}


/*
 * tools=NAME.*: the first call of a worker waits for each server's tools,
 * at most the server's timeout= (mcp.c arms it on the waiter); a server
 * that cannot be reached, is too slow or backs off after failures leaves
 * its tools out (it is logged) and the model answers with the others
 */

static ngx_int_t
ngx_http_agent_node_llm_mcp(ngx_http_agent_node_llm_ctx_t *ctx)
{
    ngx_int_t                        rc;
    ngx_array_t                     *bound;
    ngx_http_agent_toolset_entry_t  *e;

    bound = ctx->conf->toolset.entries;
    e = bound->elts;

    while (ctx->mcp_next < bound->nelts) {
        if (e[ctx->mcp_next].mcp == NULL) {
            ctx->mcp_next++;
            continue;
        }

        ctx->waiter.handler = ngx_http_agent_node_llm_mcp_ready;
        ctx->waiter.data = ctx;

        rc = ngx_http_agent_mcp_ready(e[ctx->mcp_next].mcp, &ctx->waiter,
                                      ctx->run->log);
        if (rc == NGX_AGAIN) {
            ctx->run->cancel = ngx_http_agent_node_llm_mcp_cancel;
            return NGX_AGAIN;
        }

        ctx->mcp_next++;
    }

    return ngx_http_agent_toolset_json(ctx->run->pool, ctx->run->log,
                                       &ctx->conf->toolset, &ctx->tools);
}


static void
ngx_http_agent_node_llm_mcp_ready(void *data, ngx_int_t rc)
{
    ngx_http_agent_node_llm_ctx_t *ctx = data;

    ngx_http_agent_run_t  *run;

    run = ctx->run;
    run->cancel = NULL;
    ctx->mcp_next++;

    rc = ngx_http_agent_node_llm_mcp(ctx);

    if (rc == NGX_AGAIN) {
        return;
    }

    if (rc != NGX_OK || ngx_http_agent_node_llm_call(ctx) != NGX_OK) {
        ngx_http_agent_graph_node_done(run, NGX_ERROR);
    }
}


static void
ngx_http_agent_node_llm_mcp_cancel(ngx_http_agent_run_t *run)
{
    ngx_http_agent_node_llm_ctx_t *ctx = run->node_data;

    if (ctx) {
        ngx_http_agent_mcp_unwait(&ctx->waiter);
    }
}


/*
 * summary=CHANNEL, as the summarize node writes it: {"text", "count"}; the
 * first count messages are replaced by the text in the system prompt
 */

static ngx_int_t
ngx_http_agent_node_llm_summary(ngx_http_agent_node_llm_ctx_t *ctx)
{
    yajl_val               v, n;
    ngx_str_t              json;
    ngx_uint_t             count;
    ngx_array_t           *all, *recent;
    ngx_http_agent_run_t  *run;

    run = ctx->run;

    if (ngx_http_agent_graph_value(run, ctx->conf->summary, &json) != NGX_OK)
    {
        return NGX_ERROR;
    }

    v = ngx_http_agent_json_parse(run->pool, json.data, json.len, NULL);

    if (v == NULL || !YAJL_IS_OBJECT(v)
        || ngx_http_agent_json_get_str(v, "text", &ctx->summary) != NGX_OK)
    {
        ngx_str_null(&ctx->summary);
        return NGX_OK;
    }

    n = ngx_http_agent_json_get(v, "count");
    count = (n && YAJL_IS_INTEGER(n) && YAJL_GET_INTEGER(n) > 0)
            ? (ngx_uint_t) YAJL_GET_INTEGER(n) : 0;

    all = ctx->messages;

    if (count == 0 || count >= all->nelts) {
        return NGX_OK;
    }

    recent = ngx_palloc(run->pool, sizeof(ngx_array_t));
    if (recent == NULL) {
        return NGX_ERROR;
    }

    *recent = *all;
    recent->elts = (ngx_http_agent_msg_t *) all->elts + count;
    recent->nelts = all->nelts - count;
    recent->nalloc = recent->nelts;
    recent->pool = NULL;

    ctx->messages = recent;

    return NGX_OK;
}


/*
 * The system prompt: the rendered template, then the summary, if any.
 * Rendered in a pool of its own: what the render parsed (the channels it
 * names) goes at once, and the call keeps only the text for its retries
 */

static ngx_int_t
ngx_http_agent_node_llm_system(ngx_http_agent_node_llm_ctx_t *ctx)
{
    u_char      *p;
    ngx_int_t    rc;
    ngx_str_t    prompt;
    ngx_pool_t  *pool;

    ngx_str_null(&ctx->system);
    ngx_str_null(&prompt);

    if (ctx->conf->prompt.len == 0 && ctx->summary.len == 0) {
        return NGX_OK;
    }

    pool = ngx_create_pool(4096, ctx->run->log);
    if (pool == NULL) {
        return NGX_ERROR;
    }

    rc = NGX_ERROR;

    if (ctx->conf->prompt.len
        && ngx_http_agent_template_render(ctx->run, pool, &ctx->conf->prompt,
                                          &prompt)
           != NGX_OK)
    {
        goto done;
    }

    p = ngx_pnalloc(ctx->pool, prompt.len + ctx->summary.len + 64);
    if (p == NULL) {
        goto done;
    }

    ctx->system.data = p;

    if (ctx->summary.len == 0) {
        ctx->system.len = ngx_cpymem(p, prompt.data, prompt.len) - p;

    } else {
        ctx->system.len = ngx_sprintf(p, "%V%sSummary of the earlier "
                                      "conversation:\n%V", &prompt,
                                      prompt.len ? "\n\n" : "",
                                      &ctx->summary)
                          - p;
    }

    rc = NGX_OK;

done:

    ngx_destroy_pool(pool);

    return rc;
}


static ngx_int_t
ngx_http_agent_node_llm_call(ngx_http_agent_node_llm_ctx_t *ctx)
{
    ngx_pool_cleanup_t      *cln;
    ngx_http_agent_env_t    *env;
    ngx_http_agent_run_t    *run;
    ngx_http_agent_event_t   ev;

    run = ctx->run;
    env = run->data;

    /*
     * the request, the transfer and the parser's buffers live in a pool of
     * the call: what the call leaves is copied to the run, the rest goes
     * when the call ends, so open streams stay small
     */

    ctx->pool = ngx_create_pool(4096, run->log);
    if (ctx->pool == NULL) {
        return NGX_ERROR;
    }

    cln = ngx_pool_cleanup_add(run->pool, 0);
    if (cln == NULL) {
        ngx_destroy_pool(ctx->pool);
        ctx->pool = NULL;
        return NGX_ERROR;
    }

    cln->handler = ngx_http_agent_node_llm_cleanup;
    cln->data = ctx;

    /* rendered in the call's pool: what the render parsed goes with it */

    if (ngx_http_agent_node_llm_system(ctx) != NGX_OK) {
        return ngx_http_agent_graph_fail(run, "internal", "the prompt of "
                                         "\"%V\" could not be rendered",
                                         &ctx->node->name);
    }

    ctx->req.system = &ctx->system;
    ctx->req.messages = ctx->messages;
    ctx->req.tools = ctx->tools.len ? (ctx->tools.len > 2 ? &ctx->tools : NULL)
                     : ctx->conf->tools.len ? &ctx->conf->tools : NULL;
    ctx->req.tools_off = !ctx->tools_bound;

    /* the client's own tools (Open Responses'), beside the step's */
    if (ctx->tools_bound && env->services.client_tools
        && ngx_http_agent_toolset_client(run->pool, &ctx->conf->toolset,
                                         env->services.client_tools,
                                         &ctx->req.tools)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    ctx->req.history = (ctx->messages
                        == run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages)
                       ? run->messages_at_start : 0;
    ctx->req.session = &env->session_id;
    ctx->req.connect_timeout = env->services.llm_connect_timeout;
    ctx->req.idle_timeout = env->services.llm_idle_timeout;
    ctx->req.timeout = env->services.llm_timeout;
    ctx->req.cache = ctx->conf->cache_response;
    ctx->req.owner = ctx->conf->cache_shared ? NULL : &env->owner;

    /* a format=json retry's question is ours: never looked up by it */
    if (ctx->conf->cache_similar > 0 && ctx->attempts == 0) {
        ctx->req.similar = ctx->conf->cache_similar;
        ctx->req.scope = &ctx->conf->scope;
        ctx->req.embed = env->services.embed;
        ctx->req.embed_data = env->services.data;
        ctx->req.keep = run->pool;

        if (ngx_http_agent_node_store_usage(run) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    ctx->llm = ngx_http_agent_llm_create(ctx->pool, run->log);
    if (ctx->llm == NULL) {
        return NGX_ERROR;
    }

    ctx->llm->on_chunk = ngx_http_agent_node_llm_chunk;
    ctx->llm->on_done = ngx_http_agent_node_llm_done;
    ctx->llm->data = ctx;

    if (env->stream
        && ngx_http_agent_id_make(env->stream->pool,
                                  &env->stream->model_run_id)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (env->stream) {
        env->stream->model = ctx->model->name;
        env->stream->model_remote = ctx->model->model;
        env->stream->provider = ctx->model->provider->name;
    }

    /* agent_limit: the call's tokens reserved, or the turn stops here */
    if (ngx_http_agent_env_reserve(run, ctx->llm, ctx->model, &ctx->req)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));
    ev.type = NGX_HTTP_AGENT_EV_MODEL_START;
    ev.name = &ctx->model->name;
    ev.text = &ctx->system;
    ev.messages = ctx->req.messages;

    if (ngx_http_agent_env_emit(run, &ev) != NGX_OK) {
        return ngx_http_agent_graph_fail(run, "client_gone", "the client "
                                         "went away");
    }

    if (ngx_http_agent_llm_call(ctx->llm, ctx->model, &ctx->req)
        != NGX_OK)
    {
        return ngx_http_agent_graph_fail(run, "llm_error", "%V",
                                         &ctx->llm->error);
    }

    run->cancel = ngx_http_agent_node_llm_cancel;

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_node_llm_chunk(void *data, ngx_str_t *text)
{
    ngx_http_agent_node_llm_ctx_t *ctx = data;

    ngx_http_agent_event_t  ev;

    if (!ctx->stream) {
        return NGX_OK;
    }

    ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));
    ev.type = NGX_HTTP_AGENT_EV_CHUNK;
    ev.text = text;

    return ngx_http_agent_env_emit(ctx->run, &ev);
}


static void
ngx_http_agent_node_llm_done(void *data, ngx_int_t rc)
{
    ngx_http_agent_node_llm_ctx_t *ctx = data;

    ngx_http_agent_msg_t     msg;
    ngx_http_agent_llm_t    *llm;
    ngx_http_agent_env_t    *env;
    ngx_http_agent_run_t    *run;
    ngx_http_agent_event_t   ev;

    run = ctx->run;
    env = run->data;
    llm = ctx->llm;

    ngx_http_agent_env_usage(env, llm);

    if (rc != NGX_OK) {
        if (llm->error.len) {
            ngx_http_agent_graph_fail(run, "llm_error", "%V", &llm->error);

        } else {
            ngx_http_agent_graph_fail(run, "client_gone", "the client went "
                                      "away");
        }

        ngx_http_agent_node_llm_end(ctx);
        ngx_http_agent_graph_node_done(run, NGX_ERROR);
        return;
    }


    /* the message is copied into the run: the call's pool goes now */

    if (ngx_http_agent_llm_message(llm, run->pool, &msg) != NGX_OK) {
        ngx_http_agent_node_llm_end(ctx);
        ngx_http_agent_graph_node_done(run, NGX_ERROR);
        return;
    }

    if (!ctx->tools_bound && msg.tool_calls.len) {
        /* no tools were offered; calls now would have no answers */
        ngx_str_null(&msg.tool_calls);
    }

    ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));
    ev.type = NGX_HTTP_AGENT_EV_MODEL_END;
    ev.name = &ctx->model->name;
    ev.text = &msg.content;
    ev.json = msg.tool_calls.len ? &msg.tool_calls : NULL;
    ev.prompt_tokens = llm->prompt_tokens;
    ev.completion_tokens = llm->completion_tokens;
    ev.cached_tokens = llm->cached_tokens;
    ev.cache_write_tokens = llm->cache_write_tokens;

    ngx_http_agent_node_llm_end(ctx);

    if (ngx_http_agent_env_emit(run, &ev) != NGX_OK) {
        ngx_http_agent_graph_fail(run, "client_gone", "the client went away");
        ngx_http_agent_graph_node_done(run, NGX_ERROR);
        return;
    }

    rc = ngx_http_agent_node_llm_answer(ctx, &msg);

    if (rc == NGX_AGAIN) {
        /* asked again */
        return;
    }

    ngx_http_agent_graph_node_done(run, rc);
}


static ngx_int_t
ngx_http_agent_node_llm_answer(ngx_http_agent_node_llm_ctx_t *ctx,
    ngx_http_agent_msg_t *msg)
{
    yajl_val                v;
    ngx_str_t               json, text, err;
    ngx_array_t            *again;
    ngx_http_agent_msg_t   *m;
    ngx_http_agent_run_t   *run;

    run = ctx->run;

    if (ctx->conf->output == NGX_HTTP_AGENT_CH_MESSAGES) {
        return ngx_http_agent_graph_write_message(run, run->update,
                                                  NGX_HTTP_AGENT_CH_MESSAGES,
                                                  msg);
    }

    if (!ctx->conf->json) {
        if (ngx_http_agent_json_quote(run->pool, &msg->content, &json)
            != NGX_OK
            || ngx_http_agent_node_llm_event(ctx, &json) != NGX_OK)
        {
            return NGX_ERROR;
        }

        return ngx_http_agent_graph_write_value(run->update,
                                                ctx->conf->output, &json);
    }

    /* format=json: a fenced block is unwrapped, then parsed */

    text = msg->content;
    (void) ngx_http_agent_ask_fenced(&text);

    ngx_str_set(&err, "");

    v = text.len ? ngx_http_agent_json_parse(run->pool, text.data, text.len,
                                             &err)
                 : NULL;

    if (v) {
        if (ngx_http_agent_json_encode(run->pool, v, &json) != NGX_OK
            || ngx_http_agent_node_llm_event(ctx, &json) != NGX_OK)
        {
            return NGX_ERROR;
        }

        return ngx_http_agent_graph_write_value(run->update,
                                                ctx->conf->output, &json);
    }

    if (ctx->attempts++ >= NGX_HTTP_AGENT_LLM_JSON_RETRIES) {
        return ngx_http_agent_graph_fail(run, "invalid_json", "the model "
                                         "answered the step \"%V\" without "
                                         "valid JSON %ui times",
                                         &ctx->node->name, ctx->attempts);
    }

    /* asked again, with its answer and the parse error */

    again = ngx_array_create(run->pool, ctx->messages->nelts + 2,
                             sizeof(ngx_http_agent_msg_t));
    if (again == NULL) {
        return NGX_ERROR;
    }

    m = ngx_array_push_n(again, ctx->messages->nelts + 2);
    if (m == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(m, ctx->messages->elts,
               ctx->messages->nelts * sizeof(ngx_http_agent_msg_t));

    m += ctx->messages->nelts;
    ngx_memzero(m, 2 * sizeof(ngx_http_agent_msg_t));

    ngx_str_set(&m[0].role, "assistant");
    m[0].content = msg->content;

    ngx_str_set(&m[1].role, "user");
    m[1].content.data = ngx_pnalloc(run->pool, err.len + 128);
    if (m[1].content.data == NULL) {
        return NGX_ERROR;
    }

    m[1].content.len = ngx_sprintf(m[1].content.data, "That was not valid "
                                   "JSON (%V). Answer again with the JSON "
                                   "value only.", &err)
                       - m[1].content.data;

    ctx->messages = again;

    if (ngx_http_agent_node_llm_call(ctx) != NGX_OK) {
        return NGX_ERROR;
    }

    return NGX_AGAIN;
}


/* event=NAME: the value written, as a custom event (seed 003's verifier) */

static ngx_int_t
ngx_http_agent_node_llm_event(ngx_http_agent_node_llm_ctx_t *ctx,
    ngx_str_t *json)
{
    ngx_http_agent_event_t  ev;

    if (ctx->conf->event.len == 0) {
        return NGX_OK;
    }

    ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));
    ev.type = NGX_HTTP_AGENT_EV_CUSTOM;
    ev.name = &ctx->conf->event;
    ev.json = json;

    if (ngx_http_agent_env_emit(ctx->run, &ev) != NGX_OK) {
        return ngx_http_agent_graph_fail(ctx->run, "client_gone", "the "
                                         "client went away");
    }

    return NGX_OK;
}


static void
ngx_http_agent_node_llm_end(ngx_http_agent_node_llm_ctx_t *ctx)
{
    if (ctx->pool) {
        /* its cleanup removes the transfer, if any is left */
        ngx_destroy_pool(ctx->pool);
        ctx->pool = NULL;
        ctx->llm = NULL;
    }
}


static void
ngx_http_agent_node_llm_cleanup(void *data)
{
    ngx_http_agent_node_llm_end(data);
}


static void
ngx_http_agent_node_llm_cancel(ngx_http_agent_run_t *run)
{
    ngx_http_agent_node_llm_ctx_t *ctx = run->node_data;

    if (ctx && ctx->llm) {
        ngx_http_agent_llm_cancel(ctx->llm);
    }
}
