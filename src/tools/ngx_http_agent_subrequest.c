
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_tools.h"


/*
 * A location called from inside a turn: a JSON POST in a subrequest of the
 * turn's request, its answer (status and body) handed back.  That is how a
 * tool or a node is an nginx location: proxy_pass to any service (with the
 * upstream's balancing, keepalive, cache, and headers the model never
 * sees), or code in nginx (js_content).
 *
 * The subrequest is a background one, so the turn's own stream is never
 * held behind it, and its body is caught by our body filter before the
 * postpone filter: kept in memory up to a limit, cut beyond it, whatever
 * the location's subrequest_output_buffer_size.  It carries the JSON body
 * and its own few headers, not the client's: a cookie or an Authorization
 * of the user does not travel to a tool's service.
 *
 * Subrequests are started from curl, timer and thread events, where nginx
 * does not run posted requests: a posted event runs them after the current
 * handler has returned, so a location that answers at once never calls
 * back into the code that started it.
 */


static ngx_int_t ngx_http_agent_subrequest_done(ngx_http_request_t *sr,
    void *data, ngx_int_t rc);
static void ngx_http_agent_subrequest_kick(ngx_event_t *ev);
static void ngx_http_agent_subrequest_expire(ngx_event_t *ev);
static ngx_int_t ngx_http_agent_subrequest_headers(ngx_http_request_t *r,
    ngx_http_request_t *sr, size_t len, ngx_str_t *key);
static ngx_int_t ngx_http_agent_subrequest_body_filter(ngx_http_request_t *r,
    ngx_chain_t *in);


static ngx_http_output_body_filter_pt  ngx_http_next_body_filter;


ngx_http_agent_subrequest_t *
ngx_http_agent_subrequest_start(ngx_http_request_t *r, ngx_str_t *uri,
    ngx_str_t *json, ngx_str_t *key, size_t max, ngx_msec_t timeout,
    ngx_http_agent_subrequest_pt handler, void *data)
{
    ngx_buf_t                    *b;
    ngx_chain_t                  *cl;
    ngx_http_request_t           *sr;
    ngx_http_request_body_t      *rb;
    ngx_http_post_subrequest_t   *ps;
    ngx_http_agent_subrequest_t  *s;

    s = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_subrequest_t));
    ps = ngx_palloc(r->pool, sizeof(ngx_http_post_subrequest_t));
    rb = ngx_pcalloc(r->pool, sizeof(ngx_http_request_body_t));
    b = ngx_calloc_buf(r->pool);
    cl = ngx_alloc_chain_link(r->pool);

    if (s == NULL || ps == NULL || rb == NULL || b == NULL || cl == NULL) {
        return NULL;
    }

    s->request = r;
    s->handler = handler;
    s->data = data;
    s->max = max;

    s->body.data = ngx_pnalloc(r->pool, max);
    if (s->body.data == NULL) {
        return NULL;
    }

    ps->handler = ngx_http_agent_subrequest_done;
    ps->data = s;

    if (ngx_http_subrequest(r, uri, NULL, &sr, ps,
                            NGX_HTTP_SUBREQUEST_BACKGROUND)
        != NGX_OK)
    {
        return NULL;
    }

    s->sr = sr;

    sr->method = NGX_HTTP_POST;
    ngx_str_set(&sr->method_name, "POST");

    /* upstreams and static files hand over memory, not file buffers */
    sr->filter_need_in_memory = 1;

    b->pos = json->data;
    b->last = json->data + json->len;
    b->memory = 1;
    b->last_buf = 1;
    cl->buf = b;
    cl->next = NULL;

    rb->bufs = cl;
    rb->rest = 0;
    sr->request_body = rb;

    if (ngx_http_agent_subrequest_headers(r, sr, json->len, key) != NGX_OK) {
        return NULL;
    }

    s->kick.handler = ngx_http_agent_subrequest_kick;
    s->kick.data = s;
    s->kick.log = r->connection->log;
    ngx_post_event(&s->kick, &ngx_posted_events);

    if (timeout) {
        s->timer.handler = ngx_http_agent_subrequest_expire;
        s->timer.data = s;
        s->timer.log = r->connection->log;
        ngx_add_timer(&s->timer, timeout);
    }

    return s;
}


