
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_SQLITE_DB_H_INCLUDED_
#define _NGX_HTTP_AGENT_SQLITE_DB_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"


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
ngx_int_t ngx_http_agent_sqlite_col(ngx_pool_t *pool, sqlite3_stmt *stmt,
    int col, ngx_str_t *out);
void ngx_http_agent_sqlite_bind(sqlite3_stmt *stmt, int n, ngx_str_t *s);
ngx_int_t ngx_http_agent_sqlite_exec(ngx_uint_t n);
ngx_int_t ngx_http_agent_sqlite_done(sqlite3_stmt *stmt, int rc);
ngx_uint_t ngx_http_agent_sqlite_room(sqlite3_stmt *stmt, size_t *used);

/* a transaction of the caller's: the checkpoint writes join it */
ngx_int_t ngx_http_agent_sqlite_begin(ngx_http_agent_store_call_t *sc);
ngx_int_t ngx_http_agent_sqlite_commit(ngx_http_agent_store_call_t *sc);
void ngx_http_agent_sqlite_rollback(ngx_http_agent_store_call_t *sc);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_SQLITE_DB_H_INCLUDED_ */
