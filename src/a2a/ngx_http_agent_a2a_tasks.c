
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_a2a_message.h"
#include "ngx_http_agent_a2a_task.h"
#include "ngx_http_agent_a2a_tasks.h"
#include "ngx_http_agent_a2a_push.h"
#include "ngx_http_agent_a2a_continue.h"
#include "ngx_http_agent_jsonrpc.h"
#include "ngx_http_agent_reply.h"
#include "ngx_http_agent_reply_rpc.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"


/*
 * A2A's task methods over the turn's record (turn_record.c): a task is a
 * run, kept with how it ended, so any worker of any host that shares the
 * store answers for it.  GetTask (tasks/get) and CancelTask
 * (tasks/cancel) answer the Task; ListTasks lists a context's tasks, a
 * page at a time; SubscribeToTask (tasks/resubscribe) streams the task
 * as it is, then as it ends.  Another owner's task is not found.
 */


#define NGX_HTTP_AGENT_A2A_PAGE      50
#define NGX_HTTP_AGENT_A2A_PAGE_MAX  100
#define NGX_HTTP_AGENT_A2A_LIST_MAX  1000

/* ListTasks without a context: the caller's threads most recently used */
#define NGX_HTTP_AGENT_A2A_THREADS   100


typedef struct {
    ngx_http_agent_a2a_out_t       o;
    ngx_http_agent_sse_t           sse;
} ngx_http_agent_a2a_sub_t;


static ngx_int_t ngx_http_agent_a2a_list(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc);
static ngx_int_t ngx_http_agent_a2a_rows(ngx_http_request_t *r,
    ngx_str_t *context, ngx_str_t *status, ngx_array_t *rows);
