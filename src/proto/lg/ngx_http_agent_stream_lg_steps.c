
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_turn.h"


/*
 * The LangGraph stream's step modes: "tasks" (a node's task and its
 * result), "checkpoints" (each step saved), "debug" (both, wrapped), and
 * stream_subgraphs: the steps of the subgraphs a run's node runs, as the
 * LangGraph Agent Server streams them: the stream mode's event name with
 * the subgraph's namespace, "values|NODE:TASK" (deeper ones joined by
 * "|"), for "values" (its state as it starts and after each of its
 * steps) and "updates" (each of its steps' update); the namespace is the
 * turn's (turn_subgraph.c), the one its checkpoints are saved in.
 */


static void ngx_http_agent_lg_task_payload(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j);
static ngx_int_t ngx_http_agent_lg_checkpoint_state(
    ngx_http_agent_stream_t *s, ngx_http_agent_checkpoint_t *cp,
    ngx_http_agent_json_t *j);


/* an event of a stream mode, its name the mode's, or "MODE|NAMESPACE" */

ngx_int_t
ngx_http_agent_lg_send_as(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, const char *mode, ngx_str_t *ns,
    ngx_uint_t now)
{
    u_char     *p;
    ngx_str_t   name, json;

    if (ngx_http_agent_json_scratch(j, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    name.data = (u_char *) mode;
    name.len = ngx_strlen(mode);

    if (ns) {
        p = ngx_pnalloc(s->pool, name.len + 1 + ns->len);
        if (p == NULL) {
            return NGX_ERROR;
        }

        name.data = p;
        p = ngx_cpymem(p, mode, name.len);
        *p++ = '|';
        name.len = ngx_cpymem(p, ns->data, ns->len) - name.data;
    }

    return s->sink(s->sink_data, &name, &json, now);
}


/*
 * a node's task before it runs, its result after: "tasks" events, and in
 * "debug" the same payloads as {"type": "task" | "task_result", ...}
 */

ngx_int_t
ngx_http_agent_lg_task(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j)
{
    if (ev->type != NGX_HTTP_AGENT_EV_NODE_START
        && ev->type != NGX_HTTP_AGENT_EV_UPDATE)
    {
        return NGX_OK;
    }

    if (s->modes & NGX_HTTP_AGENT_MODE_TASKS) {
        ngx_http_agent_lg_task_payload(s, ev, j);

        if (ngx_http_agent_lg_send_as(s, j, "tasks", NULL, 1) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    if (!(s->modes & NGX_HTTP_AGENT_MODE_DEBUG)) {
        return NGX_OK;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, ev->type == NGX_HTTP_AGENT_EV_NODE_START
                                ? "task" : "task_result");
    ngx_http_agent_json_key(j, "step");
    ngx_http_agent_json_int(j, s->step);
    ngx_http_agent_json_key(j, "payload");
    ngx_http_agent_lg_task_payload(s, ev, j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_lg_send_as(s, j, "debug", NULL, 1);
}


/* LangGraph's task: {id, name, input, triggers} or {id, name, result} */

static void
ngx_http_agent_lg_task_payload(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j)
{
    ngx_str_t              trigger;
    ngx_http_agent_run_t  *run;

    run = s->state;

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, &s->node_run_id);
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, &s->node);

    if (ev->type == NGX_HTTP_AGENT_EV_UPDATE) {
        ngx_http_agent_json_key(j, "result");

        if (run) {
            ngx_http_agent_lg_update(j, run, &s->session_id, 0);

        } else {
            ngx_http_agent_json_null(j);
        }

        ngx_http_agent_json_key(j, "error");
        ngx_http_agent_json_null(j);

    } else {
        /* the state the node starts with, and the edge that led to it */

        ngx_http_agent_json_key(j, "input");

        if (run) {
            ngx_http_agent_lg_values(j, run, &s->session_id, 0);

        } else {
            ngx_http_agent_json_null(j);
        }

        ngx_http_agent_json_key(j, "triggers");
        ngx_http_agent_json_arr(j);

        trigger.len = sizeof("branch:to:") - 1 + s->node.len;
        trigger.data = ngx_pnalloc(s->pool, trigger.len);

        if (trigger.data) {
            ngx_sprintf(trigger.data, "branch:to:%V", &s->node);
            ngx_http_agent_json_str(j, &trigger);
        }

        ngx_http_agent_json_arr_end(j);
    }

    ngx_http_agent_json_key(j, "interrupts");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);
}


/*
 * a step saved: the ThreadState at it, as the history shows it, in
 * "checkpoints", and in "debug" as {"type": "checkpoint", ...}
 */

ngx_int_t
ngx_http_agent_lg_checkpoint_event(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j)
{
    ngx_http_agent_checkpoint_t  *cp;

    cp = ev->checkpoint;

    if (s->state == NULL || cp == NULL) {
        return NGX_OK;
    }

    if (s->modes & NGX_HTTP_AGENT_MODE_CHECKPOINTS) {
        if (ngx_http_agent_lg_checkpoint_state(s, cp, j) != NGX_OK
            || ngx_http_agent_lg_send_as(s, j, "checkpoints", NULL, 1)
               != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    if (!(s->modes & NGX_HTTP_AGENT_MODE_DEBUG)) {
        return NGX_OK;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "checkpoint");
    ngx_http_agent_json_key(j, "timestamp");
    ngx_http_agent_json_str(j, &cp->created_at);
    ngx_http_agent_json_key(j, "step");
    ngx_http_agent_json_int(j, cp->step);
    ngx_http_agent_json_key(j, "payload");

    if (ngx_http_agent_lg_checkpoint_state(s, cp, j) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_end(j);

    return ngx_http_agent_lg_send_as(s, j, "debug", NULL, 1);
}


/* the state at a checkpoint just saved, read in a pool gone after */

static ngx_int_t
ngx_http_agent_lg_checkpoint_state(ngx_http_agent_stream_t *s,
    ngx_http_agent_checkpoint_t *cp, ngx_http_agent_json_t *j)
{
    ngx_pool_t                   *pool;
    ngx_http_agent_run_t         *at;
    ngx_http_agent_checkpoint_t   copy;

    pool = ngx_create_pool(4096, s->pool->log);
    if (pool == NULL) {
        return NGX_ERROR;
    }

    /* read into a copy: what the read sets is the pool's, gone after */
    copy = *cp;

    at = ngx_http_agent_checkpoint_state(pool, s->state, &copy);

    if (at) {
        ngx_http_agent_lg_state_json(j, at, &copy, &s->session_id, 0);
    }

    ngx_destroy_pool(pool);

    return at ? NGX_OK : NGX_ERROR;
}


ngx_int_t
ngx_http_agent_lg_subgraph_event(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j)
{
    ngx_str_t             *ns;
    ngx_http_agent_run_t  *inner;

    inner = ev->subgraph;
    ns = ev->id;

    if (!(s->modes & (NGX_HTTP_AGENT_MODE_VALUES|NGX_HTTP_AGENT_MODE_UPDATES))
        || inner == NULL || ns == NULL)
    {
        return NGX_OK;
    }

    if (ev->name) {

        if (inner->interrupt.len
            && (inner->update == NULL || inner->update->nelts == 0))
        {
            /* a node that waits, no update: the run's interrupt says so */
            return NGX_OK;
        }

        if (s->modes & NGX_HTTP_AGENT_MODE_UPDATES) {
            ngx_http_agent_json_obj(j);
            ngx_http_agent_json_str(j, ev->name);
            ngx_http_agent_lg_update(j, inner, &s->session_id, 1);
            ngx_http_agent_json_end(j);

            if (ngx_http_agent_lg_send_as(s, j, "updates", ns, 1)
                != NGX_OK)
            {
                return NGX_ERROR;
            }
        }
    }

    if (s->modes & NGX_HTTP_AGENT_MODE_VALUES) {
        ngx_http_agent_lg_values(j, inner, &s->session_id, 1);

        if (ngx_http_agent_lg_send_as(s, j, "values", ns, 1) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}
