
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine_int.h"


/*
 * "then=NODE,...": a step of several kinds of work, as a LangGraph node
 * function that calls the model and then writes to the store.  After the
 * node's own work, the nodes named run in order, in the same step, each
 * reading the state with the writes before it: their writes are the
 * step's, a failure fails it, and no events, checkpoint or route of their
 * own come between.  A node named only there needs no edges (a part,
 * drawn nowhere) and none may lead to it; a part may not have then= or
 * waits of its own, nor run tool calls (whose approvals wait).
 */


ngx_int_t
ngx_http_agent_graph_parts_conf(ngx_conf_t *cf, ngx_http_agent_graph_t *graph)
{
    u_char                 *p, *s, *last;
    ngx_int_t               k;
    ngx_str_t               name;
    ngx_uint_t              i, *ks, n;
    ngx_http_agent_node_t  *nodes, *part;

    nodes = graph->nodes.elts;

    for (i = 0; i < graph->nodes.nelts; i++) {
        if (nodes[i].then_text.len == 0) {
            continue;
        }

        nodes[i].parts = ngx_array_create(cf->pool, 2, sizeof(ngx_uint_t));
        if (nodes[i].parts == NULL) {
            return NGX_ERROR;
        }

        last = nodes[i].then_text.data + nodes[i].then_text.len;

        for (s = nodes[i].then_text.data, p = s; p <= last; p++) {
            if (p < last && *p != ',') {
                continue;
            }

            name.data = s;
            name.len = p - s;
            s = p + 1;

            k = ngx_http_agent_graph_node(graph, &name);

            if (k == NGX_ERROR || (ngx_uint_t) k == i) {
                ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "node \"%V\": "
                              "then=%V: \"%V\" is no other node of the "
                              "graph in %V:%ui", &nodes[i].name,
                              &nodes[i].then_text, &name, &nodes[i].file,
                              nodes[i].line);
                return NGX_ERROR;
            }

            ks = ngx_array_push(nodes[i].parts);
            if (ks == NULL) {
                return NGX_ERROR;
            }

            *ks = k;

            /* the edges are linked: a part that has none is only a part */
            nodes[k].part = (nodes[k].edges.nelts == 0);
        }
    }

    if (graph->entry >= 0 && nodes[graph->entry].part) {
        ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "agent_graph \"%V\": "
                      "START leads to \"%V\", only a part of other nodes' "
                      "steps (then=): give it edges of its own in %V:%ui",
                      &graph->name, &nodes[graph->entry].name, &graph->file,
                      graph->line);
        return NGX_ERROR;
    }

    for (i = 0; i < graph->nodes.nelts; i++) {
        if (nodes[i].parts == NULL) {
            continue;
        }

        ks = nodes[i].parts->elts;

        for (n = 0; n < nodes[i].parts->nelts; n++) {
            part = &nodes[ks[n]];

            if (part->then_text.len || part->interrupt_before
                || part->interrupt_after || part->interrupt_if_text.len
                || part->kind->calls
                || (part->kind->name.len == 9
                    && ngx_strncmp(part->kind->name.data, "interrupt", 9)
                       == 0))
            {
                ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "node \"%V\": "
                              "then=%V: \"%V\" waits, runs tool calls or "
                              "has then= of its own: a part of a step may "
                              "not in %V:%ui",
                              &nodes[i].name, &nodes[i].then_text,
                              &part->name, &nodes[i].file, nodes[i].line);
                return NGX_ERROR;
            }
        }
    }

    return NGX_OK;
}


/* no edge leads to a node that is only a part (it has none of its own) */

ngx_int_t
ngx_http_agent_graph_parts_led(ngx_conf_t *cf, ngx_http_agent_graph_t *graph,
    ngx_http_agent_node_t *node)
{
    ngx_uint_t              k;
    ngx_http_agent_edge_t  *e;
    ngx_http_agent_node_t  *nodes;

    nodes = graph->nodes.elts;
    e = node->edges.elts;

    for (k = 0; k < node->edges.nelts; k++) {
        if (e[k].to == NGX_HTTP_AGENT_END || !nodes[e[k].to].part) {
            continue;
        }

        ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "node \"%V\": its edge "
                      "leads to \"%V\", only a part of other nodes' steps "
                      "(then=): give it edges of its own in %V:%ui",
                      &node->name, &e[k].to_name, &node->file, node->line);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * The step's parts after its node's own work (rc): run->part says how many
 * ran.  NGX_AGAIN: one answers later, through graph_node_done() again.
 */

ngx_int_t
ngx_http_agent_graph_parts_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_int_t rc)
{
    ngx_uint_t             *ks;
    ngx_http_agent_node_t  *part;

    while (rc == NGX_OK && node->parts && run->part < node->parts->nelts) {
        ks = node->parts->elts;
        part = (ngx_http_agent_node_t *) run->graph->nodes.elts
               + ks[run->part++];

        ngx_log_debug2(NGX_LOG_DEBUG_HTTP, run->log, 0,
                       "agent graph: node \"%V\" then \"%V\"",
                       &node->name, &part->name);

        /* the part reads what the node and the parts before it wrote */

        if (ngx_http_agent_graph_parts_apply(run) != NGX_OK
            || (part->count >= 0
                && ngx_http_agent_graph_write_number(run->update,
                                                     part->count, 1)
                   != NGX_OK))
        {
            return NGX_ERROR;
        }

        run->visits[part->index]++;
        run->node_data = NULL;
        run->in_node = 1;
        run->async_done = 0;
        rc = part->kind->run(run, part);
        run->in_node = 0;

        if (rc == NGX_AGAIN) {
            if (!run->async_done) {
                return NGX_AGAIN;
            }

            rc = run->async_rc;
        }
    }

    return rc;
}


/* the step's writes not yet in the state (run->applied of them are) */

ngx_int_t
ngx_http_agent_graph_parts_apply(ngx_http_agent_run_t *run)
{
    ngx_array_t  rest;

    if (run->update == NULL || run->update->nelts <= run->applied) {
        return NGX_OK;
    }

    rest = *run->update;
    rest.elts = (ngx_http_agent_write_t *) rest.elts + run->applied;
    rest.nelts -= run->applied;

    run->applied = run->update->nelts;

    return ngx_http_agent_graph_apply(run, &rest);
}
