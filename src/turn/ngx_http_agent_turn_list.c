
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_turn_int.h"


/*
 * The worker's running turns, a queue: for a run's cancel by id and for
 * the shutdown (turn_stop.c).  A link not in it has next NULL.  And
 * whether a turn runs, which the files below the turn's end ask.
 */


static ngx_queue_t   ngx_http_agent_turns;


void
ngx_http_agent_turn_list_add(ngx_queue_t *q)
{
    if (ngx_http_agent_turns.next == NULL) {
        ngx_queue_init(&ngx_http_agent_turns);
    }

    ngx_queue_insert_tail(&ngx_http_agent_turns, q);
}


void
ngx_http_agent_turn_list_remove(ngx_queue_t *q)
{
    if (q->next == NULL) {
        return;
    }

    ngx_queue_remove(q);
    q->prev = NULL;
    q->next = NULL;
}


/* the worker's first running turn, or NULL */

ngx_queue_t *
ngx_http_agent_turn_list_first(void)
{
    if (ngx_http_agent_turns.next == NULL
        || ngx_queue_empty(&ngx_http_agent_turns))
    {
        return NULL;
    }

    return ngx_queue_head(&ngx_http_agent_turns);
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


/* what the turn's record asks too (turn_record.c), below the turn's end */

ngx_uint_t
ngx_http_agent_turn_running(ngx_http_agent_turn_t *turn)
{
    return turn->run && !turn->run->finished;
}


/* a pending turn: its graph waits for in.delay to pass */

ngx_uint_t
ngx_http_agent_turn_pending(ngx_http_agent_turn_t *turn)
{
    return turn->delay.timer_set;
}
