
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_RUN_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_RUN_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <libpq-fe.h>

#include "ngx_http_agent_store.h"


/*
 * The PostgreSQL store's runs and their events (pg_run.c).
 */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_pg_run_insert(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_row_t *row, ngx_uint_t events);
ngx_int_t ngx_http_agent_pg_run_status(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, const char *status);
ngx_int_t ngx_http_agent_pg_run_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id, ngx_http_agent_run_row_t *row);
ngx_int_t ngx_http_agent_pg_run_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *status, ngx_int_t limit,
    ngx_int_t offset, ngx_array_t *rows);
ngx_int_t ngx_http_agent_pg_run_cancel(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_str_t *action, ngx_uint_t now);
ngx_int_t ngx_http_agent_pg_run_cancelled(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_str_t *action);
ngx_int_t ngx_http_agent_pg_run_event(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, int64_t seq, ngx_str_t *event, ngx_str_t *json);
ngx_int_t ngx_http_agent_pg_run_events(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, int64_t after, ngx_uint_t limit,
    ngx_http_agent_store_event_pt handler, void *data);
ngx_int_t ngx_http_agent_pg_run_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id);
ngx_int_t ngx_http_agent_pg_run_rollback(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id, ngx_str_t *before);
ngx_int_t ngx_http_agent_pg_thread_busy(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_RUN_H_INCLUDED_ */
