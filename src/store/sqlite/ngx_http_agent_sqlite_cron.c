
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"


/*
 * The LangGraph API's crons: a row each, its schedule and run payload in
 * its document, its next run in seconds (indexed while it is enabled).
 * A tick is claimed by moving the next run from the time read, in a
 * write transaction: of all the workers that saw it due, one moves it.
 */


static ngx_int_t ngx_http_agent_sqlite_cron_rows(
    ngx_http_agent_store_call_t *sc, sqlite3_stmt *stmt, ngx_array_t *rows);
static void ngx_http_agent_sqlite_cron_row(ngx_pool_t *pool,
    sqlite3_stmt *stmt, ngx_http_agent_cron_row_t *row);
static ngx_int_t ngx_http_agent_sqlite_cron_write(
    ngx_http_agent_store_call_t *sc, sqlite3_stmt *stmt);


ngx_int_t
ngx_http_agent_sqlite_cron_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_cron_row_t *row)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_CRON_PUT);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, &row->cron_id);
    ngx_http_agent_sqlite_bind(stmt, 2, &row->owner);
    ngx_http_agent_sqlite_bind(stmt, 3, &row->assistant_id);
    ngx_http_agent_sqlite_bind(stmt, 4, &row->thread_id);
    ngx_http_agent_sqlite_bind(stmt, 5, &row->origin);
    ngx_http_agent_sqlite_bind(stmt, 6, &row->doc);
    sqlite3_bind_int64(stmt, 7, row->next_run);
    sqlite3_bind_int(stmt, 8, row->enabled ? 1 : 0);
    ngx_http_agent_sqlite_bind(stmt, 9, &row->created_at);
    ngx_http_agent_sqlite_bind(stmt, 10, &row->updated_at);
    ngx_http_agent_sqlite_bind(stmt, 11, row->limit_keys.len ? &row->limit_keys
                                                            : NULL);

    return ngx_http_agent_sqlite_cron_write(sc, stmt);
}


ngx_int_t
ngx_http_agent_sqlite_cron_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, ngx_http_agent_cron_row_t *row)
{
    int            rc;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_CRON_GET);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, id);
    ngx_http_agent_sqlite_bind(stmt, 2, owner);

    rc = sqlite3_step(stmt);

    if (rc == SQLITE_ROW) {
        ngx_http_agent_sqlite_cron_row(sc->pool, stmt, row);
        sqlite3_reset(stmt);
        return NGX_OK;
    }

    return ngx_http_agent_sqlite_done(stmt, rc) == NGX_OK ? NGX_DECLINED
                                                         : NGX_ERROR;
}


ngx_int_t
ngx_http_agent_sqlite_cron_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_array_t *rows)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_CRON_LIST);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, owner);

    return ngx_http_agent_sqlite_cron_rows(sc, stmt, rows);
}


ngx_int_t
ngx_http_agent_sqlite_cron_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_CRON_DELETE);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, id);
    ngx_http_agent_sqlite_bind(stmt, 2, owner);

    return ngx_http_agent_sqlite_cron_write(sc, stmt);
}


ngx_int_t
ngx_http_agent_sqlite_cron_due(ngx_http_agent_store_call_t *sc, int64_t now,
    ngx_array_t *rows)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_CRON_DUE);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    sqlite3_bind_int64(stmt, 1, now);

    return ngx_http_agent_sqlite_cron_rows(sc, stmt, rows);
}


ngx_int_t
ngx_http_agent_sqlite_cron_claim(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t was, int64_t next)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_CRON_CLAIM);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, id);
    sqlite3_bind_int64(stmt, 2, was);
    sqlite3_bind_int64(stmt, 3, next);

    return ngx_http_agent_sqlite_cron_write(sc, stmt);
}


/* one statement in its own write transaction: NGX_DECLINED, no row */

static ngx_int_t
ngx_http_agent_sqlite_cron_write(ngx_http_agent_store_call_t *sc,
    sqlite3_stmt *stmt)
{
    ngx_int_t   rc;
    ngx_uint_t  changed;

    rc = ngx_http_agent_sqlite_begin(sc);
    if (rc != NGX_OK) {
        sqlite3_reset(stmt);
        sqlite3_clear_bindings(stmt);
        return rc;
    }

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        ngx_http_agent_sqlite_rollback(sc);
        return NGX_ERROR;
    }

    changed = sqlite3_changes(ngx_http_agent_sqlite_db);

    rc = ngx_http_agent_sqlite_commit(sc);
    if (rc != NGX_OK) {
        return rc;
    }

    return changed ? NGX_OK : NGX_DECLINED;
}


static ngx_int_t
ngx_http_agent_sqlite_cron_rows(ngx_http_agent_store_call_t *sc,
    sqlite3_stmt *stmt, ngx_array_t *rows)
{
    int                         rc;
    size_t                      used;
    ngx_http_agent_cron_row_t  *row;

    used = 0;

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW
           && ngx_http_agent_sqlite_room(stmt, &used))
    {
        row = ngx_array_push(rows);
        if (row == NULL) {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }

        ngx_http_agent_sqlite_cron_row(sc->pool, stmt, row);
    }

    return ngx_http_agent_sqlite_done(stmt, rc);
}


static void
ngx_http_agent_sqlite_cron_row(ngx_pool_t *pool, sqlite3_stmt *stmt,
    ngx_http_agent_cron_row_t *row)
{
    ngx_memzero(row, sizeof(ngx_http_agent_cron_row_t));

    (void) ngx_http_agent_sqlite_col(pool, stmt, 0, &row->cron_id);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 1, &row->owner);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 2, &row->assistant_id);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 3, &row->thread_id);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 4, &row->origin);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 5, &row->doc);
    row->next_run = sqlite3_column_int64(stmt, 6);
    row->enabled = sqlite3_column_int(stmt, 7) ? 1 : 0;
    (void) ngx_http_agent_sqlite_col(pool, stmt, 8, &row->created_at);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 9, &row->updated_at);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 10, &row->limit_keys);
}
