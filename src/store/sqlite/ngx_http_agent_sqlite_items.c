
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


static ngx_int_t ngx_http_agent_sqlite_items_match(ngx_pool_t *pool,
    ngx_str_t *query, ngx_str_t *match);


ngx_int_t
ngx_http_agent_sqlite_item_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_t *item, int64_t now, ngx_uint_t quota_items,
    size_t quota_size)
{
    sqlite3_stmt  *stmt;

    /* a few of those expired go first: no timer of their own */

    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_ITEM_EXPIRE, "i", now)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_ITEM_PUT, "nsssns",
                                       &item->owner, &item->ns, &item->key,
                                       &item->value, &item->text,
                                       &item->updated_at);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

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
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_ITEM_GET, "nssi",
                                       owner, ns, key, now);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_one(sc->pool, stmt,
                                     &ngx_http_agent_store_item_cols, item);
}


ngx_int_t
ngx_http_agent_sqlite_item_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *ns, ngx_str_t *key)
{
    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_ITEM_DELETE, "nss", owner,
                                 ns, key)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return sqlite3_changes(ngx_http_agent_sqlite_db) ? NGX_OK : NGX_DECLINED;
}


ngx_int_t
ngx_http_agent_sqlite_item_search(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q, ngx_array_t *items)
{
    ngx_str_t      match;
    sqlite3_stmt  *stmt;

    if (q->vector.len) {
        return ngx_http_agent_sqlite_near(sc, q, items);
    }

    if (ngx_http_agent_sqlite_items_match(sc->pool, &q->query, &match)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    stmt = ngx_http_agent_sqlite_bound(match.len
                                       ? NGX_HTTP_AGENT_SQL_ITEM_QUERY
                                       : NGX_HTTP_AGENT_SQL_ITEM_SEARCH,
                                       "nninii", &q->owner, &q->prefix,
                                       q->now, &q->filter, (int64_t) q->limit,
                                       (int64_t) q->offset);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    if (match.len) {
        ngx_http_agent_sqlite_bind(stmt, 7, &match);
    }

    return ngx_http_agent_sqlite_rows(sc->pool, stmt,
                                      &ngx_http_agent_store_item_cols, items);
}


ngx_int_t
ngx_http_agent_sqlite_item_namespaces(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q, ngx_array_t *namespaces)
{
    int            rc;
    ngx_str_t     *ns;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_ITEM_NAMESPACES,
                                       "nnini", &q->owner, &q->prefix, q->now,
                                       &q->suffix, (int64_t) q->limit);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

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
