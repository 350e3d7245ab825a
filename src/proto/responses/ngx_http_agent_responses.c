
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_responses_int.h"
#include "ngx_http_agent_responses.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store.h"


/*
 * agent_responses: Open Responses inbound (docs/protocols.md).  With the
 * location as an OpenAI client's base URL ("location /v1/"), POST
 * {location}responses runs the graph "model" names on the conversation
 * (a thread: "conversation", the one of previous_response_id, or a new
 * one), answered as one response object or streamed as its semantic
 * events.  Errors are OpenAI's: {"error": {"message", "type", "param",
 * "code"}}.  A response is the turn: its id the run's and the thread's.
 */


static ngx_int_t ngx_http_agent_responses_error(ngx_http_request_t *r,
    ngx_uint_t *status, ngx_str_t *msg, ngx_str_t *out);
static ngx_int_t ngx_http_agent_responses_refuse(ngx_http_request_t *r,
    ngx_uint_t status, const char *param, const char *code,
    const char *fmt, ...);
static ngx_int_t ngx_http_agent_responses_error_body(ngx_pool_t *pool,
    ngx_str_t *msg, const char *type, const char *param, const char *code,
    ngx_str_t *out);
static ngx_int_t ngx_http_agent_responses_kwargs(ngx_pool_t *pool,
    ngx_http_agent_responses_out_t *out,
    ngx_http_agent_responses_input_t *req, ngx_str_t *run_id);
static ngx_int_t ngx_http_agent_responses_resume(ngx_pool_t *pool,
    ngx_array_t *outputs, ngx_str_t *resume);


ngx_int_t
ngx_http_agent_responses_route(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx)
{
    ngx_str_t  rest;

    /* every error OpenAI's, the owner's 401 before the pass too */
    ctx->error = ngx_http_agent_responses_error;

    ngx_http_agent_reply_path(r, &rest);

    if (rest.len > 10 && ngx_strncmp(rest.data, "responses/", 10) == 0) {

        /* a kept response: read, deleted, or cancelled */

        rest.data += 10;
        rest.len -= 10;

        /* {id} or {id}/cancel: responses_stored.c reads which */
        ctx->id = rest;

        if (rest.len > 12
            && ngx_strncmp(rest.data + rest.len - 12, "/input_items", 12)
               == 0)
        {
            return (r->method & (NGX_HTTP_GET|NGX_HTTP_HEAD))
                   ? NGX_OK
                   : ngx_http_agent_reply_not_allowed(r, NGX_HTTP_GET);
        }

        if (rest.len > 7
            && ngx_strncmp(rest.data + rest.len - 7, "/cancel", 7) == 0)
        {
            return (r->method == NGX_HTTP_POST)
                   ? NGX_OK
                   : ngx_http_agent_reply_not_allowed(r, NGX_HTTP_POST);
        }

        return (r->method & (NGX_HTTP_GET|NGX_HTTP_HEAD|NGX_HTTP_DELETE))
               ? NGX_OK
               : ngx_http_agent_reply_not_allowed(r,
                                              NGX_HTTP_GET|NGX_HTTP_DELETE);
    }

    if (!(rest.len == 9 && ngx_strncmp(rest.data, "responses", 9) == 0)) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "no such endpoint: %V", &r->uri);
    }

    if (r->method == NGX_HTTP_POST) {
        return NGX_OK;
    }

    return ngx_http_agent_reply_not_allowed(r, NGX_HTTP_POST);
}


/* a pass of POST {location}responses */

