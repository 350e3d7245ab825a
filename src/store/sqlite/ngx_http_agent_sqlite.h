
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_SQLITE_H_INCLUDED_
#define _NGX_HTTP_AGENT_SQLITE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"


/* The SQLite store's assistants (sqlite_assistant.c), for its table. */


#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_sqlite_assistant_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_assistant_row_t *row);
ngx_int_t ngx_http_agent_sqlite_assistant_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, int64_t version,
    ngx_http_agent_assistant_row_t *row);
ngx_int_t ngx_http_agent_sqlite_assistant_list(
    ngx_http_agent_store_call_t *sc, ngx_str_t *owner, ngx_str_t *graph_id,
    ngx_str_t *id, ngx_array_t *rows);
ngx_int_t ngx_http_agent_sqlite_assistant_latest(
    ngx_http_agent_store_call_t *sc, ngx_str_t *owner, ngx_str_t *id,
    int64_t version, ngx_str_t *now);
ngx_int_t ngx_http_agent_sqlite_assistant_delete(
    ngx_http_agent_store_call_t *sc, ngx_str_t *owner, ngx_str_t *id);

#pragma GCC visibility pop


/* The SQLite store's crons (sqlite_cron.c), for its table. */


#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_sqlite_cron_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_cron_row_t *row);
ngx_int_t ngx_http_agent_sqlite_cron_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, ngx_http_agent_cron_row_t *row);
ngx_int_t ngx_http_agent_sqlite_cron_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_array_t *rows);
ngx_int_t ngx_http_agent_sqlite_cron_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id);
ngx_int_t ngx_http_agent_sqlite_cron_due(ngx_http_agent_store_call_t *sc,
    int64_t now, ngx_array_t *rows);
ngx_int_t ngx_http_agent_sqlite_cron_claim(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t was, int64_t next);

#pragma GCC visibility pop


/*
 * The SQLite store's base (sqlite_db.c): the worker's handle, the store's
 * statements on it, a statement's step and columns, the caller's
 * transaction.  Hidden, as all of the back end's declarations: it is
 * reached from outside only through its table.
 */
#pragma GCC visibility push(hidden)


