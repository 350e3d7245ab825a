
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_store.h"


/*
 * The subgraphs a turn's nodes run (node_subgraph.c).  Their steps are
 * checkpoints of their namespaces, as LangGraph's are: "NODE:TASK", TASK
 * the checkpoint the node's step started from ("|" joins the levels):
 * the state a subgraph starts with (steps -1 and 0, as the thread's
 * input), then each step it goes on from, each holding the subgraph's
 * state as "__subgraph__" (its messages too: they are not the thread's
 * yet).  The step where it waits is the turn's wait (turn_step.c), saved
 * in the namespace as well: the thread's own checkpoints stay those of
 * its own steps, and the store reads the wait with the checkpoint the
 * node started from (store_checkpoint.c).  Their starts and steps are
 * events too, for a stream that shows them (stream_subgraphs).
 */


#define NGX_HTTP_AGENT_TURN_NS_DEPTH  16


static ngx_int_t ngx_http_agent_turn_subgraph_ns(ngx_http_agent_turn_t *turn,
    ngx_http_agent_run_t *inner, ngx_str_t *ns);
static ngx_int_t ngx_http_agent_turn_subgraph_row(ngx_http_agent_turn_t *turn,
    ngx_http_agent_run_t *inner, int64_t step, ngx_str_t *node,
    ngx_int_t next, const char *to);
static ngx_int_t ngx_http_agent_turn_subgraph_write(
    ngx_http_agent_turn_t *turn);
static ngx_int_t ngx_http_agent_turn_subgraph_more(
    ngx_http_agent_turn_t *turn);


/*
 * a subgraph's run starts (node NULL: its task named, the one its node's
 * step started from) or one of its nodes ended: for a stream that shows
 * it, with its namespace
 */

ngx_int_t
ngx_http_agent_turn_subgraph(ngx_http_agent_run_t *run,
    ngx_http_agent_run_t *inner, ngx_http_agent_node_t *node)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_str_t               ns;
    ngx_http_agent_event_t  ev;

    if (node == NULL) {
        inner->task = (inner->parent == run) ? turn->checkpoint_id
                                             : inner->parent->saved;

        if (inner->parent == run) {
            turn->inside = inner;

            if (inner->resuming) {
                /* its steps go on after its namespace's latest */
                inner->saved = turn->waiting;
            }
        }
    }

    if (!(turn->stream.modes & NGX_HTTP_AGENT_MODE_SUBGRAPHS)
        || turn->in.json)
    {
        return NGX_OK;
    }

    if (ngx_http_agent_turn_subgraph_ns(turn, inner, &ns) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));

    ev.type = NGX_HTTP_AGENT_EV_SUBGRAPH;
    ev.subgraph = inner;
    ev.id = &ns;
    ev.name = node ? &node->name : NULL;

    return ngx_http_agent_stream_emit(&turn->stream, &ev);
}


/*
 * A step of a subgraph, saved in its namespace: its input as two
 * ("__input__": -1 next "__start__", 0 next its first node), or the step
 * it goes on from.  NGX_AGAIN: ngx_http_agent_graph_saved(inner) follows.
 */

ngx_int_t
ngx_http_agent_turn_subgraph_checkpoint(ngx_http_agent_run_t *run,
    ngx_http_agent_run_t *inner, ngx_str_t *node, ngx_int_t next)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_int_t  rc;

    if (turn->durability == NGX_HTTP_AGENT_DURABILITY_EXIT) {
        /* steps it goes on from are not saved (agent_durability exit) */
        return NGX_OK;
    }

    turn->ns_run = inner;
    turn->ns_input = 0;

    if (node->len == 9 && ngx_strncmp(node->data, "__input__", 9) == 0) {
        turn->ns_input = 1;
        rc = ngx_http_agent_turn_subgraph_row(turn, inner, -1, node, next,
                                              "__start__");

    } else {
        rc = ngx_http_agent_turn_subgraph_row(turn, inner,
                                              (int64_t) inner->step + 1,
                                              node, next, NULL);
    }

    if (rc != NGX_OK) {
        return NGX_ERROR;
    }

    rc = ngx_http_agent_turn_subgraph_write(turn);

    if (rc == NGX_OK) {
        rc = ngx_http_agent_turn_subgraph_more(turn);
    }

    return rc;
}


/* the store's answer to a subgraph's step: the next, or its run goes on */

void
ngx_http_agent_turn_subgraph_saved(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_turn_t *turn = sc->data;

    ngx_int_t              rc;
    ngx_http_agent_run_t  *inner;

    rc = sc->rc;
    ngx_http_agent_store_call_reset(sc);

    inner = turn->ns_run;

    if (rc == NGX_OK) {
        rc = ngx_http_agent_turn_subgraph_more(turn);

        if (rc == NGX_AGAIN) {
            return;
        }
    }

    if (rc != NGX_OK) {
        (void) ngx_http_agent_graph_fail(inner, "checkpoint_failed",
                                         "the state of a subgraph could not "
                                         "be saved");
    }

    ngx_http_agent_graph_saved(inner, rc == NGX_OK ? NGX_OK : NGX_ERROR);
}


/*
 * The wait of the subgraph of the node running (run's), saved in the
 * subgraph's namespace as its step: its fields set in turn->cp (its
 * parent, its step less one: checkpoint_save() adds it), and the node it
 * ran and the one it waits at.  NGX_DECLINED: the thread's own checkpoint
 * (no subgraph waits there, or steps were not saved before it).
 */

