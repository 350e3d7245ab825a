
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_turn_private.h"
#include "ngx_http_agent_turn_exit.h"


/*
 * A graceful shutdown (nginx -s quit, reload) lets running turns finish;
 * with worker_shutdown_timeout set, a turn still running half a second
 * before it ends with an error event, the steps it completed saved,
 * rather than be cut off without a word when nginx closes its connection.
 * The worker's running turns are a queue; a link not in it has next NULL.
 */


static void ngx_http_agent_turn_exit_watch(ngx_event_t *ev);


static ngx_queue_t   ngx_http_agent_turns;
static ngx_event_t   ngx_http_agent_exit_watch;
static ngx_msec_t    ngx_http_agent_exit_start;


void
ngx_http_agent_turn_exit_add(ngx_queue_t *q)
{
    if (ngx_http_agent_turns.next == NULL) {
        ngx_queue_init(&ngx_http_agent_turns);
    }

    ngx_queue_insert_tail(&ngx_http_agent_turns, q);

    if (!ngx_http_agent_exit_watch.timer_set) {
        ngx_http_agent_exit_watch.handler = ngx_http_agent_turn_exit_watch;
        ngx_http_agent_exit_watch.log = ngx_cycle->log;
        ngx_http_agent_exit_watch.cancelable = 1;
        ngx_add_timer(&ngx_http_agent_exit_watch, 1000);
    }
}


void
ngx_http_agent_turn_exit_remove(ngx_queue_t *q)
{
    if (q->next == NULL) {
        return;
    }

    ngx_queue_remove(q);
    q->prev = NULL;
    q->next = NULL;
}


static void
ngx_http_agent_turn_exit_watch(ngx_event_t *ev)
{
    ngx_msec_t        timeout;
    ngx_queue_t      *q;
    ngx_core_conf_t  *ccf;

    if (ngx_queue_empty(&ngx_http_agent_turns)) {
        return;
    }

    if (!ngx_exiting) {
        ngx_add_timer(ev, 1000);
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

    while (!ngx_queue_empty(&ngx_http_agent_turns)) {
        q = ngx_queue_head(&ngx_http_agent_turns);
        ngx_http_agent_turn_exit_remove(q);
        ngx_http_agent_turn_shutdown(q);
    }
}


/* the turn this worker runs with that run id, or NULL */

ngx_http_agent_turn_t *
ngx_http_agent_turn_find(ngx_str_t *run_id)
{
    ngx_queue_t            *q;
    ngx_http_agent_turn_t  *turn;

    if (ngx_http_agent_turns.next == NULL) {
        return NULL;
    }

    for (q = ngx_queue_head(&ngx_http_agent_turns);
         q != ngx_queue_sentinel(&ngx_http_agent_turns);
         q = ngx_queue_next(q))
    {
        turn = ngx_queue_data(q, ngx_http_agent_turn_t, queue);

        if (turn->run_id.len == run_id->len
            && ngx_strncmp(turn->run_id.data, run_id->data, run_id->len) == 0)
        {
            return turn;
        }
    }

    return NULL;
}
