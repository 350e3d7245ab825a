
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include "ngx_http_agent_util.h"


/*
 * libcurl's multi socket interface on nginx's event loop: one multi handle
 * per worker; curl's sockets get nginx connections watched level-triggered
 * (curl may leave data unread, an edge would then never come again), and
 * curl's timer is an nginx timer.  curl owns its sockets: nginx only stops
 * watching them and never closes them.  curl closes them through the
 * bridge's close callback, which stops watching first; a socket of a
 * failed connect that curl closes without it is seen closed, and only
 * forgotten (epoll dropped it with the descriptor).
 */


static int ngx_http_agent_curl_socket(CURL *easy, curl_socket_t s, int what,
    void *userp, void *socketp);
static int ngx_http_agent_curl_timer(CURLM *multi, long timeout_ms,
    void *userp);
static void ngx_http_agent_curl_timer_handler(ngx_event_t *ev);
static void ngx_http_agent_curl_event_handler(ngx_event_t *ev);
static void ngx_http_agent_curl_action(curl_socket_t s, int ev_bitmask);
static void ngx_http_agent_curl_check_info(void);
static size_t ngx_http_agent_curl_write(char *ptr, size_t size, size_t n,
    void *userdata);
static size_t ngx_http_agent_curl_read(char *buf, size_t size, size_t n,
    void *userdata);
static int ngx_http_agent_curl_seek(void *userdata, curl_off_t offset,
    int origin);
static void ngx_http_agent_curl_idle_handler(ngx_event_t *ev);
static void ngx_http_agent_curl_remove(ngx_http_agent_curl_t *x);
static void ngx_http_agent_curl_cleanup(void *data);
static int ngx_http_agent_curl_close(void *clientp, curl_socket_t s);
static void ngx_http_agent_curl_release(curl_socket_t s,
    ngx_connection_t *c);
static ngx_int_t ngx_http_agent_curl_track(curl_socket_t s,
    ngx_connection_t *c);


static CURLM        *ngx_http_agent_curl_multi;
static ngx_event_t   ngx_http_agent_curl_timer_event;
static ngx_log_t    *ngx_http_agent_curl_log;

/* the connection of each of curl's sockets, by descriptor */
static ngx_connection_t  **ngx_http_agent_curl_fds;
static ngx_uint_t          ngx_http_agent_curl_nfds;


ngx_int_t
ngx_http_agent_curl_init_process(ngx_cycle_t *cycle)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        ngx_log_error(NGX_LOG_EMERG, cycle->log, 0,
                      "agent: curl_global_init() failed");
        return NGX_ERROR;
    }

    ngx_http_agent_curl_multi = curl_multi_init();
    if (ngx_http_agent_curl_multi == NULL) {
        ngx_log_error(NGX_LOG_EMERG, cycle->log, 0,
                      "agent: curl_multi_init() failed");
        return NGX_ERROR;
    }

    ngx_http_agent_curl_log = cycle->log;

    curl_multi_setopt(ngx_http_agent_curl_multi, CURLMOPT_SOCKETFUNCTION,
                      ngx_http_agent_curl_socket);
    curl_multi_setopt(ngx_http_agent_curl_multi, CURLMOPT_TIMERFUNCTION,
                      ngx_http_agent_curl_timer);
    curl_multi_setopt(ngx_http_agent_curl_multi, CURLMOPT_MAXCONNECTS,
                      (long) 64);

    ngx_http_agent_curl_timer_event.handler =
                                          ngx_http_agent_curl_timer_handler;
    ngx_http_agent_curl_timer_event.log = cycle->log;
    ngx_http_agent_curl_timer_event.data = &ngx_http_agent_curl_multi;
    ngx_http_agent_curl_timer_event.cancelable = 1;

    return NGX_OK;
}


void
ngx_http_agent_curl_exit_process(ngx_cycle_t *cycle)
{
    ngx_uint_t         i;
    ngx_connection_t  *c;

    if (ngx_http_agent_curl_multi == NULL) {
        return;
    }

    /* curl closes its sockets below; their connections must not count */

    c = cycle->connections;

    for (i = 0; i < cycle->connection_n; i++) {
        if (c[i].fd != (ngx_socket_t) -1
            && c[i].read
            && c[i].read->handler == ngx_http_agent_curl_event_handler)
        {
            c[i].fd = (ngx_socket_t) -1;
        }
    }

    if (ngx_http_agent_curl_timer_event.timer_set) {
        ngx_del_timer(&ngx_http_agent_curl_timer_event);
    }

    /* the sockets close with the process: no events to remove first */
    ngx_free(ngx_http_agent_curl_fds);
    ngx_http_agent_curl_fds = NULL;
    ngx_http_agent_curl_nfds = 0;

    curl_multi_cleanup(ngx_http_agent_curl_multi);
    ngx_http_agent_curl_multi = NULL;
}


