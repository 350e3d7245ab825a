
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_util.h"


/*
 * The LangGraph API's runs as records: listed, read, cancelled, joined.
 * A join replays a resumable run's kept events after Last-Event-ID and
 * follows the run until it ends, polling the store: the run may be on
 * another worker, or on another host's nginx sharing the store.
 */


#define NGX_HTTP_AGENT_LG_JOIN_POLL   50


typedef struct {
    ngx_http_request_t                 *request;
    ngx_http_agent_lg_req_t            *req;
    ngx_http_agent_turn_kept_replay_t   replay;
    ngx_event_t                         poll;
    ngx_uint_t                          mode;  /* join, join JSON, cancel */

    /* one call of the store at a time, its answer read once */
    ngx_http_agent_store_call_t         sc;
    ngx_http_agent_run_row_t            row;
    ngx_uint_t                          phase;
} ngx_http_agent_lg_join_t;


#define NGX_HTTP_AGENT_LG_JOIN_STATUS  0
#define NGX_HTTP_AGENT_LG_JOIN_EVENTS  1
#define NGX_HTTP_AGENT_LG_JOIN_END     2


static ngx_int_t ngx_http_agent_lg_run_read(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_http_agent_run_row_t *row);
static ngx_int_t ngx_http_agent_lg_cancel(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_http_agent_run_row_t *row);
static ngx_int_t ngx_http_agent_lg_follow(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_uint_t mode, int64_t last);
static void ngx_http_agent_lg_join_poll(ngx_event_t *ev);
static void ngx_http_agent_lg_join_wake(ngx_http_agent_store_call_t *sc);
static void ngx_http_agent_lg_join_step(ngx_http_agent_lg_join_t *jn);
static ngx_int_t ngx_http_agent_lg_join_end(ngx_http_agent_lg_join_t *jn);
static void ngx_http_agent_lg_join_cleanup(void *data);


/* GET /threads/{id}/runs[/{run_id}], POST .../{run_id}/cancel */

ngx_int_t
ngx_http_agent_lg_runs(ngx_http_request_t *r, ngx_http_agent_lg_req_t *req,
    ngx_str_t *body)
{
    ngx_int_t                  rc, limit, offset;
    ngx_str_t                  arg, *status;
    ngx_uint_t                 i;
    ngx_array_t                rows;
    ngx_http_agent_json_t     *j;
    ngx_http_agent_session_t   s;
    ngx_http_agent_run_row_t  *row, one;

    rc = ngx_http_agent_reply_session_get(r, &req->thread_id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (req->route != NGX_HTTP_AGENT_LG_RUNS) {
        rc = ngx_http_agent_lg_run_read(r, req, &one);
        if (rc != NGX_OK) {
            return rc;
        }

        if (req->route == NGX_HTTP_AGENT_LG_RUN_CANCEL) {
            return ngx_http_agent_lg_cancel(r, req, &one);
        }

        ngx_http_agent_lg_run_json(j, &one);

        return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
    }

    limit = 10;
    offset = 0;
    status = NULL;

    if (ngx_http_arg(r, (u_char *) "limit", 5, &arg) == NGX_OK) {
        limit = ngx_atoi(arg.data, arg.len);
    }

    if (ngx_http_arg(r, (u_char *) "offset", 6, &arg) == NGX_OK) {
        offset = ngx_atoi(arg.data, arg.len);
    }

    if (limit < 1 || limit > 1000 || offset < 0) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "\"limit\" is from 1 to 1000, "
                                          "\"offset\" 0 or more");
    }

    if (ngx_http_arg(r, (u_char *) "status", 6, &arg) == NGX_OK) {
        status = ngx_palloc(r->pool, sizeof(ngx_str_t));
        if (status == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        *status = arg;
    }

    if (ngx_array_init(&rows, r->pool, 8, sizeof(ngx_http_agent_run_row_t))
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_agent_store_run_list(ngx_http_agent_reply_sc(r),
                                       &req->thread_id, status, limit, offset,
                                       &rows);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the runs could not be read");
    }

    row = rows.elts;

    ngx_http_agent_json_arr(j);

    for (i = 0; i < rows.nelts; i++) {
        ngx_http_agent_lg_run_json(j, &row[i]);
    }

    ngx_http_agent_json_arr_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/*
 * A cancel: this worker's run stops at once; another worker's sees the
 * request at its next poll.  ?wait=1 answers 204 when the run's end is
 * stored, otherwise 202 at once.
 */

static ngx_int_t
ngx_http_agent_lg_cancel(ngx_http_request_t *r, ngx_http_agent_lg_req_t *req,
    ngx_http_agent_run_row_t *row)
{
    ngx_int_t               rc;
    ngx_str_t               arg, action;
    ngx_uint_t              wait;
    ngx_http_agent_turn_t  *turn;

    wait = (ngx_http_arg(r, (u_char *) "wait", 4, &arg) == NGX_OK
            && ((arg.len == 1 && arg.data[0] == '1')
                || (arg.len == 4 && ngx_strncmp(arg.data, "true", 4) == 0)));

    ngx_str_set(&action, "interrupt");

    if (ngx_http_arg(r, (u_char *) "action", 6, &arg) == NGX_OK) {
        if (!(arg.len == 9 && ngx_strncmp(arg.data, "interrupt", 9) == 0)
            && !(arg.len == 8 && ngx_strncmp(arg.data, "rollback", 8) == 0))
        {
            return ngx_http_agent_reply_error(r, 422, "\"action\" is "
                                              "\"interrupt\" or \"rollback\"");
        }

        action = arg;
    }

    turn = ngx_http_agent_turn_find(&row->run_id);

    if (turn && ngx_http_agent_turn_in(turn)->hooks
        && ngx_http_agent_turn_running(turn))
    {
        ngx_http_agent_turn_record_stop(turn, action.len == 8);

        if (wait) {
            /* its end may still be on its way to the store (PostgreSQL) */
            return ngx_http_agent_lg_follow(r, req,
                                            NGX_HTTP_AGENT_LG_RUN_CANCEL, 0);
        }

        /* not waited for: a pending run's row says so now, as below */
    }

    /*
     * not waited for: a pending run is interrupted at once, as LangGraph's
     * (its worker lets its thread go at its next poll); waited for, the
     * answer comes when its worker has ended it
     */

    rc = ngx_http_agent_store_run_cancel(ngx_http_agent_reply_sc(r),
                                         &row->run_id, &action,
                                         wait
                                         ? NGX_HTTP_AGENT_STORE_CANCEL_ASK
                                         : NGX_HTTP_AGENT_STORE_CANCEL_PENDING);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_ERROR) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the cancel could not be saved");
    }

    if (rc == NGX_DECLINED || !wait) {
        /* over already, or asked: the run's worker sees it */
        return ngx_http_agent_reply_send(r, (rc == NGX_DECLINED && wait)
                                            ? NGX_HTTP_NO_CONTENT
                                            : NGX_HTTP_ACCEPTED, NULL);
    }

    return ngx_http_agent_lg_follow(r, req, NGX_HTTP_AGENT_LG_RUN_CANCEL, 0);
}


