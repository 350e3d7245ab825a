
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_store.h"


/*
 * What stops a running turn from outside its steps, each a timer: its
 * lease found lost when the worker renews its turns' leases (turn_leases.c:
 * another turn took the session, this one ends without writing again),
 * agent_turn_timeout, and the worker's shutdown.  Each ends the turn
 * with an error event; the steps it completed are saved.
 */


static ngx_uint_t ngx_http_agent_turn_handover(ngx_http_agent_turn_t *turn);
static void ngx_http_agent_turn_shutdown(ngx_queue_t *q);
static void ngx_http_agent_turn_exit_watch(ngx_event_t *ev);


/*
 * how often a worker with turns looks whether it shuts down: the shutdown
 * is seen at most this late, and worker_shutdown_timeout counted from then
 */
#define NGX_HTTP_AGENT_EXIT_WATCH  200


static ngx_event_t   ngx_http_agent_exit_watch;
static ngx_msec_t    ngx_http_agent_exit_start;


/*
 * A turn starts: it joins the worker's running turns, watched at a
 * graceful shutdown (nginx -s quit, reload).  With worker_shutdown_timeout
 * set, a turn still running half a second before it ends with an error
 * event rather than be cut off without a word when nginx closes its
 * connection.
 */

void
ngx_http_agent_turn_watch(ngx_http_agent_turn_t *turn)
{
    ngx_http_agent_turn_list_add(&turn->queue);

    if (!ngx_http_agent_exit_watch.timer_set) {
        ngx_http_agent_exit_watch.handler = ngx_http_agent_turn_exit_watch;
        ngx_http_agent_exit_watch.log = ngx_cycle->log;
        ngx_http_agent_exit_watch.cancelable = 1;
        ngx_add_timer(&ngx_http_agent_exit_watch,
                      NGX_HTTP_AGENT_EXIT_WATCH);
    }
}


static void
ngx_http_agent_turn_exit_watch(ngx_event_t *ev)
{
    ngx_msec_t        timeout;
    ngx_queue_t      *q;
    ngx_core_conf_t  *ccf;

    if (ngx_http_agent_turn_list_first() == NULL) {
        return;
    }

    if (!ngx_exiting) {
        ngx_add_timer(ev, NGX_HTTP_AGENT_EXIT_WATCH);
        return;
    }

    ccf = (ngx_core_conf_t *) ngx_get_conf(ngx_cycle->conf_ctx,
                                           ngx_core_module);
    timeout = ccf->shutdown_timeout;

    if (timeout == 0) {
        /* nginx waits for the turns: so do they */
        return;
    }

    if (ngx_http_agent_exit_start == 0) {
        ngx_http_agent_exit_start = ngx_current_msec;
    }

    if (ngx_current_msec - ngx_http_agent_exit_start + 500 < timeout) {
        ngx_add_timer(ev, 100);
        return;
    }

    for ( ;; ) {
        q = ngx_http_agent_turn_list_first();

        if (q == NULL) {
            break;
        }

        ngx_http_agent_turn_list_remove(q);
        ngx_http_agent_turn_shutdown(q);
    }
}


/* agent_turn_timeout: the turn ends now, its model call and tools too */

void
ngx_http_agent_turn_timeout(ngx_event_t *ev)
{
    ngx_http_agent_turn_t *turn = ev->data;

    ngx_http_agent_run_t  *run;

    run = turn->run;

    if (run == NULL || run->finished) {
        return;
    }

    ngx_log_error(NGX_LOG_INFO, ev->log, 0, "agent: turn on session \"%V\" "
                  "timed out", &turn->session_id);

    ngx_http_agent_graph_cancel(run);
    (void) ngx_http_agent_graph_fail(run, "turn_timeout", "the turn took "
                                     "longer than agent_turn_timeout; the "
                                     "steps done are saved");
    ngx_http_agent_turn_finalize(turn, NGX_ERROR);
}


/* the worker shuts down and this turn must end now */

static void
ngx_http_agent_turn_shutdown(ngx_queue_t *q)
{
    ngx_http_agent_run_t   *run;
    ngx_http_agent_turn_t  *turn;

    turn = ngx_queue_data(q, ngx_http_agent_turn_t, queue);
    run = turn->run;

    if (run == NULL || run->finished) {
        return;
    }

    if (ngx_http_agent_turn_handover(turn)) {
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
    ngx_http_agent_turn_finalize(turn, NGX_ERROR);
}


/*
 * A kept run its protocol can take over (turn_redrive.c) is handed over
 * instead: its kept events saved, its lease let go at once but still its
 * own, its row "running", so that a worker of the new configuration (a
 * reload) or of another host continues it from its last checkpoint.  The
 * step it was in runs again there.  Its client's stream ends without an
 * end: a client of a resumable run joins it again.
 */

static ngx_uint_t
ngx_http_agent_turn_handover(ngx_http_agent_turn_t *turn)
{
    ngx_connection_t              *c;
    ngx_http_request_t            *r;
    ngx_http_agent_loc_conf_t     *alcf;
    ngx_http_agent_turn_record_t  *rec;

    r = turn->request;
    c = r->connection;
    rec = turn->in.record;
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    /*
     * our API's turns end with "shutdown", as their clients expect (they
     * send the message again); after a death they are taken over
     */

    if (rec == NULL || rec->quiet || alcf->redrive == NULL || !turn->locked
        || rec->cancelled || rec->finished || !turn->started)
    {
        return 0;
    }

    ngx_log_error(NGX_LOG_NOTICE, c->log, 0, "agent: the worker is shutting "
                  "down, run \"%V\" on session \"%V\" is handed over",
                  &turn->run_id, &turn->session_id);

    ngx_http_agent_graph_cancel(turn->run);

    if (turn->in.hooks && turn->in.hooks->poll) {
        turn->in.hooks->poll(turn);
    }

    /* after the steps and events on their way: the same session's calls */
    (void) ngx_http_agent_store_lock_renew(&turn->wsc, &turn->session_id,
                                           &turn->run_id, 0);

    turn->locked = 0;
    rec->finished = 1;

    if (ngx_http_agent_headless(r)) {
        ngx_http_agent_headless_close(r);
        return 1;
    }

    ngx_http_finalize_request(r, NGX_ERROR);
    ngx_http_run_posted_requests(c);

    return 1;
}
