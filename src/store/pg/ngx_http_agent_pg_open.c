
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_store_history.h"


/*
 * A turn's start on PostgreSQL in one round trip (NGX_HTTP_AGENT_PG_OPEN
 * of ngx_http_agent_pg_sql.c): the session, the lease, the latest
 * checkpoint, its messages (from the row the worker kept last on, when it
 * is still there: store_history.c) and the session's files, where the
 * SQLite store makes five calls in one transaction.
 */


typedef struct {
    ngx_http_agent_pg_lock_t     lease;
    int64_t                      now;
    ngx_int_t                    images_keep;
    int64_t                      from;      /* the row kept last: seq */
    int64_t                      last;      /* and id; -1: none */
    ngx_str_t                    owner;
    ngx_uint_t                   session;   /* the session's row wanted */
    ngx_uint_t                   asked;     /* times the statement ran */
} ngx_http_agent_pg_open_ask_t;


typedef struct {
    ngx_uint_t                   found;     /* a checkpoint */
    ngx_http_agent_session_t     session;
    ngx_http_agent_checkpoint_t  cp;
    ngx_array_t                 *messages;
    ngx_array_t                 *resources;
} ngx_http_agent_pg_open_t;


static ngx_http_agent_pg_query_t *ngx_http_agent_pg_open_query(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_pg_open_ask_t *from);
static ngx_int_t ngx_http_agent_pg_opened(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);
static ngx_int_t ngx_http_agent_pg_stolen(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);
static ngx_int_t ngx_http_agent_pg_open_row(ngx_pool_t *pool, PGresult *res,
    int i, ngx_http_agent_pg_open_t *o);
static ngx_int_t ngx_http_agent_pg_open_copy(ngx_array_t *to,
    ngx_array_t *from);
static ngx_int_t ngx_http_agent_pg_open_history(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_open_t *o);


