
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
 * What every endpoint answers with, below them all: a JSON answer, an
 * error sentence, a body parsed as an object, a session looked up (owner
 * checked) or locked.  handler.c routes to the endpoints; they use these.
 */


static void ngx_http_agent_reply_flush(ngx_http_request_t *r);
static void ngx_http_agent_store_cleanup(void *data);


static ngx_str_t  ngx_http_agent_json_type = ngx_string("application/json");
static ngx_str_t  ngx_http_agent_text_type =
    ngx_string("text/plain; charset=utf-8");


/* an answer our generator wrote, j, ended and sent */

ngx_int_t
ngx_http_agent_reply_json(ngx_http_request_t *r, ngx_uint_t status,
    ngx_http_agent_json_t *j)
{
    ngx_str_t  out;

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_reply_send(r, status, &out);
}


ngx_int_t
ngx_http_agent_reply_send(ngx_http_request_t *r, ngx_uint_t status,
    ngx_str_t *json)
{
    ngx_buf_t    *b;
    ngx_chain_t  *cl;

    if (json == NULL) {
        return ngx_http_agent_reply_send_chain(r, status, NULL, 0);
    }

    b = ngx_calloc_buf(r->pool);
    cl = ngx_alloc_chain_link(r->pool);
    if (b == NULL || cl == NULL) {
        return NGX_ERROR;
    }

    b->pos = json->data;
    b->last = json->data + json->len;
    b->memory = 1;
    cl->buf = b;
    cl->next = NULL;

    return ngx_http_agent_reply_send_chain(r, status, cl, json->len);
}


/* a JSON answer in a chain of buffers, plus a newline for curl's readers */

