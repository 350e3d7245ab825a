
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#if (NGX_THREADS)
#include <ngx_thread_pool.h>
#endif

#include <sqlite3.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_sqlite.h"


/*
 * agent_checkpoint_keep on SQLite.  A pass is one DELETE of a thread's
 * checkpoints past the bound, NGX_HTTP_AGENT_STORE_PRUNE_PASS rows at
 * most; it holds the file's write lock while it runs, and on a large
 * thread it reads many pages: the worker queues the thread and a task on
 * the thread pool runs the passes on a handle of its own (as the WAL's
 * checkpoint does, sqlite_wal.c), a few threads a task, one task at a
 * time.  A full pass queues its thread again.  The queue is bounded: a
 * thread that finds it full is let go at its next run's end.  Without a
 * thread pool a pass runs at the run's end on the worker's handle, one
 * per run.
 */


#define NGX_HTTP_AGENT_SQLITE_PRUNE_QUEUE  32
#define NGX_HTTP_AGENT_SQLITE_PRUNE_TASK   8


typedef struct {
    ngx_str_t                       id;
    size_t                          run_len;     /* the run that ends */
    int64_t                         keep;        /* 0: not by count */
    size_t                          before_len;  /* 0: not by age */
    int                             rc;          /* the pass's */
    int                             deleted;
    u_char                          id_data[128];  /* a scoped one */
    u_char                          run_data[64];
    u_char                          before[24];
} ngx_http_agent_sqlite_prune_t;


#if (NGX_THREADS)

typedef struct {
    sqlite3                        *db;          /* the pool's handle */
    sqlite3_stmt                   *stmt;
    ngx_uint_t                      n;
    ngx_http_agent_sqlite_prune_t   prunes[NGX_HTTP_AGENT_SQLITE_PRUNE_TASK];
} ngx_http_agent_sqlite_prune_task_t;

#endif


static int ngx_http_agent_sqlite_prune_pass(sqlite3 *db, sqlite3_stmt *stmt,
    ngx_http_agent_sqlite_prune_t *p);
static void ngx_http_agent_sqlite_prune_inline(
    ngx_http_agent_sqlite_prune_t *p);
static void ngx_http_agent_sqlite_prune_said(ngx_http_agent_sqlite_prune_t *p,
    ngx_log_t *log);

#if (NGX_THREADS)

static void ngx_http_agent_sqlite_prune_queue(
    ngx_http_agent_sqlite_prune_t *p);
static void ngx_http_agent_sqlite_prune_post(void);
static void ngx_http_agent_sqlite_prune_run(void *data, ngx_log_t *log);
static void ngx_http_agent_sqlite_prune_done(ngx_event_t *ev);


static ngx_thread_pool_t  *ngx_http_agent_sqlite_prune_pool;
static ngx_thread_task_t  *ngx_http_agent_sqlite_prune_task;
static ngx_uint_t          ngx_http_agent_sqlite_prune_posted;
static ngx_uint_t          ngx_http_agent_sqlite_prune_n;
static ngx_http_agent_sqlite_prune_t
    ngx_http_agent_sqlite_prunes[NGX_HTTP_AGENT_SQLITE_PRUNE_QUEUE];

#endif

static sqlite3_stmt       *ngx_http_agent_sqlite_prune_stmt;


/*
 * ?1 the thread, ?2 the count kept (0: none), ?3 the oldest time kept
 * (NULL: none), ?4 the pass's rows, ?5 the run that ends.  The thread's
 * latest checkpoint and all after it (a subgraph's that waits) stay, and
 * so do those another run that has not ended started from: a rollback
 * goes back to them, and a pass on the thread pool may run after the
 * next run began.
 */
static const char  ngx_http_agent_sqlite_prune_sql[] =
    "DELETE FROM checkpoints WHERE n IN (SELECT n FROM checkpoints"
    " WHERE session_id = ?1"
    " AND n < (SELECT max(n) FROM checkpoints"
    " WHERE session_id = ?1 AND ns = '')"
    " AND (?2 = 0 OR n < (SELECT n FROM checkpoints WHERE session_id = ?1"
    " ORDER BY n DESC LIMIT 1 OFFSET ?2 - 1))"
    " AND (?3 IS NULL OR created_at < ?3)"
    " AND id NOT IN (SELECT checkpoint FROM runs WHERE thread_id = ?1"
    " AND status IN ('pending', 'running') AND checkpoint IS NOT NULL"
    " AND run_id IS NOT ?5)"
    " ORDER BY n LIMIT ?4)";


/*
 * A thread's bytes: a first row of totals (no name), then a row for each
 * channel of its checkpoints
 */
