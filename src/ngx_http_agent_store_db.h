
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_STORE_DB_H_INCLUDED_
#define _NGX_HTTP_AGENT_STORE_DB_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>


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
    NGX_HTTP_AGENT_SQL_BEGIN,
    NGX_HTTP_AGENT_SQL_COMMIT,
    NGX_HTTP_AGENT_SQL_ROLLBACK,
    NGX_HTTP_AGENT_SQL_LAST
};


extern sqlite3       *ngx_http_agent_store_db;
extern ngx_uint_t     ngx_http_agent_store_tx;
extern ngx_log_t     *ngx_http_agent_store_log;
extern ngx_str_t      ngx_http_agent_store_host;


sqlite3_stmt *ngx_http_agent_store_stmt(ngx_uint_t n);
ngx_int_t ngx_http_agent_store_col(ngx_pool_t *pool, sqlite3_stmt *stmt,
    int col, ngx_str_t *out);
void ngx_http_agent_store_bind(sqlite3_stmt *stmt, int n, ngx_str_t *s);
ngx_int_t ngx_http_agent_store_exec(ngx_uint_t n);
ngx_int_t ngx_http_agent_store_done(sqlite3_stmt *stmt, int rc);
int64_t ngx_http_agent_store_ms(void);


#endif /* _NGX_HTTP_AGENT_STORE_DB_H_INCLUDED_ */