ngx_int_t
ngx_http_agent_turn_subgraph_wait(ngx_http_agent_turn_t *turn,
    ngx_http_agent_run_t *run, ngx_str_t **node, ngx_str_t **next)
{
    yajl_val               v;
    ngx_str_t             *at, *ran;
    ngx_http_agent_run_t  *inner;

    inner = turn->inside;

    if (!run->inside || inner == NULL || inner->parent != run
        || turn->skipping || inner->interrupt.len == 0)
    {
        return NGX_DECLINED;
    }

    v = ngx_http_agent_json_parse(run->pool, inner->interrupt.data,
                                  inner->interrupt.len, NULL);
    at = ngx_pcalloc(run->pool, sizeof(ngx_str_t));
    ran = ngx_pcalloc(run->pool, sizeof(ngx_str_t));

    if (v == NULL || at == NULL || ran == NULL
        || ngx_http_agent_json_get_str(v, "node", at) != NGX_OK)
    {
        return NGX_DECLINED;
    }

    if (inner->saving_node) {
        *ran = inner->saving_node->name;

    } else {
        ngx_str_set(ran, "__input__");
    }

    if (ngx_http_agent_turn_subgraph_ns(turn, inner, &turn->cp.ns) != NGX_OK) {
        return NGX_ERROR;
    }

    turn->cp.id = inner->saved;
    turn->cp.step = (int64_t) inner->step - 1;

    *node = ran;
    *next = at;

    return NGX_OK;
}


/* "NODE:TASK|NODE:TASK": from the turn's run's node down to inner */

static ngx_int_t
ngx_http_agent_turn_subgraph_ns(ngx_http_agent_turn_t *turn,
    ngx_http_agent_run_t *inner, ngx_str_t *ns)
{
    u_char                 *p;
    size_t                  len;
    ngx_uint_t              n, i;
    ngx_str_t              *name;
    ngx_http_agent_run_t   *runs[NGX_HTTP_AGENT_TURN_NS_DEPTH], *r;
    ngx_http_agent_node_t  *nodes;

    len = 0;
    n = 0;

    for (r = inner; r->parent && n < NGX_HTTP_AGENT_TURN_NS_DEPTH;
         r = r->parent)
    {
        nodes = r->parent->graph->nodes.elts;
        len += nodes[r->parent->current].name.len + 1 + r->task.len + 1;
        runs[n++] = r;
    }

    p = ngx_pnalloc(turn->request->pool, len);
    if (p == NULL) {
        return NGX_ERROR;
    }

    ns->data = p;

    for (i = n; i > 0; i--) {
        r = runs[i - 1];
        nodes = r->parent->graph->nodes.elts;
        name = &nodes[r->parent->current].name;

        if (i < n) {
            *p++ = '|';
        }

        p = ngx_cpymem(p, name->data, name->len);
        *p++ = ':';
        p = ngx_cpymem(p, r->task.data, r->task.len);
    }

    ns->len = p - ns->data;

    return NGX_OK;
}


/* turn->ns_cp: a step of inner in its namespace, its state kept */

static ngx_int_t
ngx_http_agent_turn_subgraph_row(ngx_http_agent_turn_t *turn,
    ngx_http_agent_run_t *inner, int64_t step, ngx_str_t *node,
    ngx_int_t next, const char *to)
{
    ngx_str_t                     blob, *outer;
    ngx_pool_t                   *pool;
    ngx_http_agent_node_t        *nodes;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_checkpoint_t  *cp;

    pool = turn->request->pool;
    cp = &turn->ns_cp;

    ngx_memzero(cp, sizeof(ngx_http_agent_checkpoint_t));

    nodes = inner->parent->graph->nodes.elts;
    outer = &nodes[inner->parent->current].name;

    if (ngx_http_agent_state_subgraph_json(pool, outer, inner, next, &blob)
        != NGX_OK
        || ngx_http_agent_turn_subgraph_ns(turn, inner, &cp->ns) != NGX_OK)
    {
        return NGX_ERROR;
    }

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "__subgraph__");
    ngx_http_agent_json_raw(j, &blob);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &cp->channels) != NGX_OK) {
        return NGX_ERROR;
    }

    nodes = inner->graph->nodes.elts;

    cp->parent_id = inner->saved;
    cp->step = step;
    cp->node = *node;

    if (to) {
        cp->next.data = (u_char *) to;
        cp->next.len = ngx_strlen(to);

    } else if (next >= 0) {
        cp->next = nodes[next].name;
    }

    cp->run_id = turn->run_id;
    cp->metadata = turn->in.metadata;
    cp->lease = turn->lease_ms;

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_turn_subgraph_write(ngx_http_agent_turn_t *turn)
{
    ngx_int_t  rc;

    rc = ngx_http_agent_store_checkpoint_write(&turn->nsc, &turn->session_id,
                                               &turn->ns_cp, NULL);

    if (rc != NGX_ERROR) {
        /* both stores name the row when it is asked for */
        turn->ns_run->saved = turn->ns_cp.id;
    }

    return rc;
}


/*
 * the input's second row, once its first is saved: step 0, the
 * subgraph's first node next
 */

static ngx_int_t
ngx_http_agent_turn_subgraph_more(ngx_http_agent_turn_t *turn)
{
    ngx_str_t              node;
    ngx_http_agent_run_t  *inner;

    if (!turn->ns_input) {
        return NGX_OK;
    }

    turn->ns_input = 0;

    inner = turn->ns_run;
    node = turn->ns_cp.node;

    if (ngx_http_agent_turn_subgraph_row(turn, inner, 0, &node,
                                         inner->graph->entry, NULL)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_turn_subgraph_write(turn);
}