/* the store's statements, prepared once per worker (sqlite_db.c) */
enum {
    NGX_HTTP_AGENT_SQL_SESSION_INSERT = 0,
    NGX_HTTP_AGENT_SQL_SESSION_GET,
    NGX_HTTP_AGENT_SQL_SESSION_LIST,
    NGX_HTTP_AGENT_SQL_SESSION_COUNT,
    NGX_HTTP_AGENT_SQL_SESSION_DELETE,
    NGX_HTTP_AGENT_SQL_SESSION_SET_MODEL,
    NGX_HTTP_AGENT_SQL_SESSION_SET_DATABASE,
    NGX_HTTP_AGENT_SQL_SESSION_SET_METADATA,
    NGX_HTTP_AGENT_SQL_SESSION_TOUCH,
    NGX_HTTP_AGENT_SQL_LOCK,
    NGX_HTTP_AGENT_SQL_LOCK_OWNER,
    NGX_HTTP_AGENT_SQL_LOCK_STEAL,
    NGX_HTTP_AGENT_SQL_UNLOCK,
    NGX_HTTP_AGENT_SQL_RENEW,
    NGX_HTTP_AGENT_SQL_LEASES_RENEW,
    NGX_HTTP_AGENT_SQL_MESSAGE_INSERT,
    NGX_HTTP_AGENT_SQL_MESSAGES,
    NGX_HTTP_AGENT_SQL_MESSAGES_SINCE,
    NGX_HTTP_AGENT_SQL_MESSAGES_FROM,
    NGX_HTTP_AGENT_SQL_MESSAGES_PAGE,
    NGX_HTTP_AGENT_SQL_MESSAGES_DELETE,
    NGX_HTTP_AGENT_SQL_CHECKPOINT_INSERT,
    NGX_HTTP_AGENT_SQL_CHECKPOINT_LATEST,
    NGX_HTTP_AGENT_SQL_CHECKPOINT_LIST,
    NGX_HTTP_AGENT_SQL_CHECKPOINTS_DELETE,
    NGX_HTTP_AGENT_SQL_RESOURCE_INSERT,
    NGX_HTTP_AGENT_SQL_RESOURCE_LIST,
    NGX_HTTP_AGENT_SQL_RESOURCES_DELETE,
    NGX_HTTP_AGENT_SQL_RUN_INSERT,
    NGX_HTTP_AGENT_SQL_RUN_STATUS,
    NGX_HTTP_AGENT_SQL_RUN_GET,
    NGX_HTTP_AGENT_SQL_RUN_LIST,
    NGX_HTTP_AGENT_SQL_RUN_CANCEL,
    NGX_HTTP_AGENT_SQL_RUN_CANCELLED,
    NGX_HTTP_AGENT_SQL_RUN_EVENT_INSERT,
    NGX_HTTP_AGENT_SQL_RUN_EVENTS,
    NGX_HTTP_AGENT_SQL_RUN_EVENTS_DELETE,
    NGX_HTTP_AGENT_SQL_RUNS_DELETE,
    NGX_HTTP_AGENT_SQL_THREAD_BUSY,
    NGX_HTTP_AGENT_SQL_ROLLBACK_MESSAGES,
    NGX_HTTP_AGENT_SQL_ROLLBACK_CHECKPOINTS,
    NGX_HTTP_AGENT_SQL_ROLLBACK_COUNTS,
    NGX_HTTP_AGENT_SQL_RUN_EVENTS_DELETE_ONE,
    NGX_HTTP_AGENT_SQL_RUN_DELETE,
    NGX_HTTP_AGENT_SQL_RUN_CLAIM_LEASE,
    NGX_HTTP_AGENT_SQL_RUN_CLAIM_COUNT,
    NGX_HTTP_AGENT_SQL_RUN_CLAIMED,
    NGX_HTTP_AGENT_SQL_RUN_CLAIM_CUT,
    NGX_HTTP_AGENT_SQL_FORK_LATER,
    NGX_HTTP_AGENT_SQL_FORK_KEEP,
    NGX_HTTP_AGENT_SQL_FORK_MESSAGES,
    NGX_HTTP_AGENT_SQL_RUN_EVENTS_EXPIRE,
    NGX_HTTP_AGENT_SQL_RUN_EVENTS_EXPIRED,
    NGX_HTTP_AGENT_SQL_ASSISTANT_CREATE,
    NGX_HTTP_AGENT_SQL_ASSISTANT_BUMP,
    NGX_HTTP_AGENT_SQL_ASSISTANT_VERSION,
    NGX_HTTP_AGENT_SQL_ASSISTANT_GET,
    NGX_HTTP_AGENT_SQL_ASSISTANT_LIST,
    NGX_HTTP_AGENT_SQL_ASSISTANT_LATEST,
    NGX_HTTP_AGENT_SQL_ASSISTANT_DELETE,
    NGX_HTTP_AGENT_SQL_ASSISTANT_PURGE,
    NGX_HTTP_AGENT_SQL_ITEM_PUT,
    NGX_HTTP_AGENT_SQL_ITEM_EXPIRE,
    NGX_HTTP_AGENT_SQL_ITEM_GET,
    NGX_HTTP_AGENT_SQL_ITEM_DELETE,
    NGX_HTTP_AGENT_SQL_ITEM_SEARCH,
    NGX_HTTP_AGENT_SQL_ITEM_QUERY,
    NGX_HTTP_AGENT_SQL_ITEM_NAMESPACES,
    NGX_HTTP_AGENT_SQL_COPY_SESSION,
    NGX_HTTP_AGENT_SQL_COPY_MESSAGES,
    NGX_HTTP_AGENT_SQL_COPY_CHECKPOINTS,
    NGX_HTTP_AGENT_SQL_COPY_RUNS,
    NGX_HTTP_AGENT_SQL_CRON_PUT,
    NGX_HTTP_AGENT_SQL_CRON_GET,
    NGX_HTTP_AGENT_SQL_CRON_LIST,
    NGX_HTTP_AGENT_SQL_CRON_DELETE,
    NGX_HTTP_AGENT_SQL_CRON_DUE,
    NGX_HTTP_AGENT_SQL_CRON_CLAIM,
    NGX_HTTP_AGENT_SQL_CRONS_DELETE,
    NGX_HTTP_AGENT_SQL_WRITES_DROP,
    NGX_HTTP_AGENT_SQL_RUN_RELEASE,
    NGX_HTTP_AGENT_SQL_CACHE_GET,
    NGX_HTTP_AGENT_SQL_CACHE_EXPIRE,
    NGX_HTTP_AGENT_SQL_CACHE_ROOM,
    NGX_HTTP_AGENT_SQL_CACHE_OLDEST,
    NGX_HTTP_AGENT_SQL_CACHE_BYTES,
    NGX_HTTP_AGENT_SQL_CACHE_PUT,
    NGX_HTTP_AGENT_SQL_BEGIN,
    NGX_HTTP_AGENT_SQL_COMMIT,
    NGX_HTTP_AGENT_SQL_ROLLBACK,
    NGX_HTTP_AGENT_SQL_LAST
};


