
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_GRAPH_H_INCLUDED_
#define _NGX_HTTP_AGENT_GRAPH_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_graph_desc.h"


/*
 * The driver of a run: the input step, node after node, the edges, the
 * checkpoints, an interrupt, the end.  It sits on the graph's description
 * (graph_desc.h), the channels' values (graph_state.h), the conditions
 * (expr.h) and the messages' calls (message.h); none of them calls it.
 */


ngx_http_agent_run_t *ngx_http_agent_graph_run_create(ngx_pool_t *pool,
    ngx_log_t *log, ngx_http_agent_graph_t *graph);
ngx_int_t ngx_http_agent_graph_input(ngx_http_agent_run_t *run,
    ngx_array_t *update);
void ngx_http_agent_graph_start(ngx_http_agent_run_t *run);
void ngx_http_agent_graph_begin(ngx_http_agent_run_t *run);
ngx_int_t ngx_http_agent_graph_route(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);
void ngx_http_agent_graph_node_done(ngx_http_agent_run_t *run, ngx_int_t rc);
void ngx_http_agent_graph_saved(ngx_http_agent_run_t *run, ngx_int_t rc);
void ngx_http_agent_graph_cancel(ngx_http_agent_run_t *run);
ngx_int_t ngx_http_agent_graph_fail(ngx_http_agent_run_t *run,
    const char *code, const char *fmt, ...);


/* the channels' values and the writes of a step: graph_state.c */
#include "ngx_http_agent_graph_state.h"


#endif /* _NGX_HTTP_AGENT_GRAPH_H_INCLUDED_ */
