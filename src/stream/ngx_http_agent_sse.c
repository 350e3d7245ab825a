
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_ops.h"


/*
 * The event stream: chunked, each event flushed as soon as it exists,
 * ": ping" when nothing else went out for the heartbeat interval.  Buffers
 * are recycled through free/busy chains, so a long stream does not grow the
 * request pool with every token.  The events one pass of the event loop
 * writes (the deltas of one read from the provider, a node's end and the
 * next one's start) leave in one write, from a posted event at the end of
 * that pass: no later, and one system call instead of several.
 */


static ngx_int_t ngx_http_agent_sse_send(ngx_http_agent_sse_t *sse,
    u_char *p1, size_t len1, ngx_str_t *json, ngx_uint_t last);
static ngx_int_t ngx_http_agent_sse_flush(ngx_http_agent_sse_t *sse);
static void ngx_http_agent_sse_flush_handler(ngx_event_t *ev);
static void ngx_http_agent_sse_heartbeat(ngx_event_t *ev);
static void ngx_http_agent_sse_write_handler(ngx_http_request_t *r);
static void ngx_http_agent_sse_lost(ngx_http_agent_sse_t *sse, ngx_int_t rc);


static ngx_str_t  ngx_http_agent_sse_type = ngx_string("text/event-stream");


ngx_int_t
ngx_http_agent_sse_start(ngx_http_agent_sse_t *sse, ngx_http_request_t *r,
    ngx_msec_t interval)
{
    ngx_int_t                  rc;
    ngx_table_elt_t           *h;
    ngx_http_agent_ctx_t      *ctx;
    ngx_http_core_loc_conf_t  *clcf;

    sse->request = r;

    /* the write handler finds the stream through the request */
    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    ctx->sse = sse;
    sse->interval = interval;

    r->headers_out.status = NGX_HTTP_OK;
    r->headers_out.content_type = ngx_http_agent_sse_type;
    r->headers_out.content_type_len = ngx_http_agent_sse_type.len;
    r->headers_out.content_length_n = -1;

    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    h->hash = 1;
    ngx_str_set(&h->key, "Cache-Control");
    ngx_str_set(&h->value, "no-cache");

    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    h->hash = 1;
    ngx_str_set(&h->key, "X-Accel-Buffering");
    ngx_str_set(&h->value, "no");

    /* events are small and must not wait for the previous one's ack */
    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);

    if (clcf->tcp_nodelay && ngx_tcp_nodelay(r->connection) != NGX_OK) {
        sse->failed = 1;
        return NGX_ERROR;
    }

    rc = ngx_http_send_header(r);
    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        sse->failed = 1;
        return NGX_ERROR;
    }

    r->write_event_handler = ngx_http_agent_sse_write_handler;

    /* open until sse_stop(), whichever way the stream ends */
    sse->counted = 1;
    ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_OPEN_STREAMS, NULL, NULL, 1);

    sse->out = NULL;
    sse->last_out = &sse->out;
    sse->flush.handler = ngx_http_agent_sse_flush_handler;
    sse->flush.data = sse;
    sse->flush.log = r->connection->log;

    sse->heartbeat.handler = ngx_http_agent_sse_heartbeat;
    sse->heartbeat.data = sse;
    sse->heartbeat.log = r->connection->log;
    sse->heartbeat.cancelable = 1;

    if (interval) {
        ngx_add_timer(&sse->heartbeat, interval);
    }

    return NGX_OK;
}


/*
 * With a name: "event: NAME" first, as the events stream format has it.
 * now: sent at once; else at the end of this pass of the event loop, with
 * what else it writes (the tokens of one read from the provider).
 */

ngx_int_t
ngx_http_agent_sse_named(ngx_http_agent_sse_t *sse, ngx_str_t *name,
    ngx_str_t *json, ngx_uint_t now)
{
    ngx_int_t  rc;

    u_char  *p, head[NGX_HTTP_AGENT_SSE_NAME + NGX_INT_T_LEN + 32];

    if (sse->failed || sse->finished) {
        return NGX_ERROR;
    }

    p = head;

    if (name && name->len && name->len <= NGX_HTTP_AGENT_SSE_NAME) {
        p = ngx_sprintf(p, "event: %V\n", name);
    }

    sse->id++;
    p = ngx_sprintf(p, "id: %ui\ndata: ", sse->id - sse->zero);

    rc = ngx_http_agent_sse_send(sse, head, p - head, json, 0);

    if (rc != NGX_OK || !now) {
        return rc;
    }

    return ngx_http_agent_sse_flush(sse);
}


ngx_int_t
ngx_http_agent_sse_finish(ngx_http_agent_sse_t *sse)
{
    if (sse->failed || sse->finished) {
        return NGX_ERROR;
    }

    ngx_http_agent_sse_stop(sse);
    sse->finished = 1;

    return ngx_http_agent_sse_send(sse, NULL, 0, NULL, 1);
}


void
ngx_http_agent_sse_stop(ngx_http_agent_sse_t *sse)
{
    if (sse->counted) {
        sse->counted = 0;
        ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_OPEN_STREAMS, NULL, NULL,
                                   -1);
    }

    if (sse->heartbeat.timer_set) {
        ngx_del_timer(&sse->heartbeat);
    }

    if (sse->flush.posted) {
        ngx_delete_posted_event(&sse->flush);
    }
}


