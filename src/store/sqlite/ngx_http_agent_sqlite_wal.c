
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#if (NGX_THREADS)
#include <ngx_thread_pool.h>
#endif

#include <sqlite3.h>

#include "ngx_http_agent_ops.h"
#include "ngx_http_agent_sqlite.h"


/*
 * The WAL's checkpoint, off the event loop.  SQLite's automatic one runs
 * inside the commit that takes the WAL past 1000 pages: it copies the
 * pages into the file and syncs it on the worker's loop, every few turns.
 * The worker's handle has this hook instead: past the same 1000 pages it
 * posts a passive checkpoint to the thread pool, on a handle of its own,
 * and goes on.  A passive checkpoint waits on no lock: where a reader or
 * a writer holds a page, or another worker checkpoints, it copies what it
 * can and the next commit past the mark posts another.  One is on the
 * pool at a time.  Without a thread pool, with its queue full, or with
 * the task still queued behind long SQL tools while the WAL passes
 * 16000 pages, the checkpoint runs in the commit, as SQLite's did.
 */


#define NGX_HTTP_AGENT_SQLITE_WAL_PAGES  1000
#define NGX_HTTP_AGENT_SQLITE_WAL_CAP    4000
#define NGX_HTTP_AGENT_SQLITE_WAL_HARD   16000


#if (NGX_THREADS)

typedef struct {
    sqlite3                    *db;     /* the pool's handle on the file */
    int                         rc;
    ngx_uint_t                  restarted;
} ngx_http_agent_sqlite_wal_t;

#endif


static int ngx_http_agent_sqlite_wal_hook(void *data, sqlite3 *db,
    const char *name, int pages);
static void ngx_http_agent_sqlite_wal_inline(sqlite3 *db, const char *name);
static void ngx_http_agent_sqlite_wal_count(int rc, const char *where,
    const char *kind);

#if (NGX_THREADS)

static ngx_int_t ngx_http_agent_sqlite_wal_open(ngx_cycle_t *cycle,
    ngx_str_t *path, ngx_thread_task_t *task);
static ngx_int_t ngx_http_agent_sqlite_wal_post(void);
static void ngx_http_agent_sqlite_wal_run(void *data, ngx_log_t *log);
static void ngx_http_agent_sqlite_wal_done(ngx_event_t *ev);


static ngx_thread_pool_t  *ngx_http_agent_sqlite_wal_pool;
static ngx_thread_task_t  *ngx_http_agent_sqlite_wal_task;
static ngx_uint_t          ngx_http_agent_sqlite_wal_posted;
static ngx_uint_t          ngx_http_agent_sqlite_wal_again;

#endif

static sqlite3            *ngx_http_agent_sqlite_wal_db;
static ngx_log_t          *ngx_http_agent_sqlite_wal_log;


ngx_int_t
ngx_http_agent_sqlite_wal_init(ngx_cycle_t *cycle, sqlite3 *db,
    ngx_str_t *path, void *thread_pool)
{
#if (NGX_THREADS)
    ngx_thread_task_t  *task;
#endif

    ngx_http_agent_sqlite_wal_db = db;
    ngx_http_agent_sqlite_wal_log = cycle->log;

#if (NGX_THREADS)

    if (thread_pool) {
        task = ngx_thread_task_alloc(cycle->pool,
                                     sizeof(ngx_http_agent_sqlite_wal_t));
        if (task == NULL) {
            return NGX_ERROR;
        }

        if (ngx_http_agent_sqlite_wal_open(cycle, path, task) == NGX_OK) {
            ngx_http_agent_sqlite_wal_pool = thread_pool;
            ngx_http_agent_sqlite_wal_task = task;
        }
    }

#endif

    /* replaces SQLite's automatic checkpoint */
    sqlite3_wal_hook(db, ngx_http_agent_sqlite_wal_hook, NULL);

    return NGX_OK;
}


/* after a commit, with no lock held: pages is the WAL's length */

static int
ngx_http_agent_sqlite_wal_hook(void *data, sqlite3 *db, const char *name,
    int pages)
{
    if (pages < NGX_HTTP_AGENT_SQLITE_WAL_PAGES) {
        return SQLITE_OK;
    }

#if (NGX_THREADS)

    if (ngx_http_agent_sqlite_wal_posted) {
        ngx_http_agent_sqlite_wal_again = 1;

        /* past the hard mark, the task waits behind others: here too */
        if (pages < NGX_HTTP_AGENT_SQLITE_WAL_HARD) {
            return SQLITE_OK;
        }

    } else if (ngx_http_agent_sqlite_wal_post() == NGX_OK) {
        return SQLITE_OK;
    }

#endif

    ngx_http_agent_sqlite_wal_inline(db, name);

    return SQLITE_OK;
}


static void
ngx_http_agent_sqlite_wal_inline(sqlite3 *db, const char *name)
{
    int  rc;

    rc = sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL,
                                   NULL);

    ngx_http_agent_sqlite_wal_count(rc, "loop", "passive");
}


static void
ngx_http_agent_sqlite_wal_count(int rc, const char *where, const char *kind)
{
    ngx_str_t  label;

    if (rc == SQLITE_BUSY) {
        /* another's checkpoint ran, or a writer held the lock: not done */
        kind = "busy";

    } else if (rc != SQLITE_OK) {
        ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_STORE_ERRORS, NULL, NULL,
                                   1);
        ngx_log_error(NGX_LOG_ERR, ngx_http_agent_sqlite_wal_log, 0,
                      "agent: sqlite WAL checkpoint failed: %s",
                      sqlite3_errstr(rc));
        return;
    }

    label.data = (u_char *) where;
    label.len = ngx_strlen(where);

    ngx_http_agent_metrics_cstr(NGX_HTTP_AGENT_M_STORE_CHECKPOINTS, &label,
                                kind, 1);
}


