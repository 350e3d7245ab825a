
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_util.h"


/*
 * The answers of the protocols that speak JSON-RPC (MCP's server, A2A): a
 * result or an error with the request's id, kept in the request across
 * its passes; the turn's own refusals (409, 429, ...) in that shape too,
 * their HTTP status kept, JSON-RPC's "server error" code.
 */


static ngx_int_t ngx_http_agent_reply_rpc_refused(ngx_http_request_t *r,
    ngx_uint_t *status, ngx_str_t *msg, ngx_str_t *out);


/* the request's JSON-RPC state, made at its first pass */

ngx_http_agent_reply_rpc_t *
ngx_http_agent_reply_rpc(ngx_http_request_t *r)
{
    ngx_http_agent_ctx_t        *ctx;
    ngx_http_agent_reply_rpc_t  *rpc;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    rpc = ctx->proto;

    if (rpc == NULL) {
        rpc = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_reply_rpc_t));
        if (rpc == NULL) {
            return NULL;
        }

        ctx->proto = rpc;
    }

    ctx->error = ngx_http_agent_reply_rpc_refused;

    return rpc;
}


/*
 * A request's JSON-RPC message read: NGX_OK to go on with rpc; else what
 * the pass returns, the answer sent (an error, or a notification taken
 * with the status notified, never answered); the answer to a request of
 * the server's (rpc->response) only where responses is set
 */

ngx_int_t
ngx_http_agent_reply_rpc_read(ngx_http_request_t *r, ngx_str_t *body,
    ngx_http_agent_jsonrpc_t *rpc, ngx_uint_t notified, ngx_uint_t responses)
{
    ngx_http_agent_ctx_t        *ctx;
    ngx_http_agent_reply_rpc_t  *state;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    state = ctx->proto;

    if (body == NULL || body->len == 0) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_BAD_REQUEST,
                                      NGX_HTTP_AGENT_JSONRPC_INVALID_REQUEST,
                                      "Invalid Request: the body must be a "
                                      "JSON-RPC message");
    }

    ngx_http_agent_jsonrpc_read(r->pool, body, rpc);

    state->id = rpc->id;

    if (rpc->notification
        && (rpc->code == 0
            || rpc->code == NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS))
    {
        if (notified == 0 && rpc->code == 0) {
            /* the protocol's to act on, then to take */
            return NGX_OK;
        }

        return ngx_http_agent_reply_rpc_taken(r, notified ? notified
                                                        : NGX_HTTP_ACCEPTED);
    }

    if (rpc->response && responses) {
        state->response = 1;
        ngx_str_null(&state->id);

    } else if (rpc->response) {
        /* a protocol that sends no request of its own */
        rpc->code = NGX_HTTP_AGENT_JSONRPC_INVALID_REQUEST;
        ngx_str_set(&rpc->error, "Invalid Request: \"method\" is missing");
    }

    if (rpc->code) {
        return ngx_http_agent_reply_rpc_error(r,
                   rpc->code == NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS
                   ? NGX_HTTP_OK : NGX_HTTP_BAD_REQUEST,
                   rpc->code, "%V", &rpc->error);
    }

    return NGX_OK;
}


/*
 * a notification taken, with no answer but the status: the pass stops on
 * it, the request ends on the sending's own end (ngx_http_agent_reply_rc)
 */

ngx_int_t
ngx_http_agent_reply_rpc_taken(ngx_http_request_t *r, ngx_uint_t status)
{
    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    ctx->sent_rc = ngx_http_agent_reply_send(r, status, NULL);
    ctx->sent = 1;

    return status;
}


/* {"jsonrpc", "id", "result": j} */

