/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine.h"


/*
 * A run's state as JSON, and writes into its channels by name: what the
 * stores, the kinds and the protocols share.  Nothing here reads or
 * writes the store (the turn's checkpoint.c does).
 */


/*
 * every channel but messages, then the kept ones: all 1, messages too
 * (GET /state); all 2, as a checkpoint keeps them (a waiting subgraph's
 * state too, "__subgraph__")
 */

void
ngx_http_agent_state_channels(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run, ngx_uint_t all)
{
    size_t                     i, k;
    yajl_val                   extra, v;
    ngx_uint_t                 n;
    ngx_array_t               *msgs;
    ngx_http_agent_msg_t      *m;
    ngx_http_agent_channel_t  *ch;

    ch = run->graph->channels.elts;

    for (i = 0; i < run->graph->channels.nelts; i++) {

        if (i == NGX_HTTP_AGENT_CH_MESSAGES && all != 1) {
            continue;
        }

        ngx_http_agent_json_str(j, &ch[i].name);

        switch (ch[i].reducer) {

        case NGX_HTTP_AGENT_REDUCE_MESSAGES:
            msgs = run->state[i].messages;
            m = msgs->elts;

            ngx_http_agent_json_arr(j);

            /* a checkpoint's (all unset) keeps their metadata too */

            for (n = 0; n < msgs->nelts; n++) {
                ngx_http_agent_message_json(j, NULL, &m[n],
                                            all == 1
                                            ? 1 : NGX_HTTP_AGENT_MESSAGE_KEPT);
            }

            ngx_http_agent_json_arr_end(j);
            break;

        case NGX_HTTP_AGENT_REDUCE_SUM:
            ngx_http_agent_json_num(j, run->state[i].number);
            break;

        default:
            ngx_http_agent_json_raw(j, &run->state[i].json);
        }
    }

    if (run->extra.len == 0) {
        return;
    }

    extra = ngx_http_agent_json_parse(run->pool, run->extra.data,
                                      run->extra.len, NULL);

    for (i = 0; extra && YAJL_IS_OBJECT(extra) && i < extra->u.object.len;
         i++)
    {
        if (all != 2
            && ngx_strcmp(extra->u.object.keys[i], "__subgraph__") == 0)
        {
            /* a subgraph's state where it waits: the checkpoint's only */
            continue;
        }

        ngx_http_agent_json_cstr(j, extra->u.object.keys[i]);
        v = extra->u.object.values[i];

        if (all != 1 || !YAJL_IS_OBJECT(v)
            || ngx_strcmp(extra->u.object.keys[i], "__interrupt__") != 0)
        {
            ngx_http_agent_json_val(j, v);
            continue;
        }

        /* shown as it was streamed: its graph is ours to check, kept */

        ngx_http_agent_json_obj(j);

        for (k = 0; k < v->u.object.len; k++) {
            if (ngx_strcmp(v->u.object.keys[k], "graph") != 0) {
                ngx_http_agent_json_cstr(j, v->u.object.keys[k]);
                ngx_http_agent_json_val(j, v->u.object.values[k]);
            }
        }

        ngx_http_agent_json_end(j);
    }
}


/* GET /state: every channel of the graph and the kept ones, as an object */

void
ngx_http_agent_state_json(ngx_http_agent_json_t *j, ngx_http_agent_run_t *run)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_state_channels(j, run, 1);
    ngx_http_agent_json_end(j);
}


/* what a step wrote, channel by channel: {"channel": value, ...} */

void
ngx_http_agent_state_update(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run)
{
    ngx_uint_t                 i, n;
    ngx_http_agent_msg_t      *m;
    ngx_http_agent_write_t    *w;
    ngx_http_agent_channel_t  *ch;

    ch = run->graph->channels.elts;
    w = run->update ? run->update->elts : NULL;

    ngx_http_agent_json_obj(j);

    for (i = 0; w && i < run->update->nelts; i++) {
        ngx_http_agent_json_str(j, &ch[w[i].channel].name);

        if (w[i].value.messages) {
            m = w[i].value.messages->elts;

            ngx_http_agent_json_arr(j);

            for (n = 0; n < w[i].value.messages->nelts; n++) {
                ngx_http_agent_message_json(j, NULL, &m[n], 1);
            }

            ngx_http_agent_json_arr_end(j);

        } else if (ch[w[i].channel].reducer == NGX_HTTP_AGENT_REDUCE_SUM) {
            ngx_http_agent_json_num(j, w[i].value.number);

        } else if (w[i].value.json.len) {
            ngx_http_agent_json_raw(j, &w[i].value.json);

        } else {
            ngx_http_agent_json_null(j);
        }
    }

    ngx_http_agent_json_end(j);
}


