
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_SQL_H_INCLUDED_
#define _NGX_HTTP_AGENT_SQL_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_util.h"


#include <sqlite3.h>


typedef struct {
    ngx_array_t                 *resources;   /* ngx_http_agent_resource_t */
    ngx_http_agent_database_t   *database;
    ngx_msec_t                   timeout;
    ngx_uint_t                   max_rows;
    size_t                       max_bytes;
    void                        *thread_pool; /* NULL: on the event loop */
    sqlite3                     *db;          /* a job's own handle */
} ngx_http_agent_sql_ctx_t;


typedef struct ngx_http_agent_sql_job_s  ngx_http_agent_sql_job_t;

typedef void (*ngx_http_agent_sql_done_pt)(void *data, ngx_str_t *result);
typedef void (*ngx_http_agent_sql_schema_pt)(void *data, ngx_int_t rc,
    ngx_str_t *tables);


ngx_int_t ngx_http_agent_sql_tool(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_sql_ctx_t *ctx, ngx_str_t *name, ngx_str_t *args,
    ngx_str_t *result);
/* for the SQL layer's own files */

ngx_int_t ngx_http_agent_sql_schema(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_database_t *database, ngx_str_t *tables);
ngx_int_t ngx_http_agent_sql_schema_post(void *thread_pool, ngx_log_t *log,
    ngx_http_agent_database_t *database, ngx_http_agent_sql_schema_pt done,
    void *data);
void ngx_http_agent_sql_exit_process(ngx_cycle_t *cycle);
ngx_http_agent_sql_job_t *ngx_http_agent_sql_job_post(
    ngx_http_agent_sql_ctx_t *ctx, ngx_log_t *log, ngx_str_t *name,
    ngx_str_t *args, ngx_http_agent_sql_done_pt done, void *data);
void ngx_http_agent_sql_job_cancel(ngx_http_agent_sql_job_t *job);


/* for the files of src/sql/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_sql_error(ngx_pool_t *pool, ngx_str_t *err,
    ngx_str_t *result);
sqlite3 *ngx_http_agent_sql_handle(ngx_log_t *log,
    ngx_http_agent_sql_ctx_t *ctx);
ngx_int_t ngx_http_agent_sql_run(ngx_pool_t *pool,
    ngx_http_agent_sql_ctx_t *ctx, sqlite3 *db, ngx_str_t *query,
    ngx_http_agent_json_t *j, ngx_str_t *err);
ngx_int_t ngx_http_agent_sql_schema_read(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_database_t *database, sqlite3 *handle, ngx_str_t *tables);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_SQL_H_INCLUDED_ */
