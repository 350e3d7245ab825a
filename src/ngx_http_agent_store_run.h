
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_STORE_RUN_H_INCLUDED_
#define _NGX_HTTP_AGENT_STORE_RUN_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


/* a run of the LangGraph API, as the runs table keeps it */
typedef struct {
    ngx_str_t                  run_id;
    ngx_str_t                  thread_id;
    ngx_str_t                  assistant_id;
    ngx_str_t                  status;
    ngx_str_t                  metadata;     /* JSON object, or empty */
    ngx_str_t                  kwargs;       /* JSON object, or empty */
    ngx_str_t                  multitask_strategy;
    ngx_str_t                  created_at;
    ngx_str_t                  updated_at;
    ngx_str_t                  checkpoint;   /* the one it started from */
} ngx_http_agent_run_row_t;


/* an event of a resumable run, its strings valid until the next one */
typedef ngx_int_t (*ngx_http_agent_store_event_pt)(void *data, int64_t seq,
    ngx_str_t *event, ngx_str_t *json);


ngx_int_t ngx_http_agent_store_run_insert(ngx_http_agent_run_row_t *row,
    ngx_uint_t events);
ngx_int_t ngx_http_agent_store_run_status(ngx_str_t *run_id,
    const char *status);
ngx_int_t ngx_http_agent_store_run_get(ngx_pool_t *pool,
    ngx_str_t *thread_id, ngx_str_t *run_id, ngx_http_agent_run_row_t *row);
ngx_int_t ngx_http_agent_store_run_list(ngx_pool_t *pool,
    ngx_str_t *thread_id, ngx_str_t *status, ngx_int_t limit,
    ngx_int_t offset, ngx_array_t *rows);
ngx_int_t ngx_http_agent_store_run_cancel(ngx_str_t *run_id,
    ngx_str_t *action);
ngx_int_t ngx_http_agent_store_run_cancelled(ngx_pool_t *pool,
    ngx_str_t *run_id, ngx_str_t *action);
ngx_int_t ngx_http_agent_store_run_event(ngx_str_t *run_id, int64_t seq,
    ngx_str_t *event, ngx_str_t *json);
ngx_int_t ngx_http_agent_store_run_events(ngx_str_t *run_id, int64_t after,
    ngx_uint_t limit, ngx_http_agent_store_event_pt handler, void *data);
ngx_int_t ngx_http_agent_store_run_rollback(ngx_str_t *thread_id,
    ngx_str_t *run_id, ngx_str_t *before);
ngx_int_t ngx_http_agent_store_thread_busy(ngx_pool_t *pool,
    ngx_str_t *thread_id, ngx_str_t *run_id);


#endif /* _NGX_HTTP_AGENT_STORE_RUN_H_INCLUDED_ */
