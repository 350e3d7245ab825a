
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_ops.h"


/*
 * A turn: one run of the location's graph bound to one request.  It locks
 * the session, loads its state, makes the input a step of the run, streams
 * what the nodes report in the location's format and saves a checkpoint
 * after each step.  It knows no particular graph.
 */


static ngx_int_t ngx_http_agent_turn_node(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_uint_t start);
static void ngx_http_agent_turn_done(ngx_http_agent_run_t *run,
    ngx_int_t rc);
static void ngx_http_agent_turn_cleanup(void *data);


ngx_http_agent_run_handlers_t  ngx_http_agent_turn_handlers = {
    ngx_http_agent_turn_checkpoint,
    ngx_http_agent_turn_done,
    ngx_http_agent_turn_node,
    ngx_http_agent_turn_subgraph,
    ngx_http_agent_turn_subgraph_checkpoint,
    ngx_http_agent_turn_cache
};


/* a turn of the location's graph; the caller may change what it runs */

ngx_http_agent_turn_t *
ngx_http_agent_turn_create(ngx_http_request_t *r,
    ngx_http_agent_session_t *s, ngx_http_agent_model_t *model)
{
    ngx_http_cleanup_t         *cln;
    ngx_http_agent_ctx_t       *ctx;
    ngx_http_agent_turn_t      *turn;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    turn = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_turn_t));
    if (turn == NULL) {
        return NULL;
    }

    turn->request = r;
    turn->finalize = ngx_http_agent_turn_finalize;
    turn->session_id = s->id;
    turn->in.graph = alcf->graph;
    turn->in.format = alcf->format;
    turn->env.model = model;
    ngx_http_agent_turn_services(r, &turn->env.services);
    turn->env.start = ngx_current_msec;

    /* without one, the model is chosen after the session is read */
    if (model) {
        turn->env.answered_by = model->name;
    }

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    ctx->env = &turn->env;

    if (ngx_http_agent_id_make(r->pool, &turn->run_id) != NGX_OK) {
        return NULL;
    }

    cln = ngx_http_cleanup_add(r, 0);
    if (cln == NULL) {
        return NULL;
    }

    cln->handler = ngx_http_agent_turn_cleanup;
    cln->data = turn;

    return turn;
}


static ngx_int_t
ngx_http_agent_turn_node(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_uint_t start)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_str_t                 update;
    ngx_http_agent_json_t    *j;
    ngx_http_agent_event_t    ev;
    ngx_http_agent_stream_t  *s;

    s = &turn->stream;

    if (start
        && (ngx_http_agent_turn_behind(turn) != NGX_OK
            || ngx_http_agent_turn_current(turn) != NGX_OK
            || ngx_http_agent_turn_caps(turn, node) != NGX_OK))
    {
        return NGX_ERROR;
    }

    ngx_http_agent_trace_node(turn->env.trace, &node->name, run->step + 1,
                              start);

    if (start) {
        s->node = node->name;
        s->step = run->step + 1;
        ngx_str_null(&s->model_run_id);

        if (ngx_http_agent_id_make(s->pool, &s->node_run_id) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));

    /* one answer, no stream: no update, unless its events are kept */

    if (!start && s->format->updates
        && (!turn->in.json || (turn->in.record && turn->in.record->events)))
    {

        /*
         * the step's update, for the formats that show it; written as JSON
         * for those that read it so (updates 1; the LangGraph stream's
         * events mode), the others read the run
         */

        if (s->format->updates == 1 || (s->modes & NGX_HTTP_AGENT_MODE_EVENTS))
        {
            j = ngx_http_agent_json_create(run->pool);
            if (j == NULL) {
                return NGX_ERROR;
            }

            ngx_http_agent_state_update(j, run);

            if (ngx_http_agent_json_done(j, &update) != NGX_OK) {
                return NGX_ERROR;
            }

            ev.json = &update;
        }

        ev.type = NGX_HTTP_AGENT_EV_UPDATE;

        if (ngx_http_agent_stream_emit(s, &ev) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    ev.type = start ? NGX_HTTP_AGENT_EV_NODE_START
                    : NGX_HTTP_AGENT_EV_NODE_END;
    ev.json = NULL;

    if (ngx_http_agent_stream_emit(s, &ev) != NGX_OK) {
        return NGX_ERROR;
    }

    if (!start) {
        /* the step's checkpoint after the step's events */
        ngx_http_agent_turn_checkpoint_pending(turn);
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_turn_sink(void *data, ngx_str_t *name, ngx_str_t *json,
    ngx_uint_t now)
{
    ngx_http_agent_turn_t *turn = data;

    if (turn->in.json || (turn->sse.keep && turn->sse.failed)) {
        /* no stream, or a kept one whose client left: the run goes on */
        return NGX_OK;
    }

    return ngx_http_agent_sse_named(&turn->sse, name, json, now);
}


/* the graph's end: the turn's one end (turn_end.c) */

static void
ngx_http_agent_turn_done(ngx_http_agent_run_t *run, ngx_int_t rc)
{
    ngx_http_agent_turn_finalize(run->ctx, rc);
}




static void
ngx_http_agent_turn_cleanup(void *data)
{
    ngx_http_agent_turn_t *turn = data;

    /* not a turn refused before it started: its answer was sent */

    if (turn->run && !turn->run->finished
        && (turn->started || !turn->request->header_sent))
    {
        ngx_log_error(NGX_LOG_INFO, turn->request->connection->log, 0,
                      "agent: client gone, turn on session \"%V\" cancelled",
                      &turn->session_id);
        ngx_http_agent_graph_cancel(turn->run);
        ngx_http_agent_metrics_cstr(NGX_HTTP_AGENT_M_TURNS,
                                    &turn->in.graph->name, "cancelled", 1);
    }

    if (turn->in.record) {
        ngx_http_agent_turn_record_cleanup(turn);
    }

    /* before the calls are cancelled: its failure is then told to no one */

    if (turn->locked) {
        (void) ngx_http_agent_store_unlock(&turn->wsc, &turn->session_id,
                                           &turn->run_id);
        turn->locked = 0;
    }

    /* answers still to come are not the turn's any more; writes go on */
    ngx_http_agent_store_cancel(&turn->sc);
    ngx_http_agent_store_cancel(&turn->bsc);
    ngx_http_agent_store_cancel(&turn->wsc);
    ngx_http_agent_store_cancel(&turn->usc);
    ngx_http_agent_store_cancel(&turn->nsc);

    ngx_http_agent_turn_lease_drop(turn);

    if (turn->timeout.timer_set) {
        ngx_del_timer(&turn->timeout);
    }

    if (turn->delay.timer_set) {
        ngx_del_timer(&turn->delay);
    }

    ngx_http_agent_limit_release(turn->env.limits);
    ngx_http_agent_turn_list_remove(&turn->queue);

    ngx_http_agent_sse_stop(&turn->sse);
}
