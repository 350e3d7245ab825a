
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <ngx_md5.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_mcpserver_int.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"


/*
 * An MCP session (Mcp-Session-Id) keeps no state: it is an id and a
 * digest of it with the owner and what the client can do (an "e": it
 * takes elicitation/create) or asked for (a digit: the log level that
 * logging/setLevel set), so that any worker of any host checks that the
 * owner who made it uses it, and knows whether an interrupt may ask the
 * client's user (mcpserver_elicit.c) and what to log.  The runs of a
 * session's calls are named by its id too.
 */


#define NGX_HTTP_AGENT_MCPSERVER_SID_LEN  (36 + 1 + 16)


/* what a session id says besides itself */
typedef struct {
    ngx_uint_t                 elicit;
    ngx_uint_t                 log;         /* a level's index and one, or
                                               0 */
} ngx_http_agent_mcpserver_sid_t;


static ngx_table_elt_t *ngx_http_agent_mcpserver_session_header(
    ngx_http_request_t *r, ngx_http_agent_mcpserver_sid_t *sid);
static ngx_int_t ngx_http_agent_mcpserver_session_send(ngx_http_request_t *r,
    u_char *id, ngx_http_agent_mcpserver_sid_t *sid);
static size_t ngx_http_agent_mcpserver_session_sid(ngx_http_request_t *r,
    u_char *id, ngx_http_agent_mcpserver_sid_t *sid, u_char *out);
static ngx_uint_t ngx_http_agent_mcpserver_session_caps(yajl_val params);


/* initialize: a new session, its id a header of the answer */

ngx_int_t
ngx_http_agent_mcpserver_session_make(ngx_http_request_t *r, yajl_val params)
{
    u_char                          id[36];
    ngx_http_agent_mcpserver_sid_t  sid;

    sid.elicit = ngx_http_agent_mcpserver_session_caps(params);
    sid.log = 0;

    ngx_http_agent_id_uuid(id);

    return ngx_http_agent_mcpserver_session_send(r, id, &sid);
}


/*
 * logging/setLevel: the session's id again, saying the level, in the
 * answer (a client takes the id of any answer, as the TypeScript SDK
 * does, or keeps its first and gets no log); none without a session
 */

ngx_int_t
ngx_http_agent_mcpserver_session_level(ngx_http_request_t *r,
    ngx_uint_t log)
{
    ngx_table_elt_t                 *h;
    ngx_http_agent_mcpserver_sid_t   sid;

    h = ngx_http_agent_mcpserver_session_header(r, &sid);

    if (h == NULL) {
        return NGX_OK;
    }

    sid.log = log;

    return ngx_http_agent_mcpserver_session_send(r, h->value.data, &sid);
}


/* the level of the session's log (0: none asked) */

ngx_uint_t
ngx_http_agent_mcpserver_session_log(ngx_http_request_t *r)
{
    ngx_http_agent_mcpserver_sid_t  sid;

    return ngx_http_agent_mcpserver_session_header(r, &sid) ? sid.log : 0;
}


/* a session id of id and sid, a header of the answer */

static ngx_int_t
ngx_http_agent_mcpserver_session_send(ngx_http_request_t *r, u_char *id,
    ngx_http_agent_mcpserver_sid_t *sid)
{
    u_char           *p;
    ngx_table_elt_t  *h;

    p = ngx_pnalloc(r->pool, NGX_HTTP_AGENT_MCPSERVER_SID_LEN + 2);
    h = ngx_list_push(&r->headers_out.headers);

    if (p == NULL || h == NULL) {
        return NGX_ERROR;
    }

    h->hash = 1;
    ngx_str_set(&h->key, "Mcp-Session-Id");
    h->value.data = p;
    h->value.len = ngx_http_agent_mcpserver_session_sid(r, id, sid, p);

    return NGX_OK;
}


/*
 * Mcp-Session-Id: a new id, a dot, and 16 hex digits of the MD5 of the
 * owner, the id and what the client can do, then an "e" if it takes
 * elicitation, then the log level's index if one was set; out gets up to
 * NGX_HTTP_AGENT_MCPSERVER_SID_LEN + 2 bytes, their number returned
 */

