
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_GRAPH_PARTS_H_INCLUDED_
#define _NGX_HTTP_AGENT_GRAPH_PARTS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_graph.h"


/* for the files of src/engine/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_graph_parts_conf(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph);
ngx_int_t ngx_http_agent_graph_parts_led(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);
ngx_int_t ngx_http_agent_graph_parts_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_int_t rc);
ngx_int_t ngx_http_agent_graph_parts_apply(ngx_http_agent_run_t *run);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_GRAPH_PARTS_H_INCLUDED_ */
