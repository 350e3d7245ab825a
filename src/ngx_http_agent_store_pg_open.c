
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store_pg.h"


/*
 * A turn's start on PostgreSQL in one round trip (agent_open() of
 * ngx_http_agent_store_pg_sql.c): the lease, the latest checkpoint, its
 * messages and the session's files, where the SQLite store makes four
 * calls in one transaction.
 */


typedef struct {
    ngx_http_agent_pg_lock_t     lease;
    ngx_uint_t                   found;     /* a checkpoint */
    ngx_http_agent_checkpoint_t  cp;
    ngx_array_t                 *messages;
    ngx_array_t                 *resources;
} ngx_http_agent_pg_open_t;


static ngx_int_t ngx_http_agent_pg_opened(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);
static ngx_int_t ngx_http_agent_pg_stolen(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);
static ngx_int_t ngx_http_agent_pg_open_row(ngx_pool_t *pool, PGresult *res,
    int i, ngx_http_agent_pg_open_t *o);
static ngx_int_t ngx_http_agent_pg_open_copy(ngx_array_t *to,
    ngx_array_t *from);


ngx_int_t
ngx_http_agent_pg_session_open(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_msec_t lease,
    ngx_int_t images_keep, ngx_http_agent_checkpoint_t *cp,
    ngx_array_t *messages, ngx_array_t *resources)
{
    int64_t                      now;
    ngx_http_agent_pg_open_t    *o;
    ngx_http_agent_pg_query_t   *q;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc);

    if (a) {
        o = a->value;

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

    now = ngx_http_agent_store_ms();

    q = ngx_http_agent_pg_query(sc, NGX_HTTP_AGENT_PG_OPEN,
                                ngx_http_agent_pg_opened);
    if (q == NULL) {
        return NGX_ERROR;
    }

    o = ngx_pcalloc(q->pool, sizeof(ngx_http_agent_pg_open_t));
    if (o == NULL) {
        ngx_destroy_pool(q->pool);
        return NGX_ERROR;
    }

    o->lease.expires = now + lease;
    o->lease.id.len = id->len;
    o->lease.id.data = ngx_pstrdup(q->pool, id);
    o->lease.run_id.len = run_id->len;
    o->lease.run_id.data = ngx_pstrdup(q->pool, run_id);
    q->data = o;

    if (o->lease.id.data == NULL || o->lease.run_id.data == NULL
        || ngx_http_agent_pg_param(q, id) != NGX_OK
        || ngx_http_agent_pg_param(q, run_id) != NGX_OK
        || ngx_http_agent_pg_param_int(q, ngx_pid) != NGX_OK
        || ngx_http_agent_pg_param_int(q, now + lease) != NGX_OK
        || ngx_http_agent_pg_param_int(q, now) != NGX_OK
        || ngx_http_agent_pg_param(q, &ngx_http_agent_store_host) != NGX_OK
        || ngx_http_agent_pg_param_int(q, images_keep) != NGX_OK)
    {
        ngx_destroy_pool(q->pool);
        return NGX_ERROR;
    }

    return ngx_http_agent_pg_send(q, 0);
}


static ngx_int_t
ngx_http_agent_pg_opened(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    int                        i;
    ngx_pool_t                *pool;
    ngx_http_agent_pg_open_t  *o, *kept;

    o = q->data;
    pool = q->sc->pool;

    if (PQntuples(res) < 1 || ngx_http_agent_pg_int(res, 0, 0) != 0) {
        return NGX_ERROR;
    }

    switch (ngx_http_agent_pg_int(res, 0, 9)) {

    case 0:
        break;

    case 2:
        return NGX_DECLINED;

    default:

        /* taken over: NGX_ABORT, the state read apart; or NGX_BUSY */
        return ngx_http_agent_pg_take_over(q, res, 1, 2, 10, &o->lease,
                                           ngx_http_agent_pg_stolen);
    }

    kept = ngx_pcalloc(pool, sizeof(ngx_http_agent_pg_open_t));
    if (kept == NULL) {
        return NGX_ERROR;
    }

    kept->messages = ngx_array_create(pool, 16, sizeof(ngx_http_agent_msg_t));
    kept->resources = ngx_array_create(pool, 2,
                                       sizeof(ngx_http_agent_resource_t));
    if (kept->messages == NULL || kept->resources == NULL) {
        return NGX_ERROR;
    }

    for (i = 1; i < PQntuples(res); i++) {
        if (ngx_http_agent_pg_open_row(pool, res, i, kept) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    a->value = kept;

    return NGX_OK;
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

        return NGX_OK;

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
