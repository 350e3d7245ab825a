
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"


/*
 * A SQLite file another process writes: its lock is held for the tenth of
 * a millisecond a transaction takes, but a writer the scheduler stops (a
 * host whose CPUs are busy, a backup, sqlite3 in a shell) holds it for as
 * long as it is stopped.  The event loop yields to it for a moment only
 * (NGX_HTTP_AGENT_STORE_SPIN_MS); past that a write of a caller that can
 * wait is tried again from a timer, the delay doubling up to a tenth of a
 * second, for up to NGX_HTTP_AGENT_STORE_BUSY_WAIT: the turn waits, no
 * write is lost and the worker serves the others meanwhile.
 *
 * Two ways to wait, as the store's interface has them: a call whose pass
 * starts with the operation (begin) is woken to make its pass again
 * (try is NULL); a call that reads its answer in sc->rc (sc->once) gets
 * the operation tried again here, and is woken with its answer.
 */


#define NGX_HTTP_AGENT_STORE_SPIN_MS    2
#define NGX_HTTP_AGENT_STORE_BUSY_WAIT  20000
#define NGX_HTTP_AGENT_STORE_DELAY_MAX  100


typedef struct {
    ngx_event_t                       ev;
    ngx_event_t                       later;    /* NGX_AGENT_STORE_DEFER */
    ngx_uint_t                        pending;  /* answers it brings */
    ngx_http_agent_store_call_t      *sc;
    ngx_http_agent_sqlite_try_pt      try;
    void                             *args;
    ngx_msec_t                        start;
    ngx_msec_t                        delay;
    ngx_uint_t                        tries;
} ngx_http_agent_sqlite_retry_t;


static ngx_http_agent_sqlite_retry_t *ngx_http_agent_sqlite_retry_get(
    ngx_http_agent_store_call_t *sc);
static void ngx_http_agent_sqlite_retry(ngx_event_t *ev);
static void ngx_http_agent_sqlite_answer_later(ngx_event_t *ev);
static void ngx_http_agent_sqlite_retry_cleanup(void *data);


/* set by a statement that failed: SQLite found the file busy */
ngx_uint_t  ngx_http_agent_sqlite_busy_seen;

/* how long the busy handler yields before it gives up, in ms */
ngx_msec_t  ngx_http_agent_sqlite_spin = 100;


/* the operation that follows may wait: a short spin, then a timer */

ngx_uint_t
ngx_http_agent_sqlite_can_wait(ngx_http_agent_store_call_t *sc,
    ngx_uint_t replay)
{
    ngx_http_agent_sqlite_busy_seen = 0;

    if (sc->wake == NULL || (!replay && !sc->once)) {
        ngx_http_agent_sqlite_spin = 100;
        return 0;
    }

    ngx_http_agent_sqlite_spin = NGX_HTTP_AGENT_STORE_SPIN_MS;

    return 1;
}


/*
 * rc of an operation that may wait: when SQLite found the file busy, the
 * operation waits on a timer (NGX_AGAIN); NGX_ERROR past the busy wait
 */

ngx_int_t
ngx_http_agent_sqlite_busy(ngx_http_agent_store_call_t *sc, ngx_int_t rc,
    ngx_http_agent_sqlite_try_pt try, void *args, size_t size)
{
    void                           *copy;
    ngx_http_agent_sqlite_retry_t  *r;

    ngx_http_agent_sqlite_spin = 100;

    if (rc != NGX_ERROR || !ngx_http_agent_sqlite_busy_seen) {
        if (sc->conn) {
            ((ngx_http_agent_sqlite_retry_t *) sc->conn)->tries = 0;
        }

        return rc;
    }

    ngx_http_agent_sqlite_busy_seen = 0;

    r = ngx_http_agent_sqlite_retry_get(sc);
    if (r == NULL) {
        return NGX_ERROR;
    }

    if (r->tries++ == 0) {
        r->start = ngx_current_msec;
        r->delay = 1;

    } else {
        r->delay = ngx_min(r->delay * 2, NGX_HTTP_AGENT_STORE_DELAY_MAX);
    }

    if (ngx_current_msec - r->start > NGX_HTTP_AGENT_STORE_BUSY_WAIT
        || ngx_exiting || ngx_terminate)
    {
        ngx_log_error(NGX_LOG_ERR, sc->log, 0, "agent: the store was busy "
                      "for %M ms, %ui tries: the write fails",
                      ngx_current_msec - r->start, r->tries);
        r->tries = 0;
        return NGX_ERROR;
    }

    /* the arguments the caller keeps while it waits; a copy of the rest */

    if (args && size) {
        copy = ngx_palloc(sc->pool, size);
        if (copy == NULL) {
            return NGX_ERROR;
        }

        ngx_memcpy(copy, args, size);
        args = copy;
    }

    if (r->tries == 1) {
        ngx_log_error(NGX_LOG_INFO, sc->log, 0, "agent: the store is busy, "
                      "the write waits");
    }

    r->try = try;
    r->args = args;
    r->ev.log = sc->log;

    ngx_add_timer(&r->ev, r->delay);

    /* an answer to come, as a PostgreSQL query's: the caller waits for it */
    sc->waiting++;

    return NGX_AGAIN;
}


