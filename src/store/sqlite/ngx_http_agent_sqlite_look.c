
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>
#if (NGX_THREADS)
#include <ngx_thread_pool.h>
#endif

#include <sqlite3.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"


/*
 * The take-over check's reads (turn_redrive.c), made by each worker of
 * each host once a second.  They read what is lost, not what runs: a walk
 * of every running run joined to its session read the whole file at each
 * look once the other workers' commits had emptied the cache (32 MiB at
 * 30,000 running runs), on the event loop.
 *
 * - dead holders: the distinct workers of this host that hold a lease,
 *   one step of the index sessions_holder each, then the leases of those
 *   whose process is gone, and only theirs;
 * - expired leases: the start of the index sessions_lease, up to now;
 * - orphans (running runs whose thread is not theirs): a slice of the
 *   running runs a look, from where the last one stopped; a slice that
 *   found some is read again at the next look, which confirms them.
 *
 * They run on the thread pool, on a handle of their own (a read in WAL
 * mode waits on no writer), and their caller hears of them as of a
 * PostgreSQL answer; without a pool, on the event loop.
 */


#define NGX_HTTP_AGENT_SQLITE_LOOK_ROWS   8
#define NGX_HTTP_AGENT_SQLITE_LOOK_PIDS   64
#define NGX_HTTP_AGENT_SQLITE_LOOK_SLICE  256
#define NGX_HTTP_AGENT_SQLITE_LOOK_ID     512


enum {
    NGX_HTTP_AGENT_SQLITE_LOOK_EXPIRED = 0,
    NGX_HTTP_AGENT_SQLITE_LOOK_HOLDERS,
    NGX_HTTP_AGENT_SQLITE_LOOK_HELD,
    NGX_HTTP_AGENT_SQLITE_LOOK_RUNNING,
    NGX_HTTP_AGENT_SQLITE_LOOK_LAST
};


typedef struct {
    sqlite3                      *db;
    sqlite3_stmt                 *stmt[NGX_HTTP_AGENT_SQLITE_LOOK_LAST];
    ngx_uint_t                    orphans;   /* which look */
    int64_t                       now;
    ngx_pool_t                   *pool;      /* the rows' */
    ngx_array_t                  *rows;
    ngx_int_t                     rc;
    int                           err;       /* SQLite's, for the log */
    ngx_http_agent_store_call_t  *sc;        /* the call that waits */
    ngx_uint_t                    held;      /* the slice read again */
    size_t                        cursor_len;
    size_t                        last_len;
    u_char                        cursor[NGX_HTTP_AGENT_SQLITE_LOOK_ID];
    u_char                        last[NGX_HTTP_AGENT_SQLITE_LOOK_ID];
} ngx_http_agent_sqlite_look_t;


static ngx_int_t ngx_http_agent_sqlite_look(ngx_http_agent_store_call_t *sc,
    ngx_array_t *out, ngx_uint_t orphans);
static void ngx_http_agent_sqlite_look_run(void *data, ngx_log_t *log);
static ngx_int_t ngx_http_agent_sqlite_look_lost(
    ngx_http_agent_sqlite_look_t *lk);
static ngx_int_t ngx_http_agent_sqlite_look_orphans(
    ngx_http_agent_sqlite_look_t *lk);
static ngx_int_t ngx_http_agent_sqlite_look_rows(
    ngx_http_agent_sqlite_look_t *lk, sqlite3_stmt *stmt);
static sqlite3_stmt *ngx_http_agent_sqlite_look_stmt(
    ngx_http_agent_sqlite_look_t *lk, ngx_uint_t n);
static ngx_int_t ngx_http_agent_sqlite_look_end(
    ngx_http_agent_sqlite_look_t *lk, ngx_log_t *log);
#if (NGX_THREADS)
static void ngx_http_agent_sqlite_look_done(ngx_event_t *ev);
static void ngx_http_agent_sqlite_look_pool(void *data);
#endif


/* a lease's run and holder: ?1 now or this host */
#define NGX_HTTP_AGENT_SQLITE_LOOK_COLS                                       \
    "SELECT r.run_id, r.thread_id, s.run_pid, s.run_host, s.run_expires,"     \
    " r.origin FROM sessions s CROSS JOIN runs r ON r.run_id = s.run_id"      \
    " AND r.thread_id = s.id"