/* every channel but messages, as an object: a one-shot answer's state */

void
ngx_http_agent_state_values(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_state_channels(j, run, 0);
    ngx_http_agent_json_end(j);
}


/*
 * a value from outside a turn (POST /connection): declared or kept; a
 * kept one goes with json NULL
 */

ngx_int_t
ngx_http_agent_state_set(ngx_http_agent_run_t *run, const char *name,
    ngx_str_t *json)
{
    size_t                  i;
    yajl_val                extra;
    ngx_int_t               ch;
    ngx_str_t               n;
    ngx_http_agent_json_t  *j;

    n.data = (u_char *) name;
    n.len = ngx_strlen(name);

    ch = ngx_http_agent_graph_channel(run->graph, &n);

    if (ch != NGX_ERROR && ch != NGX_HTTP_AGENT_CH_MESSAGES) {
        if (json) {
            run->state[ch].json = *json;
        }

        return NGX_OK;
    }

    extra = run->extra.len
            ? ngx_http_agent_json_parse(run->pool, run->extra.data,
                                        run->extra.len, NULL)
            : NULL;

    j = ngx_http_agent_json_create(run->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);

    for (i = 0; extra && YAJL_IS_OBJECT(extra) && i < extra->u.object.len;
         i++)
    {
        if (ngx_strcmp(extra->u.object.keys[i], name) == 0) {
            continue;
        }

        ngx_http_agent_json_cstr(j, extra->u.object.keys[i]);
        ngx_http_agent_json_val(j, extra->u.object.values[i]);
    }

    if (json) {
        ngx_http_agent_json_str(j, &n);
        ngx_http_agent_json_raw(j, json);
    }

    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, &run->extra);
}


/*
 * The interrupt the state waits on (a kept "__interrupt__" of {"node",
 * "value"}): NGX_OK with the node's name, NGX_DECLINED when there is none
 */

ngx_int_t
ngx_http_agent_state_interrupt(ngx_http_agent_run_t *run, ngx_str_t *node)
{
    yajl_val  extra, v;

    if (run->extra.len == 0) {
        return NGX_DECLINED;
    }

    extra = ngx_http_agent_json_parse(run->pool, run->extra.data,
                                      run->extra.len, NULL);

    v = extra ? ngx_http_agent_json_get(extra, "__interrupt__") : NULL;

    if (v == NULL || !YAJL_IS_OBJECT(v)
        || ngx_http_agent_json_get_str(v, "node", node) != NGX_OK)
    {
        return NGX_DECLINED;
    }

    return NGX_OK;
}


/* the graph whose step raised the interrupt: kept since issue 28 */

ngx_int_t
ngx_http_agent_state_interrupt_graph(ngx_http_agent_run_t *run,
    ngx_str_t *graph)
{
    yajl_val  extra, v;

    if (run->extra.len == 0) {
        return NGX_DECLINED;
    }

    extra = ngx_http_agent_json_parse(run->pool, run->extra.data,
                                      run->extra.len, NULL);

    v = extra ? ngx_http_agent_json_get(extra, "__interrupt__") : NULL;

    if (v == NULL || !YAJL_IS_OBJECT(v)
        || ngx_http_agent_json_get_str(v, "graph", graph) != NGX_OK)
    {
        return NGX_DECLINED;
    }

    return NGX_OK;
}


/* messages as state_channels() writes them, read back (a checkpoint) */