static int
ngx_http_agent_curl_socket(CURL *easy, curl_socket_t s, int what,
    void *userp, void *socketp)
{
    ngx_event_t       *rev, *wev;
    ngx_connection_t  *c;

    c = socketp;

    if (what == CURL_POLL_REMOVE) {
        if (c != NULL) {
            /* the socket stays open, in curl's cache or until it closes */
            ngx_http_agent_curl_release(s, c);
        }

        return 0;
    }

    if (c == NULL) {
        c = ngx_get_connection(s, ngx_http_agent_curl_log);
        if (c == NULL) {
            return -1;
        }

        if (ngx_http_agent_curl_track(s, c) != NGX_OK) {
            c->fd = (ngx_socket_t) -1;
            ngx_free_connection(c);
            return -1;
        }

        c->read->handler = ngx_http_agent_curl_event_handler;
        c->write->handler = ngx_http_agent_curl_event_handler;
        c->read->log = ngx_http_agent_curl_log;
        c->write->log = ngx_http_agent_curl_log;
        c->data = NULL;

        curl_multi_assign(ngx_http_agent_curl_multi, s, c);
    }

    rev = c->read;
    wev = c->write;

    if ((what & CURL_POLL_IN) && !rev->active) {
        if (ngx_add_event(rev, NGX_READ_EVENT, NGX_LEVEL_EVENT) != NGX_OK) {
            return -1;
        }

    } else if (!(what & CURL_POLL_IN) && rev->active) {
        ngx_del_event(rev, NGX_READ_EVENT, 0);
    }

    if ((what & CURL_POLL_OUT) && !wev->active) {
        if (ngx_add_event(wev, NGX_WRITE_EVENT, NGX_LEVEL_EVENT) != NGX_OK) {
            return -1;
        }

    } else if (!(what & CURL_POLL_OUT) && wev->active) {
        ngx_del_event(wev, NGX_WRITE_EVENT, 0);
    }

    return 0;
}


/* curl closes a socket: stop watching it first, if nginx still does */

static int
ngx_http_agent_curl_close(void *clientp, curl_socket_t s)
{
    if ((ngx_uint_t) s < ngx_http_agent_curl_nfds
        && ngx_http_agent_curl_fds[s] != NULL)
    {
        ngx_http_agent_curl_release(s, ngx_http_agent_curl_fds[s]);
    }

    return close(s);
}


static void
ngx_http_agent_curl_release(curl_socket_t s, ngx_connection_t *c)
{
    curl_multi_assign(ngx_http_agent_curl_multi, s, NULL);

    if ((ngx_uint_t) s < ngx_http_agent_curl_nfds) {
        ngx_http_agent_curl_fds[s] = NULL;
    }

    /*
     * a socket of a failed connect may be closed without the callback
     * (libcurl 7.88): the kernel has already stopped watching it
     */
    ngx_http_agent_curl_unwatch(c, fcntl(s, F_GETFD) == -1
                                   && ngx_errno == NGX_EBADF);
}


/*
 * A library's socket no longer watched: its events deleted, posted ones
 * too, its connection freed; the descriptor stays the library's to close.
 * closed: the library closed it already, so the kernel stopped watching
 * it and its number may be another's.  The libpq bridge's sockets go the
 * same way.
 */

void
ngx_http_agent_curl_unwatch(ngx_connection_t *c, ngx_uint_t closed)
{
    ngx_uint_t  flags;

    flags = closed ? NGX_CLOSE_EVENT : 0;

    if (c->read->active) {
        ngx_del_event(c->read, NGX_READ_EVENT, flags);
    }

    if (c->write->active) {
        ngx_del_event(c->write, NGX_WRITE_EVENT, flags);
    }

    if (c->read->posted) {
        ngx_delete_posted_event(c->read);
    }

    if (c->write->posted) {
        ngx_delete_posted_event(c->write);
    }

    c->fd = (ngx_socket_t) -1;
    ngx_free_connection(c);
}


