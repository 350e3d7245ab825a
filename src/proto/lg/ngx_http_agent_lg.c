
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_util.h"


/* what every file of the LangGraph API uses: the request's time, a run */


/*
 * The request's time, the same in each of its passes: a row written in
 * one pass is answered in a later one (PostgreSQL's), with the time it
 * was written
 */

ngx_int_t
ngx_http_agent_lg_now(ngx_http_request_t *r, ngx_str_t *now)
{
    ngx_http_agent_ctx_t     *ctx;
    ngx_http_agent_lg_req_t  *req;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    req = ctx->api;

    if (req->made_at.len == 0) {
        req->made_at.data = ngx_pnalloc(r->pool, 32);
        if (req->made_at.data == NULL) {
            return NGX_ERROR;
        }

        req->made_at.len = ngx_http_agent_store_now(req->made_at.data)
                           - req->made_at.data;
    }

    *now = req->made_at;

    return NGX_OK;
}


/* an id made for the request, the same in each of its passes */

ngx_int_t
ngx_http_agent_lg_made(ngx_http_request_t *r, ngx_str_t *id)
{
    ngx_http_agent_ctx_t     *ctx;
    ngx_http_agent_lg_req_t  *req;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    req = ctx->api;

    if (req->made.len == 0) {
        if (ngx_http_agent_id_make(r->pool, &req->made) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    *id = req->made;

    return NGX_OK;
}


/* a run's record as LangGraph shows it */

void
ngx_http_agent_lg_run_json(ngx_http_agent_json_t *j,
    ngx_http_agent_run_row_t *row)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_lg_run_fields(j, row);
    ngx_http_agent_json_end(j);
}


/* a run's fields, in an object the caller opened (a webhook adds more) */

void
ngx_http_agent_lg_run_fields(ngx_http_agent_json_t *j,
    ngx_http_agent_run_row_t *row)
{
    ngx_http_agent_json_key(j, "run_id");
    ngx_http_agent_json_str(j, &row->run_id);
    ngx_http_agent_json_key(j, "thread_id");
    ngx_http_agent_json_bytes(j, row->thread_id.data,
                              ngx_http_agent_store_id_shown(&row->thread_id));
    ngx_http_agent_json_key(j, "assistant_id");
    ngx_http_agent_json_str(j, &row->assistant_id);
    ngx_http_agent_json_key(j, "created_at");
    ngx_http_agent_json_str(j, &row->created_at);
    ngx_http_agent_json_key(j, "updated_at");
    ngx_http_agent_json_str(j, &row->updated_at);
    ngx_http_agent_json_key(j, "status");
    ngx_http_agent_json_str(j, &row->status);
    ngx_http_agent_json_key(j, "metadata");

    ngx_http_agent_json_raw_obj(j, &row->metadata);

    ngx_http_agent_json_key(j, "kwargs");

    ngx_http_agent_json_raw_obj(j, &row->kwargs);

    ngx_http_agent_json_key(j, "multitask_strategy");
    ngx_http_agent_json_str(j, &row->multitask_strategy);
}