/* an item's columns, and the items of a search (?1 owner .. ?4 filter) */
#define NGX_HTTP_AGENT_SQL_ITEM_COLS                                          \
    "owner, ns, key, value, created_at, updated_at, expires"

/* ns under the prefix ?2 (itself, or "?2." then more): a range of the key */
#define NGX_HTTP_AGENT_SQL_ITEM_UNDER                                         \
    "(?2 IS NULL OR ns = ?2 OR (ns >= ?2 || '.' AND ns < ?2 || '/'))"

#define NGX_HTTP_AGENT_SQL_ITEM_WHERE                                         \
    "owner = COALESCE(?1, '') AND " NGX_HTTP_AGENT_SQL_ITEM_UNDER             \
    " AND (expires IS NULL OR expires > ?3)"                                  \
    " AND (?4 IS NULL OR agent_contains(value, ?4))"


extern sqlite3       *ngx_http_agent_sqlite_db;
extern ngx_uint_t     ngx_http_agent_sqlite_tx;
extern ngx_log_t     *ngx_http_agent_sqlite_log;


ngx_int_t ngx_http_agent_sqlite_open(ngx_cycle_t *cycle, ngx_str_t *path,
    void *thread_pool);
void ngx_http_agent_sqlite_close(ngx_cycle_t *cycle);

sqlite3_stmt *ngx_http_agent_sqlite_stmt(ngx_uint_t n);
int ngx_http_agent_sqlite_contains_add(sqlite3 *db);
int ngx_http_agent_sqlite_copy_id_add(sqlite3 *db);
ngx_int_t ngx_http_agent_sqlite_exec(ngx_uint_t n);
ngx_int_t ngx_http_agent_sqlite_done(sqlite3_stmt *stmt, int rc);

/*
 * a statement's parameters, as pg_ask() takes them, and its rows, read
 * through their tables (sqlite_query.c)
 */
ngx_int_t ngx_http_agent_sqlite_col(ngx_pool_t *pool, sqlite3_stmt *stmt,
    int col, ngx_str_t *out);
void ngx_http_agent_sqlite_bind(sqlite3_stmt *stmt, int n, ngx_str_t *s);
sqlite3_stmt *ngx_http_agent_sqlite_bound(ngx_uint_t n, const char *fmt,
    ...);
ngx_int_t ngx_http_agent_sqlite_do(ngx_uint_t n, const char *fmt, ...);
ngx_int_t ngx_http_agent_sqlite_row(ngx_pool_t *pool, sqlite3_stmt *stmt,
    ngx_http_agent_store_table_t *t, void *row);
