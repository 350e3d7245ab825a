
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include <sqlite3.h>

#if (NGX_THREADS)
#include <ngx_thread_pool.h>
#endif

#include "ngx_http_agent_ops.h"
#include "ngx_http_agent_sql.h"
#include "ngx_http_agent_store.h"


/*
 * The SQL tools and the schema read on nginx's thread pool.  A job owns a
 * pool and copies of everything it reads, so the request may go away while
 * the thread runs: the completion handler then only frees the job.  Each
 * thread keeps its own read-only handles; the deadline is the event loop's.
 */
#define NGX_HTTP_AGENT_SQL_THREAD_HANDLES  8

typedef struct {
    ngx_http_agent_database_t   *database;
    sqlite3                     *db;
} ngx_http_agent_sql_thread_handle_t;


struct ngx_http_agent_sql_job_s {
    ngx_pool_t                  *pool;
    ngx_http_agent_sql_ctx_t     ctx;
    ngx_str_t                    name;
    ngx_str_t                    args;
    ngx_str_t                    result;
    ngx_int_t                    rc;
    ngx_http_agent_sql_done_pt   done;
    void                        *data;
    ngx_uint_t                   cancelled;
    ngx_msec_t                   start;      /* posted at */
    uint64_t                     posted;     /* the bench's clock: */
    uint64_t                     work;       /* ngx_http_agent_phase.c */

    /*
     * The deadline is the event loop's: its timer interrupts the handle
     * the thread runs on.  state: 0 idle, 1 running on "db", 2 the event
     * loop is interrupting it (the thread waits for that before it may
     * close or reuse the handle).
     */
    ngx_event_t                  expire;
    sqlite3                     *db;
    ngx_atomic_t                 state;
    ngx_atomic_t                 interrupted;
};


#if (NGX_THREADS)

static void ngx_http_agent_sql_schema_run(void *data, ngx_log_t *log);
static void ngx_http_agent_sql_schema_done(ngx_event_t *ev);
static void ngx_http_agent_sql_job_run(void *data, ngx_log_t *log);
static void ngx_http_agent_sql_job_done(ngx_event_t *ev);
static void ngx_http_agent_sql_job_expire(ngx_event_t *ev);
static void ngx_http_agent_sql_job_interrupt(ngx_http_agent_sql_job_t *job);


static __thread ngx_http_agent_sql_thread_handle_t
    ngx_http_agent_sql_thread_handles[NGX_HTTP_AGENT_SQL_THREAD_HANDLES];


typedef struct {
    ngx_pool_t                    *pool;
    ngx_http_agent_database_t     *database;
    ngx_str_t                      tables;
    ngx_int_t                      rc;
    ngx_http_agent_sql_schema_pt   done;
    void                          *data;
} ngx_http_agent_sql_schema_job_t;


/*
 * The schema of a database (POST /connection) is read on the thread
 * pool, with the thread's own handle: a large schema or a slow disk never
 * holds up the event loop.  NGX_OK: done() is called later.
 */

ngx_int_t
ngx_http_agent_sql_schema_post(void *thread_pool, ngx_log_t *log,
    ngx_http_agent_database_t *database, ngx_http_agent_sql_schema_pt done,
    void *data)
{
    ngx_pool_t                       *pool;
    ngx_thread_task_t                *task;
    ngx_http_agent_sql_schema_job_t  *job;

    if (thread_pool == NULL) {
        return NGX_DECLINED;
    }

    pool = ngx_create_pool(4096, ngx_cycle->log);
    if (pool == NULL) {
        return NGX_ERROR;
    }

    task = ngx_thread_task_alloc(pool,
                                 sizeof(ngx_http_agent_sql_schema_job_t));
    if (task == NULL) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    job = task->ctx;
    job->pool = pool;
    job->database = database;
    job->done = done;
    job->data = data;

    task->handler = ngx_http_agent_sql_schema_run;
    task->event.handler = ngx_http_agent_sql_schema_done;
    task->event.data = job;
    task->event.log = log;

    if (ngx_thread_task_post(thread_pool, task) != NGX_OK) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    return NGX_OK;
}


static void
ngx_http_agent_sql_schema_run(void *data, ngx_log_t *log)
{
    ngx_http_agent_sql_schema_job_t *job = data;

    sqlite3  *db;

    db = ngx_http_agent_sql_sandbox_open(log,
                                         (char *) job->database->path.data);
    if (db == NULL) {
        job->rc = NGX_ERROR;
        return;
    }

    job->rc = ngx_http_agent_sql_schema_read(job->pool, log, job->database,
                                             db, &job->tables);

    sqlite3_close(db);
}


