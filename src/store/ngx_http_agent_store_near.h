
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_STORE_NEAR_H_INCLUDED_
#define _NGX_HTTP_AGENT_STORE_NEAR_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


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


#endif /* _NGX_HTTP_AGENT_STORE_NEAR_H_INCLUDED_ */