ngx_int_t ngx_http_agent_sqlite_one(ngx_pool_t *pool, sqlite3_stmt *stmt,
    ngx_http_agent_store_table_t *t, void *row);
ngx_int_t ngx_http_agent_sqlite_rows(ngx_pool_t *pool, sqlite3_stmt *stmt,
    ngx_http_agent_store_table_t *t, ngx_array_t *rows);
ngx_int_t ngx_http_agent_sqlite_text(ngx_pool_t *pool, sqlite3_stmt *stmt,
    ngx_str_t *out);

/* a transaction of the caller's: the checkpoint writes join it */
ngx_int_t ngx_http_agent_sqlite_begin(ngx_http_agent_store_call_t *sc);
ngx_int_t ngx_http_agent_sqlite_commit(ngx_http_agent_store_call_t *sc);
void ngx_http_agent_sqlite_rollback(ngx_http_agent_store_call_t *sc);


#pragma GCC visibility pop


/*
 * The SQLite store's history: messages, checkpoints, forks, resources
 * added (sqlite_history.c), for its table and the session's open.
 */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_sqlite_messages(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t upto, ngx_int_t images_keep, ngx_array_t *messages);
ngx_int_t ngx_http_agent_sqlite_messages_kept(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t upto, ngx_int_t images_keep, ngx_array_t *messages);
ngx_int_t ngx_http_agent_sqlite_messages_page(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t before, ngx_uint_t limit, ngx_uint_t all,
    ngx_uint_t images, ngx_uint_t *more,
    ngx_http_agent_store_message_pt handler, void *data);
ngx_int_t ngx_http_agent_sqlite_checkpoint_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_http_agent_checkpoint_t *cp);
ngx_int_t ngx_http_agent_sqlite_checkpoint_list(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_str_t *ns,
    ngx_array_t *checkpoints);
ngx_int_t ngx_http_agent_sqlite_checkpoint_write(
    ngx_http_agent_store_call_t *sc, ngx_str_t *session_id,
    ngx_http_agent_checkpoint_t *cp, ngx_array_t *added);
ngx_int_t ngx_http_agent_sqlite_resource_add(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_http_agent_resource_t *res);
ngx_int_t ngx_http_agent_sqlite_fork_later(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *from, ngx_array_t *later);
ngx_int_t ngx_http_agent_sqlite_fork_keep(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_str_t *channels);
ngx_int_t ngx_http_agent_sqlite_fork_cut(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t msg_count);


#pragma GCC visibility pop


/* The SQLite store's items of the LangGraph store (sqlite_items.c). */


#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_sqlite_item_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_t *item, int64_t now, ngx_uint_t quota_items,
    size_t quota_size);
ngx_int_t ngx_http_agent_sqlite_item_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *ns, ngx_str_t *key, int64_t now,
    ngx_http_agent_item_t *item);
ngx_int_t ngx_http_agent_sqlite_item_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *ns, ngx_str_t *key);
ngx_int_t ngx_http_agent_sqlite_item_search(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q, ngx_array_t *items);
ngx_int_t ngx_http_agent_sqlite_item_namespaces(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_item_query_t *q,
    ngx_array_t *namespaces);

#pragma GCC visibility pop


/*
 * NGX_AGENT_STORE_DEFER, a test's knob (sqlite_later.c): the SQLite store
 * answers later, through the answers kept in the call, as PostgreSQL does.
 */
#pragma GCC visibility push(hidden)


/* what an operation writes for its caller: a struct, rows it adds */
typedef struct {
    ngx_int_t                      rc;
    void                          *out[2];
    size_t                         size[2];
    ngx_array_t                   *rows[2];
    ngx_uint_t                     nrows[2];   /* before the operation */
} ngx_http_agent_sqlite_outs_t;


/* the operations as they answer at once */
extern ngx_http_agent_store_backend_t  ngx_http_agent_sqlite_now;


