
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"
#include "ngx_http_agent_util.h"


/*
 * Sessions, and the turn's lease lock on a session: a run id and an expiry
 * in the session's row, renewed while the turn runs, taken over once it
 * has expired (a worker killed mid-turn), released when the turn ends.
 */


typedef struct {
    ngx_str_t                     *id;
    ngx_str_t                     *run_id;
    ngx_msec_t                     lease;
} ngx_http_agent_sqlite_lock_args_t;


static ngx_int_t ngx_http_agent_store_unlock_now(ngx_str_t *id,
    ngx_str_t *run_id, int64_t gen);
static ngx_int_t ngx_http_agent_sqlite_renew_try(
    ngx_http_agent_store_call_t *sc, void *data);
static ngx_int_t ngx_http_agent_sqlite_leases_try(
    ngx_http_agent_store_call_t *sc, void *data);
static ngx_int_t ngx_http_agent_sqlite_unlock_try(
    ngx_http_agent_store_call_t *sc, void *data);


ngx_int_t
ngx_http_agent_sqlite_session_create(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *title, ngx_str_t *metadata, ngx_str_t *owner,
    ngx_http_agent_session_t *s)
{
    ngx_int_t      rc;
    ngx_uint_t     wait;
    sqlite3_stmt  *stmt;

    ngx_memzero(s, sizeof(ngx_http_agent_session_t));

    /* the LangGraph API's client may name its thread */
    if (ngx_http_agent_store_made(sc->pool, id, &s->id, &s->created_at)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    s->updated_at = s->created_at;
    s->title = *title;
    s->metadata = *metadata;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_SESSION_INSERT,
                                       "sssss", &s->id, title,
                                       metadata->len ? metadata : NULL,
                                       &s->created_at, owner);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    if (owner) {
        s->owner = *owner;
    }

    /*
     * another worker's write holds the file: the request waits on a timer
     * and makes its pass again, as a turn's begin does (not a 500 after
     * the busy handler's spin)
     */

    wait = ngx_http_agent_sqlite_can_wait(sc, 1);

    rc = ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt));

    if (!wait) {
        return rc;
    }

    return ngx_http_agent_sqlite_busy(sc, rc, NULL, NULL, 0);
}


ngx_int_t
ngx_http_agent_sqlite_session_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_http_agent_session_t *s)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_SESSION_GET, "s",
                                       id);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_one(sc->pool, stmt,
                                     &ngx_http_agent_store_session_cols, s);
}


ngx_int_t
ngx_http_agent_sqlite_session_list(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_session_query_t *q, ngx_array_t *sessions)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_SESSION_LIST,
                                       "iissi", (int64_t) q->limit,
                                       (int64_t) q->offset, q->owner,
                                       q->metadata,
                                       (int64_t) (q->asc ? 1 : 0));
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_rows(sc->pool, stmt,
                                      &ngx_http_agent_store_session_cols,
                                      sessions);
}


ngx_int_t
ngx_http_agent_sqlite_session_count(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_session_query_t *q, int64_t *count)
{
    int            rc;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_SESSION_COUNT, "ss",
                                       q->owner, q->metadata);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    rc = sqlite3_step(stmt);

    if (rc == SQLITE_ROW) {
        *count = sqlite3_column_int64(stmt, 0);
        rc = sqlite3_step(stmt);
    }

    return ngx_http_agent_sqlite_done(stmt, rc);
}


