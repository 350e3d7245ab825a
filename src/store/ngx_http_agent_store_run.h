
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_STORE_RUN_H_INCLUDED_
#define _NGX_HTTP_AGENT_STORE_RUN_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_store.h"


/*
 * A turn's lease, renewed with others in one statement (leases_renew, in
 * the order of their run ids: they are sorted first): its own expiry (now
 * + lease) and generation; answered NGX_OK, renewed is set or the lease is
 * no longer this run's.  At most NGX_HTTP_AGENT_STORE_LEASES_MAX a call.
 */
typedef struct {
    ngx_str_t                  id;
    ngx_str_t                  run_id;
    int64_t                    gen;          /* 0: none */
    ngx_msec_t                 lease;
    ngx_uint_t                 renewed;
    void                      *data;         /* the caller's */
} ngx_http_agent_store_lease_t;

/* the most leases one statement renews: more take several */
#define NGX_HTTP_AGENT_STORE_LEASES_MAX  500


ngx_int_t ngx_http_agent_store_checkpoint_merge(ngx_pool_t *pool,
    ngx_http_agent_checkpoint_t *cp, ngx_str_t *sub, ngx_str_t *sub_id);


/* a channel's part of a thread's checkpoints */
typedef struct {
    ngx_str_t                  name;
    int64_t                    count;        /* the checkpoints that hold
                                                it */
    int64_t                    bytes;
} ngx_http_agent_storage_channel_t;


/* what a thread holds in the store, as stored (GET /threads/{id}/storage) */
struct ngx_http_agent_storage_s {
    int64_t                    checkpoints;
    int64_t                    checkpoint_bytes;  /* their rows, channels
                                                     included */
    int64_t                    messages;     /* the messages channel: */
    int64_t                    message_bytes;    /* rows of their own */
    int64_t                    writes;       /* pending writes of runs */
    int64_t                    write_bytes;
    ngx_array_t               *channels;     /* the caller's, filled:
                                                storage_channel_t */
};


/* rows of a thread's checkpoints let go in one pass of a prune */
#define NGX_HTTP_AGENT_STORE_PRUNE_PASS  256


void ngx_http_agent_store_keep_prune(ngx_http_request_t *r,
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_str_t *run_id);
ngx_str_t *ngx_http_agent_store_keep_said(ngx_http_request_t *r);
ngx_int_t ngx_http_agent_store_storage(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_http_agent_storage_t *st);


/* a search by meaning's bounds and ranking (ngx_http_agent_store_near.c) */
#define NGX_HTTP_AGENT_STORE_NEAR_SCAN   100000  /* items read, the newest */
#define NGX_HTTP_AGENT_STORE_NEAR_TIME   2000    /* ms of scoring */
#define NGX_HTTP_AGENT_STORE_NEAR_TOP    1000    /* offset + limit */

typedef struct {
    int64_t                    n;            /* the row's */
    double                     score;
} ngx_http_agent_store_near_t;

typedef struct {
    float                     *query;
    size_t                     dims;
    double                     norm;
    ngx_uint_t                 k;            /* offset + limit */
    ngx_uint_t                 nbest;
    ngx_uint_t                 scanned;
    ngx_http_agent_store_near_t  *best;      /* k, the best first */
} ngx_http_agent_store_rank_t;

/* for the files of src/store/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_store_near_init(ngx_pool_t *pool,
    ngx_http_agent_store_rank_t *rk, ngx_http_agent_item_query_t *q);
void ngx_http_agent_store_near_add(ngx_http_agent_store_rank_t *rk,
    int64_t n, const void *blob, size_t len);
ngx_msec_t ngx_http_agent_store_near_clock(void);

#pragma GCC visibility pop


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