/* the thread's run req->id: NGX_OK, NGX_AGAIN, or the error answered */

static ngx_int_t
ngx_http_agent_lg_run_read(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_http_agent_run_row_t *row)
{
    ngx_int_t  rc;

    rc = ngx_http_agent_store_run_get(ngx_http_agent_reply_sc(r),
                                      &req->thread_id, &req->id, row);

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "thread \"%V\" has no run \"%V\"",
                                          &req->asked, &req->id);
    }

    if (rc != NGX_OK && rc != NGX_AGAIN) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the run could not be read");
    }

    return rc;
}


/* GET .../runs/{run_id}/stream (Last-Event-ID) and .../join */

ngx_int_t
ngx_http_agent_lg_join(ngx_http_request_t *r, ngx_http_agent_lg_req_t *req)
{
    int64_t                    last;
    ngx_int_t                  rc;
    ngx_table_elt_t           *h;
    ngx_http_agent_session_t   s;
    ngx_http_agent_run_row_t   row;

    rc = ngx_http_agent_reply_session_get(r, &req->thread_id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_lg_run_read(r, req, &row);
    if (rc != NGX_OK) {
        return rc;
    }

    /*
     * Last-Event-ID: the events after it; none or -1: from the start (the
     * ids count from 0, as LangGraph's: an event's id is its seq less 1)
     */

    last = 0;
    h = ngx_http_agent_header_in(r, "Last-Event-ID", NULL);

    if (h && h->value.len && h->value.data[0] != '-') {
        last = ngx_atoi(h->value.data, h->value.len);

        if (last == NGX_ERROR) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                              "Last-Event-ID must be an "
                                              "event's id");
        }

        last++;
    }

    return ngx_http_agent_lg_follow(r, req, req->route, last);
}