ngx_int_t
ngx_http_agent_reply_send_chain(ngx_http_request_t *r, ngx_uint_t status,
    ngx_chain_t *out, off_t size)
{
    ngx_int_t                  rc;
    ngx_buf_t                 *b;
    ngx_chain_t               *cl, **ll;
    ngx_event_t               *wev;
    ngx_http_agent_ctx_t      *ctx;
    ngx_http_core_loc_conf_t  *clcf;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    if (ctx && ctx->headless) {
        /* no client (a run taken over): what it would have been told */
        ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                      "agent: a run taken over answered %ui", status);
        return NGX_OK;
    }

    if (ctx && ctx->hold) {
        /* the last answer of the pass is the one sent on release */
        ctx->held = out;
        ctx->held_size = size;
        ctx->held_status = status;
        ctx->held_plain = ctx->plain;
        ctx->plain = 0;
        return NGX_OK;
    }

    r->headers_out.status = status;

    if (ctx && ctx->plain) {
        r->headers_out.content_type = ngx_http_agent_text_type;

    } else {
        r->headers_out.content_type = ngx_http_agent_json_type;
    }

    r->headers_out.content_type_len = r->headers_out.content_type.len;
    r->headers_out.content_length_n = out ? size + 1 : 0;

    if (out == NULL) {
        r->header_only = 1;
    }

    rc = ngx_http_send_header(r);

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    b = ngx_calloc_buf(r->pool);
    cl = ngx_alloc_chain_link(r->pool);
    if (b == NULL || cl == NULL) {
        return NGX_ERROR;
    }

    b->pos = (u_char *) "\n";
    b->last = b->pos + 1;
    b->memory = 1;
    b->last_buf = (r == r->main) ? 1 : 0;
    b->last_in_chain = 1;
    cl->buf = b;
    cl->next = NULL;

    for (ll = &out; *ll; ll = &(*ll)->next) { /* void */ }

    *ll = cl;

    rc = ngx_http_output_filter(r, out);

    if (rc != NGX_AGAIN || r != r->main) {
        return rc;
    }

    /*
     * More than the socket took: the rest goes as it takes more, also
     * while the request goes on after its answer (a background run's).
     * NGX_OK: to the callers NGX_AGAIN is the store's, an answer to come.
     */

    wev = r->connection->write;
    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);

    r->write_event_handler = ngx_http_agent_reply_flush;

    if (!wev->delayed) {
        ngx_add_timer(wev, clcf->send_timeout);
    }

    if (ngx_handle_write_event(wev, clcf->send_lowat) != NGX_OK) {
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * The write handler while an answer is out and its request is not yet
 * ended: a request ended meanwhile has nginx's own writer instead.  This
 * one never ends the request (ngx_http_writer would, with its last byte,
 * under a run that still holds it): a client that takes nothing for
 * send_timeout is an error the request ends with, when it ends (not
 * c->error: the run's location tools share the connection).
 */

static void
ngx_http_agent_reply_flush(ngx_http_request_t *r)
{
    ngx_int_t                  rc;
    ngx_event_t               *wev;
    ngx_connection_t          *c;
    ngx_http_agent_ctx_t      *ctx;
    ngx_http_core_loc_conf_t  *clcf;

    c = r->connection;
    wev = c->write;
    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);

    if (wev->timedout) {
        ngx_log_error(NGX_LOG_INFO, c->log, NGX_ETIMEDOUT,
                      "agent: client timed out");
        c->timedout = 1;
        rc = NGX_HTTP_REQUEST_TIME_OUT;
        goto failed;
    }

    rc = NGX_ERROR;

    if (ngx_http_output_filter(r, NULL) == NGX_ERROR) {
        goto failed;
    }

    if (r->buffered || c->buffered) {
        if (!wev->delayed) {
            ngx_add_timer(wev, clcf->send_timeout);
        }

    } else if (wev->timer_set) {
        ngx_del_timer(wev);
    }

    if (ngx_handle_write_event(wev, clcf->send_lowat) == NGX_OK) {
        return;
    }

failed:

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    if (ctx) {
        /* what ngx_http_agent_reply_rc() ends the request with */
        ctx->sent = 1;
        ctx->sent_rc = rc;
    }

    r->write_event_handler = ngx_http_request_empty_handler;

    if (wev->timer_set) {
        ngx_del_timer(wev);
    }
}


/*
 * An answer held: what a pass sends from here is kept until
 * ngx_http_agent_reply_release().  A pass that took a session's lease and then
 * refuses (a 400, a 413) lets the lease go first: the client's next
 * request, on any worker or host, finds the session free.
 */

void
ngx_http_agent_reply_hold(ngx_http_request_t *r)
{
    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    ctx->hold = 1;
    ctx->held_status = 0;
}


/* the held answer sent, if there is one: its status then */

ngx_int_t
ngx_http_agent_reply_release(ngx_http_request_t *r, ngx_int_t rc)
{
    ngx_uint_t             status;
    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    ctx->hold = 0;

    if (ctx->held_status == 0) {
        return rc;
    }

    status = ctx->held_status;
    ctx->held_status = 0;
    ctx->plain = ctx->held_plain;

    ctx->sent_rc = ngx_http_agent_reply_send_chain(r, status, ctx->held,
                                                   ctx->held_size);
    ctx->sent = 1;

    return status;
}


/*
 * An error answer: {"error": "..."} (for the LangGraph API the sentence as
 * text, or {"detail": "..."}: ngx_http_agent_reply_plain), written now, or
 * held (ngx_http_agent_reply_hold).  It returns the status, so that its
 * caller stops; whatever ends the request gives nginx the writing's own end
 * instead (ngx_http_agent_reply_rc).  The first answer written is the one
 * the client gets.
 */

ngx_int_t
ngx_http_agent_reply_error(ngx_http_request_t *r, ngx_uint_t status,
    const char *fmt, ...)
{
    u_char                *p, buf[1024];
    va_list                args;
    ngx_str_t              msg, out;
    ngx_uint_t             code;
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

    /* a write the store refused for its size: the request's fault */
    if (status >= NGX_HTTP_INTERNAL_SERVER_ERROR && ctx->store.refused.len) {
        status = 422;
        msg = ctx->store.refused;
    }

    if (status >= NGX_HTTP_INTERNAL_SERVER_ERROR) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0, "agent: %V", &msg);
    }

    /* the answer's status; the caller stops on the error's own */
    code = status;

    if (ctx->error) {
        /* the protocol's own shape (JSON-RPC's, for MCP and A2A) */
        if (ctx->error(r, &code, &msg, &out) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

    } else if (ctx->api && ngx_http_agent_reply_plain(r)) {
        out.data = ngx_pstrdup(r->pool, &msg);
        if (out.data == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        out.len = msg.len;
        ctx->plain = 1;

    } else if (ngx_http_agent_reply_error_json(r->pool, ctx->api != NULL,
                                               &msg, &out)
               != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->sent_rc = ngx_http_agent_reply_send(r, code, &out);

    if (!ctx->hold) {
        ctx->sent = 1;
    }

    return status;
}


/* 404 for a session that is not there, or not the client's to see */

ngx_int_t
ngx_http_agent_reply_no_session(ngx_http_request_t *r, ngx_str_t *id)
{
    ngx_str_t              shown;
    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    /* the client's id: one scoped to its owner says that another has it */
    shown.data = id->data;
    shown.len = ngx_http_agent_store_id_shown(id);
    id = &shown;

    if (ctx->api) {
        /* LangGraph's words, which its clients look for */
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "Thread with ID %V not found", id);
    }

    return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                      "there is no session \"%V\"", id);
}


