
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http.h"


/*
 * A request without a client: a run taken over from a worker that died
 * (turn_redrive.c) goes through its location's handler as the client's
 * request went, on a connection with no socket.  What is sent to it is
 * let go (an answer is logged instead: reply.c), and nginx never
 * finalizes it: its pass, or
 * its turn, closes it here at its end (ngx_http_agent_headless_close),
 * its cleanups run as nginx would run them.  The same way as the Lua
 * module's timers run their code.
 */


static void ngx_http_agent_headless_handler(ngx_event_t *ev);
static void ngx_http_agent_headless_free(ngx_event_t *ev);
static ssize_t ngx_http_agent_headless_send(ngx_connection_t *c, u_char *buf,
    size_t size);
static ngx_chain_t *ngx_http_agent_headless_send_chain(ngx_connection_t *c,
    ngx_chain_t *in, off_t limit);
static ssize_t ngx_http_agent_headless_recv(ngx_connection_t *c, u_char *buf,
    size_t size);


/* its peer, for the variables that read one ($binary_remote_addr) */
static struct sockaddr_in  ngx_http_agent_headless_peer = { AF_INET, 0,
                                                            { 0 }, { 0 } };


ngx_http_request_t *
ngx_http_agent_headless_create(ngx_http_conf_ctx_t *conf, ngx_str_t *uri,
    ngx_log_t *log)
{
    ngx_log_t                  *clog;
    ngx_pool_t                 *pool, *cpool;
    ngx_connection_t           *c;
    ngx_http_request_t         *r;
    ngx_http_log_ctx_t         *lctx;
    ngx_http_core_main_conf_t  *cmcf;

    /* fd 0 to be given a connection: it has none (the Lua module's way) */
    c = ngx_get_connection(0, log);
    if (c == NULL) {
        return NULL;
    }

    c->fd = (ngx_socket_t) -1;

    /*
     * the connection's pool and the request's, two as nginx has them:
     * should nginx end the request itself (a subrequest that fails hard
     * terminates its main request), it frees each once
     */

    cpool = ngx_create_pool(512, log);
    pool = ngx_create_pool(4096, log);
    if (cpool == NULL || pool == NULL) {
        goto failed;
    }

    clog = ngx_palloc(cpool, sizeof(ngx_log_t));
    lctx = ngx_pcalloc(cpool, sizeof(ngx_http_log_ctx_t));
    r = ngx_pcalloc(pool, sizeof(ngx_http_request_t));
    if (clog == NULL || lctx == NULL || r == NULL) {
        goto failed;
    }

    /*
     * the log's context is the http one: nginx sets its current request
     * as it runs a subrequest (a location tool, an http node)
     */

    lctx->connection = c;
    lctx->request = r;
    lctx->current_request = r;

    *clog = *log;
    clog->connection = ngx_atomic_fetch_add(ngx_connection_counter, 1);
    clog->handler = NULL;
    clog->data = lctx;
    clog->action = NULL;

    c->pool = cpool;
    c->log = clog;
    c->number = clog->connection;
    c->log_error = NGX_ERROR_INFO;
    c->read->log = clog;
    c->write->log = clog;
    c->sockaddr = (struct sockaddr *) &ngx_http_agent_headless_peer;
    c->socklen = sizeof(struct sockaddr_in);
    c->data = r;
    cpool->log = clog;
    pool->log = clog;

    /* no socket options: nginx sets none on a descriptor it has not */
    c->tcp_nodelay = NGX_TCP_NODELAY_DISABLED;
    c->tcp_nopush = NGX_TCP_NOPUSH_DISABLED;
    c->sndlowat = 1;

    /*
     * nothing reaches a socket: what is sent is let go, as if sent (in
     * error instead, nginx would end the request as a subrequest of it,
     * a location tool or an http node, ends); its events are ready, and
     * its write event as if added (the upstream module adds it to hear a
     * client go), so that nginx never asks epoll about a descriptor it
     * has not
     */
    c->send = ngx_http_agent_headless_send;
    c->send_chain = ngx_http_agent_headless_send_chain;
    c->recv = ngx_http_agent_headless_recv;
    c->read->ready = 1;
    c->write->ready = 1;
    c->read->handler = ngx_http_agent_headless_handler;
    c->write->handler = ngx_http_agent_headless_handler;
    c->write->active = 1;

    r->pool = pool;
    r->connection = c;
    r->signature = NGX_HTTP_MODULE;
    r->main = r;
    r->count = 1;
    r->main_conf = conf->main_conf;
    r->srv_conf = conf->srv_conf;
    r->loc_conf = conf->loc_conf;

    r->ctx = ngx_pcalloc(pool, sizeof(void *) * ngx_http_max_module);
    if (r->ctx == NULL) {
        goto failed;
    }

    cmcf = ngx_http_get_module_main_conf(r, ngx_http_core_module);

    r->variables = ngx_pcalloc(pool, cmcf->variables.nelts
                                     * sizeof(ngx_http_variable_value_t));
    if (r->variables == NULL
        || ngx_list_init(&r->headers_in.headers, pool, 2,
                         sizeof(ngx_table_elt_t))
           != NGX_OK
        || ngx_list_init(&r->headers_out.headers, pool, 4,
                         sizeof(ngx_table_elt_t))
           != NGX_OK
        || ngx_list_init(&r->headers_out.trailers, pool, 1,
                         sizeof(ngx_table_elt_t))
           != NGX_OK)
    {
        goto failed;
    }

    r->method = NGX_HTTP_POST;
    ngx_str_set(&r->method_name, "POST");
    r->http_version = NGX_HTTP_VERSION_11;
    r->uri = *uri;
    r->unparsed_uri = *uri;
    r->request_line = *uri;
    r->headers_in.content_length_n = 0;
    r->headers_in.keep_alive_n = -1;
    r->headers_out.content_length_n = -1;
    r->headers_out.last_modified_time = -1;
    r->uri_changes = NGX_HTTP_MAX_URI_CHANGES + 1;
    r->subrequests = NGX_HTTP_MAX_SUBREQUESTS + 1;
    r->http_state = NGX_HTTP_PROCESS_REQUEST_STATE;
    r->read_event_handler = ngx_http_block_reading;
    r->write_event_handler = ngx_http_request_empty_handler;
    r->start_sec = ngx_time();
    r->start_msec = ngx_current_msec;
    r->logged = 1;

    return r;

failed:

    c->fd = 0;
    ngx_free_connection(c);
    c->fd = (ngx_socket_t) -1;

    if (pool) {
        ngx_destroy_pool(pool);
    }

    if (cpool) {
        ngx_destroy_pool(cpool);
    }

    return NULL;
}


