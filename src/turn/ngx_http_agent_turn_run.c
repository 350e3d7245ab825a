
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
static void ngx_http_agent_turn_answer(ngx_http_agent_turn_t *turn,
    ngx_str_t *text);
static void ngx_http_agent_turn_ended(ngx_http_agent_turn_t *turn,
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


void
ngx_http_agent_turn_done(ngx_http_agent_run_t *run, ngx_int_t rc)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    turn->phase = ngx_http_agent_phase_now();

    ngx_http_agent_turn_list_remove(&turn->queue);
    ngx_http_agent_limit_release(turn->env.limits);

    /* a step saved with no end of its own (interrupt_before) */
    ngx_http_agent_turn_checkpoint_pending(turn);

    /* behind the run's last step: its thread's old checkpoints let go */
    ngx_http_agent_store_keep_prune(turn->request, &turn->wsc,
                                    &turn->session_id, &turn->run_id);

    if (turn->timeout.timer_set) {
        ngx_del_timer(&turn->timeout);
    }

    if (turn->delay.timer_set) {
        ngx_del_timer(&turn->delay);
    }

    /*
     * a turn that did not let the session go with its last step (an
     * error, an interrupt): the end event follows the unlock, so that a
     * next message, on any worker or host, finds the session free; a
     * recorded run's end lets it go after its status (turn_record.c)
     */

    if (turn->locked && turn->in.record == NULL) {
        turn->locked = 0;
        turn->done_rc = rc;

        if (ngx_http_agent_store_unlock(&turn->usc, &turn->session_id,
                                        &turn->run_id)
            == NGX_AGAIN)
        {
            return;
        }
    }

    ngx_http_agent_turn_ended(turn, rc);
}


void
ngx_http_agent_turn_unlocked(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_turn_t *turn = sc->data;

    ngx_http_agent_store_call_reset(sc);
    ngx_http_agent_turn_ended(turn, turn->done_rc);
}


static void
ngx_http_agent_turn_ended(ngx_http_agent_turn_t *turn, ngx_int_t rc)
{
    ngx_http_agent_run_t    *run;
    ngx_http_agent_event_t  *ev, iev;

    run = turn->run;
    ev = &turn->end;

    if (turn->fenced) {
        ngx_http_agent_turn_fenced_end(turn);
        return;
    }

    if (rc == NGX_HTTP_AGENT_INTERRUPT) {
        ngx_log_error(NGX_LOG_INFO, turn->request->connection->log, 0,
                      "agent: turn on session \"%V\" waits for an answer "
                      "after %ui steps", &turn->session_id, run->step);

        /* the interrupt, then the turn's end as for any other */

        ngx_memzero(&iev, sizeof(ngx_http_agent_event_t));
        iev.type = NGX_HTTP_AGENT_EV_INTERRUPT;
        iev.json = &run->interrupt;
        iev.checkpoint_id = &turn->checkpoint_id;

        if (!turn->sse.failed
            && ngx_http_agent_stream_emit(&turn->stream, &iev) != NGX_OK)
        {
            turn->sse.failed = 1;
        }

        turn->interrupted = 1;
        rc = NGX_OK;

    } else if (rc != NGX_OK) {
        ngx_log_error(NGX_LOG_INFO, turn->request->connection->log, 0,
                      "agent: turn on session \"%V\" failed after %ui "
                      "steps: %V", &turn->session_id, run->step,
                      ngx_http_agent_json_log_str(turn->request->pool,
                                                  &run->error));

    } else {
        ngx_log_error(NGX_LOG_INFO, turn->request->connection->log, 0,
                      "agent: turn on session \"%V\" ended after %ui steps",
                      &turn->session_id, run->step);
    }

    ngx_memzero(ev, sizeof(ngx_http_agent_event_t));

    if (rc == NGX_OK) {
        ngx_http_agent_turn_answer(turn, &turn->end_text);

        ev->type = NGX_HTTP_AGENT_EV_END;
        ev->text = &turn->end_text;
        ev->checkpoint_id = &turn->checkpoint_id;
        ev->prompt_tokens = turn->env.prompt_tokens;
        ev->completion_tokens = turn->env.completion_tokens;
        ev->cached_tokens = turn->env.cached_tokens;
        ev->cache_write_tokens = turn->env.cache_write_tokens;

    } else {
        turn->end_code = run->code;

        if (turn->end_code.len == 0) {
            ngx_str_set(&turn->end_code, "internal");
        }

        ev->type = NGX_HTTP_AGENT_EV_ERROR;
        ev->text = &run->error;
        ev->code = &turn->end_code;
    }

    ngx_http_agent_metrics_cstr(NGX_HTTP_AGENT_M_TURNS, &turn->in.graph->name,
                                turn->interrupted ? "interrupted"
                                : ev->type == NGX_HTTP_AGENT_EV_END ? "ok"
                                : (run->code.len == 9
                                   && ngx_strncmp(run->code.data,
                                                  "cancelled", 9) == 0)
                                  ? "cancelled" : "error", 1);
    ngx_http_agent_metrics_observe(NGX_HTTP_AGENT_M_TURN_SECONDS,
                                   &turn->in.graph->name,
                                   ngx_current_msec - turn->env.start);
    ngx_http_agent_trace_end(turn->env.trace, ev->code,
                             ev->type == NGX_HTTP_AGENT_EV_ERROR ? ev->text
                                                                 : NULL,
                             &turn->in.text,
                             ev->type == NGX_HTTP_AGENT_EV_END ? ev->text
                                                               : NULL);

    if (turn->in.hooks && turn->in.hooks->done) {
        turn->in.hooks->done(turn, ev);
    }

    if (turn->in.record
        && ngx_http_agent_turn_record_end(turn, ev) == NGX_AGAIN)
    {
        /* the turn finishes when the run's end is stored */
        return;
    }

    ngx_http_agent_turn_finish(turn);
}


