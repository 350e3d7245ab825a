
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
    ngx_int_t      rc;
    sqlite3_stmt  *stmt;

    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_RUN_CLAIM_LEASE,
                                 "ssisiii", &lost->run_id, &lost->thread_id,
                                 (int64_t) ngx_pid, &ngx_http_agent_store_host,
                                 ngx_http_agent_store_ms() + hold,
                                 (int64_t) lost->pid, lost->expires)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (sqlite3_changes(ngx_http_agent_sqlite_db) != 1) {
        return NGX_DECLINED;
    }

    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_RUN_CLAIM_COUNT, "s",
                                 &lost->run_id)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_RUN_CLAIMED, "s",
                                       &lost->run_id);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    rc = ngx_http_agent_sqlite_one(sc->pool, stmt,
                                   &ngx_http_agent_store_run_cols, row);
    if (rc != NGX_OK) {
        return rc;
    }

    /*
     * the events kept of the step that was cut (its tokens) go: it runs
     * again, and a join would show both; new ones follow last_event
     */

    return ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_RUN_CLAIM_CUT, "s",
                                    &lost->run_id);
}