static ngx_http_agent_sqlite_retry_t *
ngx_http_agent_sqlite_retry_get(ngx_http_agent_store_call_t *sc)
{
    ngx_pool_cleanup_t             *cln;
    ngx_http_agent_sqlite_retry_t  *r;

    if (sc->conn) {
        return sc->conn;
    }

    r = ngx_pcalloc(sc->pool, sizeof(ngx_http_agent_sqlite_retry_t));
    cln = ngx_pool_cleanup_add(sc->pool, 0);
    if (r == NULL || cln == NULL) {
        return NULL;
    }

    cln->handler = ngx_http_agent_sqlite_retry_cleanup;
    cln->data = r;

    r->ev.handler = ngx_http_agent_sqlite_retry;
    r->ev.data = r;
    r->later.handler = ngx_http_agent_sqlite_answer_later;
    r->later.data = r;
    r->sc = sc;
    sc->conn = r;

    return r;
}


/*
 * NGX_AGENT_STORE_DEFER (sqlite_later.c): an answer the caller hears of
 * after its pass, as it would from PostgreSQL, one wake per answer
 */

ngx_int_t
ngx_http_agent_sqlite_wake_later(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_sqlite_retry_t  *r;

    r = ngx_http_agent_sqlite_retry_get(sc);
    if (r == NULL) {
        return NGX_ERROR;
    }

    r->later.log = sc->log;
    r->pending++;
    sc->waiting++;

    if (!r->later.posted) {
        ngx_post_event(&r->later, &ngx_posted_events);
    }

    return NGX_OK;
}


static void
ngx_http_agent_sqlite_answer_later(ngx_event_t *ev)
{
    ngx_http_agent_sqlite_retry_t *r = ev->data;

    ngx_http_agent_store_call_t  *sc;

    sc = r->sc;
    r->pending--;
    sc->waiting--;

    /* before the wake: it may end the call and its pool */
    if (r->pending) {
        ngx_post_event(ev, &ngx_posted_events);
    }

    sc->wake(sc);
}


static void
ngx_http_agent_sqlite_retry(ngx_event_t *ev)
{
    ngx_http_agent_sqlite_retry_t *r = ev->data;

    ngx_int_t                     rc;
    ngx_http_agent_store_call_t  *sc;

    sc = r->sc;
    sc->waiting--;

    if (r->try == NULL) {
        /* the caller makes its pass again, from its begin */
        sc->wake(sc);
        return;
    }

    rc = r->try(sc, r->args);

    if (rc == NGX_AGAIN) {
        /* busy again: the timer is set */
        return;
    }

    sc->rc = rc;
    sc->wake(sc);
}


/* the caller is gone: nothing is tried again */

void
ngx_http_agent_sqlite_cancel(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_sqlite_retry_t  *r;

    r = sc->conn;

    if (r && r->ev.timer_set) {
        ngx_del_timer(&r->ev);
        sc->waiting--;
    }

    if (r && r->later.posted) {
        ngx_delete_posted_event(&r->later);
        sc->waiting -= r->pending;
        r->pending = 0;
    }
}


static void
ngx_http_agent_sqlite_retry_cleanup(void *data)
{
    ngx_http_agent_sqlite_retry_t *r = data;

    if (r->ev.timer_set) {
        ngx_del_timer(&r->ev);
    }

    if (r->later.posted) {
        ngx_delete_posted_event(&r->later);
    }
}
