
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_CHECKPOINT_H_INCLUDED_
#define _NGX_HTTP_AGENT_CHECKPOINT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_json.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_graph.h"
#include "ngx_http_agent_graph_state.h"
#include "ngx_http_agent_message.h"


ngx_int_t ngx_http_agent_state_load(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_int_t images_keep);
ngx_int_t ngx_http_agent_state_apply(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_int_t images_keep);
ngx_int_t ngx_http_agent_state_read(ngx_pool_t *pool,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp);
ngx_int_t ngx_http_agent_state_fork(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_str_t *checkpoint_id, ngx_int_t images_keep);
ngx_int_t ngx_http_agent_state_save(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_t *run, ngx_str_t *id, ngx_http_agent_checkpoint_t *cp,
    ngx_str_t *node, ngx_str_t *next);
void ngx_http_agent_state_update(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run);
ngx_int_t ngx_http_agent_state_interrupt(ngx_http_agent_run_t *run,
    ngx_str_t *node);
ngx_int_t ngx_http_agent_state_interrupt_graph(ngx_http_agent_run_t *run,
    ngx_str_t *graph);
void ngx_http_agent_state_values(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run);
void ngx_http_agent_state_json(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run);


#endif /* _NGX_HTTP_AGENT_CHECKPOINT_H_INCLUDED_ */
