
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"


/*
 * A subgraph's checkpoint (node_subgraph.c; the turn saves them under the
 * namespace "NODE:ID|NODE:ID"), as a ThreadState: its state made from what
 * it kept, in the graph of its node (graph: the thread's), found level by
 * level down the namespace
 */

ngx_int_t
ngx_http_agent_lg_ns_state(ngx_http_request_t *r, ngx_pool_t *pool,
    ngx_http_agent_graph_t *graph, ngx_str_t *thread_id,
    ngx_http_agent_json_t *j, ngx_http_agent_checkpoint_t *c)
{
    u_char                  *p, *last, *colon;
    ngx_int_t                n;
    ngx_str_t                node;
    ngx_http_agent_run_t    *run, *inner;
    ngx_http_agent_node_t   *nodes;

    p = c->ns.data;
    last = c->ns.data + c->ns.len;
    inner = NULL;

    while (p < last) {
        colon = ngx_strlchr(p, last, ':');

        if (colon == NULL || graph == NULL) {
            break;
        }

        node.data = p;
        node.len = colon - p;

        p = ngx_strlchr(colon, last, '|');

        if (p) {
            /* a level above: the graph its node runs */
            n = ngx_http_agent_graph_node(graph, &node);
            nodes = graph->nodes.elts;
            graph = (n >= 0) ? nodes[n].subgraph : NULL;
            p++;
            continue;
        }

        run = ngx_http_agent_graph_run_create(pool, r->connection->log,
                                              graph);
        if (run == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        run->extra = c->channels;
        inner = ngx_http_agent_lg_subgraph_run(run, &node);
        break;
    }

    if (inner == NULL) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "a checkpoint of the namespace "
                                          "\"%V\" could not be read",
                                          &c->ns);
    }

    ngx_http_agent_lg_state_json(j, inner, c, thread_id, 0);

    return NGX_OK;
}