/*
 * nothing more is reported; a subrequest under way runs to its end (nginx
 * has no way to stop one from outside): s->ended says when it has
 */

void
ngx_http_agent_subrequest_cancel(ngx_http_agent_subrequest_t *s)
{
    s->cancelled = 1;

    if (s->timer.timer_set) {
        ngx_del_timer(&s->timer);
    }
}


/*
 * The same for a caller that must not see nginx's HTTP (the node kinds,
 * through the turn's services): data is the turn's request
 */

void *
ngx_http_agent_subrequest_fetch(void *data, ngx_str_t *uri, ngx_str_t *json,
    ngx_str_t *key, size_t max, ngx_msec_t timeout,
    ngx_http_agent_subrequest_pt handler, void *handler_data)
{
    return ngx_http_agent_subrequest_start(data, uri, json, key, max,
                                           timeout, handler, handler_data);
}


void
ngx_http_agent_subrequest_drop(void *s)
{
    ngx_http_agent_subrequest_cancel(s);
}


ngx_int_t
ngx_http_agent_subrequest_init(ngx_conf_t *cf)
{
    ngx_http_next_body_filter = ngx_http_top_body_filter;
    ngx_http_top_body_filter = ngx_http_agent_subrequest_body_filter;

    return NGX_OK;
}


/* the location's answer, once: finalize may call this twice */

static ngx_int_t
ngx_http_agent_subrequest_done(ngx_http_request_t *sr, void *data,
    ngx_int_t rc)
{
    ngx_http_agent_subrequest_t *s = data;

    ngx_uint_t  status;

    if (s->done) {
        return rc;
    }

    s->done = 1;

    if (s->ended) {
        s->ended(s->ended_data);
    }

    if (s->kick.posted) {
        ngx_delete_posted_event(&s->kick);
    }

    if (s->timer.timer_set) {
        ngx_del_timer(&s->timer);
    }

    if (s->cancelled) {
        return rc;
    }

    status = sr->headers_out.status;

    if (rc == NGX_ERROR || sr->connection->error) {
        status = NGX_HTTP_BAD_GATEWAY;

    } else if (rc >= NGX_HTTP_SPECIAL_RESPONSE) {
        status = rc;

    } else if (status == 0) {
        status = NGX_HTTP_OK;
    }

    /*
     * An upstream that closes before the end of its body: after the
     * headers, nginx ends the subrequest with a flush, not an error, and
     * the body's last buffer never comes.  What came is not the answer.
     */

    if (status < NGX_HTTP_SPECIAL_RESPONSE && sr->header_sent && !s->last
        && !sr->header_only)
    {
        ngx_log_error(NGX_LOG_WARN, sr->connection->log, 0,
                      "agent: the location \"%V\" answered %ui, its body "
                      "cut short after %uz bytes", &sr->uri, status,
                      s->body.len);
        status = NGX_HTTP_BAD_GATEWAY;
    }

    ngx_log_debug3(NGX_LOG_DEBUG_HTTP, sr->connection->log, 0,
                   "agent subrequest \"%V\": %ui, %uz bytes",
                   &sr->uri, status, s->body.len);

    s->handler(s->data, status, &s->body, s->truncated);

    return rc;
}


static void
ngx_http_agent_subrequest_kick(ngx_event_t *ev)
{
    ngx_http_agent_subrequest_t *s = ev->data;

    ngx_http_run_posted_requests(s->request->connection);
}


