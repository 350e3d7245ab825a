
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_CHECKPOINT_H_INCLUDED_
#define _NGX_HTTP_AGENT_CHECKPOINT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_engine.h"


ngx_int_t ngx_http_agent_checkpoint_load(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_int_t images_keep);
ngx_int_t ngx_http_agent_checkpoint_open(ngx_http_agent_store_call_t *sc,
    ngx_pool_t *pool, ngx_http_agent_graph_t *graph, ngx_str_t *id,
    ngx_http_agent_checkpoint_t *cp, ngx_http_agent_run_t **runp);
ngx_int_t ngx_http_agent_checkpoint_save(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_t *run, ngx_str_t *id, ngx_http_agent_checkpoint_t *cp,
    ngx_str_t *node, ngx_str_t *next);
ngx_http_agent_run_t *ngx_http_agent_checkpoint_state(ngx_pool_t *pool,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp);


/* for the files of src/turn/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_checkpoint_fork(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_str_t *checkpoint_id, ngx_int_t images_keep);
ngx_int_t ngx_http_agent_checkpoint_read(ngx_pool_t *pool,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp);
ngx_int_t ngx_http_agent_checkpoint_replaced(ngx_pool_t *pool,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_CHECKPOINT_H_INCLUDED_ */
