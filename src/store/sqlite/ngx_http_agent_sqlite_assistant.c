
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"


/*
 * The LangGraph API's assistants: a row per assistant (its owner, its
 * latest and highest versions) and a row per version (its graph and its
 * document: name, description, config, context, metadata).
 */


static ngx_int_t ngx_http_agent_sqlite_assistant_write(
    ngx_http_agent_assistant_row_t *row);
static void ngx_http_agent_sqlite_assistant_row(ngx_pool_t *pool,
    sqlite3_stmt *stmt, ngx_http_agent_assistant_row_t *row);


/* the assistant's row and the version's in one transaction */

ngx_int_t
ngx_http_agent_sqlite_assistant_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_assistant_row_t *row)
{
    ngx_int_t  rc;

    rc = ngx_http_agent_sqlite_begin(sc);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_sqlite_assistant_write(row);

    if (rc != NGX_OK) {
        ngx_http_agent_sqlite_rollback(sc);
        return rc;
    }

    return ngx_http_agent_sqlite_commit(sc);
}


static ngx_int_t
ngx_http_agent_sqlite_assistant_write(ngx_http_agent_assistant_row_t *row)
{
    sqlite3_stmt  *stmt;

    if (row->version == 1) {
        stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_ASSISTANT_CREATE);
        if (stmt == NULL) {
            return NGX_ERROR;
        }

        ngx_http_agent_sqlite_bind(stmt, 1, &row->assistant_id);
        ngx_http_agent_sqlite_bind(stmt, 2, &row->owner);
        ngx_http_agent_sqlite_bind(stmt, 3, &row->graph_id);
        ngx_http_agent_sqlite_bind(stmt, 4, &row->updated_at);

    } else {
        stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_ASSISTANT_BUMP);
        if (stmt == NULL) {
            return NGX_ERROR;
        }

        ngx_http_agent_sqlite_bind(stmt, 1, &row->assistant_id);
        ngx_http_agent_sqlite_bind(stmt, 2, &row->owner);
        sqlite3_bind_int64(stmt, 3, row->version);
        ngx_http_agent_sqlite_bind(stmt, 4, &row->graph_id);
        ngx_http_agent_sqlite_bind(stmt, 5, &row->updated_at);
    }

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    if (sqlite3_changes(ngx_http_agent_sqlite_db) == 0) {
        return NGX_DECLINED;
    }

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_ASSISTANT_VERSION);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, &row->assistant_id);
    sqlite3_bind_int64(stmt, 2, row->version);
    ngx_http_agent_sqlite_bind(stmt, 3, &row->graph_id);
    ngx_http_agent_sqlite_bind(stmt, 4, &row->doc);
    ngx_http_agent_sqlite_bind(stmt, 5, &row->updated_at);

    return ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt));
}


static void
ngx_http_agent_sqlite_assistant_row(ngx_pool_t *pool, sqlite3_stmt *stmt,
    ngx_http_agent_assistant_row_t *row)
{
    ngx_memzero(row, sizeof(ngx_http_agent_assistant_row_t));

    (void) ngx_http_agent_sqlite_col(pool, stmt, 0, &row->assistant_id);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 1, &row->owner);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 2, &row->graph_id);
    row->version = sqlite3_column_int64(stmt, 3);
    row->latest = sqlite3_column_int64(stmt, 4);
    row->versions = sqlite3_column_int64(stmt, 5);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 6, &row->doc);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 7, &row->created_at);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 8, &row->updated_at);
}


/* NGX_DECLINED: no such assistant of that owner, or no such version */

ngx_int_t
ngx_http_agent_sqlite_assistant_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, int64_t version,
    ngx_http_agent_assistant_row_t *row)
{
    int            rc;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_ASSISTANT_GET);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, id);
    ngx_http_agent_sqlite_bind(stmt, 2, owner);
    sqlite3_bind_int64(stmt, 3, version);

    rc = sqlite3_step(stmt);

    if (rc == SQLITE_ROW) {
        ngx_http_agent_sqlite_assistant_row(sc->pool, stmt, row);
        sqlite3_reset(stmt);
        return NGX_OK;
    }

    return ngx_http_agent_sqlite_done(stmt, rc) == NGX_OK ? NGX_DECLINED
                                                         : NGX_ERROR;
}


ngx_int_t
ngx_http_agent_sqlite_assistant_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *graph_id, ngx_str_t *id, ngx_array_t *rows)
{
    int                              rc;
    size_t                           used;
    sqlite3_stmt                    *stmt;
    ngx_http_agent_assistant_row_t  *row;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_ASSISTANT_LIST);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, owner);
    ngx_http_agent_sqlite_bind(stmt, 2, graph_id);
    ngx_http_agent_sqlite_bind(stmt, 3, id);

    used = 0;

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW
           && ngx_http_agent_sqlite_room(stmt, &used))
    {
        row = ngx_array_push(rows);
        if (row == NULL) {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }

        ngx_http_agent_sqlite_assistant_row(sc->pool, stmt, row);
    }

    return ngx_http_agent_sqlite_done(stmt, rc);
}


ngx_int_t
ngx_http_agent_sqlite_assistant_latest(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, int64_t version, ngx_str_t *now)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_ASSISTANT_LATEST);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, id);
    ngx_http_agent_sqlite_bind(stmt, 2, owner);
    sqlite3_bind_int64(stmt, 3, version);
    ngx_http_agent_sqlite_bind(stmt, 4, now);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    return sqlite3_changes(ngx_http_agent_sqlite_db) ? NGX_OK : NGX_DECLINED;
}


ngx_int_t
ngx_http_agent_sqlite_assistant_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id)
{
    ngx_uint_t     gone;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_ASSISTANT_DELETE);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, id);
    ngx_http_agent_sqlite_bind(stmt, 2, owner);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    gone = sqlite3_changes(ngx_http_agent_sqlite_db);

    /* the versions of an assistant no longer there */

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_ASSISTANT_PURGE);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, id);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    return gone ? NGX_OK : NGX_DECLINED;
}