ngx_int_t
ngx_http_agent_sqlite_session_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id)
{
    int                         changes;
    ngx_uint_t                  i;
    ngx_array_t                 resources;
    ngx_http_agent_resource_t  *res;

    static ngx_uint_t  deletes[] = {
        NGX_HTTP_AGENT_SQL_MESSAGES_DELETE,
        NGX_HTTP_AGENT_SQL_CHECKPOINTS_DELETE,
        NGX_HTTP_AGENT_SQL_RESOURCES_DELETE,
        NGX_HTTP_AGENT_SQL_RUN_EVENTS_DELETE,
        NGX_HTTP_AGENT_SQL_RUNS_DELETE,
        NGX_HTTP_AGENT_SQL_CRONS_DELETE
    };

    if (ngx_array_init(&resources, sc->pool, 4,
                       sizeof(ngx_http_agent_resource_t))
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (ngx_http_agent_sqlite_resource_list(sc, id, &resources) != NGX_OK) {
        return NGX_ERROR;
    }

    if (ngx_http_agent_sqlite_exec(NGX_HTTP_AGENT_SQL_BEGIN) != NGX_OK) {
        return NGX_ERROR;
    }

    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_SESSION_DELETE, "s", id)
        != NGX_OK)
    {
        goto failed;
    }

    changes = sqlite3_changes(ngx_http_agent_sqlite_db);

    /* the session's rows in every table, in the same transaction */

    for (i = 0; i < sizeof(deletes) / sizeof(deletes[0]); i++) {
        if (ngx_http_agent_sqlite_do(deletes[i], "s", id) != NGX_OK) {
            goto failed;
        }
    }

    if (ngx_http_agent_sqlite_exec(NGX_HTTP_AGENT_SQL_COMMIT) != NGX_OK) {
        goto failed;
    }

    /* the rows are gone: the files go after them */

    res = resources.elts;

    for (i = 0; i < resources.nelts; i++) {
        if (ngx_delete_file(res[i].path.data) == NGX_FILE_ERROR) {
            ngx_log_error(NGX_LOG_WARN, ngx_http_agent_sqlite_log, ngx_errno,
                          "agent: cannot delete \"%V\"", &res[i].path);
        }
    }

    return changes ? NGX_OK : NGX_DECLINED;

failed:

    (void) ngx_http_agent_sqlite_exec(NGX_HTTP_AGENT_SQL_ROLLBACK);

    return NGX_ERROR;
}


ngx_int_t
ngx_http_agent_sqlite_session_set(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_uint_t field, ngx_str_t *value)
{
    /* the statements in the order of the fields */
    return ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_SESSION_SET_MODEL
                                    + field, "ss", id, value);
}


/*
 * A turn holds its session with a lease: NGX_OK, NGX_BUSY when another
 * turn holds an unexpired lease, NGX_DECLINED when there is no such
 * session.  The running turn renews the lease (each checkpoint, and a
 * timer of the turn); a holder that died, or whose pid was reused after a
 * restart, frees the session when its lease runs out.  A holder of this
 * host and pid namespace whose process is gone frees it at once; on any
 * other host (or pid namespace) a pid proves nothing, and only the lease
 * decides.
 */

ngx_int_t
ngx_http_agent_sqlite_lock(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_str_t *run_id, ngx_msec_t lease)
{
    int            rc;
    int64_t        now;
    ngx_pid_t      pid;
    ngx_str_t      owner;
    sqlite3_stmt  *stmt;
    u_char         buf[64];

    now = ngx_http_agent_store_ms();

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_LOCK);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, id);
    ngx_http_agent_sqlite_bind(stmt, 2, run_id);
    sqlite3_bind_int64(stmt, 3, ngx_pid);
    sqlite3_bind_int64(stmt, 4, now + lease);
    sqlite3_bind_int64(stmt, 5, now);
    ngx_http_agent_sqlite_bind(stmt, 6, &ngx_http_agent_store_host);
    sqlite3_bind_int64(stmt, 7, sc->gen);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    if (sqlite3_changes(ngx_http_agent_sqlite_db) == 1) {
        return NGX_OK;
    }

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_LOCK_OWNER);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, id);

    rc = sqlite3_step(stmt);

    if (rc != SQLITE_ROW) {
        (void) ngx_http_agent_sqlite_done(stmt, rc);
        return rc == SQLITE_DONE ? NGX_DECLINED : NGX_ERROR;
    }

    owner.len = sqlite3_column_bytes(stmt, 0);
    pid = (ngx_pid_t) sqlite3_column_int64(stmt, 1);

    if (owner.len > sizeof(buf) || sqlite3_column_text(stmt, 0) == NULL
        || !ngx_http_agent_store_holder_gone(id,
                                  (u_char *) sqlite3_column_text(stmt, 2),
                                  sqlite3_column_bytes(stmt, 2), pid))
    {
        sqlite3_reset(stmt);
        return NGX_BUSY;
    }

    owner.data = buf;
    ngx_memcpy(buf, sqlite3_column_text(stmt, 0), owner.len);
    sqlite3_reset(stmt);

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_LOCK_STEAL);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, id);
    ngx_http_agent_sqlite_bind(stmt, 2, run_id);
    sqlite3_bind_int64(stmt, 3, ngx_pid);
    ngx_http_agent_sqlite_bind(stmt, 4, &owner);
    sqlite3_bind_int64(stmt, 5, now + lease);
    ngx_http_agent_sqlite_bind(stmt, 6, &ngx_http_agent_store_host);
    sqlite3_bind_int64(stmt, 7, sc->gen);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    return sqlite3_changes(ngx_http_agent_sqlite_db) == 1 ? NGX_OK : NGX_BUSY;
}


