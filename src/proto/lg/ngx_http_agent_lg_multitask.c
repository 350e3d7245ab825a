
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_http.h"


static void ngx_http_agent_lg_run_dequeue(ngx_event_t *ev);
static void ngx_http_agent_lg_run_unqueue(void *data);


/*
 * multitask_strategy: with "reject" the thread's lock answers 409; with
 * "interrupt" or "rollback" the running run is cancelled (rolled back),
 * and with "enqueue" left alone, then this one starts when the thread is
 * free, checked every 50 ms while the run request waits.  NGX_OK: go on.
 */

ngx_int_t
ngx_http_agent_lg_run_queue(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body, yajl_val v)
{
    ngx_int_t                   rc;
    ngx_str_t                   strategy, run_id, action;
    ngx_http_cleanup_t         *cln;
    ngx_http_agent_turn_t      *turn;
    ngx_http_agent_run_row_t    row;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    if (ngx_http_agent_json_get_str(v, "multitask_strategy", &strategy)
        != NGX_OK
        || (strategy.len == 6 && ngx_strncmp(strategy.data, "reject", 6) == 0))
    {
        return NGX_OK;
    }

    rc = ngx_http_agent_store_thread_busy(ngx_http_agent_reply_sc(r),
                                          &req->thread_id, &run_id);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_DECLINED && req->rollback) {
        rc = ngx_http_agent_store_run_get(ngx_http_agent_reply_sc(r),
                                          &req->thread_id, &req->before,
                                          &row);
        if (rc == NGX_AGAIN) {
            return NGX_AGAIN;
        }

        /* free, but not yet rolled back */
        rc = (rc == NGX_OK) ? NGX_OK : NGX_DECLINED;
    }

    if (rc != NGX_OK) {
        return NGX_OK;
    }

    if (!req->queued) {
        req->queued = 1;
        req->body = *body;
        req->before = run_id;
        req->deadline = ngx_current_msec + 2 * alcf->turn_lease;

        req->queue.handler = ngx_http_agent_lg_run_dequeue;
        req->queue.data = r;
        req->queue.log = r->connection->log;
        req->queue.cancelable = 1;

        cln = ngx_http_cleanup_add(r, 0);
        if (cln == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        cln->handler = ngx_http_agent_lg_run_unqueue;
        cln->data = req;

        /* a client that goes away while it waits ends the request */
        r->read_event_handler = ngx_http_test_reading;

        if (!(strategy.len == 7
              && ngx_strncmp(strategy.data, "enqueue", 7) == 0))
        {
            req->rollback = (strategy.len == 8);
            action = strategy;

            turn = ngx_http_agent_turn_find(&run_id);

            if (turn && ngx_http_agent_turn_in(turn)->hooks
                && ngx_http_agent_turn_running(turn))
            {
                ngx_http_agent_turn_record_stop(turn, req->rollback);
                return ngx_http_agent_lg_run_queue(r, req, body, v);
            }

            rc = ngx_http_agent_store_run_cancel(ngx_http_agent_reply_sc(r),
                                              &run_id, &action,
                                              NGX_HTTP_AGENT_STORE_CANCEL_ASK);
            if (rc == NGX_AGAIN) {
                return NGX_AGAIN;
            }

            if (rc == NGX_ERROR) {
                rc = NGX_HTTP_INTERNAL_SERVER_ERROR;
                return ngx_http_agent_reply_error(r, rc, "the cancel could "
                                                  "not be saved");
            }
        }
    }

    if ((ngx_msec_int_t) (ngx_current_msec - req->deadline) >= 0) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT, "the thread's "
                                          "run \"%V\" did not end in time",
                                          &req->before);
    }

    ngx_add_timer(&req->queue, 50);

    return NGX_DONE;
}


/*
 * The thread may be free: the request makes its pass again, as when the
 * store answers (ngx_http_agent_handler.c), with a new look at the store
 */

static void
ngx_http_agent_lg_run_dequeue(ngx_event_t *ev)
{
    ngx_http_request_t *r = ev->data;

    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    ngx_http_agent_store_call_reset(&ctx->store);
    ctx->store.wake(&ctx->store);
}


static void
ngx_http_agent_lg_run_unqueue(void *data)
{
    ngx_http_agent_lg_req_t *req = data;

    if (req->queue.timer_set) {
        ngx_del_timer(&req->queue);
    }
}