static ngx_int_t
ngx_http_agent_curl_track(curl_socket_t s, ngx_connection_t *c)
{
    ngx_uint_t          n;
    ngx_connection_t  **fds;

    if ((ngx_uint_t) s >= ngx_http_agent_curl_nfds) {
        n = ngx_max(ngx_http_agent_curl_nfds * 2, (ngx_uint_t) s + 64);

        fds = ngx_alloc(n * sizeof(ngx_connection_t *),
                        ngx_http_agent_curl_log);
        if (fds == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(fds, n * sizeof(ngx_connection_t *));

        if (ngx_http_agent_curl_nfds) {
            ngx_memcpy(fds, ngx_http_agent_curl_fds,
                       ngx_http_agent_curl_nfds * sizeof(ngx_connection_t *));
            ngx_free(ngx_http_agent_curl_fds);
        }

        ngx_http_agent_curl_fds = fds;
        ngx_http_agent_curl_nfds = n;
    }

    ngx_http_agent_curl_fds[s] = c;

    return NGX_OK;
}


static int
ngx_http_agent_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
    ngx_event_t  *ev;

    ev = &ngx_http_agent_curl_timer_event;

    if (timeout_ms < 0) {
        if (ev->timer_set) {
            ngx_del_timer(ev);
        }

        if (ev->posted) {
            ngx_delete_posted_event(ev);
        }

        return 0;
    }

    if (timeout_ms == 0) {
        /* no action from inside a curl callback: run it from the loop */
        if (ev->timer_set) {
            ngx_del_timer(ev);
        }

        if (!ev->posted) {
            ngx_post_event(ev, &ngx_posted_events);
        }

        return 0;
    }

    ngx_add_timer(ev, (ngx_msec_t) timeout_ms);

    return 0;
}


static void
ngx_http_agent_curl_timer_handler(ngx_event_t *ev)
{
    ngx_http_agent_curl_action(CURL_SOCKET_TIMEOUT, 0);
}


static void
ngx_http_agent_curl_event_handler(ngx_event_t *ev)
{
    ngx_connection_t  *c;

    c = ev->data;

    ngx_http_agent_curl_action(c->fd, ev->write ? CURL_CSELECT_OUT
                                                : CURL_CSELECT_IN);
}


static void
ngx_http_agent_curl_action(curl_socket_t s, int ev_bitmask)
{
    int  running;

    /* the connection of s may be freed in here: touch nothing after */

    curl_multi_socket_action(ngx_http_agent_curl_multi, s, ev_bitmask,
                             &running);

    ngx_http_agent_curl_check_info();
}


static void
ngx_http_agent_curl_check_info(void)
{
    int                     pending;
    long                    status;
    curl_off_t              after;
    CURL                   *easy;
    struct curl_header     *hd;
    CURLcode                res;
    CURLMsg                *msg;
    ngx_str_t               err;
    ngx_http_agent_curl_t  *x;

    for ( ;; ) {
        msg = curl_multi_info_read(ngx_http_agent_curl_multi, &pending);
        if (msg == NULL) {
            break;
        }

        if (msg->msg != CURLMSG_DONE) {
            continue;
        }

        easy = msg->easy_handle;
        res = msg->data.result;
        x = NULL;
        status = 0;

        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **) &x);
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);

        if (x == NULL) {
            curl_multi_remove_handle(ngx_http_agent_curl_multi, easy);
            curl_easy_cleanup(easy);
            continue;
        }

        if (status == 429 || status == 503) {
            /* Retry-After, in seconds or as a date, as seconds from now */
            if (curl_easy_getinfo(easy, CURLINFO_RETRY_AFTER, &after)
                == CURLE_OK && after > 0)
            {
                x->retry_after = (long) ngx_min(after, 86400);
            }
        }

        if (x->want_header) {
            /* an answer's header the caller asked for (Mcp-Session-Id) */

            x->header_len = 0;

            if (curl_easy_header(easy, x->want_header, 0, CURLH_HEADER, -1,
                                 &hd)
                == CURLHE_OK)
            {
                x->header_len = ngx_min(ngx_strlen(hd->value),
                                        sizeof(x->header));
                ngx_memcpy(x->header, hd->value, x->header_len);
            }
        }

        ngx_http_agent_curl_remove(x);

        if (res == CURLE_OK) {
            x->on_done(x->data, NGX_OK, status, NULL);
            continue;
        }

        if (x->errbuf[0] == '\0') {
            ngx_cpystrn((u_char *) x->errbuf,
                        (u_char *) curl_easy_strerror(res), CURL_ERROR_SIZE);
        }

        err.data = (u_char *) x->errbuf;
        err.len = ngx_strlen(x->errbuf);

        /* the callback may free x */
        x->on_done(x->data, NGX_ERROR, status, &err);
    }
}