ngx_int_t
ngx_http_agent_state_messages(ngx_pool_t *pool, yajl_val v,
    ngx_array_t *messages)
{
    size_t                 i;
    yajl_val               o, tc;
    ngx_http_agent_msg_t  *m;

    if (!YAJL_IS_ARRAY(v)) {
        return NGX_OK;
    }

    for (i = 0; i < v->u.array.len; i++) {
        o = v->u.array.values[i];

        if (!YAJL_IS_OBJECT(o)) {
            continue;
        }

        m = ngx_array_push(messages);
        if (m == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(m, sizeof(ngx_http_agent_msg_t));

        (void) ngx_http_agent_json_get_str(o, "role", &m->role);
        (void) ngx_http_agent_json_get_str(o, "content", &m->content);
        (void) ngx_http_agent_json_get_str(o, "tool_call_id",
                                           &m->tool_call_id);
        (void) ngx_http_agent_json_get_str(o, "name", &m->name);

        tc = ngx_http_agent_json_get(o, "metadata");

        if (tc && YAJL_IS_OBJECT(tc)) {
            if (ngx_http_agent_json_encode(pool, tc, &m->metadata) != NGX_OK) {
                return NGX_ERROR;
            }

            (void) ngx_http_agent_json_get_str(tc, "id", &m->id);
        }

        tc = ngx_http_agent_json_get(o, "tool_calls");

        if (tc && YAJL_IS_ARRAY(tc)
            && ngx_http_agent_json_encode(pool, tc, &m->tool_calls)
               != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* a channel's value as state_channels() writes it, read back into run */

ngx_int_t
ngx_http_agent_state_read(ngx_pool_t *pool, ngx_http_agent_run_t *run,
    ngx_uint_t ch, yajl_val c)
{
    ngx_str_t                  num;
    ngx_http_agent_channel_t  *channels;

    channels = run->graph->channels.elts;

    switch (channels[ch].reducer) {

    case NGX_HTTP_AGENT_REDUCE_SUM:
        if (YAJL_IS_NUMBER(c)) {
            num.data = (u_char *) c->u.number.r;
            num.len = ngx_strlen(num.data);
            run->state[ch].number = ngx_http_agent_json_number(&num);
        }

        return NGX_OK;

    case NGX_HTTP_AGENT_REDUCE_MESSAGES:
        return ngx_http_agent_state_messages(pool, c, run->state[ch].messages);

    default:
        if (YAJL_IS_NULL(c)) {
            ngx_str_null(&run->state[ch].json);
            return NGX_OK;
        }

        return ngx_http_agent_json_encode(pool, c, &run->state[ch].json);
    }
}


/*
 * A subgraph that waits inside the node (its state kept as "__subgraph__"
 * by node_subgraph.c): its run made as it stopped, at the node it waits
 * at, its interrupt kept as a checkpoint's is.  NGX_DECLINED: none waits
 * there.  A subgraph's checkpoint that does not wait (no "interrupt", its
 * "next" node, if any): its run made at that step, for its state.
 */

ngx_int_t
ngx_http_agent_state_subgraph(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_http_agent_run_t *inner)
{
    size_t                  i;
    yajl_val                extra, sub, state, v, step, from;
    ngx_int_t               ch, at;
    ngx_str_t               name, kept;
    ngx_uint_t              others;
    ngx_http_agent_json_t  *j;

    extra = run->extra.len
            ? ngx_http_agent_json_parse(run->pool, run->extra.data,
                                        run->extra.len, NULL)
            : NULL;
    sub = extra ? ngx_http_agent_json_get(extra, "__subgraph__") : NULL;

    if (sub == NULL || !YAJL_IS_OBJECT(sub)
        || ngx_http_agent_json_get_str(sub, "node", &name) != NGX_OK
        || name.len != node->name.len
        || ngx_strncmp(name.data, node->name.data, name.len) != 0)
    {
        return NGX_DECLINED;
    }

    v = ngx_http_agent_json_get(sub, "interrupt");
    state = ngx_http_agent_json_get(sub, "state");
    step = ngx_http_agent_json_get(sub, "step");
    from = ngx_http_agent_json_get(sub, "from");

    if (v == NULL || !YAJL_IS_OBJECT(v)) {
        /* a step it went on from: no interrupt, its next node or END */
        v = NULL;
        ngx_str_set(&kept, "null");

        at = (ngx_http_agent_json_get_str(sub, "next", &name) == NGX_OK)
             ? ngx_http_agent_graph_node(inner->graph, &name)
             : NGX_HTTP_AGENT_END;

    } else if (ngx_http_agent_json_get_str(v, "node", &name) != NGX_OK) {
        at = NGX_ERROR;

    } else {
        at = ngx_http_agent_graph_node(inner->graph, &name);
    }

    if (state == NULL || !YAJL_IS_OBJECT(state) || at == NGX_ERROR) {
        return ngx_http_agent_graph_fail(run, "subgraph_interrupt",
                                         "the subgraph of the step \"%V\" "
                                         "waits at no node of its graph "
                                         "\"%V\"", &node->name,
                                         &inner->graph->name);
    }

    /* its interrupt, where a checkpoint keeps it */
    if (v && ngx_http_agent_json_encode(run->pool, v, &kept) != NGX_OK) {
        return NGX_ERROR;
    }

    /* its channels as it stopped, the others of its state kept as such */

    inner->state[NGX_HTTP_AGENT_CH_MESSAGES].messages->nelts = 0;
    others = 0;

    for (i = 0; i < state->u.object.len; i++) {
        name.data = (u_char *) state->u.object.keys[i];
        name.len = ngx_strlen(name.data);

        ch = ngx_http_agent_graph_channel(inner->graph, &name);

        if (ch == NGX_ERROR) {
            others++;
            continue;
        }

        if (ngx_http_agent_state_read(run->pool, inner, ch,
                                      state->u.object.values[i])
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    j = ngx_http_agent_json_create(run->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);

    for (i = 0; others && i < state->u.object.len; i++) {
        name.data = (u_char *) state->u.object.keys[i];
        name.len = ngx_strlen(name.data);

        if (ngx_http_agent_graph_channel(inner->graph, &name) == NGX_ERROR
            && ngx_strcmp(name.data, "__interrupt__") != 0)
        {
            ngx_http_agent_json_str(j, &name);
            ngx_http_agent_json_val(j, state->u.object.values[i]);
        }
    }

    ngx_http_agent_json_key(j, "__interrupt__");
    ngx_http_agent_json_raw(j, &kept);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &inner->extra) != NGX_OK) {
        return NGX_ERROR;
    }

    if (v) {
        inner->interrupt = kept;
    }

    inner->current = at;
    inner->step = (step && YAJL_IS_INTEGER(step)) ? YAJL_GET_INTEGER(step)
                                                   : 0;
    inner->messages_at_start = (from && YAJL_IS_INTEGER(from))
                               ? YAJL_GET_INTEGER(from) : 0;

    return NGX_OK;
}


/*
 * A subgraph's run that waits, kept in the outer run's state for its
 * checkpoint: {"node", "step", "from", "interrupt", "state"} as "__subgraph__"
 */

ngx_int_t
ngx_http_agent_state_subgraph_keep(ngx_http_agent_run_t *outer,
    ngx_str_t *node, ngx_http_agent_run_t *inner)
{
    ngx_str_t  json;

    if (ngx_http_agent_state_subgraph_json(outer->pool, node, inner,
                                           NGX_HTTP_AGENT_END, &json)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_state_set(outer, "__subgraph__", &json);
}


/*
 * A subgraph's run as "__subgraph__" keeps it: where it waits (its
 * interrupt), or, a step it goes on from, its next node (next, if any)
 */

ngx_int_t
ngx_http_agent_state_subgraph_json(ngx_pool_t *pool, ngx_str_t *node,
    ngx_http_agent_run_t *inner, ngx_int_t next, ngx_str_t *json)
{
    ngx_uint_t              n;
    ngx_array_t            *msgs;
    ngx_http_agent_msg_t   *m;
    ngx_http_agent_node_t  *nodes;
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    msgs = inner->state[NGX_HTTP_AGENT_CH_MESSAGES].messages;
    m = msgs->elts;

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "node");
    ngx_http_agent_json_str(j, node);
    ngx_http_agent_json_key(j, "step");
    ngx_http_agent_json_int(j, inner->step);
    ngx_http_agent_json_key(j, "from");
    ngx_http_agent_json_int(j, inner->messages_at_start);
    ngx_http_agent_json_key(j, "interrupt");

    if (inner->interrupt.len) {
        ngx_http_agent_json_raw(j, &inner->interrupt);

    } else {
        ngx_http_agent_json_null(j);
    }

    if (next >= 0) {
        nodes = inner->graph->nodes.elts;
        ngx_http_agent_json_key(j, "next");
        ngx_http_agent_json_str(j, &nodes[next].name);
    }

    ngx_http_agent_json_key(j, "state");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "messages");
    ngx_http_agent_json_arr(j);

    for (n = 0; n < msgs->nelts; n++) {
        ngx_http_agent_message_json(j, NULL, &m[n],
                                    NGX_HTTP_AGENT_MESSAGE_KEPT);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_state_channels(j, inner, 2);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, json);
}
