
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_mcpserver_reply.h"
#include "ngx_http_agent_reply.h"
#include "ngx_http_agent_jsonrpc.h"


/*
 * The MCP server's answers: a JSON-RPC result or error with the request's
 * id, kept in the request across its passes (ctx->proto)
 */


static ngx_int_t ngx_http_agent_mcpserver_body(ngx_http_request_t *r,
    ngx_int_t code, ngx_str_t *msg, ngx_str_t *out);


/* a JSON-RPC result: {"jsonrpc", "id", "result": j} */

ngx_int_t
ngx_http_agent_mcpserver_answer(ngx_http_request_t *r, ngx_uint_t status,
    ngx_str_t *id, ngx_http_agent_json_t *j)
{
    ngx_str_t  out, result;

    if (ngx_http_agent_json_done(j, &result) != NGX_OK
        || ngx_http_agent_jsonrpc_result(r->pool, id, &result, &out)
           != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_reply_send(r, status, &out);
}


/* a JSON-RPC error answer, the request's id in it (null when unknown) */

ngx_int_t
ngx_http_agent_mcpserver_error(ngx_http_request_t *r, ngx_uint_t status,
    ngx_int_t code, const char *fmt, ...)
{
    u_char                *p, buf[512];
    va_list                args;
    ngx_str_t              msg, out;
    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    if (ctx->sent) {
        return status;
    }

    va_start(args, fmt);
    p = ngx_vslprintf(buf, buf + sizeof(buf), fmt, args);
    va_end(args);

    msg.data = buf;
    msg.len = p - buf;

    if (ngx_http_agent_mcpserver_body(r, code, &msg, &out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->sent_rc = ngx_http_agent_reply_send(r, status, &out);
    ctx->sent = 1;

    return status == NGX_HTTP_OK ? ctx->sent_rc : (ngx_int_t) status;
}


/* what the turn refuses (ngx_http_agent_reply_error): a server error */

ngx_int_t
ngx_http_agent_mcpserver_refused(ngx_http_request_t *r, ngx_str_t *msg,
    ngx_str_t *out)
{
    return ngx_http_agent_mcpserver_body(r, -32000, msg, out);
}


static ngx_int_t
ngx_http_agent_mcpserver_body(ngx_http_request_t *r, ngx_int_t code,
    ngx_str_t *msg, ngx_str_t *out)
{
    ngx_http_agent_ctx_t            *ctx;
    ngx_http_agent_mcpserver_req_t  *req;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    req = ctx->proto;

    return ngx_http_agent_jsonrpc_error(r->pool, req ? &req->id : NULL, code,
                                        msg, out);
}
