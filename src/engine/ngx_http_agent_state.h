/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_STATE_H_INCLUDED_
#define _NGX_HTTP_AGENT_STATE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_json.h"
#include "ngx_http_agent_graph.h"


void ngx_http_agent_state_channels(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run, ngx_uint_t all);
ngx_int_t ngx_http_agent_state_set(ngx_http_agent_run_t *run,
    const char *name, ngx_str_t *json);
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
ngx_int_t ngx_http_agent_state_messages(ngx_pool_t *pool, yajl_val v,
    ngx_array_t *messages);
ngx_int_t ngx_http_agent_state_read(ngx_pool_t *pool,
    ngx_http_agent_run_t *run, ngx_uint_t ch, yajl_val c);
ngx_int_t ngx_http_agent_state_subgraph(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_http_agent_run_t *inner);
ngx_int_t ngx_http_agent_state_subgraph_keep(ngx_http_agent_run_t *outer,
    ngx_str_t *node, ngx_http_agent_run_t *inner);
ngx_int_t ngx_http_agent_state_subgraph_json(ngx_pool_t *pool,
    ngx_str_t *node, ngx_http_agent_run_t *inner, ngx_int_t next,
    ngx_str_t *json);


#endif /* _NGX_HTTP_AGENT_STATE_H_INCLUDED_ */