static void
ngx_http_agent_subrequest_expire(ngx_event_t *ev)
{
    ngx_http_agent_subrequest_t *s = ev->data;

    ngx_str_t  empty;

    ngx_log_error(NGX_LOG_INFO, ev->log, 0, "agent: the location \"%V\" "
                  "did not answer in time", &s->sr->uri);

    s->cancelled = 1;
    ngx_str_null(&empty);

    s->handler(s->data, NGX_HTTP_GATEWAY_TIME_OUT, &empty, 0);
}


/*
 * the subrequest's own headers: the host, its JSON body's, and a call's
 * Idempotency-Key (the same at each attempt: a service dedupes on it)
 */

static ngx_int_t
ngx_http_agent_subrequest_headers(ngx_http_request_t *r,
    ngx_http_request_t *sr, size_t len, ngx_str_t *key)
{
    u_char           *p;
    ngx_table_elt_t  *h;

    ngx_memzero(&sr->headers_in, sizeof(ngx_http_headers_in_t));

    if (ngx_list_init(&sr->headers_in.headers, r->pool, 4,
                      sizeof(ngx_table_elt_t))
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    sr->headers_in.server = r->headers_in.server;
    sr->headers_in.content_length_n = len;
    sr->headers_in.keep_alive_n = -1;

    if (r->headers_in.host) {
        h = ngx_list_push(&sr->headers_in.headers);
        if (h == NULL) {
            return NGX_ERROR;
        }

        *h = *r->headers_in.host;
        sr->headers_in.host = h;
    }

    h = ngx_list_push(&sr->headers_in.headers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    ngx_str_set(&h->key, "Content-Type");
    ngx_str_set(&h->value, "application/json");
    h->lowcase_key = (u_char *) "content-type";
    h->hash = ngx_hash_key(h->lowcase_key, h->key.len);
    sr->headers_in.content_type = h;

    h = ngx_list_push(&sr->headers_in.headers);
    p = ngx_pnalloc(r->pool, NGX_OFF_T_LEN);

    if (h == NULL || p == NULL) {
        return NGX_ERROR;
    }

    ngx_str_set(&h->key, "Content-Length");
    h->value.data = p;
    h->value.len = ngx_sprintf(p, "%uz", len) - p;
    h->lowcase_key = (u_char *) "content-length";
    h->hash = ngx_hash_key(h->lowcase_key, h->key.len);
    sr->headers_in.content_length = h;

    if (key == NULL || key->len == 0) {
        return NGX_OK;
    }

    h = ngx_list_push(&sr->headers_in.headers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    ngx_str_set(&h->key, "Idempotency-Key");
    h->value = *key;
    h->lowcase_key = (u_char *) "idempotency-key";
    h->hash = ngx_hash_key(h->lowcase_key, h->key.len);

    return NGX_OK;
}


/* our subrequests' bodies stop here, into memory, cut at their limit */

static ngx_int_t
ngx_http_agent_subrequest_body_filter(ngx_http_request_t *r, ngx_chain_t *in)
{
    size_t                        n;
    ngx_buf_t                    *b;
    ngx_chain_t                  *cl;
    ngx_http_agent_subrequest_t  *s;

    if (r == r->main
        || r->post_subrequest == NULL
        || r->post_subrequest->handler != ngx_http_agent_subrequest_done)
    {
        return ngx_http_next_body_filter(r, in);
    }

    s = r->post_subrequest->data;

    for (cl = in; cl; cl = cl->next) {
        b = cl->buf;

        if (ngx_buf_in_memory(b)) {
            n = b->last - b->pos;

            if (n > s->max - s->body.len) {
                n = s->max - s->body.len;
                s->truncated = 1;
            }

            s->body.len = ngx_cpymem(s->body.data + s->body.len, b->pos, n)
                          - s->body.data;
            b->pos = b->last;
        }

        if (b->in_file) {
            /* filter_need_in_memory: not expected; counted as cut */
            s->truncated |= (b->file_last > b->file_pos);
            b->file_pos = b->file_last;
        }

        if (b->last_buf || b->last_in_chain) {
            s->last = 1;
        }
    }

    return NGX_OK;
}