static void ngx_http_agent_a2a_unique(ngx_pool_t *pool, ngx_array_t *rows);
static ngx_int_t ngx_http_agent_a2a_newer(const void *one, const void *two);
static ngx_http_agent_a2a_state_e ngx_http_agent_a2a_state(ngx_pool_t *pool,
    ngx_http_agent_turn_outcome_t *out, ngx_str_t *text);
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
    ngx_http_agent_a2a_out_t       *o;
    ngx_http_agent_session_t        s;
    ngx_http_agent_a2a_state_e      state;
    ngx_http_agent_turn_outcome_t  *out;

    if (method == NGX_HTTP_AGENT_A2A_LIST) {
        return ngx_http_agent_a2a_list(r, rpc);
    }

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

    if (ngx_http_agent_a2a_history(rpc->params) != NGX_OK) {
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
    o->legacy = legacy;

    /* the task is shown by its id, whichever of its runs it stands at */
    o->task = id;

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


/*
 * The task's state from its record (a run that ended at an interrupt
 * waits for input; one stopped, or left by its client, was canceled) and
 * its text: the answer, the error, or what it asks
 */

static ngx_http_agent_a2a_state_e
ngx_http_agent_a2a_state(ngx_pool_t *pool, ngx_http_agent_turn_outcome_t *out,
    ngx_str_t *text)
{
    static ngx_http_agent_a2a_state_e  states[] = {
        NGX_HTTP_AGENT_A2A_SUBMITTED,        /* pending */
        NGX_HTTP_AGENT_A2A_WORKING,          /* running */
        NGX_HTTP_AGENT_A2A_COMPLETED,        /* success */
        NGX_HTTP_AGENT_A2A_FAILED,           /* error */
        NGX_HTTP_AGENT_A2A_INPUT_REQUIRED,   /* waits */
        NGX_HTTP_AGENT_A2A_CANCELED          /* cancelled */
    };

    ngx_http_agent_run_state_e  run;

    run = ngx_http_agent_turn_record_state(out);
    ngx_str_set(text, "");

    switch (run) {

    case NGX_HTTP_AGENT_RUN_SUCCESS:
        *text = out->answer;
        break;

    case NGX_HTTP_AGENT_RUN_ERROR:
        *text = out->error;
        break;

    case NGX_HTTP_AGENT_RUN_WAITS:
        (void) ngx_http_agent_turn_asks(pool, &out->interrupt, text);
        break;

    default:
        break;
    }

    return states[run];
}


static ngx_int_t
ngx_http_agent_a2a_answer_task(ngx_http_request_t *r,
    ngx_http_agent_a2a_out_t *o, ngx_http_agent_turn_outcome_t *out,
    ngx_http_agent_a2a_state_e state, ngx_str_t *text)
{
    ngx_str_t               body;
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

    if (ngx_http_agent_json_done(j, &body) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_reply_send(r, NGX_HTTP_OK, &body);
}


/* ListTasks: a context's tasks, newest first, a page at a time */

static ngx_int_t
ngx_http_agent_a2a_list(ngx_http_request_t *r, ngx_http_agent_jsonrpc_t *rpc)
{
    u_char                         *p;
    ngx_int_t                       rc, size, offset, end;
    ngx_str_t                       context, token, state, *status, text;
    ngx_str_t                       body;
    ngx_uint_t                      i, n, want;
    yajl_val                        v;
    ngx_array_t                     rows;
    ngx_http_agent_json_t          *j;
    ngx_http_agent_run_row_t       *row;
    ngx_http_agent_a2a_out_t        o;
    ngx_http_agent_a2a_state_e      st;
    ngx_http_agent_turn_outcome_t  *outs;

    /* the runs table's status of each state, in the states' order */
    static ngx_str_t  statuses[] = {
        ngx_string("running"), ngx_string("success"),
        ngx_string("interrupted"), ngx_string("error"),
        ngx_string("pending"), ngx_string("interrupted")
    };

    ngx_memzero(&o, sizeof(ngx_http_agent_a2a_out_t));
    o.id = rpc->id;
    o.bare = 1;

    size = NGX_HTTP_AGENT_A2A_PAGE;
    offset = 0;
    status = NULL;
    want = 0;

    v = rpc->params ? ngx_http_agent_json_get(rpc->params, "pageSize") : NULL;

    if (v && !YAJL_IS_NULL(v)) {
        if (!YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 1
            || YAJL_GET_INTEGER(v) > NGX_HTTP_AGENT_A2A_PAGE_MAX)
        {
            return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                        "Invalid params: \"pageSize\" is "
                                        "from 1 to %d",
                                        NGX_HTTP_AGENT_A2A_PAGE_MAX);
        }

        size = YAJL_GET_INTEGER(v);
    }

    ngx_str_null(&token);
    ngx_str_null(&state);

    if ((rpc->params && !YAJL_IS_OBJECT(rpc->params))
        || ngx_http_agent_a2a_id(rpc->params, "contextId", &context) != NGX_OK
        || ngx_http_agent_a2a_id(rpc->params, "pageToken", &token) != NGX_OK
        || ngx_http_agent_a2a_id(rpc->params, "status", &state) != NGX_OK)
    {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                        "Invalid params: \"contextId\", where "
                                        "given, names the context whose tasks "
                                        "are listed; \"pageToken\" and "
                                        "\"status\" are as ListTasks gave "
                                        "them");
    }

    if (token.len) {
        offset = ngx_atoi(token.data, token.len);

        if (offset == NGX_ERROR || offset > NGX_HTTP_AGENT_A2A_LIST_MAX) {
            return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                        "Invalid params: no such "
                                        "\"pageToken\"");
        }
    }

    if (state.len) {
        for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
            p = (u_char *) ngx_http_agent_a2a_state_name(i, 0);

            if (state.len == ngx_strlen(p)
                && ngx_strncmp(state.data, p, state.len) == 0)
            {
                break;
            }
        }

        if (i == sizeof(statuses) / sizeof(statuses[0])) {
            return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                        "Invalid params: \"status\" is a "
                                        "TASK_STATE_...");
        }

        status = &statuses[i];
        want = i + 1;
    }

    if (ngx_array_init(&rows, r->pool, 16, sizeof(ngx_http_agent_run_row_t))
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_agent_a2a_rows(r, &context, status, &rows);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_JSONRPC_INTERNAL_ERROR,
                                        "Internal error: the store failed");
    }

    row = rows.elts;
    end = ngx_min(offset + size, (ngx_int_t) rows.nelts);
    n = (offset < end) ? (ngx_uint_t) (end - offset) : 0;

    outs = ngx_pcalloc(r->pool,
                       (n + 1) * sizeof(ngx_http_agent_turn_outcome_t));
    if (outs == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* how each task of the page ended: one call of the pass each */

    rc = NGX_OK;

    for (i = 0; i < n; i++) {
        outs[i].row = row[offset + i];

        if (ngx_http_agent_turn_record_ended(ngx_http_agent_reply_sc(r),
                                             &row[offset + i].run_id,
                                             &outs[i])
            == NGX_AGAIN)
        {
            rc = NGX_AGAIN;
        }
    }

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_a2a_head(j, &o);
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "tasks");
    ngx_http_agent_json_arr(j);

    for (i = 0; i < n; i++) {
        st = ngx_http_agent_a2a_state(r->pool, &outs[i], &text);

        /* "interrupted" is both: the page shows the one asked for */
        if (want && st + 1 != want) {
            continue;
        }

        /* a run that continues a task shows as that task */
        ngx_http_agent_a2a_linked(r->pool, &outs[i].row, &o.task);

        ngx_http_agent_a2a_task(j, &o, &outs[i].row.run_id,
                                &outs[i].row.thread_id, st, &text,
                                st == NGX_HTTP_AGENT_A2A_COMPLETED);
    }

    ngx_http_agent_json_arr_end(j);

    if (end < (ngx_int_t) rows.nelts) {
        p = ngx_pnalloc(r->pool, NGX_INT_T_LEN);
        if (p == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        token.data = p;
        token.len = ngx_sprintf(p, "%i", end) - p;

    } else {
        ngx_str_set(&token, "");
    }

    ngx_http_agent_json_key(j, "nextPageToken");
    ngx_http_agent_json_str(j, &token);
    ngx_http_agent_json_key(j, "pageSize");
    ngx_http_agent_json_int(j, size);
    ngx_http_agent_json_key(j, "totalSize");
    ngx_http_agent_json_int(j, rows.nelts);
    ngx_http_agent_json_end(j);
    ngx_http_agent_a2a_tail(j, &o);

    if (ngx_http_agent_json_done(j, &body) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_reply_send(r, NGX_HTTP_OK, &body);
}


/*
 * ListTasks' rows, newest first: the context's, or without one the
 * caller's (A2A 1.0: the context is a filter), the runs of its threads
 * most recently used first; a task continued is one row, its latest
 */

static ngx_int_t
ngx_http_agent_a2a_rows(ngx_http_request_t *r, ngx_str_t *context,
    ngx_str_t *status, ngx_array_t *rows)
{
    ngx_int_t                        rc, all;
    ngx_uint_t                       i;
    ngx_array_t                      threads;
    ngx_http_agent_ctx_t            *ctx;
    ngx_http_agent_session_t        *t, s;
    ngx_http_agent_store_call_t     *sc;
    ngx_http_agent_session_query_t   q;

    sc = ngx_http_agent_reply_sc(r);

    if (context->len) {
        rc = ngx_http_agent_reply_rpc_thread(r, context, 0, &s);

        /* another owner's context has no tasks for this one */

        if (rc == NGX_OK) {
            rc = ngx_http_agent_store_run_list(sc, context, status,
                                               NGX_HTTP_AGENT_A2A_LIST_MAX, 0,
                                               rows);
        }

        if (rc == NGX_OK) {
            ngx_http_agent_a2a_unique(r->pool, rows);
        }

        return (rc == NGX_DECLINED) ? NGX_OK : rc;
    }

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    if (ngx_array_init(&threads, r->pool, 16,
                       sizeof(ngx_http_agent_session_t))
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    ngx_memzero(&q, sizeof(ngx_http_agent_session_query_t));
    q.limit = NGX_HTTP_AGENT_A2A_THREADS;
    q.owner = ctx->owner;

    rc = ngx_http_agent_store_session_list(sc, &q, &threads);
    if (rc != NGX_OK) {
        return rc;
    }

    /* a call of the pass per thread, all asked before any is waited for */

    all = NGX_OK;
    t = threads.elts;

    for (i = 0; i < threads.nelts; i++) {
        rc = ngx_http_agent_store_run_list(sc, &t[i].id, status,
                                           NGX_HTTP_AGENT_A2A_LIST_MAX, 0,
                                           rows);
        if (rc == NGX_ERROR) {
            return NGX_ERROR;
        }

        if (rc == NGX_AGAIN) {
            all = NGX_AGAIN;
        }
    }

    if (all != NGX_OK) {
        return all;
    }

    ngx_sort(rows->elts, rows->nelts, sizeof(ngx_http_agent_run_row_t),
             ngx_http_agent_a2a_newer);

    ngx_http_agent_a2a_unique(r->pool, rows);

    if (rows->nelts > NGX_HTTP_AGENT_A2A_LIST_MAX) {
        rows->nelts = NGX_HTTP_AGENT_A2A_LIST_MAX;
    }

    return NGX_OK;
}


/* the rows, newest first, each task once: a continued one at its latest */

static void
ngx_http_agent_a2a_unique(ngx_pool_t *pool, ngx_array_t *rows)
{
    ngx_str_t                 *ids;
    ngx_uint_t                 i, k, n;
    ngx_http_agent_run_row_t  *row;

    row = rows->elts;

    ids = ngx_pcalloc(pool, (rows->nelts + 1) * sizeof(ngx_str_t));
    if (ids == NULL) {
        return;
    }

    n = 0;

    for (i = 0; i < rows->nelts; i++) {
        ngx_http_agent_a2a_linked(pool, &row[i], &ids[n]);

        if (ids[n].len == 0) {
            ids[n] = row[i].run_id;
        }

        for (k = 0; k < n; k++) {
            if (ids[k].len == ids[n].len
                && ngx_strncmp(ids[k].data, ids[n].data, ids[n].len) == 0)
            {
                break;
            }
        }

        if (k == n) {
            row[n++] = row[i];
        }
    }

    rows->nelts = n;
}


static ngx_int_t
ngx_http_agent_a2a_newer(const void *one, const void *two)
{
    ngx_int_t                        rc;
    const ngx_http_agent_run_row_t  *a, *b;

    a = one;
    b = two;

    rc = ngx_memn2cmp(b->created_at.data, a->created_at.data,
                      b->created_at.len, a->created_at.len);

    return rc;
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