ngx_http_agent_curl_t *
ngx_http_agent_curl_create(ngx_pool_t *pool, ngx_log_t *log)
{
    ngx_pool_cleanup_t     *cln;
    ngx_http_agent_curl_t  *x;

    x = ngx_pcalloc(pool, sizeof(ngx_http_agent_curl_t));
    if (x == NULL) {
        return NULL;
    }

    cln = ngx_pool_cleanup_add(pool, 0);
    if (cln == NULL) {
        return NULL;
    }

    cln->handler = ngx_http_agent_curl_cleanup;
    cln->data = x;

    x->log = log;
    x->idle.handler = ngx_http_agent_curl_idle_handler;
    x->idle.data = x;
    x->idle.log = log;

    return x;
}


ngx_int_t
ngx_http_agent_curl_post(ngx_http_agent_curl_t *x, ngx_str_t *url,
    ngx_array_t *headers, ngx_str_t *body, ngx_msec_t connect_timeout,
    ngx_msec_t timeout)
{
    return ngx_http_agent_curl_post_parts(x, url, headers, body, 1,
                                          connect_timeout, timeout);
}


/*
 * A body in pieces (a long conversation's kept text between the rest,
 * llm_prefix.c) is read by curl from where each piece is, not copied
 * into one first; the pieces stay until the transfer has sent them all
 * (curl_sent()) or ends.  curl reads the body again from its start when
 * it sends the request again on a new connection (a kept one found
 * closed): the seek callback starts the pieces over.
 */

ngx_int_t
ngx_http_agent_curl_post_parts(ngx_http_agent_curl_t *x, ngx_str_t *url,
    ngx_array_t *headers, ngx_str_t *parts, ngx_uint_t n,
    ngx_msec_t connect_timeout, ngx_msec_t timeout)
{
    u_char             *p;
    CURL               *easy;
    ngx_str_t          *hdr;
    ngx_uint_t          i;
    struct curl_slist  *h;

    if (n == 0 || n > NGX_HTTP_AGENT_CURL_PARTS) {
        return NGX_ERROR;
    }

    if (ngx_http_agent_curl_multi == NULL) {
        return NGX_ERROR;
    }

    easy = curl_easy_init();
    if (easy == NULL) {
        return NGX_ERROR;
    }

    x->easy = easy;
    x->errbuf[0] = '\0';
    x->retry_after = -1;
    x->body_len = 0;
    x->nparts = n;
    x->part = 0;
    x->part_pos = 0;

    for (i = 0; i < n; i++) {
        x->parts[i] = parts[i];
        x->body_len += parts[i].len;
    }

    p = ngx_alloc(url->len + 1, x->log);
    if (p == NULL) {
        goto failed;
    }

    ngx_cpystrn(p, url->data, url->len + 1);
    curl_easy_setopt(easy, CURLOPT_URL, (char *) p);
    ngx_free(p);

    h = curl_slist_append(NULL, "Content-Type: application/json");
    if (h == NULL) {
        goto failed;
    }

    x->headers = h;

    h = curl_slist_append(x->headers, "Accept: text/event-stream");
    if (h == NULL) {
        goto failed;
    }

    /* curl would otherwise wait a second for "100 Continue" */
    h = curl_slist_append(x->headers, "Expect:");
    if (h == NULL) {
        goto failed;
    }

    /* the provider's headers, its key among them, NUL-terminated */

    hdr = headers ? headers->elts : NULL;

    for (i = 0; headers && i < headers->nelts; i++) {
        h = curl_slist_append(x->headers, (char *) hdr[i].data);
        if (h == NULL) {
            goto failed;
        }
    }

    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, x->headers);
    curl_easy_setopt(easy, CURLOPT_POST, 1L);

    if (n == 1) {
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, (char *) parts[0].data);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, (long) parts[0].len);

    } else {
        curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                         (curl_off_t) x->body_len);
        curl_easy_setopt(easy, CURLOPT_READFUNCTION,
                         ngx_http_agent_curl_read);
        curl_easy_setopt(easy, CURLOPT_READDATA, x);
        curl_easy_setopt(easy, CURLOPT_SEEKFUNCTION,
                         ngx_http_agent_curl_seek);
        curl_easy_setopt(easy, CURLOPT_SEEKDATA, x);
    }

    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, ngx_http_agent_curl_write);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, x);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, (long) connect_timeout);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long) timeout);
    curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION,
                     ngx_http_agent_curl_close);

    /* a chat stream comes in small pieces: 16k a transfer is waste */
    curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, 2048L);
    curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");

    if (curl_multi_add_handle(ngx_http_agent_curl_multi, easy) != CURLM_OK) {
        goto failed;
    }

    if (x->idle_timeout) {
        ngx_add_timer(&x->idle, x->idle_timeout);
    }

    return NGX_OK;

