
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_ops.h"


/*
 * The leases of a worker's turns, renewed by one timer of the worker's.
 * A turn's lease is renewed a third of its time after it was last (and
 * with each checkpoint it writes); a renewal of its own would be a write
 * transaction per open stream every few seconds, 10,000 a second at
 * 100,000 streams.  Instead the timer fires when the first turn's
 * renewal is due, and every turn due within a sixth of its lease joins
 * it: their leases are renewed in one statement (up to
 * NGX_HTTP_AGENT_STORE_LEASES_MAX rows, more in several, one after the
 * other), each row with its own expiry and generation.  The rows the
 * statement did not renew are leases another turn took: those turns end
 * with lease_lost, as they did when a renewal of their own was refused.
 *
 * A turn that ends while its statement is on its way (PostgreSQL, a busy
 * SQLite file) lets go of its row in the tick: the answer does not touch
 * it, and a statement not sent yet leaves it out.
 */


typedef struct {
    ngx_event_t                    timer;
    ngx_queue_t                    turns;     /* those that hold a lease */
    ngx_pool_t                    *pool;      /* a tick's, while it runs */
    ngx_array_t                   *due;       /* its leases (store_lease_t) */
    ngx_uint_t                     next;      /* the first not yet sent */
    ngx_array_t                    part;      /* those of the statement */
    ngx_msec_t                     start;     /* when the tick began */
    ngx_http_agent_store_call_t    sc;
} ngx_http_agent_turn_leases_t;


static void ngx_http_agent_turn_leases_tick(ngx_event_t *ev);
static void ngx_http_agent_turn_leases_run(ngx_int_t rc);
static ngx_uint_t ngx_http_agent_turn_leases_part(void);
static void ngx_http_agent_turn_leases_wake(ngx_http_agent_store_call_t *sc);
static void ngx_http_agent_turn_leases_answer(ngx_int_t rc);
static void ngx_http_agent_turn_leases_arm(void);
static void ngx_http_agent_turn_leases_count(ngx_str_t *kind, ngx_uint_t n);


static ngx_http_agent_turn_leases_t  ngx_http_agent_turn_leases;

static ngx_str_t  ngx_http_agent_turn_leases_sent = ngx_string("statement");
static ngx_str_t  ngx_http_agent_turn_leases_renewed = ngx_string("renewed");
static ngx_str_t  ngx_http_agent_turn_leases_lost = ngx_string("lost");


/* a turn took its session's lease: renewed from now on */

void
ngx_http_agent_turn_lease_hold(ngx_http_agent_turn_t *turn)
{
    ngx_http_agent_turn_leases_t  *lw;

    lw = &ngx_http_agent_turn_leases;

    if (lw->turns.next == NULL) {
        ngx_queue_init(&lw->turns);
        lw->timer.handler = ngx_http_agent_turn_leases_tick;
        lw->timer.log = ngx_cycle->log;
        lw->timer.cancelable = 1;
    }

    ngx_queue_insert_tail(&lw->turns, &turn->lease);
    turn->lease_due = ngx_current_msec + turn->lease_ms / 3;

    /* a tick that runs sets the timer when it ends */
    if (lw->pool == NULL
        && (!lw->timer.timer_set
            || (ngx_msec_int_t) (lw->timer.timer.key - turn->lease_due) > 0))
    {
        ngx_add_timer(&lw->timer, turn->lease_ms / 3);
    }
}


/* the turn's end: its lease no longer renewed, its row of a tick let go */

void
ngx_http_agent_turn_lease_drop(ngx_http_agent_turn_t *turn)
{
    if (turn->lease.next == NULL) {
        return;
    }

    ngx_queue_remove(&turn->lease);
    turn->lease.next = NULL;

    if (turn->lease_asked) {
        turn->lease_asked->data = NULL;
        turn->lease_asked = NULL;
    }
}


