
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_SQLITE_H_INCLUDED_
#define _NGX_HTTP_AGENT_SQLITE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"


/*
 * The SQLite back end's own declarations: shared by its files, reached
 * from outside only through its table (ngx_http_agent_store_backend_t),
 * so hidden from the module's exported symbols.
 */
#pragma GCC visibility push(hidden)


/* the store's statements, prepared once per worker: for store*.c only */
enum {
    NGX_HTTP_AGENT_SQL_SESSION_INSERT = 0,
    NGX_HTTP_AGENT_SQL_SESSION_GET,
    NGX_HTTP_AGENT_SQL_SESSION_LIST,
    NGX_HTTP_AGENT_SQL_SESSION_DELETE,
    NGX_HTTP_AGENT_SQL_SESSION_SET_MODEL,
    NGX_HTTP_AGENT_SQL_SESSION_SET_DATABASE,
    NGX_HTTP_AGENT_SQL_SESSION_TOUCH,
    NGX_HTTP_AGENT_SQL_LOCK,
    NGX_HTTP_AGENT_SQL_LOCK_OWNER,
    NGX_HTTP_AGENT_SQL_LOCK_STEAL,
    NGX_HTTP_AGENT_SQL_UNLOCK,
    NGX_HTTP_AGENT_SQL_RENEW,
    NGX_HTTP_AGENT_SQL_MESSAGE_INSERT,
    NGX_HTTP_AGENT_SQL_MESSAGES,
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
    NGX_HTTP_AGENT_SQL_FORK_LATER,
    NGX_HTTP_AGENT_SQL_FORK_KEEP,
    NGX_HTTP_AGENT_SQL_FORK_MESSAGES,
    NGX_HTTP_AGENT_SQL_RUN_EVENTS_EXPIRE,
    NGX_HTTP_AGENT_SQL_RUN_EVENTS_EXPIRED,
    NGX_HTTP_AGENT_SQL_BEGIN,
    NGX_HTTP_AGENT_SQL_COMMIT,
    NGX_HTTP_AGENT_SQL_ROLLBACK,
    NGX_HTTP_AGENT_SQL_LAST
};


extern sqlite3       *ngx_http_agent_sqlite_db;
extern ngx_uint_t     ngx_http_agent_sqlite_tx;
extern ngx_log_t     *ngx_http_agent_sqlite_log;
extern ngx_uint_t     ngx_http_agent_sqlite_busy_seen;
extern ngx_msec_t     ngx_http_agent_sqlite_spin;


/* an operation tried again on a busy file: store_retry.c */
typedef ngx_int_t (*ngx_http_agent_sqlite_try_pt)(
    ngx_http_agent_store_call_t *sc, void *args);

ngx_uint_t ngx_http_agent_sqlite_can_wait(ngx_http_agent_store_call_t *sc,
    ngx_uint_t replay);
ngx_int_t ngx_http_agent_sqlite_busy(ngx_http_agent_store_call_t *sc,
    ngx_int_t rc, ngx_http_agent_sqlite_try_pt try, void *args, size_t size);


sqlite3_stmt *ngx_http_agent_sqlite_stmt(ngx_uint_t n);
ngx_int_t ngx_http_agent_sqlite_col(ngx_pool_t *pool, sqlite3_stmt *stmt,
    int col, ngx_str_t *out);
void ngx_http_agent_sqlite_bind(sqlite3_stmt *stmt, int n, ngx_str_t *s);
ngx_int_t ngx_http_agent_sqlite_exec(ngx_uint_t n);
ngx_int_t ngx_http_agent_sqlite_done(sqlite3_stmt *stmt, int rc);

/* the SQLite store's operations in the other files, for its table */
ngx_int_t ngx_http_agent_sqlite_begin(ngx_http_agent_store_call_t *sc);
ngx_int_t ngx_http_agent_sqlite_commit(ngx_http_agent_store_call_t *sc);
void ngx_http_agent_sqlite_rollback(ngx_http_agent_store_call_t *sc);
void ngx_http_agent_sqlite_cancel(ngx_http_agent_store_call_t *sc);
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
ngx_int_t ngx_http_agent_sqlite_session_list(ngx_http_agent_store_call_t *sc,
    ngx_int_t limit, ngx_int_t offset, ngx_str_t *owner, ngx_array_t *sessions);
ngx_int_t ngx_http_agent_sqlite_session_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id);
ngx_int_t ngx_http_agent_sqlite_session_set(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_uint_t field, ngx_str_t *value);
ngx_int_t ngx_http_agent_sqlite_lock(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_msec_t lease);
ngx_int_t ngx_http_agent_sqlite_lock_renew(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_msec_t lease);
ngx_int_t ngx_http_agent_sqlite_unlock(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id);
ngx_int_t ngx_http_agent_sqlite_resource_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_array_t *resources);
ngx_int_t ngx_http_agent_sqlite_messages(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t upto, ngx_int_t images_keep, ngx_array_t *messages);
ngx_int_t ngx_http_agent_sqlite_messages_page(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t before, ngx_uint_t limit, ngx_uint_t all,
    ngx_uint_t images, ngx_uint_t *more,
    ngx_http_agent_store_message_pt handler, void *data);
ngx_int_t ngx_http_agent_sqlite_checkpoint_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_http_agent_checkpoint_t *cp);
ngx_int_t ngx_http_agent_sqlite_checkpoint_list(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_array_t *checkpoints);
ngx_int_t ngx_http_agent_sqlite_checkpoint_write(
    ngx_http_agent_store_call_t *sc, ngx_str_t *session_id,
    ngx_http_agent_checkpoint_t *cp, ngx_array_t *added);
ngx_int_t ngx_http_agent_sqlite_resource_add(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_http_agent_resource_t *res);
ngx_int_t ngx_http_agent_sqlite_fork_later(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *from, ngx_array_t *later);
ngx_int_t ngx_http_agent_sqlite_fork_keep(ngx_http_agent_store_call_t *sc,
    ngx_str_t *checkpoint_id, ngx_str_t *channels);
ngx_int_t ngx_http_agent_sqlite_fork_cut(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t msg_count);
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
    ngx_str_t *run_id, ngx_str_t *action);
ngx_int_t ngx_http_agent_sqlite_run_cancelled(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_str_t *action);
ngx_int_t ngx_http_agent_sqlite_run_event(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, int64_t seq, ngx_str_t *event, ngx_str_t *json);
ngx_int_t ngx_http_agent_sqlite_run_events(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, int64_t after, ngx_uint_t limit,
    ngx_http_agent_store_event_pt handler, void *data);
ngx_int_t ngx_http_agent_sqlite_thread_busy(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id);
ngx_int_t ngx_http_agent_sqlite_run_rollback(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id, ngx_str_t *before);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_SQLITE_H_INCLUDED_ */