void ngx_http_agent_sqlite_later_init(ngx_http_agent_store_backend_t *table);
void ngx_http_agent_sqlite_later_sessions(
    ngx_http_agent_store_backend_t *table);
void ngx_http_agent_sqlite_later_runs(ngx_http_agent_store_backend_t *table);
void ngx_http_agent_sqlite_outs(ngx_http_agent_sqlite_outs_t *o, void *out,
    size_t size, ngx_array_t *rows);
ngx_uint_t ngx_http_agent_sqlite_kept(ngx_http_agent_store_call_t *sc,
    ngx_uint_t op, ngx_str_t *k1, ngx_str_t *k2,
    ngx_http_agent_sqlite_outs_t *o);
ngx_uint_t ngx_http_agent_sqlite_held(ngx_http_agent_store_call_t *sc,
    ngx_uint_t op, ngx_str_t *k1, ngx_str_t *k2, void *out, size_t size,
    ngx_array_t *rows, ngx_http_agent_sqlite_outs_t *o);
ngx_int_t ngx_http_agent_sqlite_later(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_sqlite_outs_t *o, ngx_int_t rc);


#pragma GCC visibility pop


/* the take-over check's reads, on a handle of their own (sqlite_look.c) */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_sqlite_look_init(ngx_cycle_t *cycle,
    ngx_str_t *path, void *thread_pool);
void ngx_http_agent_sqlite_look_close(void);

ngx_int_t ngx_http_agent_sqlite_run_lost(ngx_http_agent_store_call_t *sc,
    ngx_array_t *lost);
ngx_int_t ngx_http_agent_sqlite_run_orphans(ngx_http_agent_store_call_t *sc,
    ngx_array_t *orphans);


#pragma GCC visibility pop


/* the items searched by meaning, on a handle of its own (sqlite_near.c) */
#pragma GCC visibility push(hidden)

void ngx_http_agent_sqlite_near_init(ngx_str_t *path, void *thread_pool);
ngx_int_t ngx_http_agent_sqlite_near(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q, ngx_array_t *items);

#pragma GCC visibility pop


/* agent_checkpoint_keep's passes, on the thread pool (sqlite_prune.c) */
#pragma GCC visibility push(hidden)


void ngx_http_agent_sqlite_prune_init(ngx_cycle_t *cycle, ngx_str_t *path,
    void *thread_pool);
void ngx_http_agent_sqlite_prune_close(void);
ngx_int_t ngx_http_agent_sqlite_checkpoint_prune(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_str_t *run_id,
    ngx_uint_t keep, ngx_msec_t age);
ngx_int_t ngx_http_agent_sqlite_thread_storage(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_http_agent_storage_t *st);


#pragma GCC visibility pop


/* the SQLite store's claim of a lost run (sqlite_redrive.c) */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_sqlite_run_claim(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_lost_t *lost, ngx_msec_t hold,
    ngx_http_agent_run_row_t *row);


#pragma GCC visibility pop


/*
 * A busy SQLite file (sqlite_retry.c): an operation whose caller can wait
 * is tried again from a timer.  Below the rest of the back end: it knows
 * of the store's calls only, not of the file.
 */
#pragma GCC visibility push(hidden)


/* set by a statement that failed: SQLite found the file busy */
extern ngx_uint_t     ngx_http_agent_sqlite_busy_seen;

/* how long the busy handler yields before it gives up, in ms */
extern ngx_msec_t     ngx_http_agent_sqlite_spin;


/* an operation tried again on a busy file */
typedef ngx_int_t (*ngx_http_agent_sqlite_try_pt)(
    ngx_http_agent_store_call_t *sc, void *args);

ngx_uint_t ngx_http_agent_sqlite_can_wait(ngx_http_agent_store_call_t *sc,
    ngx_uint_t replay);
ngx_int_t ngx_http_agent_sqlite_busy(ngx_http_agent_store_call_t *sc,
    ngx_int_t rc, ngx_http_agent_sqlite_try_pt try, void *args, size_t size);