ngx_int_t
ngx_http_agent_responses_run(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx, ngx_str_t *body)
{
    u_char                           *p;
    yajl_val                          v;
    ngx_int_t                         rc;
    ngx_str_t                         why, none;
    ngx_http_agent_msg_t             *msg;
    ngx_http_agent_turn_t            *turn;
    ngx_http_agent_model_t           *m;
    ngx_http_agent_graph_t           *graph;
    ngx_http_agent_turn_in_t         *in;
    ngx_http_agent_session_t          s;
    ngx_http_agent_turn_info_t        info;
    ngx_http_agent_responses_out_t   *out;
    ngx_http_agent_responses_input_t  req;

    /* a new conversation's id, made once across the passes */
    if (ngx_http_agent_reply_rpc(r) == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* the errors OpenAI's, not JSON-RPC's */
    ctx->error = ngx_http_agent_responses_error;

    if (ctx->id.len) {
        return ngx_http_agent_responses_stored(r, &ctx->id);
    }

    rc = ngx_http_agent_reply_parse(r, body, &v, 0);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_str_null(&why);

    rc = ngx_http_agent_responses_input(r->pool, v, &req, &why);

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_responses_refuse(r, NGX_HTTP_BAD_REQUEST,
                                               (char *) req.param.data, NULL,
                                               "%V", &why);
    }

    if (rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    graph = ngx_http_agent_turn_graph(r, &req.model);

    if (graph == NULL) {
        return ngx_http_agent_responses_refuse(r, NGX_HTTP_NOT_FOUND,
                                               "model", "model_not_found",
                                               "The model `%V` does not exist "
                                               "here: a model is a graph this "
                                               "location runs", &req.model);
    }

    rc = ngx_http_agent_reply_rpc_thread(r, &req.thread_id,
                                         req.previous.len == 0, &s);

    if (rc == NGX_DECLINED) {
        return req.previous.len
               ? ngx_http_agent_responses_refuse(r, NGX_HTTP_NOT_FOUND,
                     "previous_response_id", "previous_response_not_found",
                     "Previous response with id '%V' not found.",
                     &req.previous)
               : ngx_http_agent_responses_refuse(r, NGX_HTTP_NOT_FOUND,
                     "conversation", "conversation_not_found",
                     "Conversation with id '%V' not found.", &req.thread_id);
    }

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_str_null(&none);

    rc = ngx_http_agent_turn_model(r, &s, &none, &m);
    if (rc != NGX_OK) {
        return rc;
    }

    turn = ngx_http_agent_turn_create(r, &s, m);
    out = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_responses_out_t));
    msg = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_msg_t));

    if (turn == NULL || out == NULL || msg == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    out->items = ngx_array_create(r->pool, 2, sizeof(ngx_str_t));
    if (out->items == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* the response's id: the run's and the conversation's */

    ngx_http_agent_turn_info(turn, &info);

    p = ngx_pnalloc(r->pool, sizeof("resp__") + info.run_id->len
                             + s.id.len);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    out->id.data = p;
    out->id.len = ngx_sprintf(p, "resp_%V_%V", info.run_id, &s.id) - p;
    out->model = graph->name;
    out->previous = req.previous;
    out->instructions = req.instructions;
    out->created = ngx_time();
    out->background = req.background;

    /* kept, with how it ends: GET, DELETE and cancel read it */

    out->record.keep = 1;
    out->record.events = 1;

    if (ngx_http_agent_responses_kwargs(r->pool, out, &req, info.run_id)
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_str_set(&msg->role, "user");
    msg->content = req.text;

    in = ngx_http_agent_turn_in(turn);

    /* the client's tools offered; their outputs answer the calls */
    in->tools = req.tools;

    if (req.outputs
        && ngx_http_agent_responses_resume(r->pool, req.outputs, &in->resume)
           != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    in->graph = graph;
    in->format = &ngx_http_agent_responses_format;
    in->format_data = out;
    in->hooks = &ngx_http_agent_responses_hooks;
    in->data = out;
    in->record = &out->record;
    in->json = !req.stream;
    in->created = (req.background && !req.stream);
    in->msgs = msg;
    in->nmsgs = 1;
    in->text = req.text;

    /* an input to a conversation that waits answers what it waits for */
    in->reply = 1;

    /* a background response's events are kept: GET ?stream=true */
    if (req.background) {
        out->turn = turn;
        in->sink = ngx_http_agent_responses_sink;
    }

    return ngx_http_agent_turn_begin(turn, &s);
}


/*
 * what a kept response says of its request: when, after which, its
 * instructions, and its input items as read (input_items lists them)
 */

static ngx_int_t
ngx_http_agent_responses_kwargs(ngx_pool_t *pool,
    ngx_http_agent_responses_out_t *out,
    ngx_http_agent_responses_input_t *req, ngx_str_t *run_id)
{
    u_char                 *p, id[64];
    ngx_str_t               s;
    ngx_uint_t              i;
    ngx_keyval_t           *kv;
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create_obj(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_key(j, "created_at");
    ngx_http_agent_json_int(j, out->created);
    ngx_http_agent_json_key(j, "previous_response_id");
    ngx_http_agent_json_str(j, &req->previous);
    ngx_http_agent_json_key(j, "background");
    ngx_http_agent_json_bool(j, req->background);

    if (req->instructions.len) {
        ngx_http_agent_json_key(j, "instructions");
        ngx_http_agent_json_str(j, &req->instructions);
    }

    ngx_http_agent_json_key(j, "input");
    ngx_http_agent_json_arr(j);

    s.data = id;

    if (req->outputs == NULL) {
        s.len = ngx_sprintf(id, "msg_%V", run_id) - id;

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_str(j, &s);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "message");
        ngx_http_agent_json_key(j, "role");
        ngx_http_agent_json_cstr(j, "user");
        ngx_http_agent_json_key(j, "status");
        ngx_http_agent_json_cstr(j, "completed");
        ngx_http_agent_json_key(j, "content");
        ngx_http_agent_json_arr(j);
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "input_text");
        ngx_http_agent_json_key(j, "text");
        ngx_http_agent_json_str(j, &req->text);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_arr_end(j);
        ngx_http_agent_json_end(j);
    }

    kv = req->outputs ? req->outputs->elts : NULL;

    for (i = 0; kv && i < req->outputs->nelts; i++) {
        p = ngx_snprintf(id, sizeof(id), "fco%ui_%V", i, run_id);
        s.len = p - id;

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_str(j, &s);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "function_call_output");
        ngx_http_agent_json_key(j, "call_id");
        ngx_http_agent_json_str(j, &kv[i].key);
        ngx_http_agent_json_key(j, "output");
        ngx_http_agent_json_str(j, &kv[i].value);
        ngx_http_agent_json_key(j, "status");
        ngx_http_agent_json_cstr(j, "completed");
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, &out->record.row.kwargs);
}


/* the answer of the calls the run waits for (node_tools_calls.c) */

static ngx_int_t
ngx_http_agent_responses_resume(ngx_pool_t *pool, ngx_array_t *outputs,
    ngx_str_t *resume)
{
    ngx_uint_t              i;
    ngx_keyval_t           *kv;
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    kv = outputs->elts;

    ngx_http_agent_json_arr(j);

    for (i = 0; i < outputs->nelts; i++) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "call_id");
        ngx_http_agent_json_str(j, &kv[i].key);
        ngx_http_agent_json_key(j, "output");
        ngx_http_agent_json_str(j, &kv[i].value);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);

    return ngx_http_agent_json_done(j, resume);
}