failed:

    if (x->headers) {
        curl_slist_free_all(x->headers);
        x->headers = NULL;
    }

    curl_easy_cleanup(easy);
    x->easy = NULL;

    return NGX_ERROR;
}


static size_t
ngx_http_agent_curl_write(char *ptr, size_t size, size_t n, void *userdata)
{
    ngx_http_agent_curl_t *x = userdata;

    if (x->idle_timeout) {
        ngx_add_timer(&x->idle, x->idle_timeout);
    }

    /* no on_data: only the answer's status counts, its body is dropped */

    if (x->on_data && x->on_data(x->data, (u_char *) ptr, size * n) != NGX_OK)
    {
        /* curl ends the transfer with CURLE_WRITE_ERROR */
        return 0;
    }

    return size * n;
}


/* the body's pieces, one after another, into curl's send buffer */

static size_t
ngx_http_agent_curl_read(char *buf, size_t size, size_t n, void *userdata)
{
    ngx_http_agent_curl_t *x = userdata;

    u_char     *p, *last;
    size_t      len;
    ngx_str_t  *part;

    p = (u_char *) buf;
    last = p + size * n;

    while (p < last && x->part < x->nparts) {
        part = &x->parts[x->part];
        len = ngx_min((size_t) (last - p), part->len - x->part_pos);

        p = ngx_cpymem(p, part->data + x->part_pos, len);
        x->part_pos += len;

        if (x->part_pos == part->len) {
            x->part++;
            x->part_pos = 0;
        }
    }

    return p - (u_char *) buf;
}


/* curl rewinds to send the request again: to the offset, from the start */

static int
ngx_http_agent_curl_seek(void *userdata, curl_off_t offset, int origin)
{
    ngx_http_agent_curl_t *x = userdata;

    if (origin != SEEK_SET || offset < 0
        || offset > (curl_off_t) x->body_len)
    {
        return CURL_SEEKFUNC_CANTSEEK;
    }

    for (x->part = 0; x->part < x->nparts; x->part++) {
        if ((size_t) offset < x->parts[x->part].len) {
            break;
        }

        offset -= x->parts[x->part].len;
    }

    x->part_pos = (size_t) offset;

    return CURL_SEEKFUNC_OK;
}


static void
ngx_http_agent_curl_idle_handler(ngx_event_t *ev)
{
    ngx_str_t               err;
    ngx_http_agent_curl_t  *x;

    x = ev->data;

    if (x->easy == NULL) {
        return;
    }

    ngx_http_agent_curl_remove(x);

    ngx_str_set(&err, "no data from the provider within the idle timeout");
    x->on_done(x->data, NGX_ERROR, 0, &err);
}


static void
ngx_http_agent_curl_remove(ngx_http_agent_curl_t *x)
{
    if (x->idle.timer_set) {
        ngx_del_timer(&x->idle);
    }

    if (x->easy) {
        curl_multi_remove_handle(ngx_http_agent_curl_multi, x->easy);
        curl_easy_cleanup(x->easy);
        x->easy = NULL;
    }

    if (x->headers) {
        curl_slist_free_all(x->headers);
        x->headers = NULL;
    }
}


/*
 * The whole body is on the wire: the caller may free it.  curl sends a
 * request again only while none of its answer has come
 */

ngx_uint_t
ngx_http_agent_curl_sent(ngx_http_agent_curl_t *x)
{
    curl_off_t  n;

    return x->easy
           && curl_easy_getinfo(x->easy, CURLINFO_SIZE_UPLOAD_T, &n)
              == CURLE_OK
           && n >= (curl_off_t) x->body_len;
}


void
ngx_http_agent_curl_cancel(ngx_http_agent_curl_t *x)
{
    ngx_http_agent_curl_remove(x);
}


static void
ngx_http_agent_curl_cleanup(void *data)
{
    ngx_http_agent_curl_remove(data);
}