static void
ngx_http_agent_sql_schema_done(ngx_event_t *ev)
{
    ngx_http_agent_sql_schema_job_t *job = ev->data;

    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, ev->log, 0,
                   "agent: schema of \"%V\" read on a thread",
                   &job->database->name);

    /* the receiver copies the tables: the job's pool goes now */
    job->done(job->data, job->rc, &job->tables);

    ngx_destroy_pool(job->pool);
}


ngx_http_agent_sql_job_t *
ngx_http_agent_sql_job_post(ngx_http_agent_sql_ctx_t *ctx, ngx_log_t *log,
    ngx_str_t *name, ngx_str_t *args, ngx_http_agent_sql_done_pt done,
    void *data)
{
    ngx_uint_t                  i;
    ngx_pool_t                 *pool;
    ngx_thread_task_t          *task;
    ngx_http_agent_sql_job_t   *job;
    ngx_http_agent_resource_t  *src, *dst;

    pool = ngx_create_pool(4096, ngx_cycle->log);
    if (pool == NULL) {
        return NULL;
    }

    task = ngx_thread_task_alloc(pool, sizeof(ngx_http_agent_sql_job_t));
    if (task == NULL) {
        goto failed;
    }

    job = task->ctx;
    job->pool = pool;
    job->ctx = *ctx;
    job->done = done;
    job->data = data;

    job->name.len = name->len;
    job->name.data = ngx_pstrdup(pool, name);
    job->args.len = args->len;
    job->args.data = ngx_pstrdup(pool, args);

    if ((name->len && job->name.data == NULL)
        || (args->len && job->args.data == NULL))
    {
        goto failed;
    }

    if (ctx->resources) {
        job->ctx.resources = ngx_array_create(pool,
                                        ngx_max(ctx->resources->nelts, 1),
                                        sizeof(ngx_http_agent_resource_t));
        if (job->ctx.resources == NULL) {
            goto failed;
        }

        src = ctx->resources->elts;

        for (i = 0; i < ctx->resources->nelts; i++) {
            dst = ngx_array_push(job->ctx.resources);
            if (dst == NULL) {
                goto failed;
            }

            *dst = src[i];

            /* the paths go to sqlite: NUL-terminated copies */
            dst->path.data = ngx_pnalloc(pool, src[i].path.len + 1);
            dst->name.data = ngx_pstrdup(pool, &src[i].name);
            dst->table.data = ngx_pstrdup(pool, &src[i].table);
            dst->columns.data = ngx_pstrdup(pool, &src[i].columns);

            if (dst->path.data == NULL || dst->name.data == NULL
                || dst->table.data == NULL || dst->columns.data == NULL)
            {
                goto failed;
            }

            ngx_cpystrn(dst->path.data, src[i].path.data,
                        src[i].path.len + 1);
        }
    }

    task->handler = ngx_http_agent_sql_job_run;
    task->event.handler = ngx_http_agent_sql_job_done;
    task->event.data = job;
    task->event.log = ngx_cycle->log;

    if (ngx_thread_task_post(ctx->thread_pool, task) != NGX_OK) {
        goto failed;
    }

    job->expire.handler = ngx_http_agent_sql_job_expire;
    job->expire.data = job;
    job->expire.log = ngx_cycle->log;
    job->expire.cancelable = 1;

    ngx_add_timer(&job->expire, ctx->timeout);

    job->start = ngx_current_msec;
    job->posted = ngx_http_agent_phase_now();

    return job;

failed:

    ngx_destroy_pool(pool);

    return NULL;
}


void
ngx_http_agent_sql_job_cancel(ngx_http_agent_sql_job_t *job)
{
    /* the statement is stopped now; its result is then dropped */
    job->cancelled = 1;
    ngx_http_agent_sql_job_interrupt(job);
}


static void
ngx_http_agent_sql_job_expire(ngx_event_t *ev)
{
    ngx_http_agent_sql_job_t *job = ev->data;

    u_char     buf[128];
    ngx_str_t  result;

    ngx_log_error(NGX_LOG_INFO, ev->log, 0, "agent: a SQL statement passed "
                  "its deadline of %M ms and is interrupted",
                  job->ctx.timeout);

    ngx_http_agent_sql_job_interrupt(job);

    if (job->cancelled) {
        return;
    }

    /*
     * The turn goes on now: a statement stuck inside one SQLite call
     * (printf's %c with a huge precision loops in SQLite 3.40 without
     * looking at the interrupt) keeps its thread a while longer, and its
     * result is dropped.  The thread owns the job's pool meanwhile: the
     * answer is built here, on the stack.
     */

    job->cancelled = 1;

    result.data = buf;
    result.len = ngx_sprintf(buf, "{\"error\":\"the query ran longer than "
                             "%M ms and was stopped\"}", job->ctx.timeout)
                 - buf;

    job->done(job->data, &result);
}