static const char  *ngx_http_agent_sqlite_look_sql[] = {
    /* the leases that ran out, the oldest first: sessions_lease */
    NGX_HTTP_AGENT_SQLITE_LOOK_COLS
    " WHERE s.run_expires < ?1 AND s.run_id IS NOT NULL"
    " AND r.status = 'running' ORDER BY s.run_expires LIMIT ?2",
    /* the distinct holders of this host, a step of sessions_holder each */
    "WITH RECURSIVE p(pid) AS (SELECT (SELECT run_pid FROM sessions"
    " WHERE run_host = ?1 AND run_id IS NOT NULL ORDER BY run_pid LIMIT 1)"
    " UNION ALL SELECT (SELECT run_pid FROM sessions WHERE run_host = ?1"
    " AND run_id IS NOT NULL AND run_pid > p.pid ORDER BY run_pid LIMIT 1)"
    " FROM p WHERE p.pid IS NOT NULL)"
    " SELECT pid FROM p WHERE pid IS NOT NULL LIMIT ?2",
    /* the leases of one holder that is gone */
    NGX_HTTP_AGENT_SQLITE_LOOK_COLS
    " WHERE s.run_host = ?1 AND s.run_pid = ?2 AND s.run_id IS NOT NULL"
    " AND r.status = 'running' ORDER BY s.run_expires LIMIT ?3",
    /* a slice of the running runs, and whether each holds its thread */
    "SELECT r.run_id, r.thread_id, s.run_id IS r.run_id FROM runs r"
    " CROSS JOIN sessions s ON s.id = r.thread_id"
    " WHERE r.status = 'running' AND r.thread_id > ?1"
    " ORDER BY r.thread_id LIMIT ?2"
};


static ngx_http_agent_sqlite_look_t  ngx_http_agent_sqlite_look_ctx;

#if (NGX_THREADS)
static ngx_thread_pool_t            *ngx_http_agent_sqlite_look_tp;
static ngx_thread_task_t            *ngx_http_agent_sqlite_look_task;
#endif


/* in each worker, after the store's own handle is open */

ngx_int_t
ngx_http_agent_sqlite_look_init(ngx_cycle_t *cycle, ngx_str_t *path,
    void *thread_pool)
{
    int                            rc;
    ngx_http_agent_sqlite_look_t  *lk;
#if (NGX_THREADS)
    ngx_thread_task_t             *task;
#endif

    lk = &ngx_http_agent_sqlite_look_ctx;

    rc = sqlite3_open_v2((char *) path->data, &lk->db,
                         SQLITE_OPEN_READWRITE|SQLITE_OPEN_NOMUTEX, NULL);

    if (rc != SQLITE_OK) {
        ngx_log_error(NGX_LOG_ERR, cycle->log, 0,
                      "agent: no take-over check on \"%V\": %s",
                      path, sqlite3_errstr(rc));
        sqlite3_close(lk->db);
        lk->db = NULL;
        return NGX_OK;
    }

#if (NGX_THREADS)

    if (thread_pool) {
        task = ngx_thread_task_alloc(cycle->pool, 0);
        if (task == NULL) {
            return NGX_ERROR;
        }

        task->ctx = lk;
        task->handler = ngx_http_agent_sqlite_look_run;
        task->event.handler = ngx_http_agent_sqlite_look_done;
        task->event.data = lk;
        task->event.log = cycle->log;

        ngx_http_agent_sqlite_look_tp = thread_pool;
        ngx_http_agent_sqlite_look_task = task;

        /* a pool's thread may wait out a WAL index being rebuilt */
        sqlite3_busy_timeout(lk->db, 100);
    }

#endif

    return NGX_OK;
}


void
ngx_http_agent_sqlite_look_close(void)
{
    ngx_uint_t                     i;
    ngx_http_agent_sqlite_look_t  *lk;

    lk = &ngx_http_agent_sqlite_look_ctx;

    /* a look still on the pool keeps its handle: the process ends anyway */

    if (lk->db == NULL || lk->sc) {
        return;
    }

    for (i = 0; i < NGX_HTTP_AGENT_SQLITE_LOOK_LAST; i++) {
        if (lk->stmt[i]) {
            sqlite3_finalize(lk->stmt[i]);
            lk->stmt[i] = NULL;
        }
    }

    sqlite3_close(lk->db);
    lk->db = NULL;
}


