
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_util.h"


/*
 * Our own API's turns: POST /{id}/message and /{id}/resume parsed, the
 * session's model chosen; the turn (turn.c) runs them.
 */


static ngx_int_t ngx_http_agent_turn_check(ngx_http_agent_turn_t *turn);


/* a turn: POST /{session_id}/message */

ngx_int_t
ngx_http_agent_turn_start(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body, ngx_uint_t resume)
{
    yajl_val                     v, images, answer;
    ngx_int_t                    rc;
    ngx_str_t                    text, name, resumed;
    ngx_http_agent_msg_t          *msg;
    ngx_http_agent_ctx_t          *ctx;
    ngx_http_agent_turn_t         *turn;
    ngx_http_agent_session_t       s;
    ngx_http_agent_run_row_t      *row;
    ngx_http_agent_turn_record_t  *rec;

    rc = ngx_http_agent_reply_parse(r, body, &v, 0);
    if (rc != NGX_OK) {
        return rc;
    }

    /* a turn taken over from a worker that died (turn_redrive.c), or NULL */
    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    row = ctx->redrive;

    msg = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_msg_t));
    if (msg == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_str_set(&msg->role, "user");
    ngx_str_null(&resumed);
    ngx_str_set(&text, "");

    if (resume) {

        /* POST /{id}/resume: the human's answer to an interrupt, any JSON */

        answer = ngx_http_agent_json_get(v, "resume");

        if (answer == NULL
            || ngx_http_agent_json_encode(r->pool, answer, &resumed)
               != NGX_OK)
        {
            return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                              "\"resume\" is missing: the "
                                              "answer to the interrupt, any "
                                              "JSON value");
        }

    } else if (row == NULL
               && (ngx_http_agent_json_get_str(v, "message", &text)
                   != NGX_OK
                   || text.len == 0))
    {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "\"message\" must be a non-empty "
                                          "string");
    }

    msg->content = text;

    images = resume ? NULL : ngx_http_agent_json_get(v, "images");

    if (images && !YAJL_IS_NULL(images)) {
        rc = ngx_http_agent_images(r, images, &msg->images);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    rc = ngx_http_agent_json_get_str(v, "model", &name);
    if (rc == NGX_ERROR) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "\"model\" must be a string");
    }

    if (rc == NGX_DECLINED) {
        ngx_str_null(&name);
    }

    /* the session is read with the lease: see ngx_http_agent_turn_check() */

    ngx_memzero(&s, sizeof(ngx_http_agent_session_t));
    s.id = *id;

    turn = ngx_http_agent_turn_create(r, &s, NULL);
    if (turn == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* our API answers in one JSON object if asked (Accept) */
    turn->in.json = ngx_http_agent_turn_json_wanted(r);
    turn->in.resume = resumed;
    turn->in.text = text;
    turn->check = ngx_http_agent_turn_check;
    turn->model_name = name;

    /*
     * its run kept in the runs table, so that a worker that dies does not
     * lose it: no poll (no other worker cancels our API's turns)
     */

    rec = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_turn_record_t));
    if (rec == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rec->quiet = 1;
    turn->in.record = rec;

    if (row && row->run_id.len == 36) {
        /* taken over: no input, on from the last checkpoint, no client */
        ngx_http_agent_turn_id(turn, row->run_id.data);
        rec->claimed = 1;
        rec->row.writes = row->writes;
        ngx_str_set(&turn->in.resume, "null");
        turn->in.answers = 1;
        turn->in.json = 1;

    } else if (!resume) {
        turn->in.msgs = msg;
        turn->in.nmsgs = 1;
    }

    return ngx_http_agent_turn_begin(turn, &s);
}


/*
 * A kept run of A2A, Open Responses or MCP taken over from a worker that
 * died (turn_redrive.c).  Its protocol's client is gone with the worker:
 * the run goes on from its last checkpoint under the same run id, with
 * no input and no client, its graph the one it ran (the row's assistant:
 * these protocols name graphs only), its end kept as its protocol reads
 * it (GetTask, GET /v1/responses/{id}), its answer in its thread; hooks:
 * what of its protocol's end still holds without a client (A2A's push
 * notification), or NULL.
 */

ngx_int_t
ngx_http_agent_turn_takeover(ngx_http_request_t *r,
    ngx_http_agent_run_row_t *row, ngx_http_agent_turn_hooks_t *hooks)
{
    ngx_http_agent_graph_t        *graph;
    ngx_http_agent_turn_t         *turn;
    ngx_http_agent_session_t       s;
    ngx_http_agent_loc_conf_t     *alcf;
    ngx_http_agent_turn_record_t  *rec;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    graph = ngx_http_agent_turn_graph(r, &row->assistant_id);

    if (graph == NULL && alcf->graph
        && alcf->graph->name.len == row->assistant_id.len
        && ngx_strncmp(alcf->graph->name.data, row->assistant_id.data,
                       row->assistant_id.len)
           == 0)
    {
        graph = alcf->graph;
    }

    if (graph == NULL || row->run_id.len != 36) {
        return NGX_DECLINED;
    }

    ngx_memzero(&s, sizeof(ngx_http_agent_session_t));
    s.id = row->thread_id;

    turn = ngx_http_agent_turn_create(r, &s, NULL);
    rec = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_turn_record_t));

    if (turn == NULL || rec == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* its row is the lost worker's; its outcome kept as the first one */
    rec->claimed = 1;
    rec->keep = 1;
    rec->row.kwargs = row->kwargs;
    rec->row.secret = row->secret;
    rec->row.metadata = row->metadata;
    rec->row.writes = row->writes;

    ngx_http_agent_turn_id(turn, row->run_id.data);

    turn->check = ngx_http_agent_turn_check;
    turn->in.graph = graph;
    turn->in.hooks = hooks;
    turn->in.record = rec;
    ngx_str_set(&turn->in.resume, "null");
    turn->in.answers = 1;
    turn->in.json = 1;

    return ngx_http_agent_turn_begin(turn, &s);
}