/* on the event loop; sqlite3_interrupt() is safe from any thread */

static void
ngx_http_agent_sql_job_interrupt(ngx_http_agent_sql_job_t *job)
{
    job->interrupted = 1;
    ngx_memory_barrier();

    if (ngx_atomic_cmp_set(&job->state, 1, 2)) {
        sqlite3_interrupt(job->db);
        (void) ngx_atomic_cmp_set(&job->state, 2, 1);
    }
}


static void
ngx_http_agent_sql_job_run(void *data, ngx_log_t *log)
{
    ngx_http_agent_sql_job_t *job = data;

    ngx_str_t                            err;
    ngx_uint_t                           i;
    ngx_http_agent_sql_thread_handle_t  *h;

    /* each thread keeps its own handles: no opening per call, no sharing */

    h = NULL;

    for (i = 0; i < NGX_HTTP_AGENT_SQL_THREAD_HANDLES; i++) {
        if (ngx_http_agent_sql_thread_handles[i].db == NULL
            || ngx_http_agent_sql_thread_handles[i].database
               == job->ctx.database)
        {
            h = &ngx_http_agent_sql_thread_handles[i];
            break;
        }
    }

    if (h && h->db) {
        job->ctx.db = h->db;

    } else {
        job->ctx.db = ngx_http_agent_sql_sandbox_open(log, job->ctx.database
                                  ? (char *) job->ctx.database->path.data
                                  : ":memory:");

        if (job->ctx.db == NULL) {
            ngx_str_set(&err, "the database cannot be opened");
            job->rc = ngx_http_agent_json_error(job->pool, &err,
                                                &job->result);
            return;
        }

        if (h) {
            h->database = job->ctx.database;
            h->db = job->ctx.db;
        }
    }

    if (job->interrupted) {
        /* it waited for a thread past its deadline */
        ngx_str_set(&err, "the query waited longer than its time cap for "
                    "a thread and was not run");
        job->rc = ngx_http_agent_json_error(job->pool, &err, &job->result);
        goto done;
    }

    job->db = job->ctx.db;
    ngx_memory_barrier();
    job->state = 1;

    job->work = job->posted ? ngx_http_agent_phase_clock() : 0;

    job->rc = ngx_http_agent_sql_tool(job->pool, log, &job->ctx, &job->name,
                                      &job->args, &job->result);

    if (job->posted) {
        job->work = ngx_http_agent_phase_clock() - job->work;
    }

    /* the event loop may be inside sqlite3_interrupt(): not for long */
    while (!ngx_atomic_cmp_set(&job->state, 1, 0)) {
        ngx_sched_yield();
    }

    if (job->interrupted) {
        /* an interrupt between statements stays set: spend it here */
        (void) sqlite3_exec(job->ctx.db, "SELECT 1", NULL, NULL, NULL);
    }

done:

    if (h == NULL) {
        sqlite3_close(job->ctx.db);
    }

    job->ctx.db = NULL;
}


static void
ngx_http_agent_sql_job_done(ngx_event_t *ev)
{
    ngx_http_agent_sql_job_t *job = ev->data;

    ngx_str_t  err;

    if (job->expire.timer_set) {
        ngx_del_timer(&job->expire);
    }

    ngx_http_agent_metrics_observe(NGX_HTTP_AGENT_M_SQL_SECONDS, NULL,
                                   ngx_current_msec - job->start);

    /* the hand-off alone: to the thread and back, the query's time not */
    if (job->posted) {
        ngx_http_agent_phase_put(NGX_HTTP_AGENT_PHASE_SQL,
                                 ngx_http_agent_phase_clock() - job->posted
                                 - job->work);
    }

    if (!job->cancelled) {
        if (job->rc != NGX_OK) {
            ngx_str_set(&err, "the tool failed");
            (void) ngx_http_agent_json_error(job->pool, &err, &job->result);
        }

        /* the receiver copies the result: the job's pool goes now */
        job->done(job->data, &job->result);
    }

    ngx_destroy_pool(job->pool);
}

#else

ngx_int_t
ngx_http_agent_sql_schema_post(void *thread_pool, ngx_log_t *log,
    ngx_http_agent_database_t *database, ngx_http_agent_sql_schema_pt done,
    void *data)
{
    return NGX_DECLINED;
}


ngx_http_agent_sql_job_t *
ngx_http_agent_sql_job_post(ngx_http_agent_sql_ctx_t *ctx, ngx_log_t *log,
    ngx_str_t *name, ngx_str_t *args, ngx_http_agent_sql_done_pt done,
    void *data)
{
    return NULL;
}


void
ngx_http_agent_sql_job_cancel(ngx_http_agent_sql_job_t *job)
{
}

#endif