/* an error of ours, or of the turn's, in OpenAI's shape */

static ngx_int_t
ngx_http_agent_responses_error(ngx_http_request_t *r, ngx_uint_t *status,
    ngx_str_t *msg, ngx_str_t *out)
{
    return ngx_http_agent_responses_error_body(r->pool, msg,
                                *status >= NGX_HTTP_INTERNAL_SERVER_ERROR
                                ? "server_error" : "invalid_request_error",
                                NULL, NULL, out);
}


/* a request refused, naming the field and OpenAI's code */

static ngx_int_t
ngx_http_agent_responses_refuse(ngx_http_request_t *r, ngx_uint_t status,
    const char *param, const char *code, const char *fmt, ...)
{
    u_char                 *p, buf[512];
    va_list                 args;
    ngx_str_t               msg, out;
    ngx_http_agent_ctx_t   *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    if (ctx->sent) {
        return status;
    }

    va_start(args, fmt);
    p = ngx_vslprintf(buf, buf + sizeof(buf), fmt, args);
    va_end(args);

    msg.data = buf;
    msg.len = p - buf;

    if (ngx_http_agent_responses_error_body(r->pool, &msg,
                                            "invalid_request_error", param,
                                            code, &out)
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->sent_rc = ngx_http_agent_reply_send(r, status, &out);

    if (!ctx->hold) {
        ctx->sent = 1;
    }

    return status;
}


/* {"error": {"message", "type", "param", "code"}}: OpenAI's error */

static ngx_int_t
ngx_http_agent_responses_error_body(ngx_pool_t *pool, ngx_str_t *msg,
    const char *type, const char *param, const char *code, ngx_str_t *out)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create_obj(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_key(j, "error");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "message");
    ngx_http_agent_json_str(j, msg);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, type);
    ngx_http_agent_json_key(j, "param");

    if (param) {
        ngx_http_agent_json_cstr(j, param);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_key(j, "code");

    if (code) {
        ngx_http_agent_json_cstr(j, code);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, out);
}