#if (NGX_THREADS)

/*
 * The task's handle.  A first read has it know the file's WAL: it waits
 * a second at most for a worker that rebuilds the WAL's index (the file's
 * first use, or after a worker killed in a write), here in the worker's
 * start; failing that, the worker checkpoints in its commits.
 */

static ngx_int_t
ngx_http_agent_sqlite_wal_open(ngx_cycle_t *cycle, ngx_str_t *path,
    ngx_thread_task_t *task)
{
    int                           rc;
    ngx_http_agent_sqlite_wal_t  *w;

    w = task->ctx;

    /* used by one thread at a time: the one the task runs on */
    rc = sqlite3_open_v2((char *) path->data, &w->db,
                         SQLITE_OPEN_READWRITE|SQLITE_OPEN_NOMUTEX, NULL);

    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(w->db, 1000);
        rc = sqlite3_exec(w->db, "SELECT count(*) FROM sqlite_schema",
                          NULL, NULL, NULL);

        /* no waits after: a checkpoint gives up at once on a held lock */
        sqlite3_busy_timeout(w->db, 0);
    }

    if (rc != SQLITE_OK) {
        ngx_log_error(NGX_LOG_WARN, cycle->log, 0,
                      "agent: no WAL checkpoints on the thread pool, "
                      "\"%V\": %s; they run in the commits",
                      path, sqlite3_errmsg(w->db));
        sqlite3_close(w->db);
        return NGX_DECLINED;
    }

    task->handler = ngx_http_agent_sqlite_wal_run;
    task->event.handler = ngx_http_agent_sqlite_wal_done;
    task->event.data = w;
    task->event.log = cycle->log;

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_sqlite_wal_post(void)
{
    if (ngx_http_agent_sqlite_wal_task == NULL
        || ngx_thread_task_post(ngx_http_agent_sqlite_wal_pool,
                                ngx_http_agent_sqlite_wal_task)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    ngx_http_agent_sqlite_wal_posted = 1;
    ngx_http_agent_sqlite_wal_again = 0;

    return NGX_OK;
}


/*
 * On a pool's thread.  Under writes that never pause the WAL is never all
 * copied when a worker begins to write, and grows: past the cap, once the
 * passive checkpoint has copied what it saw, a restart.  It takes the
 * write lock only if no worker holds it, and starts the WAL again if no
 * reader is in it; otherwise it gives up at once, and the next checkpoint
 * tries again.  With the lock, it first copies what came since the
 * passive one and syncs the WAL and the file: the workers' writes wait
 * for those two syncs as for another worker's write, once the WAL has
 * grown by 4000 pages.
 */

static void
ngx_http_agent_sqlite_wal_run(void *data, ngx_log_t *log)
{
    int                           pages, copied;
    ngx_http_agent_sqlite_wal_t  *w;

    w = data;

    w->rc = sqlite3_wal_checkpoint_v2(w->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
                                      &pages, &copied);

    w->restarted = 0;

    if (w->rc == SQLITE_OK && pages >= NGX_HTTP_AGENT_SQLITE_WAL_CAP
        && copied == pages)
    {
        w->rc = sqlite3_wal_checkpoint_v2(w->db, NULL,
                                          SQLITE_CHECKPOINT_RESTART,
                                          NULL, NULL);
        w->restarted = (w->rc == SQLITE_OK);
    }
}


static void
ngx_http_agent_sqlite_wal_done(ngx_event_t *ev)
{
    ngx_http_agent_sqlite_wal_t  *w;

    w = ev->data;

    ngx_http_agent_sqlite_wal_posted = 0;

    ngx_http_agent_sqlite_wal_count(w->rc, "thread",
                                    w->restarted ? "restart" : "passive");

    /*
     * The WAL starts again from its beginning at the first write that
     * finds it all copied.  Commits made while this checkpoint ran are
     * not: copy them now, or the WAL would only grow until the next
     * commit past the mark, and a worker that stops writing would leave
     * them there.
     */

    if (ngx_http_agent_sqlite_wal_again
        && ngx_http_agent_sqlite_wal_post() != NGX_OK)
    {
        ngx_http_agent_sqlite_wal_again = 0;
        ngx_http_agent_sqlite_wal_inline(ngx_http_agent_sqlite_wal_db, "main");
    }
}

#endif


/*
 * The worker's end.  nginx's thread pool ends first (a core module): its
 * threads run what is queued before their exit.  A task still posted
 * then (the pool could not queue its exit) keeps its handle: the process
 * ends anyway.
 */

void
ngx_http_agent_sqlite_wal_close(void)
{
#if (NGX_THREADS)
    ngx_http_agent_sqlite_wal_t  *w;

    if (ngx_http_agent_sqlite_wal_task && !ngx_http_agent_sqlite_wal_posted) {
        w = ngx_http_agent_sqlite_wal_task->ctx;
        sqlite3_close(w->db);
    }

    ngx_http_agent_sqlite_wal_task = NULL;
#endif

    ngx_http_agent_sqlite_wal_db = NULL;
}
