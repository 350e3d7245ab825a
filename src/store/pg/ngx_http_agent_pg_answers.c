
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"


/*
 * The answers the PostgreSQL store's operations share: a statement done, a
 * row changed or none, a list of rows kept in the call and copied into the
 * caller's array.
 */


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


/* a kept list of rows into the caller's array */

ngx_int_t
ngx_http_agent_pg_rows(ngx_http_agent_pg_answer_t *a, ngx_array_t *to)
{
    void                      *p;
    ngx_http_agent_pg_rows_t  *r;

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