static const char  ngx_http_agent_sqlite_storage_sql[] =
    "SELECT NULL,"
    " (SELECT count(*) FROM checkpoints WHERE session_id = ?1),"
    " (SELECT total(length(CAST(channels AS BLOB)) + length(id)"
    " + length(node) + length(created_at) + length(ns)"
    " + ifnull(length(parent_id), 0) + ifnull(length(next), 0))"
    " FROM checkpoints WHERE session_id = ?1),"
    " (SELECT count(*) FROM messages WHERE session_id = ?1),"
    " (SELECT total(ifnull(length(CAST(content AS BLOB)), 0)"
    " + ifnull(length(CAST(tool_calls AS BLOB)), 0)"
    " + ifnull(length(CAST(images AS BLOB)), 0)"
    " + ifnull(length(CAST(metadata AS BLOB)), 0))"
    " FROM messages WHERE session_id = ?1),"
    " (SELECT count(*) FROM run_events WHERE seq < 0 AND run_id IN"
    " (SELECT run_id FROM runs WHERE thread_id = ?1)),"
    " (SELECT total(length(CAST(data AS BLOB))) FROM run_events"
    " WHERE seq < 0 AND run_id IN"
    " (SELECT run_id FROM runs WHERE thread_id = ?1))"
    " UNION ALL"
    " SELECT j.key, count(*), total(length(CAST(CASE WHEN j.type IN"
    " ('object', 'array') THEN j.value ELSE json_quote(j.value) END"
    " AS BLOB))), 0, 0, 0, 0"
    " FROM checkpoints c, json_each(c.channels) j"
    " WHERE c.session_id = ?1 AND json_valid(c.channels) GROUP BY j.key";


void
ngx_http_agent_sqlite_prune_init(ngx_cycle_t *cycle, ngx_str_t *path,
    void *thread_pool)
{
#if (NGX_THREADS)
    int                                  rc;
    ngx_thread_task_t                   *task;
    ngx_http_agent_sqlite_prune_task_t  *t;

    if (thread_pool == NULL) {
        return;
    }

    task = ngx_thread_task_alloc(cycle->pool,
                                 sizeof(ngx_http_agent_sqlite_prune_task_t));
    if (task == NULL) {
        return;
    }

    t = task->ctx;

    /* used by one thread at a time: the one the task runs on */
    rc = sqlite3_open_v2((char *) path->data, &t->db,
                         SQLITE_OPEN_READWRITE|SQLITE_OPEN_NOMUTEX, NULL);

    if (rc == SQLITE_OK) {
        /* a pool's thread may wait for the workers' short writes */
        sqlite3_busy_timeout(t->db, 500);
        rc = sqlite3_prepare_v3(t->db, ngx_http_agent_sqlite_prune_sql, -1,
                                SQLITE_PREPARE_PERSISTENT, &t->stmt, NULL);
    }

    if (rc != SQLITE_OK) {
        ngx_log_error(NGX_LOG_WARN, cycle->log, 0,
                      "agent: old checkpoints let go on the event loop, "
                      "\"%V\": %s", path, sqlite3_errmsg(t->db));
        sqlite3_close(t->db);
        return;
    }

    task->handler = ngx_http_agent_sqlite_prune_run;
    task->event.handler = ngx_http_agent_sqlite_prune_done;
    task->event.data = t;
    task->event.log = cycle->log;

    ngx_http_agent_sqlite_prune_pool = thread_pool;
    ngx_http_agent_sqlite_prune_task = task;
#endif
}


/*
 * nginx's thread pool ends first: a task still posted keeps its handle,
 * as the WAL's does
 */

void
ngx_http_agent_sqlite_prune_close(void)
{
#if (NGX_THREADS)
    ngx_http_agent_sqlite_prune_task_t  *t;

    if (ngx_http_agent_sqlite_prune_task
        && !ngx_http_agent_sqlite_prune_posted)
    {
        t = ngx_http_agent_sqlite_prune_task->ctx;
        sqlite3_finalize(t->stmt);
        sqlite3_close(t->db);
    }

    ngx_http_agent_sqlite_prune_task = NULL;
    ngx_http_agent_sqlite_prune_n = 0;
#endif

    if (ngx_http_agent_sqlite_prune_stmt) {
        sqlite3_finalize(ngx_http_agent_sqlite_prune_stmt);
        ngx_http_agent_sqlite_prune_stmt = NULL;
    }
}


