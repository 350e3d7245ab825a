
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
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_CACHE_GET, "si", key,
                                       now);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_text(sc->pool, stmt, value);
}


ngx_int_t
ngx_http_agent_sqlite_cache_put(ngx_http_agent_store_call_t *sc,
    ngx_str_t *key, ngx_str_t *value, int64_t now, int64_t expires,
    ngx_uint_t items, size_t size)
{
    int64_t        count, bytes;
    sqlite3_stmt  *stmt;

    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_CACHE_EXPIRE, "i", now)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* the others' count and bytes, from the index cache_age */

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_CACHE_ROOM, "s", key);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

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

    if (count >= (int64_t) items
        && ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_CACHE_OLDEST, "si", key,
                                    count + 1
                                    - NGX_HTTP_AGENT_STORE_CACHE_KEEP(items))
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (bytes + (int64_t) value->len > (int64_t) size
        && ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_CACHE_BYTES, "sii", key,
                                    (int64_t) value->len,
                                    NGX_HTTP_AGENT_STORE_CACHE_KEEP(size))
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_CACHE_PUT, "ssiii", key,
                                    value, (int64_t) value->len, now,
                                    expires);
}
