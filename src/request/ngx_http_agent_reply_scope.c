
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_reply.h"
#include "ngx_http_agent_store.h"


/*
 * Ids per owner (ngx_http_agent_store_id_scope): *id, a client's, made the
 * id of the session it names for the request's owner: its own row under
 * that id, or else under the id scoped to it; with neither, where a new
 * one goes: the id if nobody holds it, scoped if another owner does.  At
 * the protocol's door, in each pass, before anything reads the id
 */

ngx_int_t
ngx_http_agent_reply_session_scope(ngx_http_request_t *r, ngx_str_t *id)
{
    ngx_int_t                  rc;
    ngx_str_t                  scoped;
    ngx_uint_t                 taken;
    ngx_http_agent_ctx_t      *ctx;
    ngx_http_agent_session_t   s;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    if (ctx->owner == NULL || id->len == 0) {
        return NGX_OK;
    }

    rc = ngx_http_agent_store_session_get(&ctx->store, id, &s);

    if (rc == NGX_OK && ngx_http_agent_store_owns(ctx->owner, &s)) {
        return NGX_OK;
    }

    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    taken = (rc == NGX_OK);

    if (ngx_http_agent_store_id_scope(r->pool, ctx->owner, id, &scoped)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    rc = ngx_http_agent_store_session_get(&ctx->store, &scoped, &s);

    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    if (rc == NGX_OK || taken) {
        *id = scoped;
    }

    return NGX_OK;
}
