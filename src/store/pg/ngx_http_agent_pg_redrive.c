
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"


/*
 * Runs whose worker died, on PostgreSQL (sqlite_look.c for SQLite):
 * found through indexes, not by a walk of what runs (the lease that ran
 * out by its expiry, this host's holders by worker and then the leases of
 * those gone only), claimed in one statement that takes the lease over
 * only from the holder and the expiry read, so that of the workers of
 * every host that saw the run lost, one claims it.
 */


/* the orphans' look reads a slice, from where the last one stopped */
#define NGX_HTTP_AGENT_PG_SLICE   256
#define NGX_HTTP_AGENT_PG_CURSOR  512


static ngx_int_t ngx_http_agent_pg_lost_read(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);
static ngx_int_t ngx_http_agent_pg_orphans_read(
    ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a);


static ngx_uint_t  ngx_http_agent_pg_held;
static size_t      ngx_http_agent_pg_cursor_len;
static u_char      ngx_http_agent_pg_cursor[NGX_HTTP_AGENT_PG_CURSOR];


/*
 * RUN_LOST's and RUN_HELD's rows: lost runs; RUN_LOST's rows of no run
 * are this host's holders: kept as such (pid alone) when their process
 * is gone
 */

static ngx_int_t
ngx_http_agent_pg_lost_read(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    int                         i;
    int64_t                     now;
    ngx_pid_t                   pid;
    ngx_pool_t                 *pool;
    ngx_array_t                *rows;
    ngx_http_agent_run_lost_t  *l;

    pool = q->sc->pool;
    now = ngx_http_agent_store_ms();

    if (ngx_http_agent_pg_new_rows(q, a, sizeof(ngx_http_agent_run_lost_t),
                                   &rows)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    for (i = 0; i < PQntuples(res); i++) {
        l = ngx_array_push(rows);
        if (l == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(l, sizeof(ngx_http_agent_run_lost_t));

        if (PQgetisnull(res, i, 0)) {
            pid = (ngx_pid_t) ngx_http_agent_pg_int(res, i, 3);

            if (pid == ngx_pid || pid <= 0 || kill(pid, 0) == 0
                || ngx_errno != NGX_ESRCH)
            {
                rows->nelts--;
                continue;
            }

            l->pid = pid;
            continue;
        }

        if (ngx_http_agent_pg_str(pool, res, i, 0, &l->run_id) != NGX_OK
            || ngx_http_agent_pg_str(pool, res, i, 1, &l->thread_id)
               != NGX_OK
            || ngx_http_agent_pg_str(pool, res, i, 2, &l->host) != NGX_OK
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

    return NGX_OK;
}


/*
 * The expired leases and the holders at once (one round trip); only when
 * a holder is gone, its leases
 */

ngx_int_t
ngx_http_agent_pg_run_lost(ngx_http_agent_store_call_t *sc,
    ngx_array_t *lost)
{
    u_char                      *p;
    ngx_str_t                    gone;
    ngx_uint_t                   i;
    ngx_array_t                 *rows;
    ngx_http_agent_run_lost_t   *l, *to;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, run_lost, NULL, NULL);

    if (a == NULL) {
        return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RUN_LOST,
                                     ngx_http_agent_pg_lost_read, "is",
                                     ngx_http_agent_store_ms(),
                                     &ngx_http_agent_store_host);
    }

    if (a->rc != NGX_OK) {
        return a->rc;
    }

    rows = ((ngx_http_agent_pg_rows_t *) a->value)->rows;
    l = rows->elts;

    gone.data = ngx_pnalloc(sc->pool, rows->nelts * (NGX_INT64_LEN + 1) + 2);
    if (gone.data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_cpymem(gone.data, "{", 1);

    for (i = 0; i < rows->nelts; i++) {
        if (l[i].run_id.len == 0) {
            p = ngx_sprintf(p, "%s%P", p == gone.data + 1 ? "" : ",",
                            l[i].pid);
            continue;
        }

        to = ngx_array_push(lost);
        if (to == NULL) {
            return NGX_ERROR;
        }

        *to = l[i];
    }

    if (p == gone.data + 1) {
        return NGX_OK;
    }

    *p++ = '}';
    gone.len = p - gone.data;

    a = ngx_http_agent_pg_answered(sc, run_lost, &gone, NULL);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, lost);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RUN_HELD,
                                 ngx_http_agent_pg_lost_read, "ss",
                                 &ngx_http_agent_store_host, &gone);
}


/*
 * A slice of the running runs: those whose thread is not theirs; a slice
 * that found some is read again at the next look, which confirms them
 */

static ngx_int_t
ngx_http_agent_pg_orphans_read(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    int                         i, n;
    size_t                      len;
    ngx_pool_t                 *pool;
    ngx_array_t                *rows;
    ngx_http_agent_run_lost_t  *l;

    pool = q->sc->pool;
    n = PQntuples(res);

    if (ngx_http_agent_pg_new_rows(q, a, sizeof(ngx_http_agent_run_lost_t),
                                   &rows)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    for (i = 0; i < n; i++) {
        if (ngx_http_agent_pg_int(res, i, 2) || rows->nelts >= 8) {
            continue;
        }

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
    }

    if (rows->nelts && !ngx_http_agent_pg_held) {
        ngx_http_agent_pg_held = 1;
        return NGX_OK;
    }

    ngx_http_agent_pg_held = 0;

    len = n ? (size_t) PQgetlength(res, n - 1, 1) : 0;

    if (n < NGX_HTTP_AGENT_PG_SLICE || len > NGX_HTTP_AGENT_PG_CURSOR) {
        ngx_http_agent_pg_cursor_len = 0;

    } else {
        ngx_memcpy(ngx_http_agent_pg_cursor, PQgetvalue(res, n - 1, 1), len);
        ngx_http_agent_pg_cursor_len = len;
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_pg_run_orphans(ngx_http_agent_store_call_t *sc,
    ngx_array_t *orphans)
{
    ngx_str_t                    cursor;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, run_orphans, NULL, NULL);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, orphans);
    }

    cursor.data = ngx_pnalloc(sc->pool, ngx_http_agent_pg_cursor_len + 1);
    if (cursor.data == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(cursor.data, ngx_http_agent_pg_cursor,
               ngx_http_agent_pg_cursor_len);
    cursor.len = ngx_http_agent_pg_cursor_len;

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RUN_ORPHANS,
                                 ngx_http_agent_pg_orphans_read, "s",
                                 &cursor);
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
        return ngx_http_agent_pg_answered_row(a, row);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RUN_CLAIM,
                                 ngx_http_agent_pg_read, "ssisiii",
                                 &lost->run_id, &lost->thread_id,
                                 (int64_t) ngx_pid,
                                 &ngx_http_agent_store_host,
                                 ngx_http_agent_store_ms() + hold,
                                 (int64_t) lost->pid, lost->expires);
}
