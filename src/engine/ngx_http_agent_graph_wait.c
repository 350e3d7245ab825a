
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine_int.h"
#include "ngx_http_agent_util.h"


/*
 * Where a run waits for a human before or after a node that is no
 * interrupt node of its own: its breakpoints (interrupt_before=,
 * interrupt_after=, those a run asks for) and its interrupt_if= (an
 * interrupt() inside the node), and the answer it gets back.
 */


/*
 * interrupt_before= and interrupt_after=: the run waits at node (after:
 * the node that ran) with no value; the embedder keeps run->interrupt with
 * the state, and a resumed run starts at node
 */

ngx_int_t
ngx_http_agent_graph_wait_breakpoint(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_http_agent_node_t *after)
{
    u_char  *p;

    p = ngx_pnalloc(run->pool, node->name.len * 2
                               + (after ? after->name.len * 2 : 0) + 80);
    if (p == NULL) {
        return NGX_ERROR;
    }

    run->interrupt.data = p;

    /* node names are [A-Za-z0-9_]: nothing to escape */

    /* a breakpoint (interrupt_before/after), not a node's own interrupt */
    p = ngx_sprintf(p, "{\"node\":\"%V\",\"value\":null,\"breakpoint\":true",
                    &node->name);

    if (after) {
        p = ngx_sprintf(p, ",\"after\":\"%V\"", &after->name);
    }

    *p++ = '}';
    run->interrupt.len = p - run->interrupt.data;

    return NGX_OK;
}


/*
 * Whether the run waits before node, its interrupt set: 1, at a
 * breakpoint (interrupt_before=on, one asked); 2, on its interrupt_if=
 * (LangGraph's interrupt() in a node), with the rendered interrupt_value=;
 * 0, not; NGX_ABORT, the condition could not be evaluated; NGX_ERROR
 */

ngx_int_t
ngx_http_agent_graph_wait_before(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    u_char     *p;
    ngx_int_t   rc, n;
    ngx_str_t   text, json;

    n = node - (ngx_http_agent_node_t *) run->graph->nodes.elts;

    if (node->interrupt_before || (run->waits && (run->waits[n] & 1))) {
        return ngx_http_agent_graph_wait_breakpoint(run, node, NULL) == NGX_OK
               ? 1 : NGX_ERROR;
    }

    if (node->interrupt_if == NULL) {
        return 0;
    }

    rc = ngx_http_agent_expr_test(run, node->interrupt_if);

    if (rc == NGX_ERROR) {
        /* the caller says why the run fails */
        return NGX_ABORT;
    }

    if (rc != NGX_OK) {
        return 0;
    }

    /* {"node": NAME, "value": the rendered text, or null} */

    ngx_str_set(&json, "null");

    if (node->interrupt_value.len
        && (ngx_http_agent_template_render(run, run->pool,
                                           &node->interrupt_value, &text)
            != NGX_OK
            || ngx_http_agent_json_quote(run->pool, &text, &json) != NGX_OK))
    {
        return NGX_ERROR;
    }

    p = ngx_pnalloc(run->pool, node->name.len + json.len + 32);
    if (p == NULL) {
        return NGX_ERROR;
    }

    run->interrupt.data = p;

    /* node names are [A-Za-z0-9_]: nothing to escape */
    p = ngx_sprintf(p, "{\"node\":\"%V\",\"value\":%V}", &node->name,
                    &json);
    run->interrupt.len = p - run->interrupt.data;

    return 2;
}


/* interrupt_resume=: the answer written where the node reads it */

ngx_int_t
ngx_http_agent_graph_wait_answer(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_array_t  *now;

    now = ngx_http_agent_graph_update_create(run->pool);
    if (now == NULL) {
        return NGX_ERROR;
    }

    if (ngx_http_agent_graph_write_value(now, node->interrupt_resume,
                                         &run->resume)
        != NGX_OK
        || ngx_http_agent_graph_apply(run, now) != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_graph_write_value(run->update,
                                            node->interrupt_resume,
                                            &run->resume);
}
