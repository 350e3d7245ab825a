
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"


/*
 * The LangGraph store's items: a row each (owner, namespace, key; '' is
 * no owner, so that the three are a key), their text in an FTS5 table
 * that triggers keep in the same transaction as the row.  A query's words
 * go to FTS5 each quoted (any of them, ranked by bm25): what a client
 * writes is never FTS5's own syntax.
 */


#define NGX_HTTP_AGENT_SQLITE_QUERY_WORDS  32


static void ngx_http_agent_sqlite_items_bind(sqlite3_stmt *stmt, int n,
    ngx_str_t *s);
static ngx_int_t ngx_http_agent_sqlite_items_match(ngx_pool_t *pool,
    ngx_str_t *query, ngx_str_t *match);


ngx_int_t
ngx_http_agent_sqlite_item_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_t *item, int64_t now, ngx_uint_t quota_items,
    size_t quota_size)
{
    sqlite3_stmt  *stmt;

    /* a few of those expired go first: no timer of their own */

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_ITEM_EXPIRE);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    sqlite3_bind_int64(stmt, 1, now);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_ITEM_PUT);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_items_bind(stmt, 1, &item->owner);
    ngx_http_agent_sqlite_bind(stmt, 2, &item->ns);
    ngx_http_agent_sqlite_bind(stmt, 3, &item->key);
    ngx_http_agent_sqlite_bind(stmt, 4, &item->value);
    ngx_http_agent_sqlite_items_bind(stmt, 5, &item->text);
    ngx_http_agent_sqlite_bind(stmt, 6, &item->updated_at);

    if (item->expires) {
        sqlite3_bind_int64(stmt, 7, item->expires);

    } else {
        sqlite3_bind_null(stmt, 7);
    }

    /* the quota's sums only where there is one */
    if (quota_items || quota_size) {
        sqlite3_bind_int64(stmt, 8, quota_items ? (int64_t) quota_items
                                                : INT64_MAX);
        sqlite3_bind_int64(stmt, 9, quota_size ? (int64_t) quota_size
                                               : INT64_MAX);

    } else {
        sqlite3_bind_null(stmt, 8);
        sqlite3_bind_null(stmt, 9);
    }

    if (item->vector.len) {
        sqlite3_bind_blob(stmt, 10, item->vector.data, item->vector.len,
                          SQLITE_STATIC);

    } else {
        sqlite3_bind_null(stmt, 10);
    }

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    return sqlite3_changes(ngx_http_agent_sqlite_db) ? NGX_OK : NGX_BUSY;
}


ngx_int_t
ngx_http_agent_sqlite_item_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *ns, ngx_str_t *key, int64_t now,
    ngx_http_agent_item_t *item)
{
    int            rc;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_ITEM_GET);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_items_bind(stmt, 1, owner);
    ngx_http_agent_sqlite_bind(stmt, 2, ns);
    ngx_http_agent_sqlite_bind(stmt, 3, key);
    sqlite3_bind_int64(stmt, 4, now);

    rc = sqlite3_step(stmt);

    if (rc == SQLITE_ROW) {
        ngx_http_agent_sqlite_item_row(sc->pool, stmt, item);
        sqlite3_reset(stmt);
        return NGX_OK;
    }

    return ngx_http_agent_sqlite_done(stmt, rc) == NGX_OK ? NGX_DECLINED
                                                         : NGX_ERROR;
}


ngx_int_t
ngx_http_agent_sqlite_item_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *ns, ngx_str_t *key)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_ITEM_DELETE);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_items_bind(stmt, 1, owner);
    ngx_http_agent_sqlite_bind(stmt, 2, ns);
    ngx_http_agent_sqlite_bind(stmt, 3, key);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    return sqlite3_changes(ngx_http_agent_sqlite_db) ? NGX_OK : NGX_DECLINED;
}


