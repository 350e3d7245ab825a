
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_GRAPH_STATE_H_INCLUDED_
#define _NGX_HTTP_AGENT_GRAPH_STATE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_graph_desc.h"


/*
 * The values of a run's channels and the writes of a step, apart from the
 * engine that steps: the conditions of edges (expr_eval.c) read them, the
 * engine (graph.c) applies them, neither calls the other for it.
 */

ngx_int_t ngx_http_agent_graph_apply(ngx_http_agent_run_t *run,
    ngx_array_t *update);
ngx_array_t *ngx_http_agent_graph_update_create(ngx_pool_t *pool);
ngx_int_t ngx_http_agent_graph_write_message(ngx_http_agent_run_t *run,
    ngx_array_t *update, ngx_uint_t channel, ngx_http_agent_msg_t *msg);
ngx_int_t ngx_http_agent_graph_write_number(ngx_array_t *update,
    ngx_uint_t channel, double n);
ngx_int_t ngx_http_agent_graph_write_value(ngx_array_t *update,
    ngx_uint_t channel, ngx_str_t *json);
ngx_http_agent_msg_t *ngx_http_agent_graph_last_message(
    ngx_http_agent_run_t *run, ngx_uint_t channel);
ngx_int_t ngx_http_agent_graph_value(ngx_http_agent_run_t *run,
    ngx_uint_t channel, ngx_str_t *json);


#endif /* _NGX_HTTP_AGENT_GRAPH_STATE_H_INCLUDED_ */
