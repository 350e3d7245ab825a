
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <ngx_md5.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_mcpserver_session.h"
#include "ngx_http_agent_reply_rpc.h"
#include "ngx_http_agent_header.h"
#include "ngx_http_agent_store.h"


/*
 * An MCP session (Mcp-Session-Id) keeps no state: it is an id and a
 * digest of it with the owner and what the client can do (an "e": it
 * takes elicitation/create), so that any worker of any host checks that
 * the owner who made it uses it, and knows whether an interrupt may ask
 * the client's user (mcpserver_elicit.c).  The runs of a session's calls
 * are named by it too.
 */


#define NGX_HTTP_AGENT_MCPSERVER_SID_LEN  (36 + 1 + 16)


static void ngx_http_agent_mcpserver_session_sid(ngx_http_request_t *r,
    u_char *id, ngx_uint_t elicit, u_char *out);
static ngx_uint_t ngx_http_agent_mcpserver_session_caps(yajl_val params);


/* initialize: a new session, its id a header of the answer */

ngx_int_t
ngx_http_agent_mcpserver_session_make(ngx_http_request_t *r, yajl_val params)
{
    u_char           *sid, id[36];
    ngx_uint_t        elicit;
    ngx_table_elt_t  *h;

    sid = ngx_pnalloc(r->pool, NGX_HTTP_AGENT_MCPSERVER_SID_LEN + 1);
    h = ngx_list_push(&r->headers_out.headers);

    if (sid == NULL || h == NULL) {
        return NGX_ERROR;
    }

    elicit = ngx_http_agent_mcpserver_session_caps(params);

    ngx_http_agent_store_new_id(id);
    ngx_http_agent_mcpserver_session_sid(r, id, elicit, sid);

    h->hash = 1;
    ngx_str_set(&h->key, "Mcp-Session-Id");
    h->value.data = sid;
    h->value.len = NGX_HTTP_AGENT_MCPSERVER_SID_LEN + elicit;

    return NGX_OK;
}


/*
 * Mcp-Session-Id: a new id, a dot, and 16 hex digits of the MD5 of the
 * owner, the id and what the client can do, then an "e" if it takes
 * elicitation; out gets NGX_HTTP_AGENT_MCPSERVER_SID_LEN bytes, one more
 * with the "e"
 */

static void
ngx_http_agent_mcpserver_session_sid(ngx_http_request_t *r, u_char *id,
    ngx_uint_t elicit, u_char *out)
{
    u_char                 digest[16];
    ngx_md5_t              md5;
    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    ngx_md5_init(&md5);
    ngx_md5_update(&md5, id, 36);
    ngx_md5_update(&md5, "\n", 1);

    if (ctx->owner) {
        ngx_md5_update(&md5, ctx->owner->data, ctx->owner->len);
    }

    if (elicit) {
        ngx_md5_update(&md5, "\ne", 2);
    }

    ngx_md5_final(digest, &md5);

    ngx_memcpy(out, id, 36);
    out[36] = '.';
    ngx_hex_dump(out + 37, digest, 8);

    if (elicit) {
        out[NGX_HTTP_AGENT_MCPSERVER_SID_LEN] = 'e';
    }
}


/* the session's client takes elicitation/create (its id was checked) */

ngx_uint_t
ngx_http_agent_mcpserver_session_elicits(ngx_http_request_t *r)
{
    ngx_table_elt_t  *h;

    h = ngx_http_agent_header_in(r, "Mcp-Session-Id", NULL);

    return h && h->value.len == NGX_HTTP_AGENT_MCPSERVER_SID_LEN + 1;
}


/*
 * initialize's capabilities: "elicitation" in its form mode (2025-06-18's
 * {} and 2025-11-25's {"form": {}}; {"url": {}} alone is not ours)
 */

static ngx_uint_t
ngx_http_agent_mcpserver_session_caps(yajl_val params)
{
    yajl_val  caps, e;

    caps = params ? ngx_http_agent_json_get(params, "capabilities") : NULL;
    e = (caps && YAJL_IS_OBJECT(caps))
        ? ngx_http_agent_json_get(caps, "elicitation") : NULL;

    if (e == NULL || !YAJL_IS_OBJECT(e)) {
        return 0;
    }

    return e->u.object.len == 0 || ngx_http_agent_json_get(e, "form") != NULL;
}


/*
 * The run of a tools/call in a session: an id of the session and the
 * request's, so that notifications/cancelled names it (MCP forbids an id
 * used twice in a session); out gets 36 bytes, a UUID's shape.  The run
 * that an elicitation's answer resumes is named so by the elicitation's
 * id, which its held call knows too.
 */

ngx_uint_t
ngx_http_agent_mcpserver_session_run_id(ngx_http_request_t *r,
    ngx_str_t *request, u_char *out)
{
    u_char            digest[16], hex[32];
    ngx_md5_t         md5;
    ngx_table_elt_t  *h;

    h = ngx_http_agent_header_in(r, "Mcp-Session-Id", NULL);

    if (h == NULL || request->len == 0) {
        /* stateless: a cancel is the client going away */
        return 0;
    }

    ngx_md5_init(&md5);
    ngx_md5_update(&md5, h->value.data, h->value.len);
    ngx_md5_update(&md5, "\n", 1);
    ngx_md5_update(&md5, request->data, request->len);
    ngx_md5_final(digest, &md5);

    ngx_hex_dump(hex, digest, 16);
    /* %*s reads a size_t */
    ngx_sprintf(out, "%*s-%*s-%*s-%*s-%*s", (size_t) 8, hex, (size_t) 4,
                hex + 8, (size_t) 4, hex + 12, (size_t) 4, hex + 16,
                (size_t) 12, hex + 20);

    return 1;
}


/* a session id sent is one made for this owner, or the request is 404 */

ngx_int_t
ngx_http_agent_mcpserver_session_check(ngx_http_request_t *r)
{
    u_char            want[NGX_HTTP_AGENT_MCPSERVER_SID_LEN + 1];
    ngx_uint_t        elicit;
    ngx_table_elt_t  *h;

    h = ngx_http_agent_header_in(r, "Mcp-Session-Id", NULL);

    if (h == NULL) {
        /* none: the stateless revision, or a first request */
        return NGX_OK;
    }

    elicit = (h->value.len == NGX_HTTP_AGENT_MCPSERVER_SID_LEN + 1
              && h->value.data[NGX_HTTP_AGENT_MCPSERVER_SID_LEN] == 'e');

    if (h->value.len == NGX_HTTP_AGENT_MCPSERVER_SID_LEN + elicit) {
        ngx_http_agent_mcpserver_session_sid(r, h->value.data, elicit, want);

        if (ngx_strncmp(want, h->value.data, h->value.len) == 0) {
            return NGX_OK;
        }
    }

    return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_NOT_FOUND,
                                   NGX_HTTP_AGENT_JSONRPC_INVALID_REQUEST,
                                   "Session not found: start a new one "
                                   "with initialize");
}
