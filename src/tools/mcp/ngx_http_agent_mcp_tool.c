
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_mcp_int.h"


/*
 * What nodes do with MCP servers: an llm node binds a server's tools with
 * tools=NAME.* or NAME.tool (the model sees their plain names, or
 * NAME__tool where another tool has the name: toolset.c), waits for the
 * server's list before its first call, and offers the tools; a tools node
 * runs a call as tools/call, to the server that was bound.  The result
 * the model gets is the server's structuredContent when there is one, else
 * its text content (JSON when it parses), images named; isError and a
 * JSON-RPC error are error results; a session the server forgot is started
 * again once.
 */


typedef struct {
    ngx_http_agent_tool_call_t    *call;
    ngx_http_agent_mcp_call_t     *rpc;
    ngx_http_agent_mcp_waiter_t    waiter;
    ngx_uint_t                     again;
} ngx_http_agent_mcp_tool_ctx_t;


static ngx_int_t ngx_http_agent_mcp_tool_send(
    ngx_http_agent_mcp_tool_ctx_t *ctx);
static void ngx_http_agent_mcp_tool_answer(ngx_http_agent_mcp_call_t *rpc,
    ngx_int_t rc, long status, ngx_http_agent_mcp_answer_t *a);
static void ngx_http_agent_mcp_tool_restarted(void *data, ngx_int_t rc);
static ngx_int_t ngx_http_agent_mcp_tool_result(ngx_pool_t *pool,
    yajl_val result, ngx_str_t *out);
static void ngx_http_agent_mcp_tool_finish(ngx_http_agent_mcp_tool_ctx_t *ctx,
    const char *fmt, ngx_str_t *why);
static void ngx_http_agent_mcp_tool_cancel(ngx_http_agent_tool_call_t *call);


ngx_int_t
ngx_http_agent_mcp_tool_run(ngx_http_agent_tool_call_t *call)
{
    ngx_http_agent_mcp_tool_ctx_t  *ctx;

    ctx = ngx_pcalloc(call->run->pool, sizeof(ngx_http_agent_mcp_tool_ctx_t));
    if (ctx == NULL) {
        return NGX_ERROR;
    }

    ctx->call = call;
    call->data = ctx;
    call->cancel = ngx_http_agent_mcp_tool_cancel;

    if (ngx_http_agent_mcp_tool_send(ctx) != NGX_OK) {
        call->cancel = NULL;
        return NGX_ERROR;
    }

    return NGX_AGAIN;
}


static ngx_int_t
ngx_http_agent_mcp_tool_send(ngx_http_agent_mcp_tool_ctx_t *ctx)
{
    ngx_str_t                    params;
    ngx_http_agent_json_t       *j;
    ngx_http_agent_tool_call_t  *call;

    call = ctx->call;

    j = ngx_http_agent_json_create_obj(call->run->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }


    /*
     * the call's Idempotency-Key, the same at each attempt (docs/runs.md);
     * first, so that mcp_http.c joins it to the _meta it adds
     */
    if (call->key.len) {
        ngx_http_agent_json_key(j, "_meta");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "idempotencyKey");
        ngx_http_agent_json_str(j, &call->key);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, &call->tool_name);
    ngx_http_agent_json_key(j, "arguments");

    if (call->args && YAJL_IS_OBJECT(call->args)) {
        ngx_http_agent_json_val(j, call->args);

    } else {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &params) != NGX_OK) {
        return NGX_ERROR;
    }

    ctx->rpc = ngx_http_agent_mcp_send(call->tool->data, "tools/call",
                                       &params, call->run->log,
                                       ngx_http_agent_mcp_tool_answer, ctx);

    return ctx->rpc ? NGX_OK : NGX_ERROR;
}


