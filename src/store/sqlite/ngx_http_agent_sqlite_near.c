
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
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_sqlite.h"


/*
 * A search of the items by meaning on SQLite: the items that pass the
 * owner, prefix, filter and expiry tests in SQL are read newest first and
 * scored in C (store_near.c), then the best are read whole.  The scan
 * reads up to NGX_HTTP_AGENT_STORE_NEAR_SCAN rows: it runs on the thread
 * pool, on a read handle of its own opened for the search (WAL: it waits
 * on no writer), and its caller hears of it as of a PostgreSQL answer;
 * without a pool, on the event loop.
 */


typedef struct {
    ngx_pool_t                    *pool;      /* the job's and its rows' */
    ngx_http_agent_store_call_t   *sc;        /* NULL: its caller is gone */
    ngx_http_agent_item_query_t    q;
    ngx_http_agent_store_rank_t    rank;
    ngx_array_t                   *items;
    ngx_int_t                      rc;
    int                            err;       /* SQLite's, for the log */
    ngx_uint_t                     cut;       /* stopped by the time bound */
    ngx_uint_t                     posted;
} ngx_http_agent_sqlite_near_t;


static ngx_int_t ngx_http_agent_sqlite_near_copy(
    ngx_http_agent_sqlite_near_t *nr, ngx_http_agent_item_query_t *q);
static void ngx_http_agent_sqlite_near_run(void *data, ngx_log_t *log);
static ngx_int_t ngx_http_agent_sqlite_near_scan(
    ngx_http_agent_sqlite_near_t *nr, sqlite3 *db);
static ngx_int_t ngx_http_agent_sqlite_near_rows(
    ngx_http_agent_sqlite_near_t *nr, sqlite3 *db);
static ngx_int_t ngx_http_agent_sqlite_near_end(
    ngx_http_agent_sqlite_near_t *nr, ngx_log_t *log, ngx_array_t *out);
static void ngx_http_agent_sqlite_near_gone(void *data);
#if (NGX_THREADS)
static void ngx_http_agent_sqlite_near_done(ngx_event_t *ev);
#endif


static u_char             *ngx_http_agent_sqlite_near_path;
#if (NGX_THREADS)
static ngx_thread_pool_t  *ngx_http_agent_sqlite_near_tp;
#endif


/*
 * ?1 owner, ?2 prefix, ?3 now, ?4 filter, ?5 the scan's bound: the rows
 * chosen and ordered by their keys alone, then their vectors read by key
 * (a sort of the rows with their vectors copied megabytes)
 */
static const char  ngx_http_agent_sqlite_near_scan_sql[] =
    "SELECT n, embedding FROM items WHERE n IN (SELECT n FROM items"
    " WHERE " NGX_HTTP_AGENT_SQL_ITEM_WHERE " AND embedding IS NOT NULL"
    " ORDER BY n DESC LIMIT ?5)";

static const char  ngx_http_agent_sqlite_near_row_sql[] =
    "SELECT " NGX_HTTP_AGENT_SQL_ITEM_COLS " FROM items WHERE n = ?1";


void
ngx_http_agent_sqlite_near_init(ngx_str_t *path, void *thread_pool)
{
    /* the store's path is NUL-terminated (sqlite3_open_v2 took it) */
    ngx_http_agent_sqlite_near_path = path->data;
#if (NGX_THREADS)
    ngx_http_agent_sqlite_near_tp = thread_pool;
#endif
}


