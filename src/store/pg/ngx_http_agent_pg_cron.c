
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"


/*
 * The LangGraph API's crons on PostgreSQL (sqlite_cron.c for SQLite).  A
 * tick is claimed in one statement that skips a row another host has
 * locked (FOR UPDATE SKIP LOCKED) and moves the next run only from the
 * time read: of the workers of every host that saw it due, one fires it.
 */


static ngx_int_t ngx_http_agent_pg_cron_some(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);
static ngx_int_t ngx_http_agent_pg_cron_read(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);


/* NGX_OK: a row written, NGX_DECLINED: none was */

static ngx_int_t
ngx_http_agent_pg_cron_some(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    char  *n;

    n = PQcmdTuples(res);

    return (n[0] != '\0' && n[0] != '0') ? NGX_OK : NGX_DECLINED;
}


static ngx_int_t
ngx_http_agent_pg_cron_read(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    int                         i;
    size_t                      used;
    ngx_pool_t                 *pool;
    ngx_array_t                *rows;
    ngx_http_agent_cron_row_t  *row;

    if (q->stmt == NGX_HTTP_AGENT_PG_CRON_GET && PQntuples(res) == 0) {
        return NGX_DECLINED;
    }

    pool = q->sc->pool;

    rows = ngx_array_create(pool, PQntuples(res) + 1,
                            sizeof(ngx_http_agent_cron_row_t));
    if (rows == NULL) {
        return NGX_ERROR;
    }

    used = 0;

    for (i = 0;
         i < PQntuples(res) && ngx_http_agent_pg_room(res, i, &used);
         i++)
    {
        row = ngx_array_push(rows);
        if (row == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(row, sizeof(ngx_http_agent_cron_row_t));

        (void) ngx_http_agent_pg_str(pool, res, i, 0, &row->cron_id);
        (void) ngx_http_agent_pg_str(pool, res, i, 1, &row->owner);
        (void) ngx_http_agent_pg_str(pool, res, i, 2, &row->assistant_id);
        (void) ngx_http_agent_pg_str(pool, res, i, 3, &row->thread_id);
        (void) ngx_http_agent_pg_str(pool, res, i, 4, &row->origin);
        (void) ngx_http_agent_pg_str(pool, res, i, 5, &row->doc);
        row->next_run = ngx_http_agent_pg_int(res, i, 6);
        row->enabled = ngx_http_agent_pg_int(res, i, 7) ? 1 : 0;
        (void) ngx_http_agent_pg_str(pool, res, i, 8, &row->created_at);
        (void) ngx_http_agent_pg_str(pool, res, i, 9, &row->updated_at);
        (void) ngx_http_agent_pg_str(pool, res, i, 10, &row->limit_keys);
    }

    a->value = rows;

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_pg_cron_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_cron_row_t *row)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, cron_put, &row->owner, &row->cron_id);

    if (a) {
        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CRON_PUT,
                                 ngx_http_agent_pg_cron_some, "ssssssiisss",
                                 &row->cron_id, &row->owner,
                                 &row->assistant_id, &row->thread_id,
                                 &row->origin, &row->doc, row->next_run,
                                 (int64_t) row->enabled, &row->created_at,
                                 &row->updated_at,
                                 row->limit_keys.len ? &row->limit_keys
                                                     : NULL);
}


ngx_int_t
ngx_http_agent_pg_cron_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, ngx_http_agent_cron_row_t *row)
{
    ngx_array_t                 *rows;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, cron_get, owner, id);

    if (a) {
        if (a->rc == NGX_OK) {
            rows = a->value;
            *row = *(ngx_http_agent_cron_row_t *) rows->elts;
        }

        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CRON_GET,
                                 ngx_http_agent_pg_cron_read, "ss", id,
                                 owner);
}


ngx_int_t
ngx_http_agent_pg_cron_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_array_t *rows)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, cron_list, owner, NULL);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, rows);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CRON_LIST,
                                 ngx_http_agent_pg_cron_read, "s", owner);
}


ngx_int_t
ngx_http_agent_pg_cron_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, cron_delete, owner, id);

    if (a) {
        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CRON_DELETE,
                                 ngx_http_agent_pg_cron_some, "ss", id,
                                 owner);
}


ngx_int_t
ngx_http_agent_pg_cron_due(ngx_http_agent_store_call_t *sc, int64_t now,
    ngx_array_t *rows)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, cron_due, NULL, NULL);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, rows);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CRON_DUE,
                                 ngx_http_agent_pg_cron_read, "i", now);
}


ngx_int_t
ngx_http_agent_pg_cron_claim(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t was, int64_t next)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, cron_claim, id, NULL);

    if (a) {
        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CRON_CLAIM,
                                 ngx_http_agent_pg_cron_some, "sii", id,
                                 was, next);
}