static ngx_int_t
ngx_http_agent_lg_follow(ngx_http_request_t *r, ngx_http_agent_lg_req_t *req,
    ngx_uint_t mode, int64_t last)
{
    ngx_http_cleanup_t        *cln;
    ngx_http_agent_lg_join_t  *jn;

    jn = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_lg_join_t));
    if (jn == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    jn->request = r;
    jn->req = req;
    jn->mode = mode;

    cln = ngx_http_cleanup_add(r, 0);
    if (cln == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    cln->handler = ngx_http_agent_lg_join_cleanup;
    cln->data = jn;

    if (ngx_http_agent_turn_kept_follow(&jn->replay, r, last,
                                        mode == NGX_HTTP_AGENT_LG_RUN_JOIN)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    ngx_http_agent_store_call_init(&jn->sc, r->pool, r->connection->log,
                                   ngx_http_agent_lg_join_wake, jn);
    jn->sc.key = req->thread_id;

    jn->poll.handler = ngx_http_agent_lg_join_poll;
    jn->poll.data = jn;
    jn->poll.log = r->connection->log;
    jn->poll.cancelable = 1;

    r->read_event_handler = ngx_http_test_reading;

    if (r->method != NGX_HTTP_POST) {
        /* a POST holds the request already, for its body */
        r->main->count++;
    }

    ngx_http_agent_lg_join_poll(&jn->poll);

    return NGX_DONE;
}


static void
ngx_http_agent_lg_join_poll(ngx_event_t *ev)
{
    ngx_http_agent_lg_join_t *jn = ev->data;

    ngx_http_agent_lg_join_step(jn);
}


static void
ngx_http_agent_lg_join_wake(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_lg_join_step(sc->data);
}


/* the status first: events saved before the end are all there then */

static void
ngx_http_agent_lg_join_step(ngx_http_agent_lg_join_t *jn)
{
    ngx_int_t            rc;
    ngx_connection_t    *c;
    ngx_http_request_t  *r;

    r = jn->request;
    c = r->connection;

    jn->sc.n = 0;

    if (jn->phase == NGX_HTTP_AGENT_LG_JOIN_STATUS) {
        rc = ngx_http_agent_store_run_get(&jn->sc, &jn->req->thread_id,
                                          &jn->req->id, &jn->row);
        if (rc == NGX_AGAIN) {
            return;
        }

        ngx_http_agent_store_call_reset(&jn->sc);

        if (rc != NGX_OK) {
            goto failed;
        }

        jn->phase = (jn->mode == NGX_HTTP_AGENT_LG_RUN_JOIN)
                    ? NGX_HTTP_AGENT_LG_JOIN_EVENTS
                    : NGX_HTTP_AGENT_LG_JOIN_END;
    }

    if (jn->phase == NGX_HTTP_AGENT_LG_JOIN_EVENTS) {
        rc = ngx_http_agent_turn_kept_replay(&jn->replay, &jn->sc,
                                             &jn->req->id);
        if (rc == NGX_AGAIN) {
            return;
        }

        if (rc != NGX_OK) {
            goto failed;
        }

        jn->phase = NGX_HTTP_AGENT_LG_JOIN_END;
    }

    if ((jn->row.status.len == 7
         && ngx_strncmp(jn->row.status.data, "running", 7) == 0)
        || (jn->row.status.len == 7
            && ngx_strncmp(jn->row.status.data, "pending", 7) == 0))
    {
        if ((ngx_msec_int_t) (ngx_current_msec - jn->replay.deadline) < 0) {
            jn->phase = NGX_HTTP_AGENT_LG_JOIN_STATUS;
            ngx_add_timer(&jn->poll, NGX_HTTP_AGENT_LG_JOIN_POLL);
            return;
        }

        /* its worker died with it: the lease ran out long ago */
    }

    rc = ngx_http_agent_lg_join_end(jn);

    if (rc == NGX_AGAIN) {
        return;
    }

    ngx_http_agent_reply_finish(r, rc);

    return;

failed:

    ngx_http_finalize_request(r, NGX_ERROR);
    ngx_http_run_posted_requests(c);
}


/* the run is over: the stream ends; join: the thread's values; cancel */

static ngx_int_t
ngx_http_agent_lg_join_end(ngx_http_agent_lg_join_t *jn)
{
    ngx_int_t                     rc;
    ngx_http_request_t           *r;
    ngx_http_agent_run_t         *run;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_checkpoint_t   cp;
    ngx_http_agent_loc_conf_t    *alcf;

    r = jn->request;

    switch (jn->mode) {

    case NGX_HTTP_AGENT_LG_RUN_JOIN:
        return ngx_http_agent_sse_finish(&jn->replay.sse) == NGX_OK
               ? NGX_OK : NGX_ERROR;

    case NGX_HTTP_AGENT_LG_RUN_CANCEL:
        return ngx_http_agent_reply_send(r, NGX_HTTP_NO_CONTENT, NULL);

    default: /* NGX_HTTP_AGENT_LG_RUN_JOIN_JSON */
        alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

        j = ngx_http_agent_json_create(r->pool);
        if (j == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        ngx_memzero(&cp, sizeof(ngx_http_agent_checkpoint_t));

        rc = ngx_http_agent_checkpoint_open(&jn->sc, r->pool, alcf->graph,
                                            &jn->req->thread_id, &cp, &run);
        if (rc == NGX_AGAIN) {
            return NGX_AGAIN;
        }

        if (rc != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        ngx_http_agent_lg_values(j, run, &jn->req->thread_id, 0);

        return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
    }
}


static void
ngx_http_agent_lg_join_cleanup(void *data)
{
    ngx_http_agent_lg_join_t *jn = data;

    if (jn->poll.timer_set) {
        ngx_del_timer(&jn->poll);
    }

    ngx_http_agent_store_cancel(&jn->sc);
    ngx_http_agent_sse_stop(&jn->replay.sse);
}
