
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"


/*
 * "node NAME subgraph graph=GRAPH": the step runs another declared graph
 * whole, as a LangGraph node that is a compiled graph does.  The state
 * goes in and comes out by channel names: each channel of GRAPH that the
 * graph of the node has too (of the same reducer) starts at its value
 * there, and what GRAPH's run wrote to it is the step's update (the
 * messages it added, the number it added, an array's new items, a
 * value's last one); GRAPH's other channels start at their defaults and
 * are its own.  The turn's input and session_id go in, not out.  The
 * node's step is one step of the outer run; the subgraph's own steps
 * (the state it starts with, each step it goes on from) are told up to
 * the outermost run's embedder, which saves them in the subgraph's
 * namespace (handlers' subgraph_checkpoint), and so are its start and
 * each of its nodes' ends, for a stream that shows them (subgraph).
 * Its models, tools and limits are the turn's.
 *
 * A subgraph that stops at an interrupt stops the run there too: the
 * thread waits at the node, its interrupt the subgraph's value, and the
 * subgraph's state where it stopped is kept in the wait's checkpoint
 * ("__subgraph__", never shown; the turn saves it in the namespace).  The
 * answer resumes the node, which takes the subgraph's run up where it
 * stopped, with the answer.
 */


#define NGX_HTTP_AGENT_SUBGRAPH_DEPTH  8


typedef struct {
    ngx_uint_t                 outer;       /* the channel in the node's
                                               graph */
    ngx_uint_t                 inner;       /* ... in GRAPH */
} ngx_http_agent_subgraph_share_t;


typedef struct {
    ngx_str_t                  graph_name;
    ngx_array_t               *shared;      /* ..._subgraph_share_t */
} ngx_http_agent_node_subgraph_conf_t;


/* a run of the subgraph: where it came from, what it started with */
typedef struct {
    ngx_http_agent_run_t      *outer;
    ngx_http_agent_node_t     *node;
    ngx_http_agent_run_t      *inner;
    ngx_http_agent_value_t    *start;       /* the shared values it got */
} ngx_http_agent_subgraph_run_t;


static ngx_int_t ngx_http_agent_node_subgraph_check(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);
static ngx_int_t ngx_http_agent_node_subgraph_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);
static ngx_int_t ngx_http_agent_node_subgraph_saved(ngx_http_agent_run_t *run,
    ngx_str_t *node, ngx_int_t next);
static void ngx_http_agent_node_subgraph_done(ngx_http_agent_run_t *run,
    ngx_int_t rc);
static ngx_int_t ngx_http_agent_node_subgraph_node(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_uint_t start);
static ngx_int_t ngx_http_agent_node_subgraph_up(ngx_http_agent_run_t *run,
    ngx_http_agent_run_t *inner, ngx_http_agent_node_t *node);
static ngx_int_t ngx_http_agent_node_subgraph_tell(ngx_http_agent_run_t *run,
    ngx_http_agent_run_t *inner, ngx_http_agent_node_t *node);
static ngx_int_t ngx_http_agent_node_subgraph_save_up(
    ngx_http_agent_run_t *run, ngx_http_agent_run_t *inner, ngx_str_t *node,
    ngx_int_t next);
static ngx_int_t ngx_http_agent_node_subgraph_save(ngx_http_agent_run_t *run,
    ngx_http_agent_run_t *inner, ngx_str_t *node, ngx_int_t next);
static ngx_int_t ngx_http_agent_node_subgraph_out(
    ngx_http_agent_subgraph_run_t *sr);
static ngx_int_t ngx_http_agent_node_subgraph_items(ngx_pool_t *pool,
    ngx_str_t *start, ngx_str_t *end, ngx_str_t *out);
static void ngx_http_agent_node_subgraph_cancel(ngx_http_agent_run_t *run);
static ngx_int_t ngx_http_agent_node_subgraph_cache(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_uint_t put);
static ngx_int_t ngx_http_agent_node_subgraph_wait(
    ngx_http_agent_subgraph_run_t *sr);


static ngx_http_agent_param_t  ngx_http_agent_node_subgraph_params[] = {
    { ngx_string("graph"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_subgraph_conf_t, graph_name), NULL },
    ngx_http_agent_null_param
};