static void
ngx_http_agent_mcp_tool_answer(ngx_http_agent_mcp_call_t *rpc, ngx_int_t rc,
    long status, ngx_http_agent_mcp_answer_t *a)
{
    ngx_http_agent_mcp_tool_ctx_t *ctx = rpc->data;

    yajl_val                     is_error, v;
    ngx_str_t                    text, why;
    ngx_http_agent_mcp_t        *mcp;
    ngx_http_agent_tool_call_t  *call;

    call = ctx->call;
    mcp = rpc->mcp;
    ctx->rpc = NULL;

    if (status == NGX_HTTP_NOT_FOUND && mcp->peer->session.len
        && ctx->again++ == 0)
    {
        /* the server forgot our session: a new one, and the call again */

        ngx_log_error(NGX_LOG_INFO, call->run->log, 0, "agent: MCP server "
                      "\"%V\": the session expired, starting another",
                      &mcp->name);

        ngx_http_agent_mcp_expired(mcp);

        ctx->waiter.handler = ngx_http_agent_mcp_tool_restarted;
        ctx->waiter.data = ctx;

        switch (ngx_http_agent_mcp_ready(mcp, &ctx->waiter, call->run->log)) {
        case NGX_AGAIN:
            return;
        case NGX_OK:
            ngx_http_agent_mcp_tool_restarted(ctx, NGX_OK);
            return;
        default:
            ngx_http_agent_mcp_tool_finish(ctx, "%V", &a->error);
            return;
        }
    }

    if (rc != NGX_OK) {
        ngx_log_error(NGX_LOG_ERR, call->run->log, 0, "agent: MCP server "
                      "\"%V\": tools/call \"%V\" failed (%l): %V", &mcp->name,
                      &call->tool_name, status,
                      ngx_http_agent_json_log_str(call->run->pool,
                                                  &a->error));

        why = a->error;
        ngx_http_agent_mcp_tool_finish(ctx, status >= 300
                                       ? "the MCP server answered an "
                                         "error: %V"
                                       : status ? "the MCP server's "
                                         "answer could not be read: %V"
                                       : "the MCP server could not be "
                                         "reached: %V", &why);
        return;
    }

    if (a->rpc_error) {
        ngx_http_agent_mcp_tool_finish(ctx, "%V", &a->error);
        return;
    }

    if (ngx_http_agent_mcp_tool_result(call->run->pool, a->result, &text)
        != NGX_OK)
    {
        ngx_str_set(&why, "out of memory");
        ngx_http_agent_mcp_tool_finish(ctx, "%V", &why);
        return;
    }

    is_error = ngx_http_agent_json_get(a->result, "isError");

    if (is_error && YAJL_IS_TRUE(is_error)) {

        /* the text of an error result, as a sentence */

        v = ngx_http_agent_json_parse(call->run->pool, text.data, text.len,
                                      NULL);
        if (v && YAJL_IS_STRING(v)) {
            text.data = (u_char *) YAJL_GET_STRING(v);
            text.len = ngx_strlen(text.data);
        }

        ngx_http_agent_mcp_tool_finish(ctx, "%V", &text);
        return;
    }

    call->result = text;
    call->cancel = NULL;
    call->done(call);
}


static void
ngx_http_agent_mcp_tool_restarted(void *data, ngx_int_t rc)
{
    ngx_http_agent_mcp_tool_ctx_t *ctx = data;

    ngx_str_t  why;

    if (rc != NGX_OK || ngx_http_agent_mcp_tool_send(ctx) != NGX_OK) {
        ngx_str_set(&why, "its session expired and a new one could not be "
                    "started");
        ngx_http_agent_mcp_tool_finish(ctx, "the MCP server: %V", &why);
    }
}


/*
 * the result for the model: structuredContent when there is one; else the
 * text parts (one that is JSON as that JSON, else the texts joined as a
 * string), images and other parts named
 */

