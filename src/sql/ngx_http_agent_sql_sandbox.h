
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_SQL_SANDBOX_H_INCLUDED_
#define _NGX_HTTP_AGENT_SQL_SANDBOX_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>
#include <time.h>


#define NGX_HTTP_AGENT_SQL_MAX_ATTACHED  8

/* what one statement may use: see docs/security.md */
#define NGX_HTTP_AGENT_SQL_MAX_LENGTH    (1024 * 1024)
#define NGX_HTTP_AGENT_SQL_MAX_MEMORY    (64 * 1024 * 1024)


typedef struct {
    struct timespec              deadline;
    ngx_uint_t                   expired;
} ngx_http_agent_sql_clock_t;


void ngx_http_agent_sql_sandbox_init(ngx_log_t *log);


/* for the files of src/sql/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

void ngx_http_agent_sql_sandbox_allow(sqlite3 *db, ngx_uint_t all);
sqlite3 *ngx_http_agent_sql_sandbox_open(ngx_log_t *log, char *path);
void ngx_http_agent_sql_sandbox_start(sqlite3 *db,
    ngx_http_agent_sql_clock_t *clock, ngx_msec_t timeout);
void ngx_http_agent_sql_sandbox_stop(sqlite3 *db);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_SQL_SANDBOX_H_INCLUDED_ */
