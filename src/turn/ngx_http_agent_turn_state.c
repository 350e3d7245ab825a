
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_http.h"


/*
 * A session's state written outside a turn: LangGraph's POST /state, a
 * database connected.  It is written as a turn writes it, whichever
 * protocol asks: the owner checked, under the session's lease, the last
 * checkpoint loaded, the values written through the graph's reducers, a
 * checkpoint saved as if the node as_node wrote them, the lease let go
 * with it.  An error is answered after the lease is let go.
 */


#define NGX_HTTP_AGENT_TURN_STATE_INPUT  1
#define NGX_HTTP_AGENT_TURN_STATE_START  2


static ngx_int_t ngx_http_agent_turn_state_values(ngx_http_request_t *r,
    ngx_http_agent_run_t *run, ngx_http_agent_turn_state_t *st);
static ngx_uint_t ngx_http_agent_turn_state_special(ngx_str_t *as_node);


ngx_int_t
ngx_http_agent_turn_state_update(ngx_http_request_t *r,
    ngx_http_agent_turn_state_t *st)
{
    ngx_int_t                     rc, n, next;
    ngx_str_t                     run_id, *nextp, start;
    ngx_uint_t                    special;
    ngx_http_agent_run_t         *run;
    ngx_http_agent_node_t        *nodes;
    ngx_http_agent_session_t      s;
    ngx_http_agent_checkpoint_t   cp;
    ngx_http_agent_loc_conf_t    *alcf;
    ngx_http_agent_store_call_t  *sc;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    sc = ngx_http_agent_reply_sc(r);

    ngx_memzero(&cp, sizeof(ngx_http_agent_checkpoint_t));

    rc = ngx_http_agent_reply_session_get(r, &st->id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    run = ngx_http_agent_graph_run_create(r->pool, r->connection->log,
                                          st->graph);
    if (run == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    n = ngx_http_agent_graph_step_node(run->graph, &st->as_node);
    special = ngx_http_agent_turn_state_special(&st->as_node);

    if (st->node && n == NGX_ERROR && special == 0) {
        return ngx_http_agent_reply_error(r, 422, "the graph \"%V\" has no "
                                          "node \"%V\"", &run->graph->name,
                                          &st->as_node);
    }

    rc = ngx_http_agent_reply_session_lock(r, &st->id, &run_id, st->after);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_http_agent_reply_hold(r);

    rc = ngx_http_agent_checkpoint_load(sc, &st->id, run, &cp, -1);
    if (rc != NGX_OK) {
        goto done;
    }

    /* "__input__" writes the input, which channels show from __start__ */

    rc = (special == NGX_HTTP_AGENT_TURN_STATE_INPUT)
         ? NGX_OK : ngx_http_agent_turn_state_values(r, run, st);
    if (rc != NGX_OK) {
        goto done;
    }

    if (st->write) {
        rc = st->write(sc, run, st->data);
        if (rc != NGX_OK) {
            goto done;
        }
    }

    /* next: where as_node routes now; without one, what was next */

    nextp = cp.next.len ? &cp.next : NULL;
    nodes = run->graph->nodes.elts;

    if (special == NGX_HTTP_AGENT_TURN_STATE_INPUT) {
        /* LangGraph's input step: -1 on a new thread, next __start__ */
        ngx_str_set(&start, "__start__");
        nextp = &start;

        if (cp.id.len == 0) {
            cp.step = -2;
        }

    } else if (special == NGX_HTTP_AGENT_TURN_STATE_START) {
        /* the graph's start: next its first node */
        nextp = (run->graph->entry >= 0) ? &nodes[run->graph->entry].name
                                         : NULL;

    } else if (n != NGX_ERROR) {
        next = ngx_http_agent_graph_route(run, &nodes[n]);

        if (next == NGX_ERROR) {
            rc = ngx_http_agent_reply_error(r, 422, "%V", &run->error);
            goto done;
        }

        nextp = (next == NGX_HTTP_AGENT_END) ? NULL : &nodes[next].name;
    }

    if (st->ns.len) {
        /*
         * a write to the subgraph that waits: its checkpoint, after its
         * wait's, in its namespace (the store's: NEXT:ID of the one it
         * waits at, which stays the thread's latest)
         */
        cp.ns.len = cp.next.len + 1 + cp.id.len;
        cp.ns.data = ngx_pnalloc(r->pool, cp.ns.len);
        if (cp.ns.data == NULL) {
            rc = NGX_HTTP_INTERNAL_SERVER_ERROR;
            goto done;
        }

        ngx_sprintf(cp.ns.data, "%V:%V", &cp.next, &cp.id);
        st->ns = cp.ns;
        cp.id = cp.waiting;
        cp.step = st->ns_step - 1;
        nextp = &st->ns_next;
    }

    cp.run_id = run_id;
    ngx_str_null(&cp.metadata);
    cp.lease = alcf->turn_lease;
    cp.release = 1;

    rc = ngx_http_agent_checkpoint_save(sc, run, &st->id, &cp, &st->as_node,
                                        nextp);
    if (rc != NGX_OK) {
        cp.release = 0;
        goto done;
    }

    st->checkpoint = cp.id;

done:

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (!cp.release
        && ngx_http_agent_store_unlock(sc, &st->id, &run_id) == NGX_AGAIN)
    {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK && rc < NGX_HTTP_SPECIAL_RESPONSE) {
        rc = NGX_HTTP_INTERNAL_SERVER_ERROR;
        rc = ngx_http_agent_reply_error(r, rc, "the state of session \"%V\" "
                                        "could not be saved", &st->id);
    }

    return ngx_http_agent_reply_release(r, rc);
}


/*
 * LangGraph's writers that are no node: "__input__" (the state before a
 * run's input) and "__start__" (the input taken, the graph's first node
 * next), as a thread's supersteps name them
 */

static ngx_uint_t
ngx_http_agent_turn_state_special(ngx_str_t *as_node)
{
    if (as_node->len == 9
        && ngx_strncmp(as_node->data, "__input__", 9) == 0)
    {
        return NGX_HTTP_AGENT_TURN_STATE_INPUT;
    }

    if (as_node->len == 9
        && ngx_strncmp(as_node->data, "__start__", 9) == 0)
    {
        return NGX_HTTP_AGENT_TURN_STATE_START;
    }

    return 0;
}


/*
 * the values written through their channels' reducers, as a node's; the
 * messages as the protocol read them (an id of one there replaces it)
 */

static ngx_int_t
ngx_http_agent_turn_state_values(ngx_http_request_t *r,
    ngx_http_agent_run_t *run, ngx_http_agent_turn_state_t *st)
{
    size_t                     i;
    yajl_val                   values;
    ngx_int_t                  n;
    ngx_str_t                  name, json;
    ngx_array_t               *update;
    ngx_http_agent_channel_t  *ch;

    values = st->values;

    if (values == NULL || !YAJL_IS_OBJECT(values)) {
        return NGX_OK;
    }

    update = ngx_http_agent_graph_update_create(r->pool);
    if (update == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < st->nmsgs; i++) {
        if (ngx_http_agent_graph_write_message(run, update,
                                               NGX_HTTP_AGENT_CH_MESSAGES,
                                               &st->msgs[i])
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    ch = run->graph->channels.elts;

    for (i = 0; i < values->u.object.len; i++) {
        name.data = (u_char *) values->u.object.keys[i];
        name.len = ngx_strlen(name.data);

        n = ngx_http_agent_graph_channel(run->graph, &name);

        if (n == NGX_HTTP_AGENT_CH_MESSAGES && st->msgs) {
            continue;
        }

        if (n == NGX_ERROR || ch[n].reducer == NGX_HTTP_AGENT_REDUCE_MESSAGES
            || ch[n].reducer == NGX_HTTP_AGENT_REDUCE_SUM)
        {
            return ngx_http_agent_reply_error(r, 422, "\"%V\" is not a "
                                              "channel of the graph \"%V\" "
                                              "that an update may write",
                                              &name, &run->graph->name);
        }

        if (ngx_http_agent_json_encode(r->pool, values->u.object.values[i],
                                       &json)
            != NGX_OK
            || ngx_http_agent_graph_write_value(update, n, &json) != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    if (ngx_http_agent_graph_apply(run, update) != NGX_OK) {
        return NGX_ERROR;
    }

    run->update = update;

    return NGX_OK;
}