ngx_http_agent_kind_t  ngx_http_agent_subgraph_kind = {
    ngx_string("subgraph"),
    NULL,
    ngx_http_agent_node_subgraph_params,
    ngx_http_agent_node_subgraph_check,
    ngx_http_agent_node_subgraph_run,
    0,
    NULL,
    sizeof(ngx_http_agent_node_subgraph_conf_t)
};


/*
 * the inner run's embedder: its end the step's; its steps, and those of
 * subgraphs it runs, told to the outer run's, which saves them in the
 * subgraph's namespace
 */

static ngx_http_agent_run_handlers_t  ngx_http_agent_node_subgraph_handlers = {
    ngx_http_agent_node_subgraph_saved,
    ngx_http_agent_node_subgraph_done,
    ngx_http_agent_node_subgraph_node,
    ngx_http_agent_node_subgraph_up,
    ngx_http_agent_node_subgraph_save_up,
    ngx_http_agent_node_subgraph_cache
};


static ngx_int_t
ngx_http_agent_node_subgraph_check(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_subgraph_conf_t *sc = node->conf;

    ngx_int_t                         n;
    ngx_uint_t                        i;
    ngx_http_agent_graph_t           *inner;
    ngx_http_agent_channel_t         *ch, *och;
    ngx_http_agent_subgraph_share_t  *share;

    if (sc->graph_name.len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the subgraph node \"%V\" "
                           "needs graph=", &node->name);
        return NGX_ERROR;
    }

    inner = ngx_http_agent_graph_conf_graph(&sc->graph_name);

    if (inner == NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "graph=%V of the node "
                           "\"%V\": no such graph (agent_graph)",
                           &sc->graph_name, &node->name);
        return NGX_ERROR;
    }

    if (inner == graph) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "graph=%V of the node "
                           "\"%V\": a graph does not run itself",
                           &sc->graph_name, &node->name);
        return NGX_ERROR;
    }

    sc->shared = ngx_array_create(cf->pool, 4,
                                  sizeof(ngx_http_agent_subgraph_share_t));
    if (sc->shared == NULL) {
        return NGX_ERROR;
    }

    ch = inner->channels.elts;
    och = graph->channels.elts;

    for (i = 0; i < inner->channels.nelts; i++) {
        n = ngx_http_agent_graph_channel(graph, &ch[i].name);

        if (n == NGX_ERROR) {
            continue;
        }

        if (och[n].reducer != ch[i].reducer) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the node \"%V\": the "
                               "channel \"%V\" of the graphs \"%V\" and "
                               "\"%V\" is reduced otherwise in each",
                               &node->name, &ch[i].name, &graph->name,
                               &inner->name);
            return NGX_ERROR;
        }

        share = ngx_array_push(sc->shared);
        if (share == NULL) {
            return NGX_ERROR;
        }

        share->outer = n;
        share->inner = i;
    }

    node->subgraph = inner;

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_node_subgraph_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_subgraph_conf_t *sc = node->conf;

    ngx_int_t                         rc;
    ngx_uint_t                        i, n;
    ngx_array_t                      *msgs;
    ngx_http_agent_run_t             *inner;
    ngx_http_agent_value_t           *in, *out;
    ngx_http_agent_subgraph_run_t    *sr;
    ngx_http_agent_subgraph_share_t  *share;

    if (run->depth >= NGX_HTTP_AGENT_SUBGRAPH_DEPTH) {
        return ngx_http_agent_graph_fail(run, "recursion_limit",
                                         "subgraphs nest deeper than %d "
                                         "at \"%V\"",
                                         NGX_HTTP_AGENT_SUBGRAPH_DEPTH,
                                         &node->name);
    }

    inner = ngx_http_agent_graph_run_create(run->pool, run->log,
                                            node->subgraph);
    sr = ngx_pcalloc(run->pool, sizeof(ngx_http_agent_subgraph_run_t));

    if (inner == NULL || sr == NULL) {
        return NGX_ERROR;
    }

    sr->outer = run;
    sr->node = node;
    sr->inner = inner;

    sr->start = ngx_pcalloc(run->pool, (sc->shared->nelts + 1)
                                       * sizeof(ngx_http_agent_value_t));
    if (sr->start == NULL) {
        return NGX_ERROR;
    }

    inner->depth = run->depth + 1;
    inner->parent = run;
    inner->limit = run->limit;
    inner->handlers = &ngx_http_agent_node_subgraph_handlers;
    inner->ctx = sr;
    inner->data = run->data;

    /* the shared channels: their values now, copied in */

    share = sc->shared->elts;

    for (i = 0; i < sc->shared->nelts; i++) {
        in = &run->state[share[i].outer];
        out = &inner->state[share[i].inner];

        sr->start[i] = *in;

        if (in->messages) {
            n = in->messages->nelts;
            msgs = out->messages;

            if (n && ngx_array_push_n(msgs, n) == NULL) {
                return NGX_ERROR;
            }

            ngx_memcpy(msgs->elts, in->messages->elts,
                       n * sizeof(ngx_http_agent_msg_t));

            if (share[i].inner == NGX_HTTP_AGENT_CH_MESSAGES) {
                inner->messages_at_start = n;
            }

            continue;
        }

        out->number = in->number;
        out->json = in->json;
    }

    if (run->resuming) {

        /* resumed at the node: the subgraph goes on where it waits */

        rc = ngx_http_agent_state_subgraph(run, node, inner);

        if (rc == NGX_ERROR) {
            return NGX_ERROR;
        }

        if (rc == NGX_OK) {
            inner->resuming = 1;
            inner->resume = run->resume;

            /* a wait of its own is the engine's to set when it waits */
            ngx_str_null(&inner->interrupt);

            /* the wait is over: the outer run's next checkpoint keeps none */
            if (ngx_http_agent_state_set(run, "__subgraph__", NULL)
                != NGX_OK)
            {
                return NGX_ERROR;
            }
        }
    }

    run->node_data = sr;
    run->cancel = ngx_http_agent_node_subgraph_cancel;

    /* the state it starts with, for the streams that show it */

    if (ngx_http_agent_node_subgraph_tell(run, inner, NULL) != NGX_OK) {
        return NGX_ERROR;
    }

    if (inner->resuming) {
        ngx_http_agent_graph_start(inner);

    } else {
        /* the state it starts with is a checkpoint of its own first */
        ngx_http_agent_graph_begin(inner);
    }

    /* its end calls ngx_http_agent_graph_node_done(), now or later */
    return NGX_AGAIN;
}


