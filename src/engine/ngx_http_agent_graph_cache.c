
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine_int.h"


/*
 * A node's cache= as LangGraph's CachePolicy: its update for the same
 * state is kept and given again instead of running the node.  The engine
 * only asks and tells its embedder (run->handlers->cache), which keys,
 * keeps and reads the updates; a run without that handler runs its
 * nodes.  A kept update is the node's own: the writes of
 * its then= parts and its count= are made again each time.
 */


ngx_int_t
ngx_http_agent_graph_cache_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_int_t  rc;

    run->cached = 0;

    if (node->cache && run->handlers->cache) {
        rc = run->handlers->cache(run, node, 0);

        if (rc != NGX_DECLINED) {
            return rc;
        }
    }

    return node->kind->run(run, node);
}


/* the embedder found none kept, later: the node runs, as the loop runs it */

ngx_int_t
ngx_http_agent_graph_cache_miss(ngx_http_agent_run_t *run)
{
    ngx_int_t               rc;
    ngx_http_agent_node_t  *node;

    node = (ngx_http_agent_node_t *) run->graph->nodes.elts + run->current;

    run->node_data = NULL;
    run->in_node = 1;
    run->async_done = 0;
    rc = node->kind->run(run, node);
    run->in_node = 0;

    if (rc == NGX_AGAIN && run->async_done) {
        rc = run->async_rc;
    }

    return rc;
}


/* the node's own work has ended (not a then= part's): its update kept */

void
ngx_http_agent_graph_cache_keep(ngx_http_agent_run_t *run, ngx_int_t rc)
{
    ngx_http_agent_node_t  *node;

    node = (ngx_http_agent_node_t *) run->graph->nodes.elts + run->current;

    if (rc == NGX_OK && node->cache && !run->cached && run->part == 0
        && run->handlers->cache)
    {
        (void) run->handlers->cache(run, node, 1);
    }
}