ngx_int_t
ngx_http_agent_pg_session_open(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *owner, ngx_http_agent_session_t *s,
    ngx_str_t *run_id, ngx_msec_t lease, ngx_int_t images_keep,
    ngx_http_agent_checkpoint_t *cp, ngx_array_t *messages,
    ngx_array_t *resources)
{
    ngx_http_agent_pg_open_t      *o;
    ngx_http_agent_pg_answer_t    *a;
    ngx_http_agent_pg_query_t     *q;
    ngx_http_agent_pg_open_ask_t   ask;

    a = ngx_http_agent_pg_answered(sc, session_open, id, run_id);

    if (a) {
        o = a->value;

        if (o && s) {
            *s = o->session;
        }

        if (a->rc != NGX_OK || o == NULL) {
            return a->rc;
        }

        if (o->found) {
            *cp = o->cp;
        }

        if (ngx_http_agent_pg_open_copy(messages, o->messages) != NGX_OK
            || ngx_http_agent_pg_open_copy(resources, o->resources) != NGX_OK)
        {
            return NGX_ERROR;
        }

        return NGX_OK;
    }

    ngx_memzero(&ask, sizeof(ngx_http_agent_pg_open_ask_t));

    ask.now = ngx_http_agent_store_ms();
    ask.lease.id = *id;
    ask.lease.run_id = *run_id;
    ask.lease.expires = ask.now + lease;
    ask.lease.gen = sc->gen;
    ask.images_keep = images_keep;
    ask.session = (s != NULL);

    /* the rows kept: the statement reads from there when it is unchanged */
    (void) ngx_http_agent_store_history_find(id, INT64_MAX, &ask.from,
                                             &ask.last);

    if (owner) {
        ask.owner = *owner;
    }

    q = ngx_http_agent_pg_open_query(sc, &ask);
    if (q == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_pg_send(q, 0);
}


/* the statement and what its answer is read with, copied into its pool */

static ngx_http_agent_pg_query_t *
ngx_http_agent_pg_open_query(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_pg_open_ask_t *from)
{
    ngx_http_agent_pg_query_t     *q;
    ngx_http_agent_pg_open_ask_t  *ask;

    q = ngx_http_agent_pg_query(sc, NGX_HTTP_AGENT_PG_OPEN,
                                ngx_http_agent_pg_opened);
    if (q == NULL) {
        return NULL;
    }

    ask = ngx_palloc(q->pool, sizeof(ngx_http_agent_pg_open_ask_t));
    if (ask == NULL) {
        goto failed;
    }

    *ask = *from;
    ask->asked++;
    ask->lease.id.data = ngx_pstrdup(q->pool, &from->lease.id);
    ask->lease.run_id.data = ngx_pstrdup(q->pool, &from->lease.run_id);
    ask->owner.data = from->owner.len ? ngx_pstrdup(q->pool, &from->owner)
                                      : NULL;
    q->data = ask;

    if (ask->lease.id.data == NULL || ask->lease.run_id.data == NULL
        || (from->owner.len && ask->owner.data == NULL)
        || ngx_http_agent_pg_param(q, &ask->lease.id) != NGX_OK
        || ngx_http_agent_pg_param(q, &ask->lease.run_id) != NGX_OK
        || ngx_http_agent_pg_param_int(q, ngx_pid) != NGX_OK
        || ngx_http_agent_pg_param_int(q, ask->lease.expires) != NGX_OK
        || ngx_http_agent_pg_param_int(q, ask->now) != NGX_OK
        || ngx_http_agent_pg_param(q, &ngx_http_agent_store_host) != NGX_OK
        || ngx_http_agent_pg_param_int(q, ask->from) != NGX_OK
        || ngx_http_agent_pg_param(q, ask->owner.len ? &ask->owner : NULL)
           != NGX_OK
        || ngx_http_agent_pg_param_int(q, ask->lease.gen) != NGX_OK
        || ngx_http_agent_pg_param_int(q, ask->last) != NGX_OK)
    {
        goto failed;
    }

    return q;

failed:

    ngx_destroy_pool(q->pool);
    return NULL;
}


static ngx_int_t
ngx_http_agent_pg_opened(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    int                            i;
    int64_t                        status;
    ngx_pool_t                    *pool;
    ngx_http_agent_pg_query_t     *next;
    ngx_http_agent_pg_open_t      *kept;
    ngx_http_agent_pg_open_ask_t  *ask;

    ask = q->data;
    pool = q->sc->pool;

    if (PQntuples(res) < 1 || ngx_http_agent_pg_int(res, 0, 0) != 0) {
        return NGX_ERROR;
    }

    status = ngx_http_agent_pg_int(res, 0, 9);

    if (status == 2) {
        return NGX_DECLINED;
    }

    if (status == 3 && ask->asked == 1) {

        /* the row changed under the statement: once more, as it is now */

        next = ngx_http_agent_pg_open_query(q->sc, ask);
        if (next == NULL) {
            return NGX_ERROR;
        }

        return ngx_http_agent_pg_follow(q, next);
    }

    kept = ngx_pcalloc(pool, sizeof(ngx_http_agent_pg_open_t));
    if (kept == NULL) {
        return NGX_ERROR;
    }

    if (ask->session
        && ngx_http_agent_pg_row(pool, res, 0, 11,
                                 &ngx_http_agent_store_session_cols,
                                 &kept->session)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    a->value = kept;

    if (status == 3) {
        return NGX_BUSY;
    }

    if (status != 0) {

        /* taken over: NGX_ABORT, the state read apart; or NGX_BUSY */
        return ngx_http_agent_pg_take_over(q, res, 1, 2, 10, &ask->lease,
                                           ngx_http_agent_pg_stolen);
    }

    kept->messages = ngx_array_create(pool, 16, sizeof(ngx_http_agent_msg_t));
    kept->resources = ngx_array_create(pool, 2,
                                       sizeof(ngx_http_agent_resource_t));
    if (kept->messages == NULL || kept->resources == NULL) {
        return NGX_ERROR;
    }

    for (i = 1; i < PQntuples(res); i++) {
        if (ngx_http_agent_pg_int(res, i, 0) != 2
            && ngx_http_agent_pg_open_row(pool, res, i, kept) != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return ngx_http_agent_pg_open_history(q, res, kept);
}


/*
 * The message rows (k 2) after the worker's kept ones, or all of them
 * (the kept last one was gone): added to the kept rows, and the messages
 * handed out from them.  Another turn of this worker may have let the
 * entry go or changed it while the statement ran: rows read from the
 * kept last one on then fit no longer, and the statement is asked again
 * for all of them.
 */

static ngx_int_t
ngx_http_agent_pg_open_history(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_open_t *o)
{
    int                              i;
    int64_t                          from, last, id, seq, upto;
    ngx_str_t                        f[NGX_HTTP_AGENT_STORE_HISTORY_FIELDS];
    ngx_uint_t                       k, first;
    ngx_http_agent_pg_query_t       *next;
    ngx_http_agent_pg_open_ask_t    *ask;
    ngx_http_agent_store_history_t  *h;

    ask = q->data;
    upto = o->found ? o->cp.msg_count : 0;

    h = ngx_http_agent_store_history_find(&ask->lease.id, INT64_MAX, &from,
                                          &last);
    if (h == NULL) {
        return NGX_ERROR;
    }

    first = 1;

    for (i = 1; i < PQntuples(res); i++) {
        if (ngx_http_agent_pg_int(res, i, 0) != 2) {
            continue;
        }

        id = ngx_http_agent_pg_int(res, i, 9);
        seq = ngx_http_agent_pg_int(res, i, 10);

        if (first) {
            first = 0;

            if (ask->last >= 0 && id == ask->last && seq == ask->from) {

                if (from != ask->from || last != ask->last) {
                    ask->from = -1;
                    ask->last = -1;

                    next = ngx_http_agent_pg_open_query(q->sc, ask);
                    if (next == NULL) {
                        return NGX_ERROR;
                    }

                    return ngx_http_agent_pg_follow(q, next);
                }

                continue;
            }

            ngx_http_agent_store_history_reset(h);
        }

        for (k = 0; k < NGX_HTTP_AGENT_STORE_HISTORY_SHOWN; k++) {
            f[k].data = PQgetisnull(res, i, k + 1)
                        ? NULL : (u_char *) PQgetvalue(res, i, k + 1);
            f[k].len = PQgetlength(res, i, k + 1);
        }

        f[k].data = PQgetisnull(res, i, 11)
                    ? NULL : (u_char *) PQgetvalue(res, i, 11);
        f[k].len = PQgetlength(res, i, 11);

        if (ngx_http_agent_store_history_add(h, id, seq, f) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    if (first) {
        /* no row: an empty history, whatever was kept */
        ngx_http_agent_store_history_reset(h);
    }

    return ngx_http_agent_store_history_out(h, q->sc->pool, upto,
                                            ask->images_keep, o->messages);
}


/* a lease taken over: the turn reads its state with the other calls */

static ngx_int_t
ngx_http_agent_pg_stolen(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    char  *n;

    n = PQcmdTuples(res);

    return (n[0] != '\0' && n[0] != '0') ? NGX_ABORT : NGX_BUSY;
}


static ngx_int_t
ngx_http_agent_pg_open_row(ngx_pool_t *pool, PGresult *res, int i,
    ngx_http_agent_pg_open_t *o)
{
    ngx_str_t                     sub, sub_id;
    ngx_http_agent_msg_t         *m;
    ngx_http_agent_resource_t    *r;
    ngx_http_agent_checkpoint_t  *cp;

    switch (ngx_http_agent_pg_int(res, i, 0)) {

    case 1:
        cp = &o->cp;
        o->found = 1;

        (void) ngx_http_agent_pg_str(pool, res, i, 1, &cp->id);
        (void) ngx_http_agent_pg_str(pool, res, i, 2, &cp->parent_id);
        (void) ngx_http_agent_pg_str(pool, res, i, 3, &cp->node);
        (void) ngx_http_agent_pg_str(pool, res, i, 4, &cp->next);
        (void) ngx_http_agent_pg_str(pool, res, i, 5, &cp->channels);
        (void) ngx_http_agent_pg_str(pool, res, i, 6, &cp->created_at);
        cp->step = ngx_http_agent_pg_int(res, i, 9);
        cp->msg_count = ngx_http_agent_pg_int(res, i, 10);

        /* a subgraph that waits at its next node: its wait, the thread's */
        (void) ngx_http_agent_pg_str(pool, res, i, 7, &sub);
        (void) ngx_http_agent_pg_str(pool, res, i, 8, &sub_id);

        return ngx_http_agent_store_checkpoint_merge(pool, cp, &sub, &sub_id);

    case 2:
        m = ngx_array_push(o->messages);
        if (m == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(m, sizeof(ngx_http_agent_msg_t));

        (void) ngx_http_agent_pg_str(pool, res, i, 1, &m->role);
        (void) ngx_http_agent_pg_str(pool, res, i, 2, &m->content);
        (void) ngx_http_agent_pg_str(pool, res, i, 3, &m->tool_calls);
        (void) ngx_http_agent_pg_str(pool, res, i, 4, &m->tool_call_id);
        (void) ngx_http_agent_pg_str(pool, res, i, 5, &m->name);
        (void) ngx_http_agent_pg_str(pool, res, i, 6, &m->images);
        (void) ngx_http_agent_pg_str(pool, res, i, 7, &m->metadata);
        (void) ngx_http_agent_pg_str(pool, res, i, 8, &m->created_at);
        m->seq = ngx_http_agent_pg_int(res, i, 9);

        if (m->content.data == NULL) {
            ngx_str_set(&m->content, "");
        }

        return NGX_OK;

    case 3:
        r = ngx_array_push(o->resources);
        if (r == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(r, sizeof(ngx_http_agent_resource_t));

        (void) ngx_http_agent_pg_str(pool, res, i, 1, &r->id);
        (void) ngx_http_agent_pg_str(pool, res, i, 2, &r->name);
        (void) ngx_http_agent_pg_str(pool, res, i, 3, &r->table);
        (void) ngx_http_agent_pg_str(pool, res, i, 4, &r->columns);
        (void) ngx_http_agent_pg_str(pool, res, i, 5, &r->path);
        (void) ngx_http_agent_pg_str(pool, res, i, 6, &r->created_at);
        (void) ngx_http_agent_pg_str(pool, res, i, 7, &r->blob);
        r->row_count = ngx_http_agent_pg_int(res, i, 9);
        r->size_bytes = ngx_http_agent_pg_int(res, i, 10);

        return ngx_http_agent_pg_local_path(pool, r);
    }

    return NGX_ERROR;
}


static ngx_int_t
ngx_http_agent_pg_open_copy(ngx_array_t *to, ngx_array_t *from)
{
    void  *p;

    if (from->nelts == 0) {
        return NGX_OK;
    }

    p = ngx_array_push_n(to, from->nelts);
    if (p == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(p, from->elts, from->nelts * from->size);

    return NGX_OK;
}
