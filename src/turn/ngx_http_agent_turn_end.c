
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_ops.h"


/*
 * The turn's one end, as nginx's upstream has ngx_http_upstream_finalize
 * _request: its run done (the graph's done handler), stopped (a cancel,
 * its lease lost, agent_turn_timeout, the shutdown) or its record's end
 * stored all come here, in that order: the session let go, the end event,
 * the run's record, the request's end.  The run's record is below it and
 * reports back through turn->finalize, as upstream's u->finalize_request,
 * so that no file of the turn calls up into the one that drives it.
 */


static void ngx_http_agent_turn_ended(ngx_http_agent_turn_t *turn,
    ngx_int_t rc);
static void ngx_http_agent_turn_finish(ngx_http_agent_turn_t *turn);
static void ngx_http_agent_turn_answer(ngx_http_agent_turn_t *turn,
    ngx_str_t *text);


/*
 * rc: the run's outcome (NGX_OK, NGX_ERROR, NGX_HTTP_AGENT_INTERRUPT),
 * or NGX_DONE once its record's end is stored
 */

void
ngx_http_agent_turn_finalize(ngx_http_agent_turn_t *turn, ngx_int_t rc)
{
    if (rc == NGX_DONE) {
        /* the run's record stored its end (turn_record.c) */
        ngx_http_agent_turn_finish(turn);
        return;
    }

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

static void
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
