
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
 * ListTasks over the turn's records: a context's tasks, or without one
 * the caller's (A2A 1.0: the context is an optional filter), newest
 * first, a page at a time; a task continued after input-required is one
 * task, at its latest run (a2a_continue.c).
 */


#define NGX_HTTP_AGENT_A2A_PAGE      50
#define NGX_HTTP_AGENT_A2A_PAGE_MAX  100
#define NGX_HTTP_AGENT_A2A_LIST_MAX  1000

/* ListTasks without a context: the caller's threads most recently used */
#define NGX_HTTP_AGENT_A2A_THREADS   100


static ngx_int_t ngx_http_agent_a2a_rows(ngx_http_request_t *r,
    ngx_str_t *context, ngx_str_t *status, ngx_array_t *rows);
static void ngx_http_agent_a2a_unique(ngx_pool_t *pool, ngx_array_t *rows);
static ngx_int_t ngx_http_agent_a2a_newer(const void *one, const void *two);
static ngx_int_t ngx_http_agent_a2a_after(yajl_val v, ngx_str_t *after);


/* ListTasks: a context's tasks, newest first, a page at a time */

ngx_int_t
ngx_http_agent_a2a_list(ngx_http_request_t *r, ngx_http_agent_jsonrpc_t *rpc)
{
    u_char                         *p;
    ngx_int_t                       rc, size, offset, end;
    ngx_str_t                       context, token, state, *status, text;
    ngx_str_t                       after;
    ngx_uint_t                      i, k, n, want, arts, shown;
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
    o.rest = ngx_http_agent_a2a_rest_is(r);
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

    /* the page's tasks: their history at most N, artifacts when asked */

    arts = 0;
    v = rpc->params ? ngx_http_agent_json_get(rpc->params, "includeArtifacts")
                    : NULL;

    if (ngx_http_agent_a2a_history_of(rpc->params, &o.hist) != NGX_OK
        || (v && !YAJL_IS_NULL(v) && !YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
        || ngx_http_agent_a2a_after(rpc->params, &after) != NGX_OK)
    {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                        "Invalid params: \"historyLength\" "
                                        "is a number of 0 or more, "
                                        "\"includeArtifacts\" a boolean, "
                                        "\"statusTimestampAfter\" an ISO "
                                        "8601 time in UTC");
    }

    arts = (v && YAJL_IS_TRUE(v));

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

    if (after.len) {
        /* updated at or after it: the store's times compared to the second */

        for (i = 0, k = 0; i < rows.nelts; i++) {
            if (row[i].updated_at.len >= after.len
                && ngx_strncmp(row[i].updated_at.data, after.data, after.len)
                   >= 0)
            {
                row[k++] = row[i];
            }
        }

        rows.nelts = k;
    }

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

    shown = 0;

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
                                arts && st == NGX_HTTP_AGENT_A2A_COMPLETED);
        shown++;
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
    /* the size of this page: the tasks it holds (the TCK reads it so) */
    ngx_http_agent_json_key(j, "pageSize");
    ngx_http_agent_json_int(j, shown);
    ngx_http_agent_json_key(j, "totalSize");
    ngx_http_agent_json_int(j, rows.nelts);
    ngx_http_agent_json_end(j);
    ngx_http_agent_a2a_tail(j, &o);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
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


/* the history a Task shows: historyLength where given, none else */

ngx_int_t
ngx_http_agent_a2a_history_of(yajl_val v, ngx_http_agent_a2a_hist_t *h)
{
    yajl_val  n;

    n = v ? ngx_http_agent_json_get(v, "historyLength") : NULL;

    if (n == NULL || YAJL_IS_NULL(n)) {
        return NGX_OK;
    }

    if (!YAJL_IS_INTEGER(n) || YAJL_GET_INTEGER(n) < 0) {
        return NGX_ERROR;
    }

    h->history = 1;
    h->history_max = (ngx_uint_t) ngx_min(YAJL_GET_INTEGER(n), 1000);

    return NGX_OK;
}


/*
 * statusTimestampAfter: an ISO 8601 time in UTC ("2023-10-27T10:00:00Z",
 * fractions allowed), kept as its first 19 characters, which compare as
 * the store's times do; none: empty
 */

static ngx_int_t
ngx_http_agent_a2a_after(yajl_val v, ngx_str_t *after)
{
    size_t                i;
    ngx_str_t             t;
    static const u_char  *shape = (u_char *) "dddd-dd-ddTdd:dd:dd";

    ngx_str_null(after);

    if (v == NULL || ngx_http_agent_json_get(v, "statusTimestampAfter") == NULL
        || YAJL_IS_NULL(ngx_http_agent_json_get(v, "statusTimestampAfter")))
    {
        return NGX_OK;
    }

    if (ngx_http_agent_json_get_str(v, "statusTimestampAfter", &t) != NGX_OK
        || t.len < 20 || t.len > 40 || t.data[t.len - 1] != 'Z')
    {
        return NGX_ERROR;
    }

    for (i = 0; i < 19; i++) {
        if (shape[i] == 'd' ? !isdigit(t.data[i]) : t.data[i] != shape[i]) {
            return NGX_ERROR;
        }
    }

    for (i = 19; i < t.len - 1; i++) {
        if (!(isdigit(t.data[i]) || (i == 19 && t.data[i] == '.'))) {
            return NGX_ERROR;
        }
    }

    after->data = t.data;
    after->len = 19;

    return NGX_OK;
}


/*
 * The task's state from its record (a run that ended at an interrupt
 * waits for input; one stopped, or left by its client, was canceled) and
 * its text: the answer, the error, or what it asks
 */

ngx_http_agent_a2a_state_e
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
