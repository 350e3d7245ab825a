
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_GRAPH_CONF_H_INCLUDED_
#define _NGX_HTTP_AGENT_GRAPH_CONF_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_graph.h"


char *ngx_http_agent_graph_block(ngx_conf_t *cf, ngx_array_t *graphs);
ngx_int_t ngx_http_agent_graph_builtin(ngx_conf_t *cf, ngx_array_t *graphs);
ngx_int_t ngx_http_agent_graph_check_kinds(ngx_conf_t *cf,
    ngx_array_t *graphs, ngx_str_t *dir);
ngx_int_t ngx_http_agent_graph_conf_offers(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node,
    ngx_array_t *lists);
ngx_http_agent_graph_t *ngx_http_agent_graph_find(ngx_array_t *graphs,
    ngx_str_t *name);
/* a declared graph, for the kinds' check() (a node that runs one) */
ngx_http_agent_graph_t *ngx_http_agent_graph_conf_graph(ngx_str_t *name);
/* a node's parameter naming a channel, or a list of them (graph_refs.c) */
ngx_int_t ngx_http_agent_graph_conf_channel(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node,
    const char *param, ngx_str_t *name, ngx_int_t *channel,
    ngx_uint_t messages);
ngx_int_t ngx_http_agent_graph_conf_channels(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node,
    const char *param, ngx_str_t *list, ngx_array_t *channels,
    ngx_uint_t messages);


/* the node kinds the graph language knows: set by the glue */
extern ngx_http_agent_kind_t  **ngx_http_agent_graph_kinds;


/* for the files of src/engine/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

char *ngx_http_agent_graph_parse(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_GRAPH_CONF_H_INCLUDED_ */
