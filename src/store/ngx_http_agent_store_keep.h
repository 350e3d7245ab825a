
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_STORE_KEEP_H_INCLUDED_
#define _NGX_HTTP_AGENT_STORE_KEEP_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_store.h"


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


#endif /* _NGX_HTTP_AGENT_STORE_KEEP_H_INCLUDED_ */
