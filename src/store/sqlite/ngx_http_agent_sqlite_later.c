
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"


/*
 * NGX_AGENT_STORE_DEFER=1 (docs/testing.md), for tests only: the SQLite
 * store answers as PostgreSQL's does.  An operation of a call that waits
 * runs at once, but its answer (its rc, the struct and the rows it wrote
 * for its caller) is kept in the call and the caller hears of it after
 * its pass, from a posted event; the caller makes its pass again and each
 * operation is handed its kept answer by position, checked as PostgreSQL's
 * are (ngx_http_agent_store_answered).  So `make test` runs every pass
 * again, as `make test-pg` does.  Within a unit of writes (begin ..
 * commit) the answers are kept but given at once: the worker's one handle
 * cannot leave a transaction open to other calls.  Operations that answer
 * through a handler (messages_page, run_events) and the timers' own
 * (run_lost, run_orphans, cron_due) answer at once, as before.
 */


static ngx_int_t ngx_http_agent_sqlite_later_begin(
    ngx_http_agent_store_call_t *sc);
static ngx_int_t ngx_http_agent_sqlite_later_commit(
    ngx_http_agent_store_call_t *sc);
static ngx_int_t ngx_http_agent_sqlite_later_session_open(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_str_t *owner,
    ngx_http_agent_session_t *s, ngx_str_t *run_id, ngx_msec_t lease,
    ngx_int_t images_keep, ngx_http_agent_checkpoint_t *cp,
    ngx_array_t *messages, ngx_array_t *resources);


ngx_http_agent_store_backend_t  ngx_http_agent_sqlite_now;


/*
 * in each worker, once, before any call: the back end's table, passed in
 * by its file, is the one this wraps; its file then has the sessions' and
 * the runs' operations wrapped (sqlite_later_sessions.c, _runs.c), which
 * keep their answers through this file
 */

void
ngx_http_agent_sqlite_later_init(ngx_http_agent_store_backend_t *table)
{
    if (ngx_http_agent_sqlite_now.begin) {
        return;
    }

    ngx_http_agent_sqlite_now = *table;

    table->begin = ngx_http_agent_sqlite_later_begin;
    table->commit = ngx_http_agent_sqlite_later_commit;
    table->session_open = ngx_http_agent_sqlite_later_session_open;
}


void
ngx_http_agent_sqlite_outs(ngx_http_agent_sqlite_outs_t *o, void *out,
    size_t size, ngx_array_t *rows)
{
    ngx_memzero(o, sizeof(ngx_http_agent_sqlite_outs_t));

    o->out[0] = out;
    o->size[0] = size;
    o->rows[0] = rows;
}


/* outs() and kept() at once, for an operation with one output */

ngx_uint_t
ngx_http_agent_sqlite_held(ngx_http_agent_store_call_t *sc, ngx_uint_t op,
    ngx_str_t *k1, ngx_str_t *k2, void *out, size_t size, ngx_array_t *rows,
    ngx_http_agent_sqlite_outs_t *o)
{
    ngx_http_agent_sqlite_outs(o, out, size, rows);

    return ngx_http_agent_sqlite_kept(sc, op, k1, k2, o);
}


/*
 * 1: the answer kept for this place of the pass is in o->rc and the
 * caller's outputs; 0: none, the operation runs
 */

ngx_uint_t
ngx_http_agent_sqlite_kept(ngx_http_agent_store_call_t *sc, ngx_uint_t op,
    ngx_str_t *k1, ngx_str_t *k2, ngx_http_agent_sqlite_outs_t *o)
{
    void                           *p;
    ngx_uint_t                      i;
    ngx_http_agent_sqlite_outs_t   *k;
    ngx_http_agent_store_answer_t  *a;

    a = NULL;

    /* a call that makes no pass again keeps nothing */
    if (sc->wake && !sc->once) {
        a = ngx_http_agent_store_answered(sc, op, k1, k2);
    }

    if (a == NULL) {
        for (i = 0; i < 2; i++) {
            o->nrows[i] = o->rows[i] ? o->rows[i]->nelts : 0;
        }

        return 0;
    }

    o->rc = a->rc;
    k = a->value;

    if (k == NULL) {
        /* refused: asked differently */
        return 1;
    }

    for (i = 0; i < 2; i++) {
        if (k->out[i] && o->out[i]) {
            ngx_memcpy(o->out[i], k->out[i], k->size[i]);
        }

        if (k->rows[i] && o->rows[i] && k->rows[i]->nelts) {
            p = ngx_array_push_n(o->rows[i], k->rows[i]->nelts);
            if (p == NULL) {
                o->rc = NGX_ERROR;
                return 1;
            }

            ngx_memcpy(p, k->rows[i]->elts,
                       k->rows[i]->nelts * k->rows[i]->size);
        }
    }

    return 1;
}