static void
ngx_http_agent_turn_leases_tick(ngx_event_t *ev)
{
    ngx_uint_t                     i;
    ngx_msec_t                     now;
    ngx_queue_t                   *q;
    ngx_http_agent_turn_t         *turn;
    ngx_http_agent_turn_leases_t  *lw;
    ngx_http_agent_store_lease_t  *l;

    lw = &ngx_http_agent_turn_leases;
    now = ngx_current_msec;

    lw->pool = ngx_create_pool(NGX_DEFAULT_POOL_SIZE, ev->log);
    if (lw->pool == NULL) {
        goto failed;
    }

    lw->due = ngx_array_create(lw->pool, 64,
                               sizeof(ngx_http_agent_store_lease_t));
    if (lw->due == NULL) {
        goto failed;
    }

    for (q = ngx_queue_head(&lw->turns);
         q != ngx_queue_sentinel(&lw->turns);
         q = ngx_queue_next(q))
    {
        turn = ngx_queue_data(q, ngx_http_agent_turn_t, lease);

        if (!turn->locked
            || (ngx_msec_int_t) (turn->lease_due - now)
               > (ngx_msec_int_t) (turn->lease_ms / 6))
        {
            continue;
        }

        /* copies: the turn may end while its statement waits */

        l = ngx_array_push(lw->due);
        if (l == NULL) {
            goto failed;
        }

        l->id.len = turn->session_id.len;
        l->id.data = ngx_pstrdup(lw->pool, &turn->session_id);
        l->run_id.len = turn->run_id.len;
        l->run_id.data = ngx_pstrdup(lw->pool, &turn->run_id);
        l->gen = turn->wsc.gen;
        l->lease = turn->lease_ms;
        l->renewed = 0;
        l->data = turn;

        if (l->id.data == NULL || l->run_id.data == NULL) {
            goto failed;
        }
    }

    /* the array is whole: its rows stay where they are */

    l = lw->due->elts;

    for (i = 0; i < lw->due->nelts; i++) {
        turn = l[i].data;
        turn->lease_asked = &l[i];
    }

    lw->next = 0;
    lw->start = now;

    ngx_http_agent_turn_leases_run(NGX_DONE);

    return;

failed:

    ngx_log_error(NGX_LOG_WARN, ev->log, 0, "agent: the leases of the "
                  "worker's turns could not be renewed: no memory");

    if (lw->pool) {
        ngx_destroy_pool(lw->pool);
        lw->pool = NULL;
    }

    ngx_add_timer(ev, 1000);
}


/*
 * The tick's statements, one after the other: rc is the answer of the one
 * on its way, NGX_DONE before the first
 */

static void
ngx_http_agent_turn_leases_run(ngx_int_t rc)
{
    ngx_uint_t                     i;
    ngx_http_agent_turn_t         *turn;
    ngx_http_agent_turn_leases_t  *lw;
    ngx_http_agent_store_lease_t  *l;

    lw = &ngx_http_agent_turn_leases;

    for ( ;; ) {
        if (rc != NGX_DONE) {
            ngx_http_agent_turn_leases_answer(rc);
        }

        if (ngx_http_agent_turn_leases_part() == 0) {
            break;
        }

        ngx_http_agent_store_call_init(&lw->sc, lw->pool, lw->timer.log,
                                       ngx_http_agent_turn_leases_wake,
                                       NULL);

        /* its wake reads the answer: a busy SQLite file is waited out */
        lw->sc.once = 1;

        ngx_http_agent_turn_leases_count(&ngx_http_agent_turn_leases_sent,
                                         1);

        rc = ngx_http_agent_store_leases_renew(&lw->sc, &lw->part);

        /* the store sorted them: each turn's row is where it is now */

        l = lw->part.elts;

        for (i = 0; i < lw->part.nelts; i++) {
            turn = l[i].data;
            turn->lease_asked = &l[i];
        }

        if (rc == NGX_AGAIN) {
            return;
        }
    }

    ngx_destroy_pool(lw->pool);
    lw->pool = NULL;

    ngx_http_agent_turn_leases_arm();
}


/*
 * The next statement's rows, from lw->next on: those of turns that still
 * hold their lease, moved up to be one part; 0 when none is left
 */

static ngx_uint_t
ngx_http_agent_turn_leases_part(void)
{
    ngx_uint_t                     n;
    ngx_http_agent_turn_t         *turn;
    ngx_http_agent_turn_leases_t  *lw;
    ngx_http_agent_store_lease_t  *l, *first;

    lw = &ngx_http_agent_turn_leases;
    l = lw->due->elts;
    first = &l[lw->next];
    n = 0;

    for ( /* void */ ;
         lw->next < lw->due->nelts && n < NGX_HTTP_AGENT_STORE_LEASES_MAX;
         lw->next++)
    {
        turn = l[lw->next].data;

        if (turn == NULL) {
            continue;
        }

        if (!turn->locked) {
            /* handed over: its lease is let go, not renewed again */
            turn->lease_asked = NULL;
            continue;
        }

        if (&first[n] != &l[lw->next]) {
            first[n] = l[lw->next];
            l[lw->next].data = NULL;
            turn->lease_asked = &first[n];
        }

        n++;
    }

    lw->part.elts = first;
    lw->part.nelts = n;
    lw->part.size = sizeof(ngx_http_agent_store_lease_t);
    lw->part.nalloc = n;
    lw->part.pool = lw->pool;

    return n;
}


