
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_lg_run.h"
#include "ngx_http_agent_lg_state.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"


/*
 * The end of a run of the LangGraph API (lg_run.c): cancelled, or its
 * turn done; what is stored of it, then its answer.
 */


static ngx_int_t ngx_http_agent_lg_run_end(ngx_http_agent_lg_run_t *lr);
static void ngx_http_agent_lg_run_stored(ngx_http_agent_store_call_t *sc);


/* stop the run now: its model call and tools too; no tokens after this */

void
ngx_http_agent_lg_run_cancel(ngx_http_agent_turn_t *turn, ngx_uint_t rollback)
{
    ngx_http_agent_lg_run_t  *lr;

    lr = turn->data;

    if (turn->run == NULL || turn->run->finished || lr == NULL) {
        return;
    }

    ngx_log_error(NGX_LOG_INFO, turn->request->connection->log, 0,
                  "agent: run \"%V\" on thread \"%V\" cancelled",
                  &turn->run_id, &turn->session_id);

    lr->cancelled = 1;
    lr->rollback = rollback;

    ngx_http_agent_graph_cancel(turn->run);
    (void) ngx_http_agent_graph_fail(turn->run, "cancelled", "the run was "
                                     "cancelled; the steps it completed "
                                     "are saved");
    ngx_http_agent_turn_done(turn->run, NGX_ERROR);
}


/*
 * the run's end: its kept events, its status, a stateless thread gone.
 * Its answer ends after they are stored: a client that asks for the run
 * next (the SDK does, to know whether to join it again) finds it ended.
 */

ngx_int_t
ngx_http_agent_lg_run_done(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev)
{
    ngx_http_agent_lg_run_t *lr = turn->data;

    if (lr->poll.timer_set) {
        ngx_del_timer(&lr->poll);
    }

    if (lr->cancelled) {
        lr->status = "interrupted";

    } else if (ev->type == NGX_HTTP_AGENT_EV_ERROR) {
        lr->status = "error";

    } else if (turn->interrupted) {
        lr->status = "interrupted";

    } else {
        lr->status = "success";
    }

    lr->finished = 1;

    if (ngx_http_agent_lg_run_flush(lr) != NGX_OK) {
        ngx_log_error(NGX_LOG_ERR, turn->request->connection->log, 0,
                      "agent: the events of run \"%V\" could not be saved",
                      &turn->run_id);
    }

    ngx_http_agent_store_call_init(&lr->end_sc, turn->request->pool,
                                   turn->request->connection->log,
                                   ngx_http_agent_lg_run_stored, lr);
    lr->end_sc.key = turn->session_id;

    return ngx_http_agent_lg_run_end(lr);
}


/* the end's writes, sent together; NGX_AGAIN until all are answered */

static ngx_int_t
ngx_http_agent_lg_run_end(ngx_http_agent_lg_run_t *lr)
{
    ngx_int_t                     status, rollback, gone;
    ngx_http_agent_turn_t        *turn;
    ngx_http_agent_store_call_t  *sc;

    turn = lr->turn;
    sc = &lr->end_sc;
    sc->n = 0;

    status = ngx_http_agent_store_run_status(sc, &turn->run_id, lr->status);

    rollback = lr->rollback
               ? ngx_http_agent_store_run_rollback(sc, &turn->session_id,
                                                   &turn->run_id,
                                                   &turn->started_from)
               : NGX_OK;

    gone = lr->stateless
           ? ngx_http_agent_store_session_delete(sc, &turn->session_id)
           : NGX_OK;

    if (status == NGX_AGAIN || rollback == NGX_AGAIN || gone == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (status != NGX_OK) {
        ngx_log_error(NGX_LOG_ERR, turn->request->connection->log, 0,
                      "agent: the end of run \"%V\" could not be saved",
                      &turn->run_id);
    }

    if (rollback != NGX_OK) {
        ngx_log_error(NGX_LOG_ERR, turn->request->connection->log, 0,
                      "agent: run \"%V\" could not be rolled back",
                      &turn->run_id);
    }

    ngx_http_agent_store_call_reset(sc);

    return NGX_OK;
}


static void
ngx_http_agent_lg_run_stored(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_lg_run_t *lr = sc->data;

    if (ngx_http_agent_lg_run_end(lr) == NGX_AGAIN) {
        return;
    }

    ngx_http_agent_turn_finish(lr->turn);
}


/* runs/wait: the thread's values at the end (an error: its JSON) */

ngx_int_t
ngx_http_agent_lg_run_answer(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev)
{
    ngx_http_agent_lg_run_t *lr = turn->data;

    ngx_http_request_t     *r;
    ngx_http_agent_json_t  *j;

    r = turn->request;

    if (lr->background) {
        /* answered when it began */
        return NGX_OK;
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ev->type == NGX_HTTP_AGENT_EV_ERROR) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "__error__");
        ngx_http_agent_lg_error(j, ev->code, ev->text);
        ngx_http_agent_json_end(j);

    } else if (turn->interrupted) {
        /* the last values event of the stream: the interrupt alone */
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "__interrupt__");
        ngx_http_agent_lg_interrupts(j, &turn->run->interrupt);
        ngx_http_agent_json_end(j);

    } else {
        ngx_http_agent_lg_values(j, turn->run, &turn->session_id);
    }

    return ngx_http_agent_lg_send(r, NGX_HTTP_OK, j);
}
