
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_STORE_RUN_H_INCLUDED_
#define _NGX_HTTP_AGENT_STORE_RUN_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


#include "ngx_http_agent_store.h"


#define ngx_http_agent_store_run_status   ngx_http_agent_store->run_status
#define ngx_http_agent_store_run_get      ngx_http_agent_store->run_get
#define ngx_http_agent_store_run_list     ngx_http_agent_store->run_list
#define ngx_http_agent_store_run_cancel   ngx_http_agent_store->run_cancel
#define ngx_http_agent_store_run_cancelled                                    \
    ngx_http_agent_store->run_cancelled
#define ngx_http_agent_store_run_event    ngx_http_agent_store->run_event
#define ngx_http_agent_store_run_events   ngx_http_agent_store->run_events
#define ngx_http_agent_store_run_rollback ngx_http_agent_store->run_rollback
#define ngx_http_agent_store_run_delete   ngx_http_agent_store->run_delete
#define ngx_http_agent_store_thread_busy  ngx_http_agent_store->thread_busy
#define ngx_http_agent_store_run_lost     ngx_http_agent_store->run_lost
#define ngx_http_agent_store_run_claim    ngx_http_agent_store->run_claim
#define ngx_http_agent_store_run_orphans  ngx_http_agent_store->run_orphans
#define ngx_http_agent_store_assistant_get                                    \
    ngx_http_agent_store->assistant_get
#define ngx_http_agent_store_assistant_list                                   \
    ngx_http_agent_store->assistant_list
#define ngx_http_agent_store_assistant_latest                                 \
    ngx_http_agent_store->assistant_latest
#define ngx_http_agent_store_assistant_delete                                 \
    ngx_http_agent_store->assistant_delete
#define ngx_http_agent_store_cron_get     ngx_http_agent_store->cron_get
#define ngx_http_agent_store_cron_list    ngx_http_agent_store->cron_list
#define ngx_http_agent_store_cron_delete  ngx_http_agent_store->cron_delete
#define ngx_http_agent_store_cron_due     ngx_http_agent_store->cron_due
#define ngx_http_agent_store_cron_claim   ngx_http_agent_store->cron_claim
#define ngx_http_agent_store_item_get     ngx_http_agent_store->item_get
#define ngx_http_agent_store_item_delete  ngx_http_agent_store->item_delete
#define ngx_http_agent_store_item_search  ngx_http_agent_store->item_search
#define ngx_http_agent_store_item_namespaces                                  \
    ngx_http_agent_store->item_namespaces


/* the writes of documents, within the store's bounds (bounds.c) */
ngx_int_t ngx_http_agent_store_run_insert(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_row_t *row, ngx_uint_t events);
ngx_int_t ngx_http_agent_store_cron_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_cron_row_t *row);
ngx_int_t ngx_http_agent_store_assistant_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_assistant_row_t *row);
ngx_int_t ngx_http_agent_store_item_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_t *item, int64_t now);

/* a run's end that could not be written, written again (store_call.c) */
void ngx_http_agent_store_run_end_later(ngx_str_t *id, ngx_str_t *run_id,
    int64_t gen, const char *status, ngx_log_t *log);


#endif /* _NGX_HTTP_AGENT_STORE_RUN_H_INCLUDED_ */
