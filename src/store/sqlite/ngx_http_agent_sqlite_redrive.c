
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"


/*
 * Runs whose worker died (turn_redrive.c), found by sqlite_look.c: a run
 * still "running" whose thread's lease is its own and ran out, or is held
 * by a process of this host that is gone.  A claim takes the lease over
 * only from the holder and the expiry read (a compare and swap: of the
 * workers that saw the run lost, one claims it), and counts the attempt,
 * in the caller's transaction.
 */


ngx_int_t
ngx_http_agent_sqlite_run_claim(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_lost_t *lost, ngx_msec_t hold,
    ngx_http_agent_run_row_t *row)
{
    int            rc;
    ngx_int_t      ok;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_RUN_CLAIM_LEASE);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, &lost->run_id);
    ngx_http_agent_sqlite_bind(stmt, 2, &lost->thread_id);
    sqlite3_bind_int64(stmt, 3, ngx_pid);
    ngx_http_agent_sqlite_bind(stmt, 4, &ngx_http_agent_store_host);
    sqlite3_bind_int64(stmt, 5, ngx_http_agent_store_ms() + hold);
    sqlite3_bind_int64(stmt, 6, lost->pid);
    sqlite3_bind_int64(stmt, 7, lost->expires);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    if (sqlite3_changes(ngx_http_agent_sqlite_db) != 1) {
        return NGX_DECLINED;
    }

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_RUN_CLAIM_COUNT);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, &lost->run_id);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_RUN_CLAIMED);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, &lost->run_id);

    rc = sqlite3_step(stmt);

    if (rc != SQLITE_ROW) {
        ok = ngx_http_agent_sqlite_done(stmt, rc);
        return ok == NGX_OK ? NGX_DECLINED : NGX_ERROR;
    }

    ngx_memzero(row, sizeof(ngx_http_agent_run_row_t));

    ok = NGX_OK;

    if (ngx_http_agent_sqlite_col(sc->pool, stmt, 0, &row->run_id) != NGX_OK
        || ngx_http_agent_sqlite_col(sc->pool, stmt, 1, &row->thread_id)
           != NGX_OK
        || ngx_http_agent_sqlite_col(sc->pool, stmt, 2, &row->assistant_id)
           != NGX_OK
        || ngx_http_agent_sqlite_col(sc->pool, stmt, 3, &row->status)
           != NGX_OK
        || ngx_http_agent_sqlite_col(sc->pool, stmt, 4, &row->metadata)
           != NGX_OK
        || ngx_http_agent_sqlite_col(sc->pool, stmt, 5, &row->kwargs)
           != NGX_OK
        || ngx_http_agent_sqlite_col(sc->pool, stmt, 6,
                                     &row->multitask_strategy)
           != NGX_OK
        || ngx_http_agent_sqlite_col(sc->pool, stmt, 7, &row->created_at)
           != NGX_OK
        || ngx_http_agent_sqlite_col(sc->pool, stmt, 8, &row->updated_at)
           != NGX_OK
        || ngx_http_agent_sqlite_col(sc->pool, stmt, 10, &row->origin)
           != NGX_OK
        || ngx_http_agent_sqlite_col(sc->pool, stmt, 11, &row->checkpoint)
           != NGX_OK
        || ngx_http_agent_sqlite_col(sc->pool, stmt, 12, &row->owner)
           != NGX_OK
        || ngx_http_agent_sqlite_col(sc->pool, stmt, 14, &row->limit_keys)
           != NGX_OK
        || ngx_http_agent_sqlite_col(sc->pool, stmt, 15, &row->secret)
           != NGX_OK)
    {
        ok = NGX_ERROR;
    }

    row->attempts = sqlite3_column_int64(stmt, 9);
    row->last_event = sqlite3_column_int64(stmt, 13);

    sqlite3_reset(stmt);

    /*
     * the events kept of the step that was cut (its tokens) go: it runs
     * again, and a join would show both; new ones follow last_event
     */

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_RUN_CLAIM_CUT);

    if (ok != NGX_OK || stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, &lost->run_id);

    return ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt));
}