ngx_int_t
ngx_http_agent_sqlite_run_lost(ngx_http_agent_store_call_t *sc,
    ngx_array_t *lost)
{
    return ngx_http_agent_sqlite_look(sc, lost, 0);
}


ngx_int_t
ngx_http_agent_sqlite_run_orphans(ngx_http_agent_store_call_t *sc,
    ngx_array_t *orphans)
{
    return ngx_http_agent_sqlite_look(sc, orphans, 1);
}


/* the answer kept, or the look made: on the pool (NGX_AGAIN), or here */

static ngx_int_t
ngx_http_agent_sqlite_look(ngx_http_agent_store_call_t *sc, ngx_array_t *out,
    ngx_uint_t orphans)
{
    void                           *p;
    ngx_array_t                    *rows;
    ngx_http_agent_sqlite_look_t   *lk;
    ngx_http_agent_store_answer_t  *a;

    a = ngx_http_agent_store_answered(sc, orphans
                                          ? ngx_http_agent_store_op(run_orphans)
                                          : ngx_http_agent_store_op(run_lost),
                                      NULL, NULL);

    if (a) {
        rows = a->value;

        if (a->rc == NGX_OK && rows && rows->nelts) {
            p = ngx_array_push_n(out, rows->nelts);
            if (p == NULL) {
                return NGX_ERROR;
            }

            ngx_memcpy(p, rows->elts, rows->nelts * rows->size);
        }

        return a->rc;
    }

    lk = &ngx_http_agent_sqlite_look_ctx;

    if (lk->db == NULL || lk->sc) {
        return NGX_ERROR;
    }

    lk->orphans = orphans;
    lk->now = ngx_http_agent_store_ms();

#if (NGX_THREADS)

    if (ngx_http_agent_sqlite_look_task && sc->wake) {
        lk->pool = ngx_create_pool(4096, sc->log);
        if (lk->pool == NULL) {
            return NGX_ERROR;
        }

        lk->rows = ngx_array_create(lk->pool, NGX_HTTP_AGENT_SQLITE_LOOK_ROWS,
                                    sizeof(ngx_http_agent_run_lost_t));

        if (lk->rows
            && ngx_thread_task_post(ngx_http_agent_sqlite_look_tp,
                                    ngx_http_agent_sqlite_look_task)
               == NGX_OK)
        {
            lk->sc = sc;
            sc->waiting++;
            return NGX_AGAIN;
        }

        /* the pool's queue is full: here, this once */
        ngx_destroy_pool(lk->pool);
    }

#endif

    lk->pool = sc->pool;
    lk->rows = out;

    ngx_http_agent_sqlite_look_run(lk, sc->log);

    return ngx_http_agent_sqlite_look_end(lk, sc->log);
}


/* on a pool's thread (or the event loop): no log, no nginx event here */

static void
ngx_http_agent_sqlite_look_run(void *data, ngx_log_t *log)
{
    ngx_http_agent_sqlite_look_t *lk = data;

    lk->err = SQLITE_OK;
    lk->rc = lk->orphans ? ngx_http_agent_sqlite_look_orphans(lk)
                         : ngx_http_agent_sqlite_look_lost(lk);
}