static ngx_int_t
ngx_http_agent_mcp_tool_result(ngx_pool_t *pool, yajl_val result,
    ngx_str_t *out)
{
    u_char     *p;
    size_t      i, size;
    yajl_val    sc, content, part, v;
    ngx_str_t   type, text, mime, joined;

    sc = ngx_http_agent_json_get(result, "structuredContent");

    if (sc && !YAJL_IS_NULL(sc)) {
        return ngx_http_agent_json_encode(pool, sc, out);
    }

    content = ngx_http_agent_json_get(result, "content");

    if (content == NULL || !YAJL_IS_ARRAY(content)) {
        ngx_str_set(out, "\"\"");
        return NGX_OK;
    }

    size = 0;

    for (i = 0; i < content->u.array.len; i++) {
        part = content->u.array.values[i];

        if (ngx_http_agent_json_get_str(part, "text", &text) == NGX_OK) {
            size += text.len + 1;

        } else {
            size += 96;
        }
    }

    p = ngx_pnalloc(pool, size + 1);
    if (p == NULL) {
        return NGX_ERROR;
    }

    joined.data = p;

    for (i = 0; i < content->u.array.len; i++) {
        part = content->u.array.values[i];

        if (p > joined.data) {
            *p++ = '\n';
        }

        if (ngx_http_agent_json_get_str(part, "text", &text) == NGX_OK) {
            p = ngx_cpymem(p, text.data, text.len);
            continue;
        }

        if (ngx_http_agent_json_get_str(part, "type", &type) != NGX_OK) {
            ngx_str_set(&type, "content");
        }

        if (ngx_http_agent_json_get_str(part, "mimeType", &mime) != NGX_OK) {
            ngx_str_set(&mime, "");
        }

        p = ngx_snprintf(p, 95, "[%V%s%V]", &type, mime.len ? " " : "",
                         &mime);
    }

    joined.len = p - joined.data;

    if (content->u.array.len == 1) {
        v = ngx_http_agent_json_parse(pool, joined.data, joined.len, NULL);

        if (v && (YAJL_IS_OBJECT(v) || YAJL_IS_ARRAY(v))) {
            return ngx_http_agent_json_encode(pool, v, out);
        }
    }

    return ngx_http_agent_json_quote(pool, &joined, out);
}


static void
ngx_http_agent_mcp_tool_finish(ngx_http_agent_mcp_tool_ctx_t *ctx,
    const char *fmt, ngx_str_t *why)
{
    u_char                      *p;
    ngx_str_t                    err;
    ngx_http_agent_tool_call_t  *call;

    call = ctx->call;

    p = ngx_pnalloc(call->run->pool, why->len + 128);

    if (p == NULL) {
        ngx_str_set(&err, "the MCP tool failed");

    } else {
        err.data = p;
        err.len = ngx_snprintf(p, why->len + 128, fmt, why) - p;
    }

    if (ngx_http_agent_json_error(call->run->pool, &err, &call->result)
        != NGX_OK)
    {
        ngx_str_set(&call->result, "{\"error\":\"the MCP tool failed\"}");
    }

    call->cancel = NULL;
    call->done(call);
}


static void
ngx_http_agent_mcp_tool_cancel(ngx_http_agent_tool_call_t *call)
{
    ngx_http_agent_mcp_tool_ctx_t *ctx = call->data;

    if (ctx == NULL) {
        return;
    }

    ngx_http_agent_mcp_unwait(&ctx->waiter);

    if (ctx->rpc) {
        ngx_http_agent_mcp_close(ctx->rpc);
        ctx->rpc = NULL;
    }
}


/*
 * A call of a tool its server lists as idempotent (idempotentHint) or
 * read-only (readOnlyHint), in the list this worker holds
 */

ngx_uint_t
ngx_http_agent_mcp_tool_idempotent(ngx_http_agent_tool_call_t *call)
{
    ngx_uint_t              i;
    ngx_http_agent_mcp_t   *mcp;
    ngx_http_agent_tool_t  *t;

    mcp = call->tool->data;

    if (mcp->peer == NULL || mcp->peer->tools == NULL) {
        return 0;
    }

    t = mcp->peer->tools->elts;

    for (i = 0; i < mcp->peer->tools->nelts; i++) {
        if (t[i].name.len == call->tool_name.len
            && ngx_strncmp(t[i].name.data, call->tool_name.data,
                           call->tool_name.len)
               == 0)
        {
            return t[i].idempotent;
        }
    }

    return 0;
}
