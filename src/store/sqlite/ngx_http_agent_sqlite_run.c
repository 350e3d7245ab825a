
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"
#include "ngx_http_agent_store_run.h"


/*
 * The LangGraph API's runs: one row per run of a thread (its status, what
 * it was asked), a cancel another worker asks for, and the events of a
 * resumable run, so that any worker can replay them to a client that
 * joins.  The thread's turn lock (sessions.run_id) is the run's own id.
 */


static ngx_int_t ngx_http_agent_sqlite_run_forget(ngx_str_t *run_id);


ngx_int_t
ngx_http_agent_sqlite_run_insert(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_row_t *row, ngx_uint_t events)
{
    ngx_uint_t  i;

    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_RUN_INSERT,
                                 "ssssnnssinnnn", &row->run_id,
                                 &row->thread_id, &row->assistant_id,
                                 &row->status, &row->metadata, &row->kwargs,
                                 &row->multitask_strategy, &row->created_at,
                                 (int64_t) events, &row->checkpoint,
                                 &row->origin, &row->limit_keys, &row->secret)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (row->expire.len == 0) {
        return NGX_OK;
    }

    /*
     * the kept events of runs long ended go as runs start, 64 at a time:
     * no timer of their own, and bounded work per run
     */

    for (i = 0; i < 2; i++) {
        if (ngx_http_agent_sqlite_do(i == 0
                                     ? NGX_HTTP_AGENT_SQL_RUN_EVENTS_EXPIRE
                                     : NGX_HTTP_AGENT_SQL_RUN_EVENTS_EXPIRED,
                                     "s", &row->expire)
            != NGX_OK)
        {
            break;
        }
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_sqlite_run_status(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, const char *status)
{
    u_char     now[32];
    ngx_str_t  st, at;

    st.data = (u_char *) status;
    st.len = ngx_strlen(status);
    at.data = now;
    at.len = ngx_http_agent_store_now(now) - now;

    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_RUN_STATUS, "sssi",
                                 run_id, &st, &at, (int64_t) sc->gen)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (ngx_strcmp(status, "pending") == 0
        || ngx_strcmp(status, "running") == 0)
    {
        return NGX_OK;
    }

    /* fenced: the run was claimed since, its end is its claimant's */
    if (sc->gen && sqlite3_changes(ngx_http_agent_sqlite_db) == 0) {
        return NGX_DECLINED;
    }

    /* at its end, its pending writes go (turn_writes.c) */

    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_WRITES_DROP, "s", run_id)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /*
     * and its thread, in the same transaction as its status: a run is
     * never "running" on a thread it does not hold (turn_redrive.c would
     * end it as an orphan)
     */

    return ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_RUN_RELEASE, "s",
                                    run_id);
}


/* NGX_DECLINED: no such run of that thread */

ngx_int_t
ngx_http_agent_sqlite_run_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id, ngx_http_agent_run_row_t *row)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_RUN_GET, "ss",
                                       run_id, thread_id);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_one(sc->pool, stmt,
                                     &ngx_http_agent_store_run_cols, row);
}


ngx_int_t
ngx_http_agent_sqlite_run_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *status, ngx_int_t limit, ngx_int_t offset,
    ngx_array_t *rows)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_RUN_LIST, "siis",
                                       thread_id, (int64_t) limit,
                                       (int64_t) offset, status);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_rows(sc->pool, stmt,
                                      &ngx_http_agent_store_run_cols, rows);
}


/* a cancel for the worker that runs it; NGX_DECLINED: it does not run */

ngx_int_t
ngx_http_agent_sqlite_run_cancel(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_str_t *action, ngx_uint_t now)
{
    u_char     buf[32];
    ngx_str_t  at;

    /* a run ended now: its kept events are not let go under its worker */
    at.data = buf;
    at.len = ngx_http_agent_store_now(buf) - buf;

    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_RUN_CANCEL, "ssis",
                                 run_id, action, (int64_t) now, &at)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return sqlite3_changes(ngx_http_agent_sqlite_db) ? NGX_OK : NGX_DECLINED;
}