/* the SQLite store answers at once: the calls one after the other */

ngx_int_t
ngx_http_agent_sqlite_session_open(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *owner, ngx_http_agent_session_t *s,
    ngx_str_t *run_id, ngx_msec_t lease, ngx_int_t images_keep,
    ngx_http_agent_checkpoint_t *cp, ngx_array_t *messages,
    ngx_array_t *resources)
{
    ngx_int_t  rc;

    if (s) {
        rc = ngx_http_agent_sqlite_session_get(sc, id, s);
        if (rc != NGX_OK) {
            return rc;
        }

        /* another owner's session is an unknown one: not even locked */
        if (!ngx_http_agent_store_owns(owner, s)) {
            return NGX_DECLINED;
        }
    }

    rc = ngx_http_agent_sqlite_lock(sc, id, run_id, lease);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_sqlite_checkpoint_get(sc, id, NULL, cp);

    if (rc == NGX_OK) {
        rc = ngx_http_agent_sqlite_messages_kept(sc, id, cp->msg_count,
                                                 images_keep, messages);
    }

    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_resource_list(sc, id, resources);
}


/* NGX_DECLINED: the lease is no longer this run's (it ran out, was taken) */

ngx_int_t
ngx_http_agent_sqlite_lock_renew(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_msec_t lease)
{
    ngx_http_agent_sqlite_lock_args_t  a;

    a.id = id;
    a.run_id = run_id;
    a.lease = lease;

    return ngx_http_agent_sqlite_renew_try(sc, &a);
}


static ngx_int_t
ngx_http_agent_sqlite_renew_try(ngx_http_agent_store_call_t *sc, void *data)
{
    ngx_http_agent_sqlite_lock_args_t *a = data;

    ngx_int_t      rc;
    ngx_uint_t     wait;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_RENEW);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, a->id);
    ngx_http_agent_sqlite_bind(stmt, 2, a->run_id);
    sqlite3_bind_int64(stmt, 3, ngx_http_agent_store_ms() + a->lease);
    sqlite3_bind_int64(stmt, 4, sc->gen);

    wait = ngx_http_agent_sqlite_can_wait(sc, 0);

    rc = ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt));

    if (rc == NGX_OK) {
        rc = sqlite3_changes(ngx_http_agent_sqlite_db) == 1 ? NGX_OK
                                                           : NGX_DECLINED;
    }

    if (!wait) {
        return rc;
    }

    return ngx_http_agent_sqlite_busy(sc, rc, ngx_http_agent_sqlite_renew_try,
                                      a, sizeof(*a));
}


/*
 * A worker's leases in one write transaction (store_leases.c): the rows
 * it returns are those renewed.  A busy file is waited out as for one
 */

ngx_int_t
ngx_http_agent_sqlite_leases_renew(ngx_http_agent_store_call_t *sc,
    ngx_array_t *leases)
{
    return ngx_http_agent_sqlite_leases_try(sc, leases);
}


static ngx_int_t
ngx_http_agent_sqlite_leases_try(ngx_http_agent_store_call_t *sc, void *data)
{
    ngx_array_t *leases = data;

    int            rc;
    u_char        *p;
    ngx_int_t      rv;
    ngx_str_t      json;
    ngx_uint_t     wait;
    sqlite3_stmt  *stmt;

    if (ngx_http_agent_store_leases_json(sc->pool, leases, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_LEASES_RENEW);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, &json);

    wait = ngx_http_agent_sqlite_can_wait(sc, 0);

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        p = (u_char *) sqlite3_column_text(stmt, 0);

        if (p) {
            ngx_http_agent_store_lease_renewed(leases, p,
                                           sqlite3_column_bytes(stmt, 0));
        }
    }

    rv = ngx_http_agent_sqlite_done(stmt, rc);

    /* a busy file's next try writes it again */
    (void) ngx_pfree(sc->pool, json.data);

    if (!wait) {
        return rv;
    }

    /* the leases stay the caller's while it waits */
    return ngx_http_agent_sqlite_busy(sc, rv,
                                      ngx_http_agent_sqlite_leases_try,
                                      leases, 0);
}