static ngx_int_t
ngx_http_agent_sse_send(ngx_http_agent_sse_t *sse, u_char *p1, size_t len1,
    ngx_str_t *json, ngx_uint_t last)
{
    size_t               size;
    ngx_buf_t           *b;
    ngx_chain_t         *cl;
    ngx_http_request_t  *r;

    r = sse->request;

    size = len1 + (json ? json->len + 2 : 0);

    cl = ngx_chain_get_free_buf(r->pool, &sse->free);
    if (cl == NULL) {
        sse->failed = 1;
        return NGX_ERROR;
    }

    b = cl->buf;

    if (size && (b->start == NULL || (size_t) (b->end - b->start) < size)) {
        /* a buffer too small for this event is dropped, not reused */
        b->start = ngx_palloc(r->pool, ngx_max(size, 256));
        if (b->start == NULL) {
            sse->failed = 1;
            return NGX_ERROR;
        }

        b->end = b->start + ngx_max(size, 256);
    }

    b->pos = b->start;
    b->last = b->start;
    b->temporary = size ? 1 : 0;
    b->memory = 0;
    b->flush = 0;
    b->last_buf = last;
    b->tag = (ngx_buf_tag_t) &ngx_http_agent_sse_type;

    if (len1) {
        b->last = ngx_cpymem(b->last, p1, len1);
    }

    if (json) {
        b->last = ngx_cpymem(b->last, json->data, json->len);
        *b->last++ = '\n';
        *b->last++ = '\n';
    }

    cl->next = NULL;
    *sse->last_out = cl;
    sse->last_out = &cl->next;

    if (last) {
        /* the end goes out now: the request is finalized next */
        return ngx_http_agent_sse_flush(sse);
    }

    if (!sse->flush.posted) {
        ngx_post_event(&sse->flush, &ngx_posted_events);
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_sse_flush(ngx_http_agent_sse_t *sse)
{
    ngx_int_t            rc;
    ngx_chain_t         *cl;
    ngx_http_request_t  *r;

    if (sse->flush.posted) {
        ngx_delete_posted_event(&sse->flush);
    }

    if (sse->out == NULL) {
        return NGX_OK;
    }

    r = sse->request;

    for (cl = sse->out; cl->next; cl = cl->next) { /* void */ }

    cl->buf->flush = 1;

    rc = ngx_http_output_filter(r, sse->out);

    ngx_chain_update_chains(r->pool, &sse->free, &sse->busy, &sse->out,
                            (ngx_buf_tag_t) &ngx_http_agent_sse_type);

    sse->out = NULL;
    sse->last_out = &sse->out;

    if (rc == NGX_ERROR) {
        sse->failed = 1;
        return NGX_ERROR;
    }

    if (sse->interval && !sse->finished) {
        ngx_add_timer(&sse->heartbeat, sse->interval);
    }

    return NGX_OK;
}


static void
ngx_http_agent_sse_flush_handler(ngx_event_t *ev)
{
    ngx_http_agent_sse_t *sse = ev->data;

    ngx_connection_t  *c;

    if (sse->failed || ngx_http_agent_sse_flush(sse) == NGX_OK) {
        return;
    }

    /* a posted event, not a request handler: the client is gone */

    c = sse->request->connection;

    ngx_http_agent_sse_lost(sse, NGX_ERROR);
    ngx_http_run_posted_requests(c);
}


static void
ngx_http_agent_sse_heartbeat(ngx_event_t *ev)
{
    ngx_http_agent_sse_t *sse = ev->data;

    ngx_connection_t  *c;

    static u_char  ping[] = ": ping\n\n";

    if (sse->failed || sse->finished) {
        return;
    }

    if (ngx_http_agent_sse_send(sse, ping, sizeof(ping) - 1, NULL, 0)
        != NGX_OK)
    {
        c = sse->request->connection;

        /* a timer, not a request handler: run what the end posted */
        ngx_http_agent_sse_lost(sse, NGX_ERROR);
        ngx_http_run_posted_requests(c);
    }
}


/* a slow client: flush what is buffered when it can take more */

static void
ngx_http_agent_sse_write_handler(ngx_http_request_t *r)
{
    ngx_event_t               *wev;
    ngx_connection_t          *c;
    ngx_http_agent_sse_t      *sse;
    ngx_http_agent_ctx_t      *ctx;
    ngx_http_core_loc_conf_t  *clcf;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    sse = ctx->sse;

    c = r->connection;
    wev = c->write;

    if (wev->timedout) {
        ngx_log_error(NGX_LOG_INFO, c->log, NGX_ETIMEDOUT,
                      "agent: client timed out");
        c->timedout = 1;
        ngx_http_agent_sse_lost(sse, NGX_HTTP_REQUEST_TIME_OUT);
        return;
    }

    if (ngx_http_output_filter(r, NULL) == NGX_ERROR) {
        ngx_http_agent_sse_lost(sse, NGX_ERROR);
        return;
    }

    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);

    if (r->buffered || r->postponed || c->buffered) {
        if (!wev->delayed) {
            ngx_add_timer(wev, clcf->send_timeout);
        }

    } else if (wev->timer_set) {
        ngx_del_timer(wev);
    }

    if (ngx_handle_write_event(wev, clcf->send_lowat) != NGX_OK) {
        ngx_http_agent_sse_lost(sse, NGX_ERROR);
    }
}


/*
 * The client is gone.  The request ends with it, unless the stream is
 * kept (a LangGraph run with on_disconnect "continue"): then the run goes
 * on, writing nothing, and ends the request itself.
 */

static void
ngx_http_agent_sse_lost(ngx_http_agent_sse_t *sse, ngx_int_t rc)
{
    ngx_http_request_t  *r;

    r = sse->request;

    if (!sse->keep) {
        ngx_http_finalize_request(r, rc);
        return;
    }

    sse->failed = 1;
    ngx_http_agent_sse_stop(sse);

    if (r->connection->write->timer_set) {
        ngx_del_timer(r->connection->write);
    }

    r->write_event_handler = ngx_http_request_empty_handler;
}
