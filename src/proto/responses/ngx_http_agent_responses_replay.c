
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_responses_int.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"


/*
 * A background response's events, kept as they are sent (saved at each
 * poll of its record and at its end, before the record says it ended,
 * within agent_run_events_max_size), and GET {location}responses/{id}
 * ?stream=true: those kept after starting_after, then those that follow
 * until the response ends, wherever it runs, as LangGraph's join does.
 * A run whose worker died is over when its lease has long run out: no
 * event kept for twice the lease.
 */


#define NGX_HTTP_AGENT_RESPONSES_POLL   100

#define NGX_HTTP_AGENT_RESPONSES_STATUS  0
#define NGX_HTTP_AGENT_RESPONSES_EVENTS  1
#define NGX_HTTP_AGENT_RESPONSES_END     2


typedef struct {
    ngx_http_request_t                 *request;
    ngx_str_t                           run_id;
    ngx_http_agent_turn_kept_replay_t   replay;
    ngx_uint_t                          phase;
    ngx_event_t                         poll;
    ngx_http_agent_store_call_t         sc;
    ngx_http_agent_turn_outcome_t       out;
    unsigned                            live:1;
} ngx_http_agent_responses_replay_t;


static void ngx_http_agent_responses_replay_poll(ngx_event_t *ev);
static void ngx_http_agent_responses_replay_wake(
    ngx_http_agent_store_call_t *sc);
static void ngx_http_agent_responses_replay_step(
    ngx_http_agent_responses_replay_t *rp);
static void ngx_http_agent_responses_replay_cleanup(void *data);


/* a background response's sink: each event kept, then sent if it can be */

