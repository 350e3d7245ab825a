
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite_db.h"
#include "ngx_http_agent_sqlite_cache.h"


/*
 * The cache's entries on SQLite (pg_cache.c for PostgreSQL): a row per
 * key, its value a JSON document we wrote, its size, when it was put and
 * when it expires, in ms.  A put makes room first: the expired rows and,
 * newest first, those past the bounds once the new one is counted go.
 * Both are point statements on the primary key but the eviction's, which
 * reads the rows' sizes: at most the bound's number of rows.
 */


ngx_int_t
ngx_http_agent_sqlite_cache_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *key, int64_t now, ngx_str_t *value)
{
    int            rc;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_CACHE_GET);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, key);
    sqlite3_bind_int64(stmt, 2, now);

    rc = sqlite3_step(stmt);

    if (rc == SQLITE_ROW) {
        rc = ngx_http_agent_sqlite_col(sc->pool, stmt, 0, value);
        sqlite3_reset(stmt);
        return rc;
    }

    return ngx_http_agent_sqlite_done(stmt, rc) == NGX_OK ? NGX_DECLINED
                                                         : NGX_ERROR;
}


ngx_int_t
ngx_http_agent_sqlite_cache_put(ngx_http_agent_store_call_t *sc,
    ngx_str_t *key, ngx_str_t *value, int64_t now, int64_t expires,
    ngx_uint_t items, size_t size)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_CACHE_EVICT);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, key);
    sqlite3_bind_int64(stmt, 2, now);
    sqlite3_bind_int64(stmt, 3, items);
    sqlite3_bind_int64(stmt, 4, value->len);
    sqlite3_bind_int64(stmt, 5, size);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_CACHE_PUT);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, key);
    ngx_http_agent_sqlite_bind(stmt, 2, value);
    sqlite3_bind_int64(stmt, 3, value->len);
    sqlite3_bind_int64(stmt, 4, now);
    sqlite3_bind_int64(stmt, 5, expires);

    return ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt));
}
