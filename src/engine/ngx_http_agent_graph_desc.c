
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine.h"


/* a graph's channels and nodes found by name: their index, or NGX_ERROR */

ngx_int_t
ngx_http_agent_graph_channel(ngx_http_agent_graph_t *graph, ngx_str_t *name)
{
    ngx_uint_t                 i;
    ngx_http_agent_channel_t  *ch;

    ch = graph->channels.elts;

    for (i = 0; i < graph->channels.nelts; i++) {
        if (ch[i].name.len == name->len
            && ngx_strncmp(ch[i].name.data, name->data, name->len) == 0)
        {
            return i;
        }
    }

    return NGX_ERROR;
}


ngx_int_t
ngx_http_agent_graph_node(ngx_http_agent_graph_t *graph, ngx_str_t *name)
{
    ngx_uint_t              i;
    ngx_http_agent_node_t  *n;

    n = graph->nodes.elts;

    for (i = 0; i < graph->nodes.nelts; i++) {
        if (n[i].name.len == name->len
            && ngx_strncmp(n[i].name.data, name->data, name->len) == 0)
        {
            return i;
        }
    }

    return NGX_ERROR;
}


/*
 * a node a request may name (a run's goto and breakpoints, a state
 * update's as_node): not one that is only a then= part of other steps
 */

ngx_int_t
ngx_http_agent_graph_step_node(ngx_http_agent_graph_t *graph,
    ngx_str_t *name)
{
    ngx_int_t               i;
    ngx_http_agent_node_t  *n;

    i = ngx_http_agent_graph_node(graph, name);

    if (i == NGX_ERROR) {
        return NGX_ERROR;
    }

    n = (ngx_http_agent_node_t *) graph->nodes.elts + i;

    return n->part ? NGX_ERROR : i;
}


/* whether a node of the graph is of that kind */

ngx_uint_t
ngx_http_agent_graph_has_kind(ngx_http_agent_graph_t *graph, const char *kind)
{
    size_t                  len;
    ngx_uint_t              i;
    ngx_http_agent_node_t  *node;

    len = ngx_strlen(kind);
    node = graph->nodes.elts;

    for (i = 0; i < graph->nodes.nelts; i++) {
        if (node[i].kind->name.len == len
            && ngx_strncmp(node[i].kind->name.data, kind, len) == 0)
        {
            return 1;
        }
    }

    return 0;
}
