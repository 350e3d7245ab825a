
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


static ngx_int_t ngx_http_agent_sqlite_cron_write(
    ngx_http_agent_store_call_t *sc, sqlite3_stmt *stmt);


ngx_int_t
ngx_http_agent_sqlite_cron_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_cron_row_t *row)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_CRON_PUT,
                                       "ssssssiissn", &row->cron_id,
                                       &row->owner, &row->assistant_id,
                                       &row->thread_id, &row->origin,
                                       &row->doc, row->next_run,
                                       (int64_t) (row->enabled ? 1 : 0),
                                       &row->created_at, &row->updated_at,
                                       &row->limit_keys);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_cron_write(sc, stmt);
}


ngx_int_t
ngx_http_agent_sqlite_cron_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, ngx_http_agent_cron_row_t *row)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_CRON_GET, "ss", id,
                                       owner);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_one(sc->pool, stmt,
                                     &ngx_http_agent_store_cron_cols, row);
}


ngx_int_t
ngx_http_agent_sqlite_cron_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_array_t *rows)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_CRON_LIST, "s",
                                       owner);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_rows(sc->pool, stmt,
                                      &ngx_http_agent_store_cron_cols, rows);
}


ngx_int_t
ngx_http_agent_sqlite_cron_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_CRON_DELETE, "ss",
                                       id, owner);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_cron_write(sc, stmt);
}


ngx_int_t
ngx_http_agent_sqlite_cron_due(ngx_http_agent_store_call_t *sc, int64_t now,
    ngx_array_t *rows)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_CRON_DUE, "i", now);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_rows(sc->pool, stmt,
                                      &ngx_http_agent_store_cron_cols, rows);
}


ngx_int_t
ngx_http_agent_sqlite_cron_claim(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t was, int64_t next)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_CRON_CLAIM, "sii",
                                       id, was, next);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

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