/* NGX_OK and the action: a cancel was asked for; NGX_DECLINED: none */

ngx_int_t
ngx_http_agent_sqlite_run_cancelled(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_str_t *action)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_RUN_CANCELLED, "s",
                                       run_id);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_text(sc->pool, stmt, action);
}


ngx_int_t
ngx_http_agent_sqlite_run_event(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, int64_t seq, ngx_str_t *event, ngx_str_t *json)
{
    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_RUN_EVENT_INSERT, "sissi",
                                 run_id, seq, event, json, (int64_t) sc->gen)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /*
     * fenced: the run was claimed since (a kept event made again changes
     * nothing either: only a pending write, always replaced, tells)
     */
    return (sc->gen && seq < 0 && sqlite3_changes(ngx_http_agent_sqlite_db)
                                  == 0)
           ? NGX_DECLINED : NGX_OK;
}


/* at most limit events after seq, in order */

ngx_int_t
ngx_http_agent_sqlite_run_events(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, int64_t after, ngx_uint_t limit,
    ngx_http_agent_store_event_pt handler, void *data)
{
    int            rc;
    ngx_str_t      event, json;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_RUN_EVENTS, "sii",
                                       run_id, after, (int64_t) limit);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        event.data = (u_char *) sqlite3_column_text(stmt, 1);
        event.len = sqlite3_column_bytes(stmt, 1);
        json.data = (u_char *) sqlite3_column_text(stmt, 2);
        json.len = sqlite3_column_bytes(stmt, 2);

        if (handler(data, sqlite3_column_int64(stmt, 0), &event, &json)
            != NGX_OK)
        {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }
    }

    return ngx_http_agent_sqlite_done(stmt, rc);
}


/* NGX_OK and the run that holds the thread; NGX_DECLINED: none does */

ngx_int_t
ngx_http_agent_sqlite_thread_busy(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_THREAD_BUSY, "si",
                                       thread_id, ngx_http_agent_store_ms());
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_text(sc->pool, stmt, run_id);
}


/*
 * A run rolled back: the thread as it was before it (the checkpoints and
 * messages it added gone, the counters recounted), and the run forgotten,
 * in one transaction.  before: the checkpoint the run started from, or
 * empty for a thread that had none.
 */

ngx_int_t
ngx_http_agent_sqlite_run_rollback(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id, ngx_str_t *before)
{
    ngx_str_t  *from;

    if (ngx_http_agent_sqlite_begin(sc) != NGX_OK) {
        return NGX_ERROR;
    }

    /* the thread's steps take the thread, the run's the run */
    from = before->len ? before : NULL;

    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_ROLLBACK_MESSAGES, "ss",
                                 thread_id, from)
        != NGX_OK
        || ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_ROLLBACK_CHECKPOINTS,
                                    "ss", thread_id, from)
           != NGX_OK
        || ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_ROLLBACK_COUNTS, "s",
                                    thread_id)
           != NGX_OK
        || ngx_http_agent_sqlite_run_forget(run_id) != NGX_OK)
    {
        ngx_http_agent_sqlite_rollback(sc);
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_commit(sc);
}


/* a run forgotten, with its kept events, in one transaction */

ngx_int_t
ngx_http_agent_sqlite_run_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id)
{
    if (ngx_http_agent_sqlite_begin(sc) != NGX_OK) {
        return NGX_ERROR;
    }

    if (ngx_http_agent_sqlite_run_forget(run_id) != NGX_OK) {
        ngx_http_agent_sqlite_rollback(sc);
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_commit(sc);
}


static ngx_int_t
ngx_http_agent_sqlite_run_forget(ngx_str_t *run_id)
{
    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_RUN_EVENTS_DELETE_ONE,
                                 "s", run_id)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_RUN_DELETE, "s",
                                    run_id);
}
