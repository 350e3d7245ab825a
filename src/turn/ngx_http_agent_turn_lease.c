
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_turn_private.h"
#include "ngx_http_agent_store.h"


/*
 * A running turn's hold on its session: the lease renewed a third of its
 * time before it runs out, a turn that lost it (another took the session)
 * ended without writing again; and a turn the worker's shutdown ends.
 */


static void ngx_http_agent_turn_renewed(ngx_http_agent_turn_t *turn,
    ngx_int_t rc);


/* the worker shuts down and this turn must end now (see turn_exit.c) */

void
ngx_http_agent_turn_shutdown(ngx_queue_t *q)
{
    ngx_http_agent_run_t   *run;
    ngx_http_agent_turn_t  *turn;

    turn = ngx_queue_data(q, ngx_http_agent_turn_t, queue);
    run = turn->run;

    if (run == NULL || run->finished) {
        return;
    }

    ngx_log_error(NGX_LOG_NOTICE, turn->request->connection->log, 0,
                  "agent: the worker is shutting down, turn on session "
                  "\"%V\" ends", &turn->session_id);

    ngx_http_agent_graph_cancel(run);
    (void) ngx_http_agent_graph_fail(run, "shutdown", "the server is "
                                     "shutting down; the steps of this turn "
                                     "that completed are saved, send the "
                                     "message again");
    ngx_http_agent_turn_done(run, NGX_ERROR);
}


void
ngx_http_agent_turn_lease_handler(ngx_event_t *ev)
{
    ngx_http_agent_turn_t *turn = ev->data;

    ngx_int_t  rc;

    if (!turn->locked || turn->lease_sc.waiting) {
        return;
    }

    turn->lease_sc.n = 0;

    rc = ngx_http_agent_store_lock_renew(&turn->lease_sc, &turn->session_id,
                                         &turn->run_id, turn->lease_ms);

    if (rc == NGX_AGAIN) {
        return;
    }

    ngx_http_agent_store_call_reset(&turn->lease_sc);
    ngx_http_agent_turn_renewed(turn, rc);
}


void
ngx_http_agent_turn_lease_wake(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_turn_t *turn = sc->data;

    ngx_int_t  rc;

    rc = sc->rc;
    ngx_http_agent_store_call_reset(sc);

    if (turn->locked) {
        ngx_http_agent_turn_renewed(turn, rc);
    }
}


static void
ngx_http_agent_turn_renewed(ngx_http_agent_turn_t *turn, ngx_int_t rc)
{
    if (rc == NGX_DECLINED && turn->run && !turn->run->finished) {

        /* another turn has the session: this one must not write again */

        turn->locked = 0;
        ngx_http_agent_graph_cancel(turn->run);
        (void) ngx_http_agent_turn_lost(turn->run);
        ngx_http_agent_turn_done(turn->run, NGX_ERROR);
        return;
    }

    if (rc != NGX_OK) {
        ngx_log_error(NGX_LOG_WARN, turn->lease.log, 0, "agent: the lease of "
                      "session \"%V\" could not be renewed",
                      &turn->session_id);
    }

    ngx_add_timer(&turn->lease, turn->lease_ms / 3);
}


ngx_int_t
ngx_http_agent_turn_lost(ngx_http_agent_run_t *run)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_log_error(NGX_LOG_ERR, turn->request->connection->log, 0,
                  "agent: turn on session \"%V\" lost its lease to "
                  "another turn and ends", &turn->session_id);

    return ngx_http_agent_graph_fail(run, "lease_lost", "this turn lost its "
                                     "hold on the session (its lease ran "
                                     "out and another turn took it); the "
                                     "steps saved before are kept, send "
                                     "the message again");
}
