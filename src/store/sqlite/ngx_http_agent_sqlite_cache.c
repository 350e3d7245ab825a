
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"


/*
 * The cache's entries on SQLite (pg_cache.c for PostgreSQL): a row per
 * key, its value a JSON document we wrote, its size, when it was put and
 * when it expires, in ms.  A put makes room first: the expired rows go,
 * then, when the others and it would be past a bound, the oldest until a
 * slack of it is free (NGX_HTTP_AGENT_STORE_CACHE_KEEP), so that a full
 * cache is trimmed once in many puts.  The sums are read from the index
 * cache_age, not from the rows: a put is about a millisecond of the
 * event loop at 10,000 entries, a trim a few more.
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
    int64_t        count, bytes;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_CACHE_EXPIRE);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    sqlite3_bind_int64(stmt, 1, now);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    /* the others' count and bytes, from the index cache_age */

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_CACHE_ROOM);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, key);

    if (sqlite3_step(stmt) != SQLITE_ROW) {
        sqlite3_reset(stmt);
        return NGX_ERROR;
    }

    count = sqlite3_column_int64(stmt, 0);
    bytes = sqlite3_column_int64(stmt, 1);
    sqlite3_reset(stmt);

    /*
     * full: the oldest go until a slack of the bounds is free, so that the
     * next puts find room without a pass of their own
     */

    if (count >= (int64_t) items) {
        stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_CACHE_OLDEST);
        if (stmt == NULL) {
            return NGX_ERROR;
        }

        ngx_http_agent_sqlite_bind(stmt, 1, key);
        sqlite3_bind_int64(stmt, 2, count + 1
                           - NGX_HTTP_AGENT_STORE_CACHE_KEEP(items));

        if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    if (bytes + (int64_t) value->len > (int64_t) size) {
        stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_CACHE_BYTES);
        if (stmt == NULL) {
            return NGX_ERROR;
        }

        ngx_http_agent_sqlite_bind(stmt, 1, key);
        sqlite3_bind_int64(stmt, 2, value->len);
        sqlite3_bind_int64(stmt, 3, NGX_HTTP_AGENT_STORE_CACHE_KEEP(size));

        if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
            return NGX_ERROR;
        }
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
