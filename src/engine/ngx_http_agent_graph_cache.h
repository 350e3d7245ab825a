
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_GRAPH_CACHE_H_INCLUDED_
#define _NGX_HTTP_AGENT_GRAPH_CACHE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_graph_desc.h"


/*
 * A node's cache= (graph_cache.c): the driver runs a node through these,
 * the embedder answers a lookup that ends later with cache_miss() (the
 * node runs) and then, or on a hit, ngx_http_agent_graph_node_done()
 */

ngx_int_t ngx_http_agent_graph_cache_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);
ngx_int_t ngx_http_agent_graph_cache_miss(ngx_http_agent_run_t *run);
void ngx_http_agent_graph_cache_keep(ngx_http_agent_run_t *run,
    ngx_int_t rc);


#endif /* _NGX_HTTP_AGENT_GRAPH_CACHE_H_INCLUDED_ */