ngx_int_t
ngx_http_agent_sqlite_near(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q, ngx_array_t *items)
{
    void                           *p;
    ngx_array_t                    *rows;
    ngx_pool_cleanup_t             *cln;
    ngx_http_agent_sqlite_near_t   *nr;
    ngx_http_agent_store_answer_t  *a;
#if (NGX_THREADS)
    ngx_thread_task_t              *task;
#endif

    a = ngx_http_agent_store_answered(sc, ngx_http_agent_store_op(item_search),
                                      &q->prefix, &q->query);

    if (a) {
        rows = a->value;

        if (a->rc == NGX_OK && rows && rows->nelts) {
            p = ngx_array_push_n(items, rows->nelts);
            if (p == NULL) {
                return NGX_ERROR;
            }

            ngx_memcpy(p, rows->elts, rows->nelts * rows->size);
        }

        return a->rc;
    }

    cln = ngx_pool_cleanup_add(sc->pool, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    nr = NULL;
    p = ngx_create_pool(4096, sc->log);

    if (p) {
        nr = ngx_pcalloc(p, sizeof(ngx_http_agent_sqlite_near_t));
    }

    if (nr == NULL) {
        if (p) {
            ngx_destroy_pool(p);
        }

        return NGX_ERROR;
    }

    nr->pool = p;
    nr->sc = sc;
    cln->handler = ngx_http_agent_sqlite_near_gone;
    cln->data = nr;

    if (ngx_http_agent_sqlite_near_copy(nr, q) != NGX_OK) {
        return NGX_ERROR;
    }

#if (NGX_THREADS)

    if (ngx_http_agent_sqlite_near_tp && sc->wake) {
        task = ngx_thread_task_alloc(nr->pool, 0);
        if (task == NULL) {
            return NGX_ERROR;
        }

        task->ctx = nr;
        task->handler = ngx_http_agent_sqlite_near_run;
        task->event.handler = ngx_http_agent_sqlite_near_done;
        task->event.data = nr;
        task->event.log = sc->log;

        if (ngx_thread_task_post(ngx_http_agent_sqlite_near_tp, task)
            == NGX_OK)
        {
            nr->posted = 1;
            sc->waiting++;
            return NGX_AGAIN;
        }

        /* the pool's queue is full: here, this once */
    }

#endif

    ngx_http_agent_sqlite_near_run(nr, sc->log);

    return ngx_http_agent_sqlite_near_end(nr, sc->log, items);
}


/* what the thread reads is its own: the query copied into the job's pool */

static ngx_int_t
ngx_http_agent_sqlite_near_copy(ngx_http_agent_sqlite_near_t *nr,
    ngx_http_agent_item_query_t *q)
{
    ngx_uint_t   i;
    ngx_str_t   *s[4];

    nr->q = *q;
    s[0] = &nr->q.owner;
    s[1] = &nr->q.prefix;
    s[2] = &nr->q.filter;
    s[3] = &nr->q.vector;

    for (i = 0; i < 4; i++) {
        if (s[i]->len == 0) {
            continue;
        }

        s[i]->data = ngx_pstrdup(nr->pool, s[i]);
        if (s[i]->data == NULL) {
            return NGX_ERROR;
        }
    }

    nr->items = ngx_array_create(nr->pool, 8, sizeof(ngx_http_agent_item_t));
    if (nr->items == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_store_near_init(nr->pool, &nr->rank, &nr->q);
}


/* on a pool's thread (or the event loop): no log, no nginx event here */

static void
ngx_http_agent_sqlite_near_run(void *data, ngx_log_t *log)
{
    ngx_http_agent_sqlite_near_t *nr = data;

    int       rc;
    sqlite3  *db;

    nr->rc = NGX_ERROR;

    rc = sqlite3_open_v2((char *) ngx_http_agent_sqlite_near_path, &db,
                         SQLITE_OPEN_READONLY|SQLITE_OPEN_NOMUTEX, NULL);

    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(db, 100);
        rc = ngx_http_agent_sqlite_contains_add(db);
    }

    if (rc == SQLITE_OK) {
        /*
         * a handle of its own has no page cache yet: the file's pages
         * read through a mapping of the OS's cache, not a read() each
         */
        rc = sqlite3_exec(db, "PRAGMA mmap_size=1073741824", NULL, NULL,
                          NULL);
    }

    if (rc != SQLITE_OK) {
        nr->err = rc;
        sqlite3_close(db);
        return;
    }

    if (ngx_http_agent_sqlite_near_scan(nr, db) == NGX_OK
        && ngx_http_agent_sqlite_near_rows(nr, db) == NGX_OK)
    {
        nr->rc = NGX_OK;
    }

    sqlite3_close(db);
}


static ngx_int_t
ngx_http_agent_sqlite_near_scan(ngx_http_agent_sqlite_near_t *nr,
    sqlite3 *db)
{
    int            rc;
    ngx_msec_t     start;
    sqlite3_stmt  *stmt;

    rc = sqlite3_prepare_v2(db, ngx_http_agent_sqlite_near_scan_sql, -1,
                            &stmt, NULL);
    if (rc != SQLITE_OK) {
        nr->err = rc;
        return NGX_ERROR;
    }

    if (nr->q.owner.len) {
        ngx_http_agent_sqlite_bind(stmt, 1, &nr->q.owner);
    }

    if (nr->q.prefix.len) {
        ngx_http_agent_sqlite_bind(stmt, 2, &nr->q.prefix);
    }

    sqlite3_bind_int64(stmt, 3, nr->q.now);

    if (nr->q.filter.len) {
        ngx_http_agent_sqlite_bind(stmt, 4, &nr->q.filter);
    }

    sqlite3_bind_int64(stmt, 5, NGX_HTTP_AGENT_STORE_NEAR_SCAN);

    start = ngx_http_agent_store_near_clock();

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        ngx_http_agent_store_near_add(&nr->rank,
                                      sqlite3_column_int64(stmt, 0),
                                      sqlite3_column_blob(stmt, 1),
                                      sqlite3_column_bytes(stmt, 1));

        if ((nr->rank.scanned & 255) == 0
            && ngx_http_agent_store_near_clock() - start
               > NGX_HTTP_AGENT_STORE_NEAR_TIME)
        {
            nr->cut = 1;
            rc = SQLITE_DONE;
            break;
        }
    }

    sqlite3_finalize(stmt);

    if (rc != SQLITE_DONE) {
        nr->err = rc;
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* the best, past the offset, read whole, each with its score */

static ngx_int_t
ngx_http_agent_sqlite_near_rows(ngx_http_agent_sqlite_near_t *nr,
    sqlite3 *db)
{
    int                     rc;
    ngx_uint_t              i;
    sqlite3_stmt           *stmt;
    ngx_http_agent_item_t  *item;

    rc = sqlite3_prepare_v2(db, ngx_http_agent_sqlite_near_row_sql, -1,
                            &stmt, NULL);
    if (rc != SQLITE_OK) {
        nr->err = rc;
        return NGX_ERROR;
    }

    rc = SQLITE_DONE;

    for (i = nr->q.offset; i < nr->rank.nbest; i++) {
        sqlite3_bind_int64(stmt, 1, nr->rank.best[i].n);

        rc = sqlite3_step(stmt);

        if (rc == SQLITE_ROW) {
            item = ngx_array_push(nr->items);

            if (item == NULL
                || ngx_http_agent_sqlite_row(nr->pool, stmt,
                                             &ngx_http_agent_store_item_cols,
                                             item)
                   != NGX_OK)
            {
                sqlite3_finalize(stmt);
                return NGX_ERROR;
            }

            item->score = nr->rank.best[i].score;

        } else if (rc != SQLITE_DONE) {
            break;
        }

        /* SQLITE_DONE: gone since the scan, left out */

        sqlite3_reset(stmt);
    }

    sqlite3_finalize(stmt);

    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        nr->err = rc;
        return NGX_ERROR;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_sqlite_near_end(ngx_http_agent_sqlite_near_t *nr,
    ngx_log_t *log, ngx_array_t *out)
{
    void  *p;

    if (nr->rc != NGX_OK) {
        ngx_log_error(NGX_LOG_ERR, log, 0, "agent: a search by meaning "
                      "failed: %s", nr->err != SQLITE_OK
                                    ? sqlite3_errstr(nr->err) : "no memory");
        return NGX_ERROR;
    }

    if (nr->cut) {
        ngx_log_error(NGX_LOG_WARN, log, 0, "agent: a search by meaning "
                      "stopped after %ui items and %d ms",
                      nr->rank.scanned, NGX_HTTP_AGENT_STORE_NEAR_TIME);
    }

    if (out && nr->items->nelts) {
        p = ngx_array_push_n(out, nr->items->nelts);
        if (p == NULL) {
            return NGX_ERROR;
        }

        ngx_memcpy(p, nr->items->elts,
                   nr->items->nelts * sizeof(ngx_http_agent_item_t));
    }

    return NGX_OK;
}


/* the caller's pool goes: the job's with it, or when its thread is done */

static void
ngx_http_agent_sqlite_near_gone(void *data)
{
    ngx_http_agent_sqlite_near_t *nr = data;

    if (nr->posted) {
        nr->sc = NULL;
        return;
    }

    ngx_destroy_pool(nr->pool);
}


#if (NGX_THREADS)

static void
ngx_http_agent_sqlite_near_done(ngx_event_t *ev)
{
    ngx_http_agent_sqlite_near_t *nr = ev->data;

    ngx_int_t                       rc;
    ngx_http_agent_store_call_t    *sc;
    ngx_http_agent_store_answer_t  *a;

    nr->posted = 0;
    sc = nr->sc;

    if (sc == NULL) {
        ngx_destroy_pool(nr->pool);
        return;
    }

    sc->waiting--;

    rc = ngx_http_agent_sqlite_near_end(nr, sc->log, NULL);

    /* the rows stay in the job's pool: its cleanup is the call's pool's */

    a = ngx_http_agent_store_answer_add(sc);

    if (a) {
        a->rc = rc;
        a->value = nr->items;
    }

    sc->wake(sc);
}

#endif