ngx_int_t
ngx_http_agent_responses_sink(void *data, ngx_str_t *name, ngx_str_t *json,
    ngx_uint_t now)
{
    ngx_http_agent_responses_out_t *o = data;

    ngx_int_t                   rc;
    ngx_http_agent_turn_info_t  info;

    o->kept_seq++;

    ngx_http_agent_turn_info(o->turn, &info);

    if (ngx_http_agent_turn_kept_add(&o->kept, info.request, &o->id,
                                     o->kept_seq, name, json)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (o->gone) {
        return NGX_OK;
    }

    rc = ngx_http_agent_turn_send(o->turn, o->kept_seq - 1, name, json, now);

    if (rc != NGX_OK) {
        /* the run outlives its client: a GET with stream=true follows it */
        o->gone = 1;
    }

    return NGX_OK;
}


/* each poll of the response's record: its kept events saved */

void
ngx_http_agent_responses_poll(ngx_http_agent_turn_t *turn)
{
    ngx_http_agent_turn_info_t       info;
    ngx_http_agent_responses_out_t  *o;

    o = ngx_http_agent_turn_in(turn)->data;

    ngx_http_agent_turn_info(turn, &info);

    (void) ngx_http_agent_turn_kept_save(&o->kept, info.wsc, info.run_id);
}


/*
 * the events saved before the record says the response ended: the last
 * made now, so that it is among them (the stream's end finds it made)
 */

void
ngx_http_agent_responses_done(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev)
{
    ngx_http_agent_responses_out_t  *o;

    o = ngx_http_agent_turn_in(turn)->data;

    if (o->turn && o->stream
        && ngx_http_agent_stream_emit(o->stream, ev) != NGX_OK)
    {
        o->gone = 1;
    }

    ngx_http_agent_responses_poll(turn);
}


/* GET {location}responses/{id}?stream=true, the response the caller's */

ngx_int_t
ngx_http_agent_responses_replay(ngx_http_request_t *r, ngx_str_t *run_id,
    ngx_str_t *thread)
{
    int64_t                             last;
    ngx_int_t                           n;
    ngx_str_t                           after;
    ngx_http_cleanup_t                 *cln;
    ngx_http_agent_responses_replay_t  *rp;

    rp = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_responses_replay_t));
    if (rp == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* starting_after: a sequence_number seen; our seq is it plus one */

    last = 0;

    if (ngx_http_arg(r, (u_char *) "starting_after", 14, &after) == NGX_OK) {
        n = ngx_atoi(after.data, after.len);

        if (n == NGX_ERROR) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                              "starting_after must be a "
                                              "sequence_number");
        }

        last = n + 1;
    }

    rp->request = r;
    rp->run_id = *run_id;

    cln = ngx_http_cleanup_add(r, 0);
    if (cln == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    cln->handler = ngx_http_agent_responses_replay_cleanup;
    cln->data = rp;

    if (ngx_http_agent_turn_kept_follow(&rp->replay, r, last, 1) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_http_agent_store_call_init(&rp->sc, r->pool, r->connection->log,
                                   ngx_http_agent_responses_replay_wake, rp);
    rp->sc.key = *thread;

    rp->poll.handler = ngx_http_agent_responses_replay_poll;
    rp->poll.data = rp;
    rp->poll.log = r->connection->log;
    rp->poll.cancelable = 1;

    r->read_event_handler = ngx_http_test_reading;
    r->main->count++;

    ngx_http_agent_responses_replay_step(rp);

    return NGX_DONE;
}


static void
ngx_http_agent_responses_replay_poll(ngx_event_t *ev)
{
    ngx_http_agent_responses_replay_step(ev->data);
}


static void
ngx_http_agent_responses_replay_wake(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_responses_replay_step(sc->data);
}


/* the status first: events saved before the end are all there then */

static void
ngx_http_agent_responses_replay_step(ngx_http_agent_responses_replay_t *rp)
{
    ngx_int_t            rc;
    ngx_connection_t    *c;
    ngx_http_request_t  *r;

    r = rp->request;
    c = r->connection;

    rp->sc.n = 0;

    if (rp->phase == NGX_HTTP_AGENT_RESPONSES_STATUS) {
        rc = ngx_http_agent_turn_record_read(&rp->sc, &rp->run_id, &rp->out);
        if (rc == NGX_AGAIN) {
            return;
        }

        ngx_http_agent_store_call_reset(&rp->sc);

        if (rc != NGX_OK) {
            goto failed;
        }

        rp->live = ngx_http_agent_run_live(
                                 ngx_http_agent_turn_record_state(&rp->out));
        rp->phase = NGX_HTTP_AGENT_RESPONSES_EVENTS;
    }

    if (rp->phase == NGX_HTTP_AGENT_RESPONSES_EVENTS) {
        rc = ngx_http_agent_turn_kept_replay(&rp->replay, &rp->sc,
                                             &rp->run_id);
        if (rc == NGX_AGAIN) {
            return;
        }

        if (rc != NGX_OK) {
            goto failed;
        }

        rp->phase = NGX_HTTP_AGENT_RESPONSES_END;
    }

    if (rp->live
        && (ngx_msec_int_t) (ngx_current_msec - rp->replay.deadline) < 0)
    {
        rp->phase = NGX_HTTP_AGENT_RESPONSES_STATUS;
        ngx_add_timer(&rp->poll, NGX_HTTP_AGENT_RESPONSES_POLL);
        return;
    }

    ngx_http_agent_reply_finish(r, ngx_http_agent_sse_finish(&rp->replay.sse)
                                   == NGX_OK ? NGX_OK : NGX_ERROR);
    return;

failed:

    ngx_http_finalize_request(r, NGX_ERROR);
    ngx_http_run_posted_requests(c);
}


static void
ngx_http_agent_responses_replay_cleanup(void *data)
{
    ngx_http_agent_responses_replay_t *rp = data;

    if (rp->poll.timer_set) {
        ngx_del_timer(&rp->poll);
    }

    ngx_http_agent_store_cancel(&rp->sc);
    ngx_http_agent_sse_stop(&rp->replay.sse);
}