/* the last event and the request's end */

void
ngx_http_agent_turn_finish(ngx_http_agent_turn_t *turn)
{
    uint64_t                 t;
    ngx_int_t                rc;
    ngx_connection_t        *c;
    ngx_http_request_t      *r;
    ngx_http_agent_event_t  *ev;

    r = turn->request;
    c = r->connection;
    ev = &turn->end;

    if (ngx_http_agent_headless(r)) {
        /* a run taken over: its last event to its sink, then its end */
        (void) ngx_http_agent_stream_emit(&turn->stream, ev);
        ngx_http_agent_headless_close(r);
        return;
    }

    if (turn->sse.failed) {
        goto failed;
    }

    if (turn->in.json) {
        if (turn->in.hooks && turn->in.hooks->answer) {
            rc = turn->in.hooks->answer(turn, ev);

        } else {
            rc = ngx_http_agent_turn_json_send(r, turn->run, ev,
                                               &turn->session_id,
                                               &turn->run_id);
        }

        ngx_http_agent_reply_finish(r, rc);
        return;
    }

    if (ngx_http_agent_stream_emit(&turn->stream, ev) != NGX_OK) {
        goto failed;
    }

    if (turn->in.hooks && turn->in.hooks->hold
        && turn->in.hooks->hold(turn, &turn->sse) == NGX_DONE)
    {
        /* the stream goes on after the turn (MCP's elicitation) */
        ngx_http_run_posted_requests(c);
        return;
    }

    if (ngx_http_agent_sse_finish(&turn->sse) != NGX_OK) {
        goto failed;
    }

    t = turn->phase;    /* the request's pool goes with it */

    ngx_http_finalize_request(r, NGX_OK);

    /* from the run's end: the unlock, the last event, the stream's end */
    ngx_http_agent_phase_add(NGX_HTTP_AGENT_PHASE_END, t);

    /* called from curl, timer and thread events, not a request handler */
    ngx_http_run_posted_requests(c);

    return;

failed:

    ngx_http_finalize_request(r, NGX_ERROR);
    ngx_http_run_posted_requests(c);
}


/* the answer: the text of the last AI message this turn appended */

static void
ngx_http_agent_turn_answer(ngx_http_agent_turn_t *turn, ngx_str_t *text)
{
    ngx_uint_t             i;
    ngx_array_t           *msgs;
    ngx_http_agent_msg_t  *m;

    ngx_str_set(text, "");

    msgs = turn->run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages;
    m = msgs->elts;

    for (i = msgs->nelts; i > turn->run->messages_at_start; i--) {
        if (m[i - 1].role.len && m[i - 1].role.data[0] == 'a') {
            *text = m[i - 1].content;
            return;
        }
    }
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


/* the store says another turn has the session: this one ends */

ngx_int_t
ngx_http_agent_turn_lost(ngx_http_agent_run_t *run)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(turn->request, ngx_http_agent_module);

    /*
     * a run the store keeps was claimed by another worker (fencing,
     * docs/runs.md): it goes on there, so this worker's part of it ends
     * unseen, logged once, and writes nothing more.  Our chat API's
     * client is told (lease_lost), as before: it sends its message again
     */

    if (turn->in.record && alcf->redrive
        && (!turn->in.record->quiet || ngx_http_agent_headless(turn->request)))
    {
        if (!turn->fenced) {
            ngx_log_error(NGX_LOG_WARN, turn->request->connection->log, 0,
                          "agent: run \"%V\" on session \"%V\" was taken "
                          "over by another worker (lease generation %L is "
                          "no longer its): this worker's part of it ends",
                          &turn->run_id, &turn->session_id, turn->sc.gen);
        }

        turn->fenced = 1;
        turn->locked = 0;

        return ngx_http_agent_graph_fail(run, "lease_lost", "taken over");
    }

    ngx_log_error(NGX_LOG_ERR, turn->request->connection->log, 0,
                  "agent: turn on session \"%V\" lost its lease to "
                  "another turn and ends", &turn->session_id);

    return ngx_http_agent_graph_fail(run, "lease_lost", "this turn lost its "
                                     "hold on the session (its lease ran "
                                     "out and another turn took it); the "
                                     "steps saved before are kept, send "
                                     "the message again");
}
