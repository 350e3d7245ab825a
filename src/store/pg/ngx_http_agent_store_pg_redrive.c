
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_pg_sql.h"
#include "ngx_http_agent_store_pg_query.h"
#include "ngx_http_agent_store_pg_send.h"
#include "ngx_http_agent_store_pg_redrive.h"


/*
 * Runs whose worker died, on PostgreSQL (sqlite_redrive.c for SQLite):
 * found by their lease, claimed in one statement that takes the lease
 * over only from the holder and the expiry read, so that of the workers
 * of every host that saw the run lost, one claims it.
 */


static ngx_int_t ngx_http_agent_pg_lost_read(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);
static ngx_int_t ngx_http_agent_pg_claim_read(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);


static ngx_int_t
ngx_http_agent_pg_lost_read(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    int                         i;
    int64_t                     now;
    ngx_pool_t                 *pool;
    ngx_array_t                *rows;
    ngx_http_agent_run_lost_t  *l;

    pool = q->sc->pool;
    now = ngx_http_agent_store_ms();

    rows = ngx_array_create(pool, PQntuples(res) + 1,
                            sizeof(ngx_http_agent_run_lost_t));
    if (rows == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < PQntuples(res); i++) {
        l = ngx_array_push(rows);
        if (l == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(l, sizeof(ngx_http_agent_run_lost_t));

        if (ngx_http_agent_pg_str(pool, res, i, 0, &l->run_id) != NGX_OK
            || ngx_http_agent_pg_str(pool, res, i, 1, &l->thread_id)
               != NGX_OK)
        {
            return NGX_ERROR;
        }

        if (q->stmt == NGX_HTTP_AGENT_PG_RUN_ORPHANS) {
            continue;
        }

        if (ngx_http_agent_pg_str(pool, res, i, 2, &l->host) != NGX_OK
            || ngx_http_agent_pg_str(pool, res, i, 5, &l->origin) != NGX_OK)
        {
            return NGX_ERROR;
        }

        l->pid = (ngx_pid_t) ngx_http_agent_pg_int(res, i, 3);
        l->expires = ngx_http_agent_pg_int(res, i, 4);

        /* a lease of this host's that runs: its holder must be gone */
        if (l->expires >= now
            && !ngx_http_agent_store_holder_gone(&l->thread_id,
                                                 l->host.data, l->host.len,
                                                 l->pid))
        {
            rows->nelts--;
        }
    }

    a->value = rows;

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_pg_run_lost(ngx_http_agent_store_call_t *sc,
    ngx_array_t *lost)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, run_lost, NULL, NULL);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, lost);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RUN_LOST,
                                 ngx_http_agent_pg_lost_read, "is",
                                 ngx_http_agent_store_ms(),
                                 &ngx_http_agent_store_host);
}


ngx_int_t
ngx_http_agent_pg_run_orphans(ngx_http_agent_store_call_t *sc,
    ngx_array_t *orphans)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, run_orphans, NULL, NULL);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, orphans);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RUN_ORPHANS,
                                 ngx_http_agent_pg_lost_read, "");
}


static ngx_int_t
ngx_http_agent_pg_claim_read(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    ngx_uint_t                 i;
    ngx_pool_t                *pool;
    ngx_http_agent_run_row_t  *row;

    static size_t  cols[] = {
        offsetof(ngx_http_agent_run_row_t, run_id),
        offsetof(ngx_http_agent_run_row_t, thread_id),
        offsetof(ngx_http_agent_run_row_t, assistant_id),
        offsetof(ngx_http_agent_run_row_t, status),
        offsetof(ngx_http_agent_run_row_t, metadata),
        offsetof(ngx_http_agent_run_row_t, kwargs),
        offsetof(ngx_http_agent_run_row_t, multitask_strategy),
        offsetof(ngx_http_agent_run_row_t, created_at),
        offsetof(ngx_http_agent_run_row_t, updated_at),
        offsetof(ngx_http_agent_run_row_t, origin),
        offsetof(ngx_http_agent_run_row_t, checkpoint),
        offsetof(ngx_http_agent_run_row_t, owner)
    };

    if (PQntuples(res) == 0) {
        return NGX_DECLINED;
    }

    pool = q->sc->pool;

    row = ngx_pcalloc(pool, sizeof(ngx_http_agent_run_row_t));
    if (row == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
        if (ngx_http_agent_pg_str(pool, res, 0, i,
                                  (ngx_str_t *) ((u_char *) row + cols[i]))
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    row->attempts = ngx_http_agent_pg_int(res, 0, 12);
    row->last_event = ngx_http_agent_pg_int(res, 0, 13);

    if (ngx_http_agent_pg_str(pool, res, 0, 14, &row->limit_keys) != NGX_OK
        || ngx_http_agent_pg_str(pool, res, 0, 15, &row->secret) != NGX_OK)
    {
        return NGX_ERROR;
    }

    a->value = row;

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_pg_run_claim(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_lost_t *lost, ngx_msec_t hold,
    ngx_http_agent_run_row_t *row)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, run_claim, &lost->thread_id,
                                   &lost->run_id);

    if (a) {
        if (a->rc == NGX_OK) {
            *row = *(ngx_http_agent_run_row_t *) a->value;
        }

        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RUN_CLAIM,
                                 ngx_http_agent_pg_claim_read, "ssisiii",
                                 &lost->run_id, &lost->thread_id,
                                 (int64_t) ngx_pid,
                                 &ngx_http_agent_store_host,
                                 ngx_http_agent_store_ms() + hold,
                                 (int64_t) lost->pid, lost->expires);
}
