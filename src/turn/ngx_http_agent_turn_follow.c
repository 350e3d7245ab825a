
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"


/*
 * A request that waits for a run to end, wherever it runs (another
 * worker, another host sharing the store): its record read every
 * NGX_HTTP_AGENT_TURN_FOLLOW_POLL ms until it is over, then the
 * protocol's answer (A2A's SubscribeToTask, a Response's GET with
 * stream=true).  A run whose worker died is over when its lease has long
 * run out: twice the lease after the follow began (or after the run was
 * first seen, for a run followed before it is made: MCP's elicitation).
 */


#define NGX_HTTP_AGENT_TURN_FOLLOW_POLL  100


typedef struct {
    ngx_http_request_t               *request;
    ngx_str_t                         run_id;
    ngx_http_agent_turn_follow_pt     handler;
    void                             *data;
    ngx_event_t                       poll;
    ngx_msec_t                        deadline;
    ngx_msec_t                        made;      /* a run not made yet
                                                    is waited for until
                                                    then, or 0 */
    ngx_msec_t                        lease;
    ngx_http_agent_store_call_t       sc;
    ngx_http_agent_turn_outcome_t     out;
} ngx_http_agent_turn_follow_t;


static void ngx_http_agent_turn_follow_poll(ngx_event_t *ev);
static void ngx_http_agent_turn_follow_wake(ngx_http_agent_store_call_t *sc);
static void ngx_http_agent_turn_follow_step(ngx_http_agent_turn_follow_t *f);
static void ngx_http_agent_turn_follow_cleanup(void *data);


/* NGX_DONE: the handler answers, when the run is over */

ngx_int_t
ngx_http_agent_turn_follow(ngx_http_request_t *r, ngx_str_t *run_id,
    ngx_http_agent_turn_follow_pt handler, void *data)
{
    return ngx_http_agent_turn_follow_made(r, run_id, 0, handler, data);
}


/* the same, for a run that may be made within wait ms (0: it is there) */

ngx_int_t
ngx_http_agent_turn_follow_made(ngx_http_request_t *r, ngx_str_t *run_id,
    ngx_msec_t wait, ngx_http_agent_turn_follow_pt handler, void *data)
{
    ngx_http_cleanup_t             *cln;
    ngx_http_agent_loc_conf_t      *alcf;
    ngx_http_agent_turn_follow_t   *f;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    f = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_turn_follow_t));
    if (f == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    f->request = r;
    f->run_id = *run_id;
    f->handler = handler;
    f->data = data;
    f->lease = alcf->turn_lease;
    f->deadline = ngx_current_msec + 2 * f->lease;
    f->made = wait ? ngx_current_msec + wait : 0;

    cln = ngx_http_cleanup_add(r, 0);
    if (cln == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    cln->handler = ngx_http_agent_turn_follow_cleanup;
    cln->data = f;

    ngx_http_agent_store_call_init(&f->sc, r->pool, r->connection->log,
                                   ngx_http_agent_turn_follow_wake, f);
    f->sc.key = *run_id;

    f->poll.handler = ngx_http_agent_turn_follow_poll;
    f->poll.data = f;
    f->poll.log = r->connection->log;
    f->poll.cancelable = 1;

    /* a client that goes away ends the follow: see the cleanup */
    r->read_event_handler = ngx_http_test_reading;

    if (r->method != NGX_HTTP_POST) {
        /* a POST holds the request already, for its body */
        r->main->count++;
    }

    ngx_add_timer(&f->poll, NGX_HTTP_AGENT_TURN_FOLLOW_POLL);

    return NGX_DONE;
}


static void
ngx_http_agent_turn_follow_poll(ngx_event_t *ev)
{
    ngx_http_agent_turn_follow_step(ev->data);
}


static void
ngx_http_agent_turn_follow_wake(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_turn_follow_step(sc->data);
}


static void
ngx_http_agent_turn_follow_step(ngx_http_agent_turn_follow_t *f)
{
    ngx_int_t            rc;
    ngx_http_request_t  *r;

    r = f->request;

    f->sc.n = 0;
    ngx_memzero(&f->out, sizeof(ngx_http_agent_turn_outcome_t));

    rc = ngx_http_agent_turn_record_read(&f->sc, &f->run_id, &f->out);

    if (rc == NGX_AGAIN) {
        return;
    }

    ngx_http_agent_store_call_reset(&f->sc);

    if (f->made) {
        if (rc == NGX_DECLINED
            && (ngx_msec_int_t) (ngx_current_msec - f->made) < 0)
        {
            ngx_add_timer(&f->poll, NGX_HTTP_AGENT_TURN_FOLLOW_POLL);
            return;
        }

        if (rc == NGX_OK) {
            f->made = 0;
            f->deadline = ngx_current_msec + 2 * f->lease;
        }
    }

    if (rc == NGX_OK
        && ngx_http_agent_run_live(ngx_http_agent_turn_record_state(&f->out))
        && (ngx_msec_int_t) (ngx_current_msec - f->deadline) < 0)
    {
        ngx_add_timer(&f->poll, NGX_HTTP_AGENT_TURN_FOLLOW_POLL);
        return;
    }

    /* over, gone (NGX_DECLINED), or its worker died with it */

    rc = f->handler(r, rc == NGX_ERROR ? NULL : &f->out, f->data);

    if (rc == NGX_DONE) {
        /* the handler follows another run, on the same request */
        return;
    }

    ngx_http_agent_reply_finish(r, rc);
}


static void
ngx_http_agent_turn_follow_cleanup(void *data)
{
    ngx_http_agent_turn_follow_t *f = data;

    if (f->poll.timer_set) {
        ngx_del_timer(&f->poll);
    }

    ngx_http_agent_store_cancel(&f->sc);
}