static void
ngx_http_agent_turn_leases_wake(ngx_http_agent_store_call_t *sc)
{
    ngx_int_t  rc;

    rc = sc->rc;
    ngx_http_agent_store_call_reset(sc);

    ngx_http_agent_turn_leases_run(rc);
}


/* a statement's answer, to each turn of it that is still there */

static void
ngx_http_agent_turn_leases_answer(ngx_int_t rc)
{
    ngx_uint_t                     i, renewed, lost, failed;
    ngx_http_agent_turn_t         *turn;
    ngx_http_agent_turn_leases_t  *lw;
    ngx_http_agent_store_lease_t  *l;

    lw = &ngx_http_agent_turn_leases;
    l = lw->part.elts;
    renewed = 0;
    lost = 0;
    failed = 0;

    for (i = 0; i < lw->part.nelts; i++) {
        turn = l[i].data;

        if (turn == NULL) {
            continue;
        }

        l[i].data = NULL;
        turn->lease_asked = NULL;

        if (!turn->locked) {
            continue;
        }

        if (rc == NGX_OK && l[i].renewed) {
            /* the expiry written counts from when the tick began, or later */
            turn->renewed = lw->start;
            renewed++;

        } else if (rc == NGX_OK && turn->run && !turn->run->finished) {

            /* another turn has the session: this one must not write again */

            lost++;
            turn->locked = 0;
            ngx_http_agent_graph_cancel(turn->run);
            (void) ngx_http_agent_turn_lost(turn->run);
            ngx_http_agent_turn_finalize(turn, NGX_ERROR);
            continue;

        } else if (rc == NGX_OK) {
            ngx_log_error(NGX_LOG_WARN, turn->request->connection->log, 0,
                          "agent: the lease of session \"%V\" could not be "
                          "renewed", &turn->session_id);

        } else {
            failed++;
        }

        turn->lease_due = ngx_current_msec + turn->lease_ms / 3;
    }

    if (failed) {
        ngx_log_error(NGX_LOG_WARN, lw->timer.log, 0, "agent: the leases of "
                      "%ui turns could not be renewed", failed);
    }

    ngx_log_debug3(NGX_LOG_DEBUG_HTTP, lw->timer.log, 0,
                   "agent: leases in one statement: %ui renewed, %ui lost "
                   "of %ui", renewed, lost, lw->part.nelts);

    ngx_http_agent_turn_leases_count(&ngx_http_agent_turn_leases_renewed,
                                     renewed);
    ngx_http_agent_turn_leases_count(&ngx_http_agent_turn_leases_lost, lost);
}


/* the timer, for the first renewal due */

static void
ngx_http_agent_turn_leases_arm(void)
{
    ngx_msec_int_t                 d, first;
    ngx_queue_t                   *q;
    ngx_http_agent_turn_t         *turn;
    ngx_http_agent_turn_leases_t  *lw;

    lw = &ngx_http_agent_turn_leases;
    first = NGX_MAX_INT_T_VALUE;

    for (q = ngx_queue_head(&lw->turns);
         q != ngx_queue_sentinel(&lw->turns);
         q = ngx_queue_next(q))
    {
        turn = ngx_queue_data(q, ngx_http_agent_turn_t, lease);

        if (!turn->locked) {
            continue;
        }

        d = (ngx_msec_int_t) (turn->lease_due - ngx_current_msec);
        first = ngx_min(first, ngx_max(d, 1));
    }

    if (first != NGX_MAX_INT_T_VALUE) {
        ngx_add_timer(&lw->timer, (ngx_msec_t) first);
    }
}


static void
ngx_http_agent_turn_leases_count(ngx_str_t *kind, ngx_uint_t n)
{
    if (n) {
        ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_LEASES, kind, NULL, n);
    }
}