ngx_int_t
ngx_http_agent_sqlite_item_search(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q, ngx_array_t *items)
{
    int                     rc;
    size_t                  used;
    ngx_str_t               match;
    sqlite3_stmt           *stmt;
    ngx_http_agent_item_t  *item;

    if (q->vector.len) {
        return ngx_http_agent_sqlite_near(sc, q, items);
    }

    if (ngx_http_agent_sqlite_items_match(sc->pool, &q->query, &match)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    stmt = ngx_http_agent_sqlite_stmt(match.len
                                      ? NGX_HTTP_AGENT_SQL_ITEM_QUERY
                                      : NGX_HTTP_AGENT_SQL_ITEM_SEARCH);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_items_bind(stmt, 1, &q->owner);
    ngx_http_agent_sqlite_items_bind(stmt, 2, &q->prefix);
    sqlite3_bind_int64(stmt, 3, q->now);
    ngx_http_agent_sqlite_items_bind(stmt, 4, &q->filter);
    sqlite3_bind_int64(stmt, 5, q->limit);
    sqlite3_bind_int64(stmt, 6, q->offset);

    if (match.len) {
        ngx_http_agent_sqlite_bind(stmt, 7, &match);
    }

    used = 0;

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW
           && ngx_http_agent_sqlite_room(stmt, &used))
    {
        item = ngx_array_push(items);
        if (item == NULL) {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }

        ngx_http_agent_sqlite_item_row(sc->pool, stmt, item);
    }

    return ngx_http_agent_sqlite_done(stmt, rc);
}


ngx_int_t
ngx_http_agent_sqlite_item_namespaces(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q, ngx_array_t *namespaces)
{
    int            rc;
    ngx_str_t     *ns;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_ITEM_NAMESPACES);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_items_bind(stmt, 1, &q->owner);
    ngx_http_agent_sqlite_items_bind(stmt, 2, &q->prefix);
    sqlite3_bind_int64(stmt, 3, q->now);
    ngx_http_agent_sqlite_items_bind(stmt, 4, &q->suffix);
    sqlite3_bind_int64(stmt, 5, q->limit);

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        ns = ngx_array_push(namespaces);
        if (ns == NULL) {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }

        (void) ngx_http_agent_sqlite_col(sc->pool, stmt, 0, ns);
    }

    return ngx_http_agent_sqlite_done(stmt, rc);
}


/* an empty string is none: NULL, as the statements test for */

static void
ngx_http_agent_sqlite_items_bind(sqlite3_stmt *stmt, int n, ngx_str_t *s)
{
    if (s == NULL || s->len == 0) {
        sqlite3_bind_null(stmt, n);
        return;
    }

    ngx_http_agent_sqlite_bind(stmt, n, s);
}


/*
 * A query's words as an FTS5 expression: each a string ("" doubled in
 * it), any of them; at most NGX_HTTP_AGENT_SQLITE_QUERY_WORDS words
 */

static ngx_int_t
ngx_http_agent_sqlite_items_match(ngx_pool_t *pool, ngx_str_t *query,
    ngx_str_t *match)
{
    u_char      *p, *end, *w;
    ngx_uint_t   words;

    ngx_str_null(match);

    if (query->len == 0) {
        return NGX_OK;
    }

    /* each byte a quote at worst: doubled, plus quotes and " OR " */
    w = ngx_pnalloc(pool, query->len * 2
                          + NGX_HTTP_AGENT_SQLITE_QUERY_WORDS * 6);
    if (w == NULL) {
        return NGX_ERROR;
    }

    match->data = w;
    p = query->data;
    end = p + query->len;
    words = 0;

    while (p < end && words < NGX_HTTP_AGENT_SQLITE_QUERY_WORDS) {

        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n'
                           || *p == '\r'))
        {
            p++;
        }

        if (p == end) {
            break;
        }

        if (words++) {
            w = ngx_cpymem(w, " OR ", 4);
        }

        *w++ = '"';

        for ( /* void */ ; p < end && *p != ' ' && *p != '\t' && *p != '\n'
                           && *p != '\r'; p++)
        {
            if (*p == '"') {
                *w++ = '"';
            }

            *w++ = *p;
        }

        *w++ = '"';
    }

    match->len = w - match->data;

    return NGX_OK;
}
