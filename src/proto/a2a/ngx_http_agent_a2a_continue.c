
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_a2a_int.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_util.h"


/*
 * An input-required task goes on (A2A §3.4.3, §3.3.2).  The task is the
 * run that waits; the message that answers it, naming its taskId, is a
 * new run of the same thread whose row's metadata names the task
 * ({"a2a_task": ID}): its events, its answer and GetTask show the task's
 * id, and the newest such run is where the task stands.  A waiting task
 * cancelled gets such a row of its own, "interrupted" with no outcome:
 * cancelled, so that a later message to it is refused (§3.1.1).  The
 * rows are the runs table's: no schema of A2A's own, on every store.
 */


/* how far back a task's continuations are looked for in its thread */
#define NGX_HTTP_AGENT_A2A_RUNS_BACK  64


static ngx_uint_t ngx_http_agent_a2a_same(ngx_str_t *a, ngx_str_t *b);


/*
 * The task's latest run, read whole into out: NGX_DECLINED, no such
 * task; out->row.run_id is that run's (the task's own, or the newest that
 * continues it)
 */

ngx_int_t
ngx_http_agent_a2a_latest(ngx_http_request_t *r, ngx_str_t *task,
    ngx_http_agent_turn_outcome_t *out)
{
    ngx_int_t                       rc;
    ngx_str_t                       of;
    ngx_uint_t                      i;
    ngx_array_t                     rows;
    ngx_http_agent_run_row_t       *row;
    ngx_http_agent_store_call_t    *sc;
    ngx_http_agent_turn_outcome_t  *next;

    sc = ngx_http_agent_reply_sc(r);

    rc = ngx_http_agent_turn_record_read(sc, task, out);
    if (rc != NGX_OK) {
        return rc;
    }

    /* only a task that waited was ever continued */

    if (ngx_http_agent_turn_record_state(out) != NGX_HTTP_AGENT_RUN_WAITS) {
        return NGX_OK;
    }

    if (ngx_array_init(&rows, r->pool, 8, sizeof(ngx_http_agent_run_row_t))
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    rc = ngx_http_agent_store_run_list(sc, &out->row.thread_id, NULL,
                                       NGX_HTTP_AGENT_A2A_RUNS_BACK, 0,
                                       &rows);
    if (rc != NGX_OK) {
        return rc;
    }

    /* the newest first: none past the task itself continues it */

    row = rows.elts;

    for (i = 0; i < rows.nelts; i++) {
        if (ngx_http_agent_a2a_same(&row[i].run_id, task)) {
            return NGX_OK;
        }

        ngx_http_agent_a2a_linked(r->pool, &row[i], &of);

        if (ngx_http_agent_a2a_same(&of, task)) {
            break;
        }
    }

    if (i == rows.nelts) {
        return NGX_OK;
    }

    next = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_turn_outcome_t));
    if (next == NULL) {
        return NGX_ERROR;
    }

    rc = ngx_http_agent_turn_record_read(sc, &row[i].run_id, next);
    if (rc != NGX_OK) {
        return (rc == NGX_DECLINED) ? NGX_ERROR : rc;
    }

    *out = *next;

    return NGX_OK;
}


/* a continuation's run metadata: {"a2a_task": ID} */

ngx_int_t
ngx_http_agent_a2a_link(ngx_pool_t *pool, ngx_str_t *task,
    ngx_str_t *metadata)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create_obj(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_key(j, "a2a_task");
    ngx_http_agent_json_str(j, task);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, metadata);
}


/* the task a run continues, or empty: the run is a task of its own */

void
ngx_http_agent_a2a_linked(ngx_pool_t *pool, ngx_http_agent_run_row_t *row,
    ngx_str_t *task)
{
    yajl_val   meta;
    ngx_str_t  err;

    ngx_str_null(task);

    /* cheap first: most runs are no continuation */

    if (row->metadata.len == 0
        || ngx_strnstr(row->metadata.data, "\"a2a_task\"",
                       row->metadata.len) == NULL)
    {
        return;
    }

    meta = ngx_http_agent_json_parse(pool, row->metadata.data,
                                     row->metadata.len, &err);

    if (meta == NULL
        || ngx_http_agent_json_get_str(meta, "a2a_task", task) != NGX_OK)
    {
        ngx_str_null(task);
    }
}


/*
 * CancelTask of a task that waits (§3.3.2: only a terminal task is not
 * cancelable): a row that continues it, cancelled; out becomes that row
 */

ngx_int_t
ngx_http_agent_a2a_close(ngx_http_request_t *r,
    ngx_http_agent_turn_outcome_t *out, ngx_str_t *task)
{
    u_char                      *p;
    ngx_int_t                    rc;
    ngx_http_agent_run_row_t     row;
    ngx_http_agent_loc_conf_t   *alcf;
    ngx_http_agent_reply_rpc_t  *rpc;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    rpc = ngx_http_agent_reply_rpc(r);
    if (rpc == NULL) {
        return NGX_ERROR;
    }

    /* the same row on each pass: PostgreSQL's answer is kept by its id */

    if (rpc->run_id.len == 0) {
        p = ngx_pnalloc(r->pool, 36 + 32);
        if (p == NULL) {
            return NGX_ERROR;
        }

        ngx_http_agent_id_uuid(p);
        rpc->run_id.data = p;
        rpc->run_id.len = 36;
    }

    ngx_memzero(&row, sizeof(ngx_http_agent_run_row_t));

    row.run_id = rpc->run_id;

    p = rpc->run_id.data + 36;
    row.created_at.data = p;
    row.created_at.len = ngx_http_agent_store_now(p) - p;

    row.thread_id = out->row.thread_id;
    row.assistant_id = out->row.assistant_id;
    row.origin = alcf->location;
    ngx_str_set(&row.status, "interrupted");

    if (ngx_http_agent_a2a_link(r->pool, task, &row.metadata) != NGX_OK) {
        return NGX_ERROR;
    }

    rc = ngx_http_agent_store_run_insert(ngx_http_agent_reply_sc(r), &row, 0);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_memzero(out, sizeof(ngx_http_agent_turn_outcome_t));
    out->row = row;

    return NGX_OK;
}


static ngx_uint_t
ngx_http_agent_a2a_same(ngx_str_t *a, ngx_str_t *b)
{
    return a->len == b->len && ngx_strncmp(a->data, b->data, a->len) == 0;
}
