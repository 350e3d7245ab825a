
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_a2a.h"
#include "ngx_http_agent_a2a_int.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"


/*
 * A2A's task methods over the turn's record (turn_record.c): a task is a
 * run, kept with how it ended, so any worker of any host that shares the
 * store answers for it.  GetTask (tasks/get) and CancelTask
 * (tasks/cancel) answer the Task; ListTasks is a2a_list.c's;
 * SubscribeToTask (tasks/resubscribe) streams the task
 * as it is, then as it ends.  Another owner's task is not found.
 */


typedef struct {
    ngx_http_agent_a2a_out_t       o;
    ngx_http_agent_sse_t           sse;
} ngx_http_agent_a2a_sub_t;


static ngx_int_t ngx_http_agent_a2a_answer_task(ngx_http_request_t *r,
    ngx_http_agent_a2a_out_t *o, ngx_http_agent_turn_outcome_t *out,
    ngx_http_agent_a2a_state_e state, ngx_str_t *text);
static ngx_int_t ngx_http_agent_a2a_subscribe(ngx_http_request_t *r,
    ngx_http_agent_a2a_out_t *o, ngx_http_agent_turn_outcome_t *out);
static ngx_int_t ngx_http_agent_a2a_sub_event(ngx_http_request_t *r,
    ngx_http_agent_a2a_sub_t *sub, ngx_http_agent_turn_outcome_t *out,
    ngx_http_agent_a2a_state_e state, ngx_str_t *text);
static ngx_int_t ngx_http_agent_a2a_sub_end(ngx_http_request_t *r,
    ngx_http_agent_turn_outcome_t *out, void *data);
static void ngx_http_agent_a2a_sub_cleanup(void *data);


ngx_int_t
ngx_http_agent_a2a_tasks(ngx_http_request_t *r, ngx_http_agent_jsonrpc_t *rpc,
    ngx_uint_t method, ngx_uint_t legacy)
{
    ngx_int_t                       rc;
    ngx_str_t                       id, text, run;
    ngx_http_agent_a2a_hist_t       hist;
    ngx_http_agent_a2a_out_t       *o;
    ngx_http_agent_session_t        s;
    ngx_http_agent_a2a_state_e      state;
    ngx_http_agent_turn_outcome_t  *out;

    if (method == NGX_HTTP_AGENT_A2A_LIST) {
        return ngx_http_agent_a2a_list(r, rpc);
    }

    ngx_memzero(&hist, sizeof(ngx_http_agent_a2a_hist_t));

    /* 1.0's push config methods name the task "taskId" ("id": the config) */

    if (rpc->params == NULL
        || ngx_http_agent_a2a_id(rpc->params,
                                 (method >= NGX_HTTP_AGENT_A2A_PUSH_GET
                                  && !legacy) ? "taskId" : "id", &id)
           != NGX_OK
        || id.len == 0)
    {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                        "Invalid params: \"id\" names the "
                                        "task, a string");
    }

    if (ngx_http_agent_a2a_history_of(rpc->params, &hist) != NGX_OK) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                        "Invalid params: \"historyLength\" "
                                        "is a number of 0 or more");
    }

    out = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_turn_outcome_t));
    o = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_a2a_out_t));
    if (out == NULL || o == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    o->id = rpc->id;
    o->rest = ngx_http_agent_a2a_rest_is(r);
    o->legacy = legacy;

    /* the task is shown by its id, whichever of its runs it stands at */
    o->task = id;
    o->hist = hist;

    rc = ngx_http_agent_a2a_latest(r, &id, out);

    if (rc == NGX_OK) {
        /* the task's context: the owner's, or as good as not there */
        rc = ngx_http_agent_reply_rpc_thread(r, &out->row.thread_id, 0, &s);
    }

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_A2A_TASK_NOT_FOUND,
                                        "Task not found: %V", &id);
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_JSONRPC_INTERNAL_ERROR,
                                        "Internal error: the store failed");
    }

    state = ngx_http_agent_a2a_state(r->pool, out, &text);

    switch (method) {

    case NGX_HTTP_AGENT_A2A_CANCEL:

        rc = NGX_DECLINED;
        run = out->row.run_id;

        if (state == NGX_HTTP_AGENT_A2A_INPUT_REQUIRED) {
            /* paused, not over (§3.3.2): cancelled where it waits */
            rc = ngx_http_agent_a2a_close(r, out, &id);

        } else if (state == NGX_HTTP_AGENT_A2A_WORKING
                   || state == NGX_HTTP_AGENT_A2A_SUBMITTED)
        {
            /* heard at once here, at its worker's next poll elsewhere */
            rc = ngx_http_agent_turn_record_cancel(ngx_http_agent_reply_sc(r),
                                                   &run, 0);

            /* ended meanwhile (by this cancel here, or not): as it ended */
            if (rc == NGX_DECLINED) {
                rc = ngx_http_agent_turn_record_read(
                                        ngx_http_agent_reply_sc(r), &run, out);

                if (rc == NGX_OK) {
                    state = ngx_http_agent_a2a_state(r->pool, out, &text);
                    rc = (state == NGX_HTTP_AGENT_A2A_CANCELED)
                         ? NGX_OK : NGX_DECLINED;
                }
            }
        }

        if (rc == NGX_AGAIN) {
            return NGX_AGAIN;
        }

        if (rc == NGX_ERROR) {
            return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_JSONRPC_INTERNAL_ERROR,
                                        "Internal error: the cancel could not "
                                        "be saved");
        }

        if (rc == NGX_DECLINED) {
            return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_A2A_TASK_NOT_CANCELABLE,
                                        "Task cannot be canceled: %V is %s",
                                        &id,
                                        state == NGX_HTTP_AGENT_A2A_CANCELED
                                        ? "canceled already" : "over");
        }

        o->bare = 1;
        ngx_str_set(&text, "");

        return ngx_http_agent_a2a_answer_task(r, o, out,
                                              NGX_HTTP_AGENT_A2A_CANCELED,
                                              &text);

    case NGX_HTTP_AGENT_A2A_SUBSCRIBE:

        if (state != NGX_HTTP_AGENT_A2A_WORKING
            && state != NGX_HTTP_AGENT_A2A_SUBMITTED)
        {
            return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                   NGX_HTTP_AGENT_A2A_UNSUPPORTED_OPERATION,
                                   "This operation is not supported: the "
                                   "task %V is over; GetTask reads it", &id);
        }

        return ngx_http_agent_a2a_subscribe(r, o, out);

    case NGX_HTTP_AGENT_A2A_PUSH_GET:
    case NGX_HTTP_AGENT_A2A_PUSH_LIST:
        return ngx_http_agent_a2a_push_answer(r, o, out,
                                       method == NGX_HTTP_AGENT_A2A_PUSH_LIST);

    default: /* NGX_HTTP_AGENT_A2A_GET */
        o->bare = 1;
        return ngx_http_agent_a2a_answer_task(r, o, out, state, &text);
    }
}