/*
 * An unlock that fails is tried again: a caller that waits for it from a
 * timer soon, one that does not each second (unlock_later())
 */

ngx_int_t
ngx_http_agent_sqlite_unlock(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_str_t *run_id)
{
    ngx_http_agent_sqlite_lock_args_t  a;

    a.id = id;
    a.run_id = run_id;
    a.lease = 0;

    return ngx_http_agent_sqlite_unlock_try(sc, &a);
}


static ngx_int_t
ngx_http_agent_sqlite_unlock_try(ngx_http_agent_store_call_t *sc, void *data)
{
    ngx_http_agent_sqlite_lock_args_t *a = data;

    ngx_int_t  rc;

    if (ngx_http_agent_sqlite_can_wait(sc, 0)) {
        rc = ngx_http_agent_store_unlock_now(a->id, a->run_id, sc->gen);
        rc = ngx_http_agent_sqlite_busy(sc, rc,
                                        ngx_http_agent_sqlite_unlock_try,
                                        a, sizeof(*a));
        if (rc != NGX_ERROR) {
            return rc;
        }

    } else if (ngx_http_agent_store_unlock_now(a->id, a->run_id, sc->gen)
               == NGX_OK)
    {
        return NGX_OK;
    }

    ngx_http_agent_store_unlock_later(a->id, a->run_id, sc->gen,
                                      ngx_http_agent_store_unlock_now,
                                      ngx_http_agent_sqlite_log);
    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_store_unlock_now(ngx_str_t *id, ngx_str_t *run_id, int64_t gen)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_UNLOCK);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, id);
    ngx_http_agent_sqlite_bind(stmt, 2, run_id);
    sqlite3_bind_int64(stmt, 3, gen);

    return ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt));
}


/* the messages with seq below upto; all: tool calls and results too */


ngx_int_t
ngx_http_agent_sqlite_resource_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_array_t *resources)
{
    int                         rc;
    sqlite3_stmt               *stmt;
    ngx_http_agent_resource_t  *res;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_RESOURCE_LIST, "s",
                                       session_id);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    /* all of them, past the answer budget: a delete removes their files */

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        res = ngx_array_push(resources);

        if (res == NULL
            || ngx_http_agent_sqlite_row(sc->pool, stmt,
                                         &ngx_http_agent_store_resource_cols,
                                         res)
               != NGX_OK)
        {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }
    }

    return ngx_http_agent_sqlite_done(stmt, rc);
}


/* a session copied as to, its rows with it, in one transaction */

ngx_int_t
ngx_http_agent_sqlite_session_copy(ngx_http_agent_store_call_t *sc,
    ngx_str_t *from, ngx_str_t *to, ngx_str_t *now)
{
    ngx_int_t   rc;
    ngx_uint_t  i;

    static ngx_uint_t  copies[] = {
        NGX_HTTP_AGENT_SQL_COPY_MESSAGES,
        NGX_HTTP_AGENT_SQL_COPY_CHECKPOINTS,
        NGX_HTTP_AGENT_SQL_COPY_RUNS
    };

    rc = ngx_http_agent_sqlite_begin(sc);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_COPY_SESSION, "sss", from,
                                 to, now)
        != NGX_OK)
    {
        goto failed;
    }

    if (sqlite3_changes(ngx_http_agent_sqlite_db) == 0) {
        ngx_http_agent_sqlite_rollback(sc);
        return NGX_DECLINED;
    }

    for (i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
        if (ngx_http_agent_sqlite_do(copies[i], "ss", from, to) != NGX_OK) {
            goto failed;
        }
    }

    return ngx_http_agent_sqlite_commit(sc);

failed:

    ngx_http_agent_sqlite_rollback(sc);

    return NGX_ERROR;
}