/* rc of an operation that ran: kept, and heard of after the pass */

ngx_int_t
ngx_http_agent_sqlite_later(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_sqlite_outs_t *o, ngx_int_t rc)
{
    size_t                          size;
    ngx_uint_t                      i, n;
    ngx_array_t                    *rows;
    ngx_http_agent_sqlite_outs_t   *k;
    ngx_http_agent_store_answer_t  *a;

    /* a busy file waits its own way (sqlite_retry.c) */
    if (rc == NGX_AGAIN || sc->wake == NULL) {
        return rc;
    }

    if (sc->once) {
        if (ngx_http_agent_sqlite_tx) {
            return rc;
        }

        sc->rc = rc;

        return ngx_http_agent_sqlite_wake_later(sc) == NGX_OK ? NGX_AGAIN
                                                              : NGX_ERROR;
    }

    a = ngx_http_agent_store_answer_add(sc);
    k = ngx_pcalloc(sc->pool, sizeof(ngx_http_agent_sqlite_outs_t));
    if (a == NULL || k == NULL) {
        return NGX_ERROR;
    }

    a->rc = rc;
    a->value = k;

    for (i = 0; i < 2; i++) {
        if (o->out[i]) {
            k->out[i] = ngx_pnalloc(sc->pool, o->size[i]);
            if (k->out[i] == NULL) {
                return NGX_ERROR;
            }

            ngx_memcpy(k->out[i], o->out[i], o->size[i]);
            k->size[i] = o->size[i];
        }

        rows = o->rows[i];

        if (rows == NULL || rows->nelts <= o->nrows[i]) {
            continue;
        }

        n = rows->nelts - o->nrows[i];
        size = rows->size;

        k->rows[i] = ngx_array_create(sc->pool, n, size);
        if (k->rows[i] == NULL) {
            return NGX_ERROR;
        }

        /* made for n: no allocation */
        ngx_memcpy(ngx_array_push_n(k->rows[i], n),
                   (u_char *) rows->elts + o->nrows[i] * size, n * size);

        /* what PostgreSQL would not have given yet */
        if (!ngx_http_agent_sqlite_tx) {
            rows->nelts = o->nrows[i];
        }
    }

    if (ngx_http_agent_sqlite_tx) {
        return rc;
    }

    return ngx_http_agent_sqlite_wake_later(sc) == NGX_OK ? NGX_AGAIN
                                                          : NGX_ERROR;
}


static ngx_int_t
ngx_http_agent_sqlite_later_begin(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_sqlite_outs_t  o;

    ngx_http_agent_sqlite_outs(&o, NULL, 0, NULL);

    if (ngx_http_agent_sqlite_kept(sc, ngx_http_agent_store_op(begin), NULL,
                                   NULL, &o))
    {
        return o.rc;
    }

    return ngx_http_agent_sqlite_later(sc, &o,
                                       ngx_http_agent_sqlite_now.begin(sc));
}


/* a unit kept whole by an earlier pass has nothing left to commit */

static ngx_int_t
ngx_http_agent_sqlite_later_commit(ngx_http_agent_store_call_t *sc)
{
    if (!ngx_http_agent_sqlite_tx) {
        return NGX_OK;
    }

    return ngx_http_agent_sqlite_now.commit(sc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_session_open(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *owner, ngx_http_agent_session_t *s,
    ngx_str_t *run_id, ngx_msec_t lease, ngx_int_t images_keep,
    ngx_http_agent_checkpoint_t *cp, ngx_array_t *messages,
    ngx_array_t *resources)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    ngx_http_agent_sqlite_outs(&o, s, sizeof(ngx_http_agent_session_t),
                               messages);
    o.out[1] = cp;
    o.size[1] = sizeof(ngx_http_agent_checkpoint_t);
    o.rows[1] = resources;

    if (ngx_http_agent_sqlite_kept(sc, ngx_http_agent_store_op(session_open),
                                   id, run_id, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.session_open(sc, id, owner, s, run_id,
                                                lease, images_keep, cp,
                                                messages, resources);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}