ngx_int_t
ngx_http_agent_sqlite_checkpoint_prune(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_uint_t keep, ngx_msec_t age)
{
    ngx_http_agent_sqlite_prune_t  p;

    if (id->len > sizeof(p.id_data) || run_id->len > sizeof(p.run_data)) {
        return NGX_DECLINED;
    }

    ngx_memzero(&p, sizeof(ngx_http_agent_sqlite_prune_t));

    p.id.len = id->len;
    ngx_memcpy(p.id_data, id->data, id->len);
    p.run_len = run_id->len;
    ngx_memcpy(p.run_data, run_id->data, run_id->len);
    p.keep = keep;

    if (age) {
        p.before_len = ngx_http_agent_store_ago(p.before, age) - p.before;
    }

#if (NGX_THREADS)

    if (ngx_http_agent_sqlite_prune_task) {
        ngx_http_agent_sqlite_prune_queue(&p);
        ngx_http_agent_sqlite_prune_post();
        return NGX_OK;
    }

#endif

    ngx_http_agent_sqlite_prune_inline(&p);

    return NGX_OK;
}


/* on the worker's handle: no thread pool, or none to be had */

static void
ngx_http_agent_sqlite_prune_inline(ngx_http_agent_sqlite_prune_t *p)
{
    if (ngx_http_agent_sqlite_prune_stmt == NULL
        && sqlite3_prepare_v3(ngx_http_agent_sqlite_db,
                              ngx_http_agent_sqlite_prune_sql, -1,
                              SQLITE_PREPARE_PERSISTENT,
                              &ngx_http_agent_sqlite_prune_stmt, NULL)
           != SQLITE_OK)
    {
        ngx_log_error(NGX_LOG_ERR, ngx_http_agent_sqlite_log, 0,
                      "agent: sqlite prepare failed: %s",
                      sqlite3_errmsg(ngx_http_agent_sqlite_db));
        return;
    }

    p->rc = ngx_http_agent_sqlite_prune_pass(ngx_http_agent_sqlite_db,
                                             ngx_http_agent_sqlite_prune_stmt,
                                             p);

    ngx_http_agent_sqlite_prune_said(p, ngx_http_agent_sqlite_log);
}


/* any thread: the handle's and the statement's, the entry's own */

static int
ngx_http_agent_sqlite_prune_pass(sqlite3 *db, sqlite3_stmt *stmt,
    ngx_http_agent_sqlite_prune_t *p)
{
    int  rc;

    p->id.data = p->id_data;

    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);

    sqlite3_bind_text(stmt, 1, (char *) p->id_data, p->id.len,
                      SQLITE_STATIC);
    sqlite3_bind_int64(stmt, 2, p->keep);

    if (p->before_len) {
        sqlite3_bind_text(stmt, 3, (char *) p->before, p->before_len,
                          SQLITE_STATIC);
    }

    sqlite3_bind_int(stmt, 4, NGX_HTTP_AGENT_STORE_PRUNE_PASS);
    sqlite3_bind_text(stmt, 5, (char *) p->run_data, p->run_len,
                      SQLITE_STATIC);

    rc = sqlite3_step(stmt);
    p->deleted = (rc == SQLITE_DONE) ? sqlite3_changes(db) : 0;

    sqlite3_reset(stmt);

    return rc;
}


static void
ngx_http_agent_sqlite_prune_said(ngx_http_agent_sqlite_prune_t *p,
    ngx_log_t *log)
{
    ngx_uint_t  level;

    if (p->rc != SQLITE_DONE) {
        /* a busy file, or worse: the next run's end tries again */
        level = ((p->rc & 0xff) == SQLITE_BUSY) ? NGX_LOG_INFO : NGX_LOG_ERR;

        ngx_log_error(level, log, 0, "agent: the old checkpoints of \"%V\" "
                      "were not let go: %s", &p->id, sqlite3_errstr(p->rc));
        return;
    }

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, log, 0,
                   "agent: %d old checkpoints of \"%V\" let go",
                   p->deleted, &p->id);
}


#if (NGX_THREADS)

/* a thread queued once: its latest bound taken */

static void
ngx_http_agent_sqlite_prune_queue(ngx_http_agent_sqlite_prune_t *p)
{
    ngx_uint_t                      i;
    ngx_http_agent_sqlite_prune_t  *q;

    q = ngx_http_agent_sqlite_prunes;

    for (i = 0; i < ngx_http_agent_sqlite_prune_n; i++) {
        if (q[i].id.len == p->id.len
            && ngx_memcmp(q[i].id_data, p->id_data, p->id.len) == 0)
        {
            break;
        }
    }

    if (i == NGX_HTTP_AGENT_SQLITE_PRUNE_QUEUE) {
        p->id.data = p->id_data;
        ngx_log_debug1(NGX_LOG_DEBUG_HTTP, ngx_http_agent_sqlite_log, 0,
                       "agent: prune queue full, \"%V\" waits for its next "
                       "run", &p->id);
        return;
    }

    q[i] = *p;
    q[i].id.data = q[i].id_data;

    if (i == ngx_http_agent_sqlite_prune_n) {
        ngx_http_agent_sqlite_prune_n++;
    }
}


/* the first threads of the queue to the task, unless it runs */