void ngx_http_agent_sqlite_cancel(ngx_http_agent_store_call_t *sc);
ngx_int_t ngx_http_agent_sqlite_wake_later(ngx_http_agent_store_call_t *sc);


#pragma GCC visibility pop


/*
 * The SQLite store's runs and their events (sqlite_run.c), for its
 * table.
 */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_sqlite_run_insert(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_row_t *row, ngx_uint_t events);
ngx_int_t ngx_http_agent_sqlite_run_status(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, const char *status);
ngx_int_t ngx_http_agent_sqlite_run_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id, ngx_http_agent_run_row_t *row);
ngx_int_t ngx_http_agent_sqlite_run_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *status, ngx_int_t limit, ngx_int_t offset,
    ngx_array_t *rows);
ngx_int_t ngx_http_agent_sqlite_run_cancel(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_str_t *action, ngx_uint_t now);
ngx_int_t ngx_http_agent_sqlite_run_cancelled(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_str_t *action);
ngx_int_t ngx_http_agent_sqlite_run_event(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, int64_t seq, ngx_str_t *event, ngx_str_t *json);
ngx_int_t ngx_http_agent_sqlite_run_events(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, int64_t after, ngx_uint_t limit,
    ngx_http_agent_store_event_pt handler, void *data);
ngx_int_t ngx_http_agent_sqlite_thread_busy(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id);
ngx_int_t ngx_http_agent_sqlite_run_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id);
ngx_int_t ngx_http_agent_sqlite_run_rollback(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id, ngx_str_t *before);


#pragma GCC visibility pop


/*
 * The SQLite store's sessions, their lease and their files' rows
 * (sqlite_session.c), for its table.
 */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_sqlite_session_open(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *owner, ngx_http_agent_session_t *s,
    ngx_str_t *run_id, ngx_msec_t lease, ngx_int_t images_keep,
    ngx_http_agent_checkpoint_t *cp, ngx_array_t *messages,
    ngx_array_t *resources);
ngx_int_t ngx_http_agent_sqlite_session_create(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *title, ngx_str_t *metadata, ngx_str_t *owner,
    ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_sqlite_session_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_sqlite_session_count(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_session_query_t *q,
    int64_t *count);
ngx_int_t ngx_http_agent_sqlite_session_list(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_session_query_t *q, ngx_array_t *sessions);
ngx_int_t ngx_http_agent_sqlite_session_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id);
ngx_int_t ngx_http_agent_sqlite_session_copy(ngx_http_agent_store_call_t *sc,
    ngx_str_t *from, ngx_str_t *to, ngx_str_t *now);
ngx_int_t ngx_http_agent_sqlite_session_set(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_uint_t field, ngx_str_t *value);
ngx_int_t ngx_http_agent_sqlite_lock(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_msec_t lease);
ngx_int_t ngx_http_agent_sqlite_lock_renew(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_msec_t lease);
ngx_int_t ngx_http_agent_sqlite_leases_renew(ngx_http_agent_store_call_t *sc,
    ngx_array_t *leases);
ngx_int_t ngx_http_agent_sqlite_unlock(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id);
ngx_int_t ngx_http_agent_sqlite_resource_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_array_t *resources);


#pragma GCC visibility pop


/* the WAL's checkpoint of the worker's handle, on the thread pool */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_sqlite_wal_init(ngx_cycle_t *cycle, sqlite3 *db,
    ngx_str_t *path, void *thread_pool);
void ngx_http_agent_sqlite_wal_close(void);


#pragma GCC visibility pop


/* The SQLite store's cache entries (sqlite_cache.c). */

#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_sqlite_cache_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *key, int64_t now, ngx_str_t *value);
ngx_int_t ngx_http_agent_sqlite_cache_put(ngx_http_agent_store_call_t *sc,
    ngx_str_t *key, ngx_str_t *value, int64_t now, int64_t expires,
    ngx_uint_t items, size_t size);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_SQLITE_H_INCLUDED_ */
