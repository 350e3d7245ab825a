
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"


typedef struct {
    ngx_uint_t                     stmt;
    ngx_http_agent_store_table_t  *table;
    ngx_uint_t                     one;      /* asks for one row */
} ngx_http_agent_pg_read_t;


/*
 * The answers the PostgreSQL store's operations share: a statement done, a
 * row changed or none, a list of rows read through their table
 * (store_rows.c), kept in the call and copied into the caller's row or
 * array.
 */


/* the statements whose rows ngx_http_agent_pg_read() reads */

static ngx_http_agent_pg_read_t  ngx_http_agent_pg_reads[] = {
    { NGX_HTTP_AGENT_PG_SESSION_GET, &ngx_http_agent_store_session_cols, 1 },
    { NGX_HTTP_AGENT_PG_SESSION_LIST, &ngx_http_agent_store_session_cols, 0 },
    { NGX_HTTP_AGENT_PG_RUN_GET, &ngx_http_agent_store_run_cols, 1 },
    { NGX_HTTP_AGENT_PG_RUN_LIST, &ngx_http_agent_store_run_cols, 0 },
    { NGX_HTTP_AGENT_PG_RUN_CLAIM, &ngx_http_agent_store_run_cols, 1 },
    { NGX_HTTP_AGENT_PG_ASSISTANT_GET, &ngx_http_agent_store_assistant_cols,
      1 },
    { NGX_HTTP_AGENT_PG_ASSISTANT_LIST, &ngx_http_agent_store_assistant_cols,
      0 },
    { NGX_HTTP_AGENT_PG_CRON_GET, &ngx_http_agent_store_cron_cols, 1 },
    { NGX_HTTP_AGENT_PG_CRON_LIST, &ngx_http_agent_store_cron_cols, 0 },
    { NGX_HTTP_AGENT_PG_CRON_DUE, &ngx_http_agent_store_cron_cols, 0 },
    { NGX_HTTP_AGENT_PG_ITEM_GET, &ngx_http_agent_store_item_cols, 1 },
    { NGX_HTTP_AGENT_PG_ITEM_SEARCH, &ngx_http_agent_store_item_cols, 0 },
    { NGX_HTTP_AGENT_PG_ITEM_QUERY, &ngx_http_agent_store_item_cols, 0 },
    { 0, NULL, 0 }
};


ngx_int_t
ngx_http_agent_pg_done(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    if (a && q->data && q->stmt == NGX_HTTP_AGENT_PG_SESSION_INSERT) {
        a->value = q->data;
    }

    return NGX_OK;
}


/* NGX_OK: a row changed; NGX_DECLINED: none (NGX_BUSY for a take over) */

ngx_int_t
ngx_http_agent_pg_changed(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    char  *n;

    n = PQcmdTuples(res);

    if (n[0] != '\0' && n[0] != '0') {
        return NGX_OK;
    }

    return q->stmt == NGX_HTTP_AGENT_PG_LOCK_STEAL ? NGX_BUSY : NGX_DECLINED;
}


ngx_int_t
ngx_http_agent_pg_new_rows(ngx_http_agent_pg_query_t *q,
    ngx_http_agent_pg_answer_t *a, size_t size, ngx_array_t **rows)
{
    ngx_http_agent_pg_rows_t  *r;

    r = ngx_pcalloc(q->sc->pool, sizeof(ngx_http_agent_pg_rows_t));
    if (r == NULL) {
        return NGX_ERROR;
    }

    r->rows = ngx_array_create(q->sc->pool, 8, size);
    if (r->rows == NULL) {
        return NGX_ERROR;
    }

    a->value = r;
    *rows = r->rows;

    return NGX_OK;
}


/*
 * A statement's rows read through their table into the answer, within
 * the answer budget; a statement that asks for one row is declined if
 * it has none.
 */

ngx_int_t
ngx_http_agent_pg_read(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    int                        i;
    void                      *row;
    size_t                     used;
    ngx_array_t               *rows;
    ngx_http_agent_pg_read_t  *r;

    for (r = ngx_http_agent_pg_reads; r->stmt != q->stmt; r++) {
        if (r->table == NULL) {
            return NGX_ERROR;
        }
    }

    if (r->one && PQntuples(res) == 0) {
        return NGX_DECLINED;
    }

    if (ngx_http_agent_pg_new_rows(q, a, r->table->size, &rows) != NGX_OK) {
        return NGX_ERROR;
    }

    used = 0;

    for (i = 0;
         i < PQntuples(res) && ngx_http_agent_pg_room(res, i, &used);
         i++)
    {
        row = ngx_array_push(rows);

        if (row == NULL
            || ngx_http_agent_pg_row(q->sc->pool, res, i, 0, r->table, row)
               != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* a kept answer's first row into the caller's */

ngx_int_t
ngx_http_agent_pg_answered_row(ngx_http_agent_pg_answer_t *a, void *row)
{
    ngx_http_agent_pg_rows_t  *r;

    if (a->rc == NGX_OK) {
        r = a->value;
        ngx_memcpy(row, r->rows->elts, r->rows->size);
    }

    return a->rc;
}


/* a kept answer's rows after those of the caller's array */

ngx_int_t
ngx_http_agent_pg_answered_rows(ngx_http_agent_pg_answer_t *a,
    ngx_array_t *to)
{
    void                      *p;
    ngx_http_agent_pg_rows_t  *r;

    if (a->rc != NGX_OK) {
        return a->rc;
    }

    r = a->value;

    if (r->rows->nelts == 0) {
        return NGX_OK;
    }

    p = ngx_array_push_n(to, r->rows->nelts);
    if (p == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(p, r->rows->elts, r->rows->nelts * r->rows->size);

    return NGX_OK;
}
