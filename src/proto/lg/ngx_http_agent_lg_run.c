
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"


/*
 * A run of the LangGraph API is a turn (turn.c) of the assistant's graph
 * on the thread, with the run's input, command and stream modes.  It is
 * recorded in the runs table; its events are kept there too when it is
 * resumable, so a client that lost its connection joins it from any
 * worker (lg_join.c).  Its row and its cancel are the turn's record
 * (turn_record.c); its kept events are saved at each of the record's
 * polls and at its end.
 */


static ngx_int_t ngx_http_agent_lg_run_headers(ngx_http_request_t *r,
    ngx_http_agent_lg_run_t *lr);


/* the input checked by the turn: where the run is, in every answer's head */

ngx_int_t
ngx_http_agent_lg_run_ready(ngx_http_agent_turn_t *turn)
{
    ngx_http_agent_lg_run_t *lr = ngx_http_agent_turn_in(turn)->data;

    return ngx_http_agent_lg_run_headers(lr->request, lr);
}


/*
 * in the turn's first unit of writes: the thread's metadata naming the
 * run's graph and assistant, when it did not yet (lg_thread_names)
 */

ngx_int_t
ngx_http_agent_lg_run_begin(ngx_http_agent_turn_t *turn)
{
    ngx_http_agent_lg_run_t *lr = ngx_http_agent_turn_in(turn)->data;

    ngx_int_t  rc;

    if (lr->metadata.len == 0) {
        return NGX_OK;
    }

    rc = ngx_http_agent_store_session_set(lr->info.sc, lr->info.session_id,
                                          NGX_HTTP_AGENT_STORE_METADATA,
                                          &lr->metadata);
    if (rc == NGX_AGAIN || rc == NGX_OK) {
        return rc;
    }

    return ngx_http_agent_reply_error(lr->request,
                                      NGX_HTTP_INTERNAL_SERVER_ERROR,
                                      "the thread's metadata could not be "
                                      "saved");
}


/* the run has begun (its row written, its graph started, maybe ended) */

void
ngx_http_agent_lg_run_started(ngx_http_agent_turn_t *turn)
{
    ngx_http_agent_lg_run_t *lr = ngx_http_agent_turn_in(turn)->data;

    ngx_int_t            rc;
    ngx_http_request_t  *r;

    r = lr->request;

    if (lr->keep) {
        /* on_disconnect "continue": the run outlives its client */
        ngx_http_agent_turn_keep(turn);
        r->read_event_handler = ngx_http_block_reading;
    }

    if (lr->background && !lr->answered) {

        /*
         * POST /threads/{id}/runs: the run's record now, the run after;
         * the connection closes with the answer, the request ends with
         * the run (a run that ended already answered it: lg_run_answer)
         */

        r->keepalive = 0;
        r->read_event_handler = ngx_http_block_reading;

        lr->answered = 1;
        rc = ngx_http_agent_lg_run_created(r, lr);

        if (rc == NGX_ERROR || rc >= NGX_HTTP_SPECIAL_RESPONSE) {
            ngx_http_agent_turn_record_stop(turn, 0);
        }
    }
}


/*
 * Where the SDK finds the run again: Content-Location and Location, as
 * LangGraph's servers send them, relative to the API's root (the SDK adds
 * them to its apiUrl, which ends with this location's prefix).
 */

static ngx_int_t
ngx_http_agent_lg_run_headers(ngx_http_request_t *r,
    ngx_http_agent_lg_run_t *lr)
{
    u_char           *p;
    size_t            len;
    ngx_table_elt_t  *h;

    len = sizeof("/threads//runs//stream") - 1 + lr->info.session_id->len
          + lr->info.run_id->len;

    p = ngx_pnalloc(r->pool, len);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    lr->location.data = p;
    p = ngx_sprintf(p, "/threads/%*s/runs/%V",
                    ngx_http_agent_store_id_shown(lr->info.session_id),
                    lr->info.session_id->data, lr->info.run_id);
    lr->location.len = p - lr->location.data;

    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    h->hash = 1;
    ngx_str_set(&h->key, "Content-Location");
    h->value = lr->location;

    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    p = ngx_copy(p, "/stream", 7);

    h->hash = 1;
    ngx_str_set(&h->key, "Location");
    h->value.data = lr->location.data;
    h->value.len = p - lr->location.data;

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_lg_run_sink(void *data, ngx_str_t *name, ngx_str_t *json,
    ngx_uint_t now)
{
    ngx_http_agent_lg_run_t *lr = data;

    ngx_int_t  rc;

    lr->seq++;

    /* the last, an error, was kept with the run's end (lg_run_done) */

    if (lr->resumable && !lr->finished
        && ngx_http_agent_turn_kept_add(&lr->kept, lr->request,
                                        lr->info.run_id, lr->seq, name, json)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (lr->gone) {
        return NGX_OK;
    }

    rc = ngx_http_agent_turn_send(lr->turn, lr->seq - 1, name, json, now);

    if (rc != NGX_OK && lr->keep) {
        ngx_log_error(NGX_LOG_INFO, lr->request->connection->log, 0,
                      "agent: client of run \"%V\" gone, the run goes on",
                      lr->info.run_id);
        lr->gone = 1;
        return NGX_OK;
    }

    return rc;
}


/* each poll of the run's record: its kept events saved */

void
ngx_http_agent_lg_run_poll(ngx_http_agent_turn_t *turn)
{
    ngx_http_agent_lg_run_t *lr = ngx_http_agent_turn_in(turn)->data;

    (void) ngx_http_agent_turn_kept_save(&lr->kept, lr->info.wsc,
                                         lr->info.run_id);
}


ngx_int_t
ngx_http_agent_lg_run_created(ngx_http_request_t *r,
    ngx_http_agent_lg_run_t *lr)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    lr->record.row.updated_at = lr->record.row.created_at;
    ngx_http_agent_lg_run_json(j, &lr->record.row);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}