/*
 * The session's turn lock for a request that changes it (DELETE, POST
 * /connection): 409 while a turn runs, saying what to do after it.
 */

ngx_int_t
ngx_http_agent_reply_session_lock(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *run_id, const char *after)
{
    ngx_int_t                   rc;
    ngx_http_agent_ctx_t       *ctx;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    /* the same run id in each pass of the request: the one locked with */

    if (ctx->lock_id.len == 0) {
        if (ngx_http_agent_id_make(r->pool, &ctx->lock_id) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    *run_id = ctx->lock_id;

    rc = ngx_http_agent_store_lock(&ctx->store, id, run_id,
                                   alcf->turn_lease);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_BUSY) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT,
                                          "a turn is running on this session; "
                                          "%s when it has ended", after);
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_no_session(r, id);
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the session could not be locked");
    }

    return NGX_OK;
}


/* a request's end from an event (a thread, a timer, the store): not from a
 * request handler, so the posted requests are run here */

void
ngx_http_agent_reply_finish(ngx_http_request_t *r, ngx_int_t rc)
{
    ngx_connection_t  *c;

    c = r->connection;

    if (ngx_http_agent_headless(r)) {
        ngx_http_agent_headless_close(r);
        return;
    }

    ngx_http_finalize_request(r, ngx_http_agent_reply_rc(r, rc));
    ngx_http_run_posted_requests(c);
}


/*
 * A LangGraph API error is its sentence as text, as LangGraph's JS server
 * answers (its SDK's errors read "HTTP 404: Assistant not found"), unless
 * the client's Accept names JSON: then {"detail": "..."}, as the Python
 * server answers.
 */

ngx_uint_t
ngx_http_agent_reply_plain(ngx_http_request_t *r)
{
    ngx_table_elt_t  *h;

    h = ngx_http_agent_header_in(r, "Accept", NULL);

    return h == NULL
           || ngx_strlcasestrn(h->value.data, h->value.data + h->value.len,
                               (u_char *) "application/json", 16 - 1)
              == NULL;
}


/*
 * The one error body: {"error": "..."}, or {"detail": "..."} that the
 * LangGraph API's clients read; ours and nginx's own errors (filter.c)
 */

ngx_int_t
ngx_http_agent_reply_error_json(ngx_pool_t *pool, ngx_uint_t detail,
    ngx_str_t *text, ngx_str_t *out)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create_obj(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }


    if (detail) {
        ngx_http_agent_json_key(j, "detail");

    } else {
        ngx_http_agent_json_key(j, "error");
    }

    ngx_http_agent_json_str(j, text);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, out);
}


/*
 * What nginx gets at a request's end: once an answer is written, the end
 * of its writing (NGX_OK, NGX_AGAIN, NGX_ERROR), whatever status the code
 * that wrote it returned; otherwise rc (a status nginx answers itself).
 */

ngx_int_t
ngx_http_agent_reply_rc(ngx_http_request_t *r, ngx_int_t rc)
{
    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    return (ctx && ctx->sent) ? ctx->sent_rc : rc;
}


/* the store's calls of the request's pass (ngx_http_agent_handler.c) */

ngx_http_agent_store_call_t *
ngx_http_agent_reply_sc(ngx_http_request_t *r)
{
    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    return &ctx->store;
}


/*
 * The request's path within its location (after a prefix location's
 * name; a regex location's is the whole URI), without the slashes around
 * it: what each endpoint's router reads
 */

void
ngx_http_agent_reply_path(ngx_http_request_t *r, ngx_str_t *path)
{
    u_char                    *p, *last;
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);

    p = r->uri.data;
    last = r->uri.data + r->uri.len;

    if (clcf->name.len <= r->uri.len && !clcf->regex) {
        p += clcf->name.len;
    }

    while (p < last && *p == '/') {
        p++;
    }

    while (last > p && last[-1] == '/') {
        last--;
    }

    path->data = p;
    path->len = last - p;
}


/* NGX_OK with *v the object (or NULL for an empty optional body) */

