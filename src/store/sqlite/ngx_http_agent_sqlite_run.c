
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


static void ngx_http_agent_store_run_row(ngx_pool_t *pool, sqlite3_stmt *stmt,
    ngx_http_agent_run_row_t *row);


ngx_int_t
ngx_http_agent_sqlite_run_insert(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_row_t *row, ngx_uint_t events)
{
    ngx_uint_t     i;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_RUN_INSERT);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, &row->run_id);
    ngx_http_agent_sqlite_bind(stmt, 2, &row->thread_id);
    ngx_http_agent_sqlite_bind(stmt, 3, &row->assistant_id);
    ngx_http_agent_sqlite_bind(stmt, 4, &row->status);
    ngx_http_agent_sqlite_bind(stmt, 5, row->metadata.len ? &row->metadata
                                                        : NULL);
    ngx_http_agent_sqlite_bind(stmt, 6, row->kwargs.len ? &row->kwargs : NULL);
    ngx_http_agent_sqlite_bind(stmt, 7, &row->multitask_strategy);
    ngx_http_agent_sqlite_bind(stmt, 8, &row->created_at);
    sqlite3_bind_int(stmt, 9, events);
    ngx_http_agent_sqlite_bind(stmt, 10, row->checkpoint.len ? &row->checkpoint
                                                            : NULL);
    ngx_http_agent_sqlite_bind(stmt, 11, row->origin.len ? &row->origin : NULL);
    ngx_http_agent_sqlite_bind(stmt, 12, row->limit_keys.len ? &row->limit_keys
                                                            : NULL);
    ngx_http_agent_sqlite_bind(stmt, 13, row->secret.len ? &row->secret : NULL);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
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
        stmt = ngx_http_agent_sqlite_stmt(i == 0
                                         ? NGX_HTTP_AGENT_SQL_RUN_EVENTS_EXPIRE
                                      : NGX_HTTP_AGENT_SQL_RUN_EVENTS_EXPIRED);
        if (stmt == NULL) {
            break;
        }

        ngx_http_agent_sqlite_bind(stmt, 1, &row->expire);

        if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
            break;
        }
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_sqlite_run_status(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, const char *status)
{
    u_char         now[32];
    ngx_str_t      st, at;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_RUN_STATUS);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    st.data = (u_char *) status;
    st.len = ngx_strlen(status);
    at.data = now;
    at.len = ngx_http_agent_store_now(now) - now;

    ngx_http_agent_sqlite_bind(stmt, 1, run_id);
    ngx_http_agent_sqlite_bind(stmt, 2, &st);
    ngx_http_agent_sqlite_bind(stmt, 3, &at);
    sqlite3_bind_int64(stmt, 4, sc->gen);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
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

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_WRITES_DROP);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, run_id);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    /*
     * and its thread, in the same transaction as its status: a run is
     * never "running" on a thread it does not hold (turn_redrive.c would
     * end it as an orphan)
     */

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_RUN_RELEASE);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, run_id);

    return ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt));
}


static void
ngx_http_agent_store_run_row(ngx_pool_t *pool, sqlite3_stmt *stmt,
    ngx_http_agent_run_row_t *row)
{
    (void) ngx_http_agent_sqlite_col(pool, stmt, 0, &row->run_id);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 1, &row->thread_id);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 2, &row->assistant_id);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 3, &row->status);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 4, &row->metadata);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 5, &row->kwargs);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 6, &row->multitask_strategy);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 7, &row->created_at);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 8, &row->updated_at);
}


/* NGX_DECLINED: no such run of that thread */

ngx_int_t
ngx_http_agent_sqlite_run_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id, ngx_http_agent_run_row_t *row)
{
    int            rc;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_RUN_GET);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, run_id);
    ngx_http_agent_sqlite_bind(stmt, 2, thread_id);

    rc = sqlite3_step(stmt);

    if (rc == SQLITE_ROW) {
        ngx_http_agent_store_run_row(sc->pool, stmt, row);
        sqlite3_reset(stmt);
        return NGX_OK;
    }

    return ngx_http_agent_sqlite_done(stmt, rc) == NGX_OK ? NGX_DECLINED
                                                         : NGX_ERROR;
}


ngx_int_t
ngx_http_agent_sqlite_run_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *status, ngx_int_t limit, ngx_int_t offset,
    ngx_array_t *rows)
{
    int                        rc;
    size_t                     used;
    sqlite3_stmt              *stmt;
    ngx_http_agent_run_row_t  *row;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_RUN_LIST);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, thread_id);
    sqlite3_bind_int64(stmt, 2, limit);
    sqlite3_bind_int64(stmt, 3, offset);
    ngx_http_agent_sqlite_bind(stmt, 4, status);

    used = 0;

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW
           && ngx_http_agent_sqlite_room(stmt, &used))
    {
        row = ngx_array_push(rows);
        if (row == NULL) {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }

        ngx_http_agent_store_run_row(sc->pool, stmt, row);
    }

    return ngx_http_agent_sqlite_done(stmt, rc);
}


/* a cancel for the worker that runs it; NGX_DECLINED: it does not run */

