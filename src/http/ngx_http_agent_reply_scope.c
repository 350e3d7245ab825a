
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <ngx_md5.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_store.h"


/*
 * Ids per owner: a client names its threads and assistants, and another
 * owner may hold the id it names.  Its row is then kept under the id
 * scoped to it, "ID.HASH" (HASH 16 hex digits of the md5 of its owner), a
 * form no client's id has: a client's id is letters, digits, "-" and "_".
 * The client names and sees ID alone (ngx_http_agent_store_id_shown).
 */

ngx_int_t
ngx_http_agent_reply_scope_id(ngx_pool_t *pool, ngx_str_t *owner,
    ngx_str_t *id, ngx_str_t *scoped)
{
    u_char     *p, *last;
    u_char      digest[16];
    ngx_md5_t   md5;

    ngx_md5_init(&md5);
    ngx_md5_update(&md5, owner->data, owner->len);
    ngx_md5_final(digest, &md5);

    p = ngx_pnalloc(pool, id->len + 1 + 16);
    if (p == NULL) {
        return NGX_ERROR;
    }

    /* scoped may be id itself */

    last = ngx_cpymem(p, id->data, id->len);
    *last++ = '.';
    last = ngx_hex_dump(last, digest, 8);

    scoped->data = p;
    scoped->len = last - p;

    return NGX_OK;
}


/*
 * Ids per owner (ngx_http_agent_reply_scope_id): *id, a client's, made the
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

    if (ngx_http_agent_reply_scope_id(r->pool, ctx->owner, id, &scoped)
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