ngx_int_t
ngx_http_agent_reply_parse(ngx_http_request_t *r, ngx_str_t *body,
    yajl_val *v, ngx_uint_t optional)
{
    ngx_str_t  err;

    *v = NULL;

    if (body->len == 0) {
        if (optional) {
            return NGX_OK;
        }

        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "the request body must be a JSON "
                                          "object");
    }

    ngx_str_set(&err, "");

    *v = ngx_http_agent_json_parse(r->pool, body->data, body->len, &err);

    if (*v == NULL) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "the request body is not valid JSON: "
                                          "%V", &err);
    }

    if (!YAJL_IS_OBJECT(*v)) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "the request body must be a JSON "
                                          "object");
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_reply_session_get(ngx_http_request_t *r, ngx_str_t *id,
    ngx_http_agent_session_t *s)
{
    ngx_int_t              rc;

    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    rc = ngx_http_agent_store_session_get(&ctx->store, id, s);

    return ngx_http_agent_reply_session(r, id, s, rc);
}


/* the answer of a session's read (rc), as ngx_http_agent_reply_session_get */

ngx_int_t
ngx_http_agent_reply_session(ngx_http_request_t *r, ngx_str_t *id,
    ngx_http_agent_session_t *s, ngx_int_t rc)
{
    ngx_http_agent_ctx_t  *ctx;

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    /* another owner's session is answered as an unknown one */
    if (rc == NGX_OK && !ngx_http_agent_store_owns(ctx->owner, s)) {
        rc = NGX_DECLINED;
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_no_session(r, id);
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the session store failed");
    }

    return NGX_OK;
}


/* 405 with an Allow header of the methods the endpoint takes */

ngx_int_t
ngx_http_agent_reply_not_allowed(ngx_http_request_t *r, ngx_uint_t allowed)
{
    u_char           *p;
    ngx_uint_t        i;
    ngx_table_elt_t  *h;

    static ngx_uint_t   methods[] = { NGX_HTTP_GET, NGX_HTTP_POST,
                                      NGX_HTTP_PUT, NGX_HTTP_PATCH,
                                      NGX_HTTP_DELETE };
    static const char  *names[] = { "GET", "POST", "PUT", "PATCH", "DELETE" };

    h = ngx_list_push(&r->headers_out.headers);
    p = ngx_pnalloc(r->pool, sizeof("GET, POST, PUT, PATCH, DELETE"));

    if (h == NULL || p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    h->hash = 1;
    ngx_str_set(&h->key, "Allow");
    h->value.data = p;

    for (i = 0; i < 5; i++) {
        if (allowed & methods[i]) {
            if (p != h->value.data) {
                *p++ = ',';
                *p++ = ' ';
            }

            p = ngx_cpymem(p, names[i], ngx_strlen(names[i]));
        }
    }

    h->value.len = p - h->value.data;

    return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_ALLOWED,
                                      "method %V is not allowed here; use %V",
                                      &r->method_name, &h->value);
}


/* a session of the request's owner: metadata an object or none */

ngx_int_t
ngx_http_agent_reply_session_create(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *title, yajl_val metadata, ngx_http_agent_session_t *s)
{
    ngx_int_t              rc;
    ngx_str_t              meta;
    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    ngx_str_null(&meta);

    if (metadata && !YAJL_IS_NULL(metadata)) {
        if (!YAJL_IS_OBJECT(metadata)) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                              "\"metadata\" must be an object");
        }

        if (ngx_http_agent_json_encode(r->pool, metadata, &meta) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    rc = ngx_http_agent_store_session_create(&ctx->store, id, title, &meta,
                                             ctx->owner, s);

    if (rc == NGX_OK || rc == NGX_AGAIN) {
        return rc;
    }

    return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                      "the session could not be created");
}


/* a request that waits on the store: if it goes first, the answer is not
 * given to it */

ngx_int_t
ngx_http_agent_reply_wait(ngx_http_request_t *r)
{
    ngx_http_cleanup_t    *cln;
    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    if (ctx->waited) {
        return NGX_OK;
    }

    cln = ngx_http_cleanup_add(r, 0);
    if (cln == NULL) {
        ngx_http_agent_store_cancel(&ctx->store);
        return NGX_ERROR;
    }

    cln->handler = ngx_http_agent_store_cleanup;
    cln->data = ctx;
    ctx->waited = 1;

    return NGX_OK;
}


static void
ngx_http_agent_store_cleanup(void *data)
{
    ngx_http_agent_ctx_t *ctx = data;

    ngx_http_agent_store_cancel(&ctx->store);
}
