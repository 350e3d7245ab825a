
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_SQL_H_INCLUDED_
#define _NGX_HTTP_AGENT_SQL_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>
#include <time.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_module.h"
#include "ngx_http_agent_util.h"


#define NGX_HTTP_AGENT_CSV_MAX_COLUMNS  1000


ngx_int_t ngx_http_agent_csv_import(ngx_pool_t *pool, ngx_log_t *log,
    u_char *data, size_t len, ngx_uint_t first,
    ngx_http_agent_resource_t *res, ngx_str_t *err);
ngx_int_t ngx_http_agent_csv_table_name(ngx_pool_t *pool, ngx_str_t *file,
    ngx_array_t *taken, ngx_str_t *table);


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


char *ngx_http_agent_database(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
ngx_http_agent_database_t *ngx_http_agent_database_find(
    ngx_http_agent_main_conf_t *amcf, ngx_str_t *name);
char *ngx_http_agent_database_use(ngx_conf_t *cf,
    ngx_http_agent_loc_conf_t *alcf);


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

sqlite3 *ngx_http_agent_sql_handle(ngx_log_t *log,
    ngx_http_agent_sql_ctx_t *ctx);
ngx_int_t ngx_http_agent_sql_run(ngx_pool_t *pool,
    ngx_http_agent_sql_ctx_t *ctx, sqlite3 *db, ngx_str_t *query,
    ngx_http_agent_json_t *j, ngx_str_t *err);
ngx_int_t ngx_http_agent_sql_schema_read(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_database_t *database, sqlite3 *handle, ngx_str_t *tables);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_SQL_H_INCLUDED_ */