static void
ngx_http_agent_sqlite_prune_post(void)
{
    ngx_uint_t                           n, i;
    ngx_http_agent_sqlite_prune_task_t  *t;

    if (ngx_http_agent_sqlite_prune_posted
        || ngx_http_agent_sqlite_prune_n == 0)
    {
        return;
    }

    t = ngx_http_agent_sqlite_prune_task->ctx;

    n = ngx_min(ngx_http_agent_sqlite_prune_n,
                NGX_HTTP_AGENT_SQLITE_PRUNE_TASK);

    ngx_memcpy(t->prunes, ngx_http_agent_sqlite_prunes,
               n * sizeof(ngx_http_agent_sqlite_prune_t));
    t->n = n;

    ngx_http_agent_sqlite_prune_n -= n;
    ngx_memmove(ngx_http_agent_sqlite_prunes,
                ngx_http_agent_sqlite_prunes + n,
                ngx_http_agent_sqlite_prune_n
                * sizeof(ngx_http_agent_sqlite_prune_t));

    if (ngx_thread_task_post(ngx_http_agent_sqlite_prune_pool,
                             ngx_http_agent_sqlite_prune_task)
        == NGX_OK)
    {
        ngx_http_agent_sqlite_prune_posted = 1;
        return;
    }

    /* the pool's queue is full: a pass each, here */

    for (i = 0; i < n; i++) {
        ngx_http_agent_sqlite_prune_inline(&t->prunes[i]);
    }
}


/* on a pool's thread */

static void
ngx_http_agent_sqlite_prune_run(void *data, ngx_log_t *log)
{
    ngx_uint_t                           i;
    ngx_http_agent_sqlite_prune_task_t  *t;

    t = data;

    for (i = 0; i < t->n; i++) {
        t->prunes[i].rc = ngx_http_agent_sqlite_prune_pass(t->db, t->stmt,
                                                           &t->prunes[i]);
    }
}


static void
ngx_http_agent_sqlite_prune_done(ngx_event_t *ev)
{
    ngx_uint_t                           i;
    ngx_http_agent_sqlite_prune_t       *p;
    ngx_http_agent_sqlite_prune_task_t  *t;

    t = ev->data;

    ngx_http_agent_sqlite_prune_posted = 0;

    for (i = 0; i < t->n; i++) {
        p = &t->prunes[i];

        ngx_http_agent_sqlite_prune_said(p, ev->log);

        /* a full pass: more to let go, after the others */
        if (p->rc == SQLITE_DONE
            && p->deleted == NGX_HTTP_AGENT_STORE_PRUNE_PASS)
        {
            ngx_http_agent_sqlite_prune_queue(p);
        }
    }

    t->n = 0;

    ngx_http_agent_sqlite_prune_post();
}

#endif


ngx_int_t
ngx_http_agent_sqlite_thread_storage(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_http_agent_storage_t *st)
{
    int                                rc;
    sqlite3_stmt                      *stmt;
    ngx_http_agent_storage_channel_t  *ch;

    stmt = NULL;

    if (sqlite3_prepare_v2(ngx_http_agent_sqlite_db,
                           ngx_http_agent_sqlite_storage_sql, -1, &stmt,
                           NULL)
        != SQLITE_OK)
    {
        ngx_log_error(NGX_LOG_ERR, sc->log, 0,
                      "agent: sqlite prepare failed: %s",
                      sqlite3_errmsg(ngx_http_agent_sqlite_db));
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, id);

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {

        if (sqlite3_column_type(stmt, 0) == SQLITE_NULL) {
            st->checkpoints = sqlite3_column_int64(stmt, 1);
            st->checkpoint_bytes = sqlite3_column_int64(stmt, 2);
            st->messages = sqlite3_column_int64(stmt, 3);
            st->message_bytes = sqlite3_column_int64(stmt, 4);
            st->writes = sqlite3_column_int64(stmt, 5);
            st->write_bytes = sqlite3_column_int64(stmt, 6);
            continue;
        }

        ch = ngx_array_push(st->channels);

        if (ch == NULL
            || ngx_http_agent_sqlite_col(sc->pool, stmt, 0, &ch->name)
               != NGX_OK)
        {
            sqlite3_finalize(stmt);
            return NGX_ERROR;
        }

        ch->count = sqlite3_column_int64(stmt, 1);
        ch->bytes = sqlite3_column_int64(stmt, 2);
    }

    if (rc != SQLITE_DONE) {
        ngx_log_error(NGX_LOG_ERR, sc->log, 0,
                      "agent: sqlite step failed: %s",
                      sqlite3_errmsg(ngx_http_agent_sqlite_db));
    }

    sqlite3_finalize(stmt);

    return rc == SQLITE_DONE ? NGX_OK : NGX_ERROR;
}