/* the session read, the lease taken: its size, then its model */

static ngx_int_t
ngx_http_agent_turn_check(ngx_http_agent_turn_t *turn)
{
    ngx_int_t                  rc;
    ngx_http_request_t        *r;
    ngx_http_agent_model_t    *model;
    ngx_http_agent_session_t  *s;

    r = turn->request;
    s = &turn->session;

    /* the history's bound, with the session read under the lease */

    rc = ngx_http_agent_turn_history(turn, s);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_turn_model(r, s, &turn->model_name, &model);
    if (rc != NGX_OK) {
        return rc;
    }

    turn->env.model = model;
    turn->env.answered_by = model->name;

    return NGX_OK;
}


/* the model of a turn: asked for, the session's, or the default */

ngx_int_t
ngx_http_agent_turn_model(ngx_http_request_t *r,
    ngx_http_agent_session_t *s, ngx_str_t *name,
    ngx_http_agent_model_t **mp)
{
    ngx_str_t                    key;
    ngx_http_agent_model_t      *model;
    ngx_http_agent_loc_conf_t   *alcf;
    ngx_http_agent_main_conf_t  *amcf;

    amcf = ngx_http_get_module_main_conf(r, ngx_http_agent_module);
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    model = NULL;

    if (name->len == 0 && s->model.len) {

        /* the session's model, if this location may use it */
        model = ngx_http_agent_allowed_model(amcf, alcf, &s->model);
    }

    if (model == NULL) {
        model = name->len ? ngx_http_agent_allowed_model(amcf, alcf, name)
                          : ngx_http_agent_allowed_model_default(amcf, alcf);
    }

    if (model == NULL && name->len == 0) {
        /* seed 004: no model chosen, and no default to fall back on */
        return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT,
                                          "no model is chosen for this session "
                                          "and none is configured as the "
                                          "default: choose one with POST "
                                          "/{id}/model {\"name\": ...} or "
                                          "\"model\" in the message");
    }

    if (model == NULL) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "there is no model \"%V\"", name);
    }

    if (ngx_http_agent_llm_key(model, &key) != NGX_OK && name->len == 0
        && s->model.len == 0)
    {
        return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT,
                                          "no model is chosen for this session "
                                          "and the default \"%V\" is not "
                                          "available (%V is not set): choose "
                                          "one with POST /{id}/model "
                                          "{\"name\": ...}", &model->name,
                                          &model->key_env);
    }

    if (ngx_http_agent_llm_key(model, &key) != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_SERVICE_UNAVAILABLE,
                                          "the model \"%V\" has no API key: "
                                          "set %V for nginx and add \"env %V;"
                                          "\" to nginx.conf", &model->name,
                                          &model->key_env, &model->key_env);
    }

    *mp = model;

    return NGX_OK;
}


/*
 * The turn a JSON-RPC call opens (A2A, MCP) on the caller's thread of the
 * id given, or a new one (create: of that id, if it names one): NGX_OK
 * with *turn; NGX_DECLINED, no such thread of the caller's, which each
 * protocol words its own way; else *turn is NULL and rc what to return:
 * NGX_AGAIN while the store reads, or the answer sent.
 */

ngx_int_t
ngx_http_agent_turn_rpc(ngx_http_request_t *r, ngx_str_t *thread,
    ngx_uint_t create, ngx_http_agent_session_t *s,
    ngx_http_agent_turn_t **turn)
{
    ngx_int_t                rc;
    ngx_str_t                none;
    ngx_http_agent_model_t  *m;

    *turn = NULL;

    rc = ngx_http_agent_reply_rpc_thread(r, thread, create, s);

    if (rc == NGX_DECLINED || rc == NGX_AGAIN) {
        return rc;
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                      NGX_HTTP_AGENT_JSONRPC_INTERNAL_ERROR,
                                      "Internal error: the store failed");
    }

    ngx_str_null(&none);

    rc = ngx_http_agent_turn_model(r, s, &none, &m);
    if (rc != NGX_OK) {
        return rc;
    }

    *turn = ngx_http_agent_turn_create(r, s, m);

    return *turn ? NGX_OK : NGX_HTTP_INTERNAL_SERVER_ERROR;
}