static ngx_int_t
ngx_http_agent_sqlite_look_lost(ngx_http_agent_sqlite_look_t *lk)
{
    int            rc;
    ngx_pid_t      pid, gone[NGX_HTTP_AGENT_SQLITE_LOOK_PIDS];
    ngx_uint_t     i, n;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_look_stmt(lk,
                                           NGX_HTTP_AGENT_SQLITE_LOOK_EXPIRED);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    sqlite3_bind_int64(stmt, 1, lk->now);
    sqlite3_bind_int(stmt, 2, NGX_HTTP_AGENT_SQLITE_LOOK_ROWS);

    if (ngx_http_agent_sqlite_look_rows(lk, stmt) != NGX_OK) {
        return NGX_ERROR;
    }

    /* this host's holders: a process gone is a kill(0) away */

    stmt = ngx_http_agent_sqlite_look_stmt(lk,
                                           NGX_HTTP_AGENT_SQLITE_LOOK_HOLDERS);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    sqlite3_bind_text(stmt, 1, (char *) ngx_http_agent_store_host.data,
                      ngx_http_agent_store_host.len, SQLITE_STATIC);
    sqlite3_bind_int(stmt, 2, NGX_HTTP_AGENT_SQLITE_LOOK_PIDS);

    n = 0;

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        pid = (ngx_pid_t) sqlite3_column_int64(stmt, 0);

        if (pid != ngx_pid && pid > 0 && kill(pid, 0) == -1
            && errno == ESRCH && n < NGX_HTTP_AGENT_SQLITE_LOOK_PIDS)
        {
            gone[n++] = pid;
        }
    }

    sqlite3_reset(stmt);

    if (rc != SQLITE_DONE) {
        lk->err = rc;
        return NGX_ERROR;
    }

    for (i = 0; i < n; i++) {
        if (lk->rows->nelts >= NGX_HTTP_AGENT_SQLITE_LOOK_ROWS) {
            break;
        }

        stmt = ngx_http_agent_sqlite_look_stmt(lk,
                                               NGX_HTTP_AGENT_SQLITE_LOOK_HELD);
        if (stmt == NULL) {
            return NGX_ERROR;
        }

        sqlite3_bind_text(stmt, 1, (char *) ngx_http_agent_store_host.data,
                          ngx_http_agent_store_host.len, SQLITE_STATIC);
        sqlite3_bind_int64(stmt, 2, gone[i]);
        sqlite3_bind_int(stmt, 3, NGX_HTTP_AGENT_SQLITE_LOOK_ROWS
                                  - lk->rows->nelts);

        if (ngx_http_agent_sqlite_look_rows(lk, stmt) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_sqlite_look_orphans(ngx_http_agent_sqlite_look_t *lk)
{
    int                         rc;
    size_t                      len;
    ngx_uint_t                  n;
    const u_char               *p;
    sqlite3_stmt               *stmt;
    ngx_http_agent_run_lost_t  *l;

    stmt = ngx_http_agent_sqlite_look_stmt(lk,
                                           NGX_HTTP_AGENT_SQLITE_LOOK_RUNNING);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    sqlite3_bind_text(stmt, 1, (char *) lk->cursor, lk->cursor_len,
                      SQLITE_STATIC);
    sqlite3_bind_int(stmt, 2, NGX_HTTP_AGENT_SQLITE_LOOK_SLICE);

    n = 0;
    lk->last_len = 0;

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        n++;

        p = sqlite3_column_text(stmt, 1);
        len = sqlite3_column_bytes(stmt, 1);

        if (p && len <= NGX_HTTP_AGENT_SQLITE_LOOK_ID) {
            ngx_memcpy(lk->last, p, len);
            lk->last_len = len;
        }

        if (sqlite3_column_int(stmt, 2)
            || lk->rows->nelts >= NGX_HTTP_AGENT_SQLITE_LOOK_ROWS)
        {
            continue;
        }

        l = ngx_array_push(lk->rows);
        if (l == NULL) {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }

        ngx_memzero(l, sizeof(ngx_http_agent_run_lost_t));

        if (ngx_http_agent_sqlite_col(lk->pool, stmt, 0, &l->run_id)
            != NGX_OK
            || ngx_http_agent_sqlite_col(lk->pool, stmt, 1, &l->thread_id)
               != NGX_OK)
        {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }
    }

    sqlite3_reset(stmt);

    if (rc != SQLITE_DONE) {
        lk->err = rc;
        return NGX_ERROR;
    }

    /* where the next look starts: here again once, to confirm what it saw */

    if (lk->rows->nelts && !lk->held) {
        lk->held = 1;
        return NGX_OK;
    }

    lk->held = 0;

    if (n < NGX_HTTP_AGENT_SQLITE_LOOK_SLICE || lk->last_len == 0) {
        lk->cursor_len = 0;

    } else {
        ngx_memcpy(lk->cursor, lk->last, lk->last_len);
        lk->cursor_len = lk->last_len;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_sqlite_look_rows(ngx_http_agent_sqlite_look_t *lk,
    sqlite3_stmt *stmt)
{
    int                         rc;
    ngx_http_agent_run_lost_t  *l;

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        l = ngx_array_push(lk->rows);
        if (l == NULL) {
            goto failed;
        }

        ngx_memzero(l, sizeof(ngx_http_agent_run_lost_t));

        if (ngx_http_agent_sqlite_col(lk->pool, stmt, 0, &l->run_id)
            != NGX_OK
            || ngx_http_agent_sqlite_col(lk->pool, stmt, 1, &l->thread_id)
               != NGX_OK
            || ngx_http_agent_sqlite_col(lk->pool, stmt, 3, &l->host)
               != NGX_OK
            || ngx_http_agent_sqlite_col(lk->pool, stmt, 5, &l->origin)
               != NGX_OK)
        {
            goto failed;
        }

        l->pid = (ngx_pid_t) sqlite3_column_int64(stmt, 2);
        l->expires = sqlite3_column_int64(stmt, 4);
    }

    sqlite3_reset(stmt);

    if (rc != SQLITE_DONE) {
        lk->err = rc;
        return NGX_ERROR;
    }

    return NGX_OK;

failed:

    sqlite3_reset(stmt);
    return NGX_ERROR;
}


static sqlite3_stmt *
ngx_http_agent_sqlite_look_stmt(ngx_http_agent_sqlite_look_t *lk,
    ngx_uint_t n)
{
    int  rc;

    if (lk->stmt[n] == NULL) {
        rc = sqlite3_prepare_v3(lk->db, ngx_http_agent_sqlite_look_sql[n], -1,
                                SQLITE_PREPARE_PERSISTENT, &lk->stmt[n],
                                NULL);
        if (rc != SQLITE_OK) {
            lk->err = rc;
            lk->stmt[n] = NULL;
            return NULL;
        }
    }

    sqlite3_reset(lk->stmt[n]);
    sqlite3_clear_bindings(lk->stmt[n]);

    return lk->stmt[n];
}


/*
 * On the event loop: the look's failure logged; a lease of this host
 * that runs is lost only if its holder is gone (as the lock sees it)
 */

static ngx_int_t
ngx_http_agent_sqlite_look_end(ngx_http_agent_sqlite_look_t *lk,
    ngx_log_t *log)
{
    ngx_uint_t                  i, n;
    ngx_http_agent_run_lost_t  *l;

    if (lk->rc != NGX_OK) {
        ngx_log_error(NGX_LOG_ERR, log, 0, "agent: the take-over check "
                      "failed: %s", lk->err != SQLITE_OK
                                    ? sqlite3_errstr(lk->err) : "no memory");
        return NGX_ERROR;
    }

    if (lk->orphans) {
        return NGX_OK;
    }

    l = lk->rows->elts;
    n = 0;

    for (i = 0; i < lk->rows->nelts; i++) {
        if (l[i].expires >= lk->now
            && !ngx_http_agent_store_holder_gone(&l[i].thread_id,
                                                 l[i].host.data,
                                                 l[i].host.len, l[i].pid))
        {
            continue;
        }

        l[n++] = l[i];
    }

    lk->rows->nelts = n;

    return NGX_OK;
}


#if (NGX_THREADS)

static void
ngx_http_agent_sqlite_look_done(ngx_event_t *ev)
{
    ngx_http_agent_sqlite_look_t *lk = ev->data;

    ngx_int_t                       rc;
    ngx_pool_cleanup_t             *cln;
    ngx_http_agent_store_call_t    *sc;
    ngx_http_agent_store_answer_t  *a;

    sc = lk->sc;
    lk->sc = NULL;
    sc->waiting--;

    rc = ngx_http_agent_sqlite_look_end(lk, sc->log);

    /* the rows are the call's until its pool goes */

    cln = ngx_pool_cleanup_add(sc->pool, 0);
    if (cln == NULL) {
        ngx_destroy_pool(lk->pool);
        lk->rows = NULL;
        rc = NGX_ERROR;

    } else {
        cln->handler = ngx_http_agent_sqlite_look_pool;
        cln->data = lk->pool;
    }

    a = ngx_http_agent_store_answer_add(sc);

    if (a) {
        a->rc = rc;
        a->value = lk->rows;
    }

    sc->wake(sc);
}


static void
ngx_http_agent_sqlite_look_pool(void *data)
{
    ngx_destroy_pool(data);
}

#endif