ngx_int_t
ngx_http_agent_reply_rpc_result(ngx_http_request_t *r,
    ngx_http_agent_json_t *j)
{
    ngx_str_t                    out, result;
    ngx_http_agent_ctx_t        *ctx;
    ngx_http_agent_reply_rpc_t  *rpc;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    rpc = ctx->proto;

    if (ngx_http_agent_json_done(j, &result) != NGX_OK
        || ngx_http_agent_jsonrpc_result(r->pool, &rpc->id, &result, &out)
           != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_reply_send(r, NGX_HTTP_OK, &out);
}


/* a JSON-RPC error answer: 200 for a request's error, else the status */

ngx_int_t
ngx_http_agent_reply_rpc_error(ngx_http_request_t *r, ngx_uint_t status,
    ngx_int_t code, const char *fmt, ...)
{
    u_char                      *p, buf[512];
    va_list                      args;
    ngx_str_t                    msg, out;
    ngx_http_agent_ctx_t        *ctx;
    ngx_http_agent_reply_rpc_t  *rpc;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    if (ctx->sent) {
        return status;
    }

    rpc = ctx->proto;

    if (rpc && rpc->ok && status == NGX_HTTP_BAD_REQUEST) {
        status = NGX_HTTP_OK;
    }

    va_start(args, fmt);
    p = ngx_vslprintf(buf, buf + sizeof(buf), fmt, args);
    va_end(args);

    msg.data = buf;
    msg.len = p - buf;

    if (rpc && rpc->problem) {
        if (rpc->problem(r, code, &msg, &status, &out) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

    } else if (ngx_http_agent_jsonrpc_error(r->pool, rpc ? &rpc->id : NULL,
                                            code, &msg, &out)
               != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->sent_rc = ngx_http_agent_reply_send(r, status, &out);

    if (!ctx->hold) {
        ctx->sent = 1;
    }

    return status == NGX_HTTP_OK ? ctx->sent_rc : (ngx_int_t) status;
}


/*
 * What the turn refuses, as JSON-RPC: a request's own fault (400, 422) is
 * invalid params, one refused for now (409) a server error, each answered
 * 200 as JSON-RPC's errors are, so that clients read the code; a path
 * that is none (404, 405), authentication (401, 403), a limit (413, 429)
 * and our own failures keep their status: clients and proxies act on it
 */

static ngx_int_t
ngx_http_agent_reply_rpc_refused(ngx_http_request_t *r, ngx_uint_t *status,
    ngx_str_t *msg, ngx_str_t *out)
{
    ngx_int_t                    code;
    ngx_uint_t                   answered;
    ngx_http_agent_ctx_t        *ctx;
    ngx_http_agent_reply_rpc_t  *rpc;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    rpc = ctx->proto;

    switch (*status) {

    case NGX_HTTP_BAD_REQUEST:
    case 422:
        code = NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS;
        answered = 1;
        break;

    case NGX_HTTP_CONFLICT:
        code = NGX_HTTP_AGENT_JSONRPC_SERVER_ERROR;
        answered = 1;
        break;

    default:
        code = *status >= NGX_HTTP_INTERNAL_SERVER_ERROR
               ? NGX_HTTP_AGENT_JSONRPC_INTERNAL_ERROR
               : NGX_HTTP_AGENT_JSONRPC_SERVER_ERROR;
        answered = 0;
    }

    if (rpc && rpc->problem) {
        /* the protocol's own shape (A2A's HTTP+JSON), its status HTTP's */
        return rpc->problem(r, code, msg, status, out);
    }

    /* a response of the client's is no request: its error is HTTP's too */

    if (answered && !(rpc && rpc->response)) {
        *status = NGX_HTTP_OK;
    }

    return ngx_http_agent_jsonrpc_error(r->pool, rpc ? &rpc->id : NULL, code,
                                        msg, out);
}


/*
 * The thread of a request: id, or with none a new id made once (kept
 * across the passes); an unknown id is made for the owner when create is
 * set.  NGX_OK and s; NGX_DECLINED: not there, or another owner's (the
 * protocol words its "not found"); NGX_AGAIN; NGX_ERROR.
 */

ngx_int_t
ngx_http_agent_reply_rpc_thread(ngx_http_request_t *r, ngx_str_t *id,
    ngx_uint_t create, ngx_http_agent_session_t *s)
{
    ngx_int_t                    rc;
    ngx_str_t                    title, meta;
    ngx_http_agent_ctx_t        *ctx;
    ngx_http_agent_reply_rpc_t  *rpc;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    rpc = ctx->proto;

    if (id == NULL || id->len == 0) {
        id = &rpc->thread_id;
        create = 1;

        if (id->len == 0) {
            if (ngx_http_agent_id_make(r->pool, id) != NGX_OK) {
                return NGX_ERROR;
            }
        }
    }

    rc = ngx_http_agent_store_session_get(&ctx->store, id, s);

    if (rc == NGX_OK) {
        return ngx_http_agent_store_owns(ctx->owner, s) ? NGX_OK
                                                        : NGX_DECLINED;
    }

    if (rc != NGX_DECLINED || !create) {
        return rc;
    }

    ngx_str_set(&title, "");
    ngx_str_null(&meta);

    rc = ngx_http_agent_store_session_create(&ctx->store, id, &title, &meta,
                                             ctx->owner, s);

    if (rc != NGX_ERROR) {
        return rc;
    }

    /* made since by a request of the same new id: as it is now */

    rc = ngx_http_agent_store_session_get(&ctx->store, id, s);

    if (rc == NGX_OK && !ngx_http_agent_store_owns(ctx->owner, s)) {
        return NGX_DECLINED;
    }

    return rc;
}