static ngx_int_t
ngx_http_agent_a2a_answer_task(ngx_http_request_t *r,
    ngx_http_agent_a2a_out_t *o, ngx_http_agent_turn_outcome_t *out,
    ngx_http_agent_a2a_state_e state, ngx_str_t *text)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_a2a_head(j, o);
    ngx_http_agent_a2a_task(j, o, &out->row.run_id, &out->row.thread_id,
                            state, text,
                            state == NGX_HTTP_AGENT_A2A_COMPLETED);
    ngx_http_agent_a2a_tail(j, o);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/* SubscribeToTask: the task now, then the task when it is over */

static ngx_int_t
ngx_http_agent_a2a_subscribe(ngx_http_request_t *r,
    ngx_http_agent_a2a_out_t *o, ngx_http_agent_turn_outcome_t *out)
{
    ngx_str_t                   text;
    ngx_http_cleanup_t         *cln;
    ngx_http_agent_a2a_sub_t   *sub;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    sub = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_a2a_sub_t));
    if (sub == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    sub->o = *o;

    cln = ngx_http_cleanup_add(r, 0);
    if (cln == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    cln->handler = ngx_http_agent_a2a_sub_cleanup;
    cln->data = sub;

    if (ngx_http_agent_sse_start(&sub->sse, r, alcf->heartbeat) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_str_set(&text, "");

    if (ngx_http_agent_a2a_sub_event(r, sub, out,
                                     ngx_http_agent_a2a_state(r->pool, out,
                                                              &text),
                                     &text)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_turn_follow(r, &out->row.run_id,
                                      ngx_http_agent_a2a_sub_end, sub);
}


static ngx_int_t
ngx_http_agent_a2a_sub_event(ngx_http_request_t *r,
    ngx_http_agent_a2a_sub_t *sub, ngx_http_agent_turn_outcome_t *out,
    ngx_http_agent_a2a_state_e state, ngx_str_t *text)
{
    ngx_str_t               json, name;
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_a2a_head(j, &sub->o);

    if (!sub->o.legacy) {
        ngx_http_agent_json_key(j, "task");
    }

    ngx_http_agent_a2a_task(j, &sub->o, &out->row.run_id,
                            &out->row.thread_id, state, text,
                            state == NGX_HTTP_AGENT_A2A_COMPLETED);
    ngx_http_agent_a2a_tail(j, &sub->o);

    if (ngx_http_agent_json_done(j, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_str_null(&name);

    return ngx_http_agent_sse_named(&sub->sse, &name, &json, 1);
}


/* the task is over (or gone: out NULL, or its row let go) */

static ngx_int_t
ngx_http_agent_a2a_sub_end(ngx_http_request_t *r,
    ngx_http_agent_turn_outcome_t *out, void *data)
{
    ngx_http_agent_a2a_sub_t *sub = data;

    ngx_str_t                   text;
    ngx_http_agent_a2a_state_e  state;

    if (out && out->row.run_id.len) {
        state = ngx_http_agent_a2a_state(r->pool, out, &text);

        if (state == NGX_HTTP_AGENT_A2A_WORKING
            || state == NGX_HTTP_AGENT_A2A_SUBMITTED)
        {
            /* its worker died with it: its lease ran out long ago */
            state = NGX_HTTP_AGENT_A2A_FAILED;
            ngx_str_set(&text, "the task was lost with its worker");
        }

        if (ngx_http_agent_a2a_sub_event(r, sub, out, state, &text)
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return ngx_http_agent_sse_finish(&sub->sse) == NGX_OK ? NGX_OK
                                                          : NGX_ERROR;
}


static void
ngx_http_agent_a2a_sub_cleanup(void *data)
{
    ngx_http_agent_a2a_sub_t *sub = data;

    ngx_http_agent_sse_stop(&sub->sse);
}