ngx_int_t
ngx_http_agent_sqlite_run_cancel(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_str_t *action, ngx_uint_t now)
{
    u_char         buf[32];
    ngx_str_t      at;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_RUN_CANCEL);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    /* a run ended now: its kept events are not let go under its worker */
    at.data = buf;
    at.len = ngx_http_agent_store_now(buf) - buf;

    ngx_http_agent_sqlite_bind(stmt, 1, run_id);
    ngx_http_agent_sqlite_bind(stmt, 2, action);
    sqlite3_bind_int(stmt, 3, (int) now);
    ngx_http_agent_sqlite_bind(stmt, 4, &at);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    return sqlite3_changes(ngx_http_agent_sqlite_db) ? NGX_OK : NGX_DECLINED;
}


/* NGX_OK and the action: a cancel was asked for; NGX_DECLINED: none */

ngx_int_t
ngx_http_agent_sqlite_run_cancelled(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_str_t *action)
{
    int            rc;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_RUN_CANCELLED);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, run_id);

    rc = sqlite3_step(stmt);

    if (rc == SQLITE_ROW && sqlite3_column_type(stmt, 0) != SQLITE_NULL) {
        rc = ngx_http_agent_sqlite_col(sc->pool, stmt, 0, action);
        sqlite3_reset(stmt);
        return rc == NGX_OK ? NGX_OK : NGX_ERROR;
    }

    return ngx_http_agent_sqlite_done(stmt, rc) == NGX_OK ? NGX_DECLINED
                                                         : NGX_ERROR;
}


ngx_int_t
ngx_http_agent_sqlite_run_event(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, int64_t seq, ngx_str_t *event, ngx_str_t *json)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_RUN_EVENT_INSERT);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, run_id);
    sqlite3_bind_int64(stmt, 2, seq);
    ngx_http_agent_sqlite_bind(stmt, 3, event);
    ngx_http_agent_sqlite_bind(stmt, 4, json);
    sqlite3_bind_int64(stmt, 5, sc->gen);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
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

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_RUN_EVENTS);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, run_id);
    sqlite3_bind_int64(stmt, 2, after);
    sqlite3_bind_int64(stmt, 3, limit);

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
    int            rc;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_THREAD_BUSY);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, thread_id);
    sqlite3_bind_int64(stmt, 2, ngx_http_agent_store_ms());

    rc = sqlite3_step(stmt);

    if (rc == SQLITE_ROW && sqlite3_column_type(stmt, 0) != SQLITE_NULL) {
        rc = ngx_http_agent_sqlite_col(sc->pool, stmt, 0, run_id);
        sqlite3_reset(stmt);
        return rc == NGX_OK ? NGX_OK : NGX_ERROR;
    }

    return ngx_http_agent_sqlite_done(stmt, rc) == NGX_OK ? NGX_DECLINED
                                                         : NGX_ERROR;
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
    ngx_uint_t     i;
    ngx_str_t     *arg2;
    sqlite3_stmt  *stmt;

    static ngx_uint_t  steps[] = {
        NGX_HTTP_AGENT_SQL_ROLLBACK_MESSAGES,
        NGX_HTTP_AGENT_SQL_ROLLBACK_CHECKPOINTS,
        NGX_HTTP_AGENT_SQL_ROLLBACK_COUNTS,
        NGX_HTTP_AGENT_SQL_RUN_EVENTS_DELETE_ONE,
        NGX_HTTP_AGENT_SQL_RUN_DELETE
    };

    if (ngx_http_agent_sqlite_begin(sc) != NGX_OK) {
        return NGX_ERROR;
    }

    for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        stmt = ngx_http_agent_sqlite_stmt(steps[i]);
        if (stmt == NULL) {
            goto failed;
        }

        /* the thread's steps take the thread, the run's the run */
        arg2 = before->len ? before : NULL;

        if (i < 3) {
            ngx_http_agent_sqlite_bind(stmt, 1, thread_id);

            if (i < 2) {
                ngx_http_agent_sqlite_bind(stmt, 2, arg2);
            }

        } else {
            ngx_http_agent_sqlite_bind(stmt, 1, run_id);
        }

        if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
            goto failed;
        }
    }

    return ngx_http_agent_sqlite_commit(sc);

failed:

    ngx_http_agent_sqlite_rollback(sc);
    return NGX_ERROR;
}


/* a run forgotten, with its kept events, in one transaction */

ngx_int_t
ngx_http_agent_sqlite_run_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id)
{
    ngx_uint_t     i;
    sqlite3_stmt  *stmt;

    static ngx_uint_t  steps[] = {
        NGX_HTTP_AGENT_SQL_RUN_EVENTS_DELETE_ONE,
        NGX_HTTP_AGENT_SQL_RUN_DELETE
    };

    if (ngx_http_agent_sqlite_begin(sc) != NGX_OK) {
        return NGX_ERROR;
    }

    for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        stmt = ngx_http_agent_sqlite_stmt(steps[i]);
        if (stmt == NULL) {
            goto failed;
        }

        ngx_http_agent_sqlite_bind(stmt, 1, run_id);

        if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
            goto failed;
        }
    }

    return ngx_http_agent_sqlite_commit(sc);

failed:

    ngx_http_agent_sqlite_rollback(sc);
    return NGX_ERROR;
}