static size_t
ngx_http_agent_mcpserver_session_sid(ngx_http_request_t *r, u_char *id,
    ngx_http_agent_mcpserver_sid_t *sid, u_char *out)
{
    u_char                 digest[16], *p, level[3];
    ngx_md5_t              md5;
    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    ngx_md5_init(&md5);
    ngx_md5_update(&md5, id, 36);
    ngx_md5_update(&md5, "\n", 1);

    if (ctx->owner) {
        ngx_md5_update(&md5, ctx->owner->data, ctx->owner->len);
    }

    if (sid->elicit) {
        ngx_md5_update(&md5, "\ne", 2);
    }

    if (sid->log) {
        level[0] = '\n';
        level[1] = 'l';
        level[2] = (u_char) ('0' + sid->log - 1);
        ngx_md5_update(&md5, level, 3);
    }

    ngx_md5_final(digest, &md5);

    ngx_memcpy(out, id, 36);
    out[36] = '.';
    p = ngx_hex_dump(out + 37, digest, 8);

    if (sid->elicit) {
        *p++ = 'e';
    }

    if (sid->log) {
        *p++ = (u_char) ('0' + sid->log - 1);
    }

    return p - out;
}


/*
 * the request's Mcp-Session-Id, and what it says, if it has one of our
 * shape (check() has made sure it is this owner's), or NULL
 */

static ngx_table_elt_t *
ngx_http_agent_mcpserver_session_header(ngx_http_request_t *r,
    ngx_http_agent_mcpserver_sid_t *sid)
{
    u_char           *p, *last;
    ngx_table_elt_t  *h;

    h = ngx_http_agent_header_in(r, "Mcp-Session-Id", NULL);

    if (h == NULL || h->value.len < NGX_HTTP_AGENT_MCPSERVER_SID_LEN
        || h->value.len > NGX_HTTP_AGENT_MCPSERVER_SID_LEN + 2)
    {
        return NULL;
    }

    p = h->value.data + NGX_HTTP_AGENT_MCPSERVER_SID_LEN;
    last = h->value.data + h->value.len;

    sid->elicit = (p < last && *p == 'e');
    p += sid->elicit;

    sid->log = 0;

    if (p < last && *p >= '0' && *p <= '7') {
        sid->log = *p++ - '0' + 1;
    }

    return p == last ? h : NULL;
}


/* the session's client takes elicitation/create (its id was checked) */

ngx_uint_t
ngx_http_agent_mcpserver_session_elicits(ngx_http_request_t *r)
{
    ngx_http_agent_mcpserver_sid_t  sid;

    return ngx_http_agent_mcpserver_session_header(r, &sid) ? sid.elicit
                                                             : 0;
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
    u_char                          digest[16], hex[32];
    u_char                          base[NGX_HTTP_AGENT_MCPSERVER_SID_LEN
                                         + 2];
    size_t                          n;
    ngx_md5_t                       md5;
    ngx_table_elt_t                *h;
    ngx_http_agent_mcpserver_sid_t  sid;

    h = ngx_http_agent_mcpserver_session_header(r, &sid);

    if (h == NULL || request->len == 0) {
        /* stateless: a cancel is the client going away */
        return 0;
    }

    /* the id without its level: one set between a call and its cancel */
    sid.log = 0;
    n = ngx_http_agent_mcpserver_session_sid(r, h->value.data, &sid, base);

    ngx_md5_init(&md5);
    ngx_md5_update(&md5, base, n);
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
    u_char                          want[NGX_HTTP_AGENT_MCPSERVER_SID_LEN
                                         + 2];
    ngx_table_elt_t                *h;
    ngx_http_agent_mcpserver_sid_t  sid;

    if (ngx_http_agent_header_in(r, "Mcp-Session-Id", NULL) == NULL) {
        /* none: the stateless revision, or a first request */
        return NGX_OK;
    }

    h = ngx_http_agent_mcpserver_session_header(r, &sid);

    if (h && ngx_http_agent_mcpserver_session_sid(r, h->value.data, &sid,
                                                  want)
             == h->value.len
        && ngx_strncmp(want, h->value.data, h->value.len) == 0)
    {
        return NGX_OK;
    }

    return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_NOT_FOUND,
                                   NGX_HTTP_AGENT_JSONRPC_INVALID_REQUEST,
                                   "Session not found: start a new one "
                                   "with initialize");
}