/*
 * a step of the subgraph: saved by the outermost run's embedder in the
 * subgraph's namespace; one it waits at is the outer run's wait's
 */

static ngx_int_t
ngx_http_agent_node_subgraph_saved(ngx_http_agent_run_t *run,
    ngx_str_t *node, ngx_int_t next)
{
    if (run->interrupt.len) {
        return NGX_OK;
    }

    return ngx_http_agent_node_subgraph_save(run->parent, run, node, next);
}


/* a step of a subgraph run below this inner run: saved by its parent's */

static ngx_int_t
ngx_http_agent_node_subgraph_save_up(ngx_http_agent_run_t *run,
    ngx_http_agent_run_t *inner, ngx_str_t *node, ngx_int_t next)
{
    return ngx_http_agent_node_subgraph_save(run->parent, inner, node, next);
}


static ngx_int_t
ngx_http_agent_node_subgraph_save(ngx_http_agent_run_t *run,
    ngx_http_agent_run_t *inner, ngx_str_t *node, ngx_int_t next)
{
    if (run->handlers->subgraph_checkpoint == NULL) {
        return NGX_OK;
    }

    return run->handlers->subgraph_checkpoint(run, inner, node, next);
}


static void
ngx_http_agent_node_subgraph_done(ngx_http_agent_run_t *run, ngx_int_t rc)
{
    ngx_http_agent_subgraph_run_t *sr = run->ctx;

    ngx_http_agent_run_t  *outer;

    outer = sr->outer;

    if (rc == NGX_HTTP_AGENT_INTERRUPT) {
        if (ngx_http_agent_node_subgraph_wait(sr) != NGX_OK) {
            rc = NGX_ERROR;
        }

    } else if (rc != NGX_OK) {
        outer->error = run->error;
        outer->code = run->code;

    } else if (ngx_http_agent_node_subgraph_out(sr) != NGX_OK) {
        rc = NGX_ERROR;
    }

    ngx_http_agent_graph_node_done(outer, rc);
}