ngx_uint_t
ngx_http_agent_headless(ngx_http_request_t *r)
{
    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    return ctx != NULL && ctx->headless;
}


/*
 * Its cleanups, as ngx_http_free_request runs them, then its memory; not
 * while a subrequest of it holds it (one being finalized now: its post
 * handler is where a turn may end): then once the last has let it go
 */

void
ngx_http_agent_headless_close(ngx_http_request_t *r)
{
    ngx_connection_t    *c;
    ngx_http_cleanup_t  *cln;

    c = r->connection;

    if (c->destroyed || c->read->handler == ngx_http_agent_headless_free) {
        return;
    }

    cln = r->cleanup;
    r->cleanup = NULL;

    while (cln) {
        if (cln->handler) {
            cln->handler(cln->data);
        }

        cln = cln->next;
    }

    if (c->read->timer_set) {
        ngx_del_timer(c->read);
    }

    if (c->write->posted) {
        ngx_delete_posted_event(c->write);
    }

    /* the read event is the close's own from now on */

    c->read->handler = ngx_http_agent_headless_free;
    c->read->cancelable = 1;

    if (r->count > 1) {
        ngx_post_event(c->read, &ngx_posted_events);
        return;
    }

    ngx_http_agent_headless_free(c->read);
}


static void
ngx_http_agent_headless_free(ngx_event_t *ev)
{
    ngx_pool_t          *pool;
    ngx_connection_t    *c;
    ngx_http_request_t  *r;

    c = ev->data;
    r = c->data;

    if (r->count > 1) {
        /* a subrequest still runs (a tool's, orphaned): a while later */
        ngx_add_timer(ev, 10);
        return;
    }

    if (ev->timer_set) {
        ngx_del_timer(ev);
    }

    if (ev->posted) {
        ngx_delete_posted_event(ev);
    }

    if (c->write->timer_set) {
        ngx_del_timer(c->write);
    }

    if (c->write->posted) {
        ngx_delete_posted_event(c->write);
    }

    c->destroyed = 1;
    pool = c->pool;

    ngx_destroy_pool(r->pool);

    c->fd = 0;
    ngx_free_connection(c);
    c->fd = (ngx_socket_t) -1;

    ngx_destroy_pool(pool);
}


/* an event posted to it (a subrequest's end): as nginx's request handler */

static void
ngx_http_agent_headless_handler(ngx_event_t *ev)
{
    ngx_connection_t    *c;
    ngx_http_request_t  *r;

    c = ev->data;
    r = c->data;

    if (ev->write) {
        r->write_event_handler(r);

    } else {
        r->read_event_handler(r);
    }

    ngx_http_run_posted_requests(c);
}


static ssize_t
ngx_http_agent_headless_send(ngx_connection_t *c, u_char *buf, size_t size)
{
    return size;
}


/* every buffer consumed, as a socket that took it all */

static ngx_chain_t *
ngx_http_agent_headless_send_chain(ngx_connection_t *c, ngx_chain_t *in,
    off_t limit)
{
    off_t  size;

    for ( /* void */ ; in; in = in->next) {
        if (ngx_buf_special(in->buf)) {
            continue;
        }

        size = ngx_buf_size(in->buf);

        if (in->buf->in_file) {
            in->buf->file_pos += size;
        }

        in->buf->pos = in->buf->last;
        c->sent += size;
    }

    return NULL;
}


/* no client: no bytes, ever (a body is the pass's, not read) */

static ssize_t
ngx_http_agent_headless_recv(ngx_connection_t *c, u_char *buf, size_t size)
{
    return NGX_AGAIN;
}
