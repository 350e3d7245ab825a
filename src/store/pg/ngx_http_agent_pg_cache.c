
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"


/*
 * The cache's entries on PostgreSQL (sqlite_cache.c for SQLite), shared
 * by every worker of every host on the database.  A put is one
 * statement, the room it makes with it (sqlite_cache.c says how); its
 * window over the entries is the server's work, not the worker's.  Puts
 * that race may leave a few entries over the bounds until the next put.
 */


static ngx_int_t ngx_http_agent_pg_cache_read(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);


static ngx_int_t
ngx_http_agent_pg_cache_read(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    ngx_str_t  *value;

    if (PQntuples(res) == 0) {
        return NGX_DECLINED;
    }

    value = ngx_palloc(q->sc->pool, sizeof(ngx_str_t));
    if (value == NULL
        || ngx_http_agent_pg_str(q->sc->pool, res, 0, 0, value) != NGX_OK)
    {
        return NGX_ERROR;
    }

    a->value = value;

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_pg_cache_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *key, int64_t now, ngx_str_t *value)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, cache_get, key, NULL);

    if (a) {
        if (a->rc == NGX_OK) {
            *value = *(ngx_str_t *) a->value;
        }

        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CACHE_GET,
                                 ngx_http_agent_pg_cache_read, "si", key,
                                 now);
}


ngx_int_t
ngx_http_agent_pg_cache_put(ngx_http_agent_store_call_t *sc,
    ngx_str_t *key, ngx_str_t *value, int64_t now, int64_t expires,
    ngx_uint_t items, size_t size)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, cache_put, key, NULL);

    if (a) {
        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CACHE_PUT, NULL,
                                 "ssiiiiiii", key, value,
                                 (int64_t) value->len, now, expires,
                                 (int64_t) items, (int64_t) size,
                                 NGX_HTTP_AGENT_STORE_CACHE_KEEP(items),
                                 NGX_HTTP_AGENT_STORE_CACHE_KEEP(size));
}