/* a node of the subgraph ended: told up, to the outermost run's embedder */

static ngx_int_t
ngx_http_agent_node_subgraph_node(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_uint_t start)
{
    if (start) {
        return NGX_OK;
    }

    return ngx_http_agent_node_subgraph_tell(run->parent, run, node);
}


/* a step of a subgraph run below this inner run: told to its parent */

static ngx_int_t
ngx_http_agent_node_subgraph_up(ngx_http_agent_run_t *run,
    ngx_http_agent_run_t *inner, ngx_http_agent_node_t *node)
{
    return ngx_http_agent_node_subgraph_tell(run->parent, inner, node);
}


static ngx_int_t
ngx_http_agent_node_subgraph_tell(ngx_http_agent_run_t *run,
    ngx_http_agent_run_t *inner, ngx_http_agent_node_t *node)
{
    if (run->handlers->subgraph == NULL) {
        return NGX_OK;
    }

    return run->handlers->subgraph(run, inner, node);
}


/* what the subgraph's run wrote to the shared channels: the step's update */

static ngx_int_t
ngx_http_agent_node_subgraph_out(ngx_http_agent_subgraph_run_t *sr)
{
    ngx_uint_t                            i, k;
    ngx_str_t                             items;
    ngx_http_agent_msg_t                 *m;
    ngx_http_agent_run_t                 *outer;
    ngx_http_agent_value_t               *start, *end;
    ngx_http_agent_channel_t             *ch;
    ngx_http_agent_subgraph_share_t      *share;
    ngx_http_agent_node_subgraph_conf_t  *sc;

    outer = sr->outer;
    sc = sr->node->conf;
    share = sc->shared->elts;
    ch = outer->graph->channels.elts;

    for (i = 0; i < sc->shared->nelts; i++) {

        if (share[i].outer == NGX_HTTP_AGENT_CH_INPUT
            || share[i].outer == NGX_HTTP_AGENT_CH_SESSION_ID)
        {
            /* the turn's own: in, not out */
            continue;
        }

        start = &sr->start[i];
        end = &sr->inner->state[share[i].inner];

        switch (ch[share[i].outer].reducer) {

        case NGX_HTTP_AGENT_REDUCE_MESSAGES:
            m = end->messages->elts;
            k = (share[i].inner == NGX_HTTP_AGENT_CH_MESSAGES)
                ? sr->inner->messages_at_start : start->messages->nelts;

            for ( /* void */ ; k < end->messages->nelts; k++) {
                if (ngx_http_agent_graph_write_message(outer, outer->update,
                                                       share[i].outer, &m[k])
                    != NGX_OK)
                {
                    return NGX_ERROR;
                }
            }

            break;

        case NGX_HTTP_AGENT_REDUCE_SUM:
            if (end->number != start->number
                && ngx_http_agent_graph_write_number(outer->update,
                                                     share[i].outer,
                                                     end->number
                                                     - start->number)
                   != NGX_OK)
            {
                return NGX_ERROR;
            }

            break;

        case NGX_HTTP_AGENT_REDUCE_APPEND:
            if (ngx_http_agent_node_subgraph_items(outer->pool, &start->json,
                                                   &end->json, &items)
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            if (items.len
                && ngx_http_agent_graph_write_value(outer->update,
                                                    share[i].outer, &items)
                   != NGX_OK)
            {
                return NGX_ERROR;
            }

            break;

        default:
            /* a value or an object: its last, if it was written */
            if ((end->json.data != start->json.data
                 || end->json.len != start->json.len)
                && ngx_http_agent_graph_write_value(outer->update,
                                                    share[i].outer,
                                                    &end->json)
                   != NGX_OK)
            {
                return NGX_ERROR;
            }

            break;
        }
    }

    return NGX_OK;
}


/* an array's items after those it started with, as an array (or none) */

static ngx_int_t
ngx_http_agent_node_subgraph_items(ngx_pool_t *pool, ngx_str_t *start,
    ngx_str_t *end, ngx_str_t *out)
{
    size_t                  i, from;
    yajl_val                a, b;
    ngx_http_agent_json_t  *j;

    ngx_str_null(out);

    if (end->len == 0
        || (end->data == start->data && end->len == start->len))
    {
        return NGX_OK;
    }

    a = start->len ? ngx_http_agent_json_parse(pool, start->data, start->len,
                                               NULL)
                   : NULL;
    b = ngx_http_agent_json_parse(pool, end->data, end->len, NULL);

    if (b == NULL || !YAJL_IS_ARRAY(b)) {
        return NGX_OK;
    }

    from = (a && YAJL_IS_ARRAY(a)) ? a->u.array.len : 0;

    if (from >= b->u.array.len) {
        return NGX_OK;
    }

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_arr(j);

    for (i = from; i < b->u.array.len; i++) {
        ngx_http_agent_json_val(j, b->u.array.values[i]);
    }

    ngx_http_agent_json_arr_end(j);

    return ngx_http_agent_json_done(j, out);
}


/* the outer run is cancelled: so is the subgraph's, and its node's work */

/*
 * a node of the subgraph with cache=: the outer run's embedder keys and
 * keeps it (the owner is the run's, its graph the subgraph's)
 */

static ngx_int_t
ngx_http_agent_node_subgraph_cache(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_uint_t put)
{
    ngx_http_agent_run_t  *outer;

    outer = run->parent;

    if (outer == NULL || outer->handlers->cache == NULL) {
        return NGX_DECLINED;
    }

    return outer->handlers->cache(run, node, put);
}


static void
ngx_http_agent_node_subgraph_cancel(ngx_http_agent_run_t *run)
{
    ngx_http_agent_subgraph_run_t *sr = run->node_data;

    ngx_http_agent_graph_cancel(sr->inner);
}


/*
 * The subgraph stopped at an interrupt: so does the node, its interrupt
 * the subgraph's value, and the subgraph's state kept in the outer run's
 * for its checkpoint: {"node", "step", "from", "interrupt", "state"}
 */

static ngx_int_t
ngx_http_agent_node_subgraph_wait(ngx_http_agent_subgraph_run_t *sr)
{
    yajl_val                v;
    ngx_str_t               at;
    ngx_uint_t              n;
    ngx_http_agent_run_t   *inner, *outer;
    ngx_http_agent_json_t  *j;

    inner = sr->inner;
    outer = sr->outer;

    v = inner->interrupt.len
        ? ngx_http_agent_json_parse(outer->pool, inner->interrupt.data,
                                    inner->interrupt.len, NULL)
        : NULL;

    if (v == NULL || !YAJL_IS_OBJECT(v)
        || ngx_http_agent_json_get_str(v, "node", &at) != NGX_OK)
    {
        return ngx_http_agent_graph_fail(outer, "subgraph_interrupt",
                                         "the subgraph of the step \"%V\" "
                                         "stopped with no node to go on at",
                                         &sr->node->name);
    }

    if (ngx_http_agent_state_subgraph_keep(outer, &sr->node->name, inner)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /*
     * the outer interrupt: the subgraph's (its value, a breakpoint's or
     * an approval's mark), at the node, saying where inside
     */

    j = ngx_http_agent_json_create_obj(outer->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_key(j, "node");
    ngx_http_agent_json_str(j, &sr->node->name);

    for (n = 0; n < v->u.object.len; n++) {
        if (ngx_strcmp(v->u.object.keys[n], "node") != 0
            && ngx_strcmp(v->u.object.keys[n], "after") != 0
            && ngx_strcmp(v->u.object.keys[n], "graph") != 0
            && ngx_strcmp(v->u.object.keys[n], "subgraph") != 0)
        {
            ngx_http_agent_json_cstr(j, v->u.object.keys[n]);
            ngx_http_agent_json_val(j, v->u.object.values[n]);
        }
    }

    outer->inside = 1;

    ngx_http_agent_json_key(j, "subgraph");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "graph");
    ngx_http_agent_json_str(j, &inner->graph->name);
    ngx_http_agent_json_key(j, "node");
    ngx_http_agent_json_str(j, &at);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, &outer->interrupt);
}
