
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_agui_int.h"
#include "ngx_http_agent_agui.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store.h"


/*
 * agent_agui: the AG-UI protocol's endpoint (docs/protocols.md).  POST
 * {location} runs the location's graph, POST {location}{graph} another
 * it allows (agent_assistants); the body is a RunAgentInput, the answer
 * the "agui" stream format.  threadId is the session: a new one is made
 * for the request's owner, also when another owner has one of that id
 * (ids are per owner); a thread made by any other protocol of the same
 * store goes on here.
 * runId is the turn's run id.  Errors before the stream are our JSON
 * errors with their HTTP status (AG-UI's client throws on them); after
 * RUN_STARTED, RUN_ERROR.
 */


ngx_int_t
ngx_http_agent_agui_route(ngx_http_request_t *r, ngx_http_agent_ctx_t *ctx)
{
    ngx_http_agent_reply_path(r, &ctx->id);

    if (ngx_http_agent_turn_graph(r, &ctx->id) == NULL) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "no graph \"%V\" is served here",
                                          &ctx->id);
    }

    if (r->method != NGX_HTTP_POST) {
        return ngx_http_agent_reply_not_allowed(r, NGX_HTTP_POST);
    }

    return NGX_OK;
}


/* a pass of POST {location}: made again from the start on a store's answer */

ngx_int_t
ngx_http_agent_agui_run(ngx_http_request_t *r, ngx_http_agent_ctx_t *ctx,
    ngx_str_t *body)
{
    yajl_val                      v;
    ngx_int_t                     rc;
    ngx_str_t                     why, none, meta;
    ngx_http_agent_turn_t        *turn;
    ngx_http_agent_model_t       *m;
    ngx_http_agent_graph_t       *graph;
    ngx_http_agent_turn_in_t     *tin;
    ngx_http_agent_session_t      s;
    ngx_http_agent_agui_input_t   in;

    graph = ngx_http_agent_turn_graph(r, &ctx->id);

    rc = ngx_http_agent_reply_parse(r, body, &v, 0);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_str_null(&why);

    rc = ngx_http_agent_agui_input(r->pool, v, graph, &in, &why);

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_error(r, 422, "%V", &why);
    }

    if (rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /*
     * the thread: the owner's, or made for it; another owner's id names
     * the owner's own (ngx_http_agent_reply_session_scope)
     */

    rc = ngx_http_agent_reply_session_scope(r, &in.thread_id);

    if (rc == NGX_OK) {
        rc = ngx_http_agent_store_session_get(ngx_http_agent_reply_sc(r),
                                              &in.thread_id, &s);
    }

    if (rc == NGX_DECLINED) {
        ngx_str_set(&none, "");
        ngx_str_null(&meta);

        rc = ngx_http_agent_store_session_create(ngx_http_agent_reply_sc(r),
                                                 &in.thread_id, &none, &meta,
                                                 ctx->owner, &s);

        /* a first run of the same new thread made it since: as it is */
        if (rc == NGX_ERROR) {
            rc = ngx_http_agent_reply_session_get(r, &in.thread_id, &s);
        }

    } else if (rc == NGX_OK) {
        rc = ngx_http_agent_reply_session_get(r, &in.thread_id, &s);
    }

    if (rc != NGX_OK) {
        return rc == NGX_ERROR ? NGX_HTTP_INTERNAL_SERVER_ERROR : rc;
    }

    ngx_str_null(&none);

    rc = ngx_http_agent_turn_model(r, &s, &none, &m);
    if (rc != NGX_OK) {
        return rc;
    }

    turn = ngx_http_agent_turn_create(r, &s, m);
    if (turn == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    tin = ngx_http_agent_turn_in(turn);

    tin->graph = graph;
    tin->format = &ngx_http_agent_agui_format;
    tin->run_id = in.run_id;
    tin->values = in.values;
    tin->resume = in.resume;
    tin->resume_at = in.resume_at;

    /* a new message, or an interrupt cancelled, goes over a wait */
    tin->over = 1;

    if (in.msg) {
        tin->msgs = in.msg;
        tin->nmsgs = 1;
        tin->text = in.msg->content;
    }

    return ngx_http_agent_turn_begin(turn, &s);
}
