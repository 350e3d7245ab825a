
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store.h"


/*
 * A run asked for: its assistant, its thread (created, or waited for
 * under multitask_strategy), its model, then a turn with the run's hooks
 * (lg_run.c while it runs, lg_run_end.c at its end)
 */


static ngx_int_t ngx_http_agent_lg_run_context(ngx_http_request_t *r,
    ngx_http_agent_graph_t *graph, yajl_val context, ngx_uint_t config,
    ngx_http_agent_turn_in_t *in);
static ngx_int_t ngx_http_agent_lg_run_contexts(ngx_http_request_t *r,
    ngx_http_agent_graph_t *graph, yajl_val v, ngx_http_agent_turn_in_t *in);


static ngx_http_agent_turn_hooks_t  ngx_http_agent_lg_run_hooks = {
    ngx_http_agent_lg_run_ready,
    ngx_http_agent_lg_run_begin,
    ngx_http_agent_lg_run_started,
    ngx_http_agent_lg_run_poll,
    ngx_http_agent_lg_run_done,
    ngx_http_agent_lg_run_answer,
    NULL
};


/*
 * What a run's channels start from under its input: the run's context,
 * its config.configurable's keys that are channels declared config=on,
 * then the same of its assistant (v: the request, or the assistant's doc)
 */

static ngx_int_t
ngx_http_agent_lg_run_contexts(ngx_http_request_t *r,
    ngx_http_agent_graph_t *graph, yajl_val v, ngx_http_agent_turn_in_t *in)
{
    yajl_val   cfg;
    ngx_int_t  rc;

    rc = ngx_http_agent_lg_run_context(r, graph,
                                       ngx_http_agent_json_get(v, "context"),
                                       0, in);
    if (rc != NGX_OK) {
        return rc;
    }

    cfg = ngx_http_agent_json_get(v, "config");
    cfg = cfg ? ngx_http_agent_json_get(cfg, "configurable") : NULL;

    return ngx_http_agent_lg_run_context(r, graph, cfg, 1, in);
}


/*
 * A run's or its assistant's context (LangGraph's runtime context): values
 * of the graph's channels, written under the run's input (the input wins);
 * keys that are no channel of the graph are not the graph's, and messages
 * are the input's alone.  Of a config, the channels declared config=on.
 */

static ngx_int_t
ngx_http_agent_lg_run_context(ngx_http_request_t *r,
    ngx_http_agent_graph_t *graph, yajl_val context, ngx_uint_t config,
    ngx_http_agent_turn_in_t *in)
{
    size_t                     i;
    ngx_str_t                  key, out;
    ngx_int_t                  n;
    ngx_uint_t                 any;
    ngx_http_agent_json_t     *j;
    ngx_http_agent_channel_t  *ch;

    if (context == NULL || !YAJL_IS_OBJECT(context)) {
        return NGX_OK;
    }

    ch = graph->channels.elts;

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    any = 0;

    for (i = 0; i < context->u.object.len; i++) {
        key.data = (u_char *) context->u.object.keys[i];
        key.len = ngx_strlen(key.data);

        n = ngx_http_agent_graph_channel(graph, &key);

        if (n == NGX_ERROR || n == NGX_HTTP_AGENT_CH_MESSAGES
            || (config && ch[n].config != 1)
            || ngx_http_agent_json_get(in->values, (char *) key.data))
        {
            continue;
        }

        ngx_http_agent_json_str(j, &key);
        ngx_http_agent_json_val(j, context->u.object.values[i]);
        any = 1;
    }

    if (!any) {
        return NGX_OK;
    }

    /* then the input's own */

    for (i = 0; in->values && YAJL_IS_OBJECT(in->values)
                && i < in->values->u.object.len; i++)
    {
        ngx_http_agent_json_cstr(j, in->values->u.object.keys[i]);
        ngx_http_agent_json_val(j, in->values->u.object.values[i]);
    }

    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    in->values = ngx_http_agent_json_parse(r->pool, out.data, out.len, NULL);

    return in->values ? NGX_OK : NGX_HTTP_INTERNAL_SERVER_ERROR;
}


/* POST /threads/{id}/runs/stream and /wait, /runs/stream and /wait */

ngx_int_t
ngx_http_agent_lg_run_create(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body)
{
    u_char                          buf[36];
    yajl_val                        v, a, cfg, model, doc;
    ngx_int_t                       rc, n;
    ngx_str_t                       assistant, name, none, key;
    ngx_uint_t                      fresh;
    ngx_http_agent_channel_t       *ch;
    ngx_http_agent_graph_t         *graph;
    ngx_http_agent_turn_t          *turn;
    ngx_http_agent_model_t         *m;
    ngx_http_agent_lg_run_t        *lr;
    ngx_http_agent_turn_in_t       *in;
    ngx_http_agent_ctx_t           *ctx;
    ngx_http_agent_session_t        s;
    ngx_http_agent_assistant_row_t  row;

    /* a run taken over from a worker that died, or NULL */
    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    rc = ngx_http_agent_reply_parse(r, body, &v, 0);
    if (rc != NGX_OK) {
        return rc;
    }

    a = ngx_http_agent_json_get(v, "assistant_id");

    if (a == NULL || !YAJL_IS_STRING(a)) {
        return ngx_http_agent_reply_error(r, 422, "\"assistant_id\" is "
                                          "required: a graph's name or its "
                                          "assistant id");
    }

    assistant.data = (u_char *) YAJL_GET_STRING(a);
    assistant.len = ngx_strlen(assistant.data);

    rc = ngx_http_agent_lg_assistant_find(r, &assistant, &graph, &row);

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "No assistant found for \"%V\"",
                                          &assistant);
    }

    if (rc != NGX_OK) {
        return rc == NGX_AGAIN ? NGX_AGAIN : NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    lr = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_lg_run_t));
    if (lr == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    lr->request = r;
    lr->background = (req->route == NGX_HTTP_AGENT_LG_RUNS
                      || req->route == NGX_HTTP_AGENT_LG_STATELESS_RUNS);
    lr->wait = (req->route == NGX_HTTP_AGENT_LG_RUNS_WAIT
                || req->route == NGX_HTTP_AGENT_LG_STATELESS_WAIT
                || lr->background);
    lr->record.stateless = (req->route == NGX_HTTP_AGENT_LG_STATELESS_STREAM
                     || req->route == NGX_HTTP_AGENT_LG_STATELESS_WAIT
                     || req->route == NGX_HTTP_AGENT_LG_STATELESS_RUNS);
    lr->modes = NGX_HTTP_AGENT_MODE_VALUES;

    /* a thread of its own, deleted after the run unless it is to be kept */

    fresh = lr->record.stateless;

    if (ngx_http_agent_json_get_str(v, "on_completion", &name) == NGX_OK) {
        if (name.len == 4 && ngx_strncmp(name.data, "keep", 4) == 0) {
            lr->record.stateless = 0;

        } else if (!(name.len == 6
                     && ngx_strncmp(name.data, "delete", 6) == 0))
        {
            return ngx_http_agent_reply_error(r, 422, "\"on_completion\" "
                                              "is \"delete\" or \"keep\"");
        }
    }

    /* the thread: the one named, created if asked, or one for this run */

    if (fresh) {
        ngx_str_null(&none);

        rc = ngx_http_agent_lg_thread_create(r, &none, NULL, &s);

    } else {
        rc = ngx_http_agent_store_session_get(ngx_http_agent_reply_sc(r),
                                              &req->thread_id, &s);

        if (rc == NGX_DECLINED
            && ngx_http_agent_json_get_str(v, "if_not_exists", &name)
               == NGX_OK
            && name.len == 6 && ngx_strncmp(name.data, "create", 6) == 0)
        {
            rc = ngx_http_agent_lg_thread_create(r, &req->thread_id, NULL,
                                                 &s);

        } else {
            /* the read above, its owner checked */
            rc = ngx_http_agent_reply_session(r, &req->thread_id, &s, rc);
        }

        if (rc == NGX_OK && ctx->redrive == NULL) {
            /* another run holds the thread: refused, or this one waits */
            rc = ngx_http_agent_lg_run_queue(r, req, body, v);
        }
    }

    if (rc != NGX_OK) {
        return rc;
    }

    /* the model: config.configurable.model, the thread's, or the default */

    ngx_str_null(&name);

    cfg = ngx_http_agent_json_get(v, "config");
    cfg = cfg ? ngx_http_agent_json_get(cfg, "configurable") : NULL;
    model = cfg ? ngx_http_agent_json_get(cfg, "model") : NULL;

    /* an assistant's own configuration under the run's */

    doc = row.doc.len ? ngx_http_agent_json_parse(r->pool, row.doc.data,
                                                  row.doc.len, NULL)
                      : NULL;

    if (model == NULL && doc) {
        cfg = ngx_http_agent_json_get(doc, "config");
        cfg = cfg ? ngx_http_agent_json_get(cfg, "configurable") : NULL;
        model = cfg ? ngx_http_agent_json_get(cfg, "model") : NULL;
    }

    /* a graph's own configurable channel "model" takes the key */

    ngx_str_set(&key, "model");
    n = ngx_http_agent_graph_channel(graph, &key);
    ch = graph->channels.elts;

    if (model && YAJL_IS_STRING(model)
        && (n == NGX_ERROR || ch[n].config != 1))
    {
        name.data = (u_char *) YAJL_GET_STRING(model);
        name.len = ngx_strlen(name.data);
    }

    rc = ngx_http_agent_turn_model(r, &s, &name, &m);
    if (rc != NGX_OK) {
        return rc;
    }

    turn = ngx_http_agent_turn_create(r, &s, m);
    if (turn == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    lr->turn = turn;
    lr->graph = graph;
    ngx_http_agent_turn_info(turn, &lr->info);

    in = ngx_http_agent_turn_in(turn);

    in->graph = graph;
    in->format = &ngx_http_agent_lg_format;
    in->hooks = &ngx_http_agent_lg_run_hooks;
    in->data = lr;
    in->record = &lr->record;
    in->json = lr->wait;
    /* a stream's first event names the run: a join may follow at once */
    in->created = lr->background || !lr->wait;
    in->sink = ngx_http_agent_lg_run_sink;

    if (row.assistant_id.len) {
        /* one a client made: its own id, as the client gave it */
        in->assistant = row.assistant_id;
        in->assistant.len = ngx_http_agent_store_id_shown(&row.assistant_id);

    } else {
        ngx_http_agent_lg_assistant_id(&graph->name, buf);

        in->assistant.data = ngx_pnalloc(r->pool, 36);
        if (in->assistant.data == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        ngx_memcpy(in->assistant.data, buf, 36);
        in->assistant.len = 36;
    }

    if (!lr->record.stateless) {
        rc = ngx_http_agent_lg_thread_names(r, &s, &graph->name,
                                          &in->assistant, &lr->metadata);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    rc = ngx_http_agent_lg_run_parse(r, lr, v, in);
    if (rc != NGX_OK) {
        return rc;
    }

    /* the run's context over its assistant's, the input over both */

    if (!lr->answers) {
        rc = ngx_http_agent_lg_run_contexts(r, graph, v, in);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    if (doc && !lr->answers) {
        rc = ngx_http_agent_lg_run_contexts(r, graph, doc, in);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    /* config.recursion_limit: fewer steps than the location's */

    cfg = ngx_http_agent_json_get(v, "config");
    a = cfg ? ngx_http_agent_json_get(cfg, "recursion_limit") : NULL;

    if (a && !YAJL_IS_NULL(a)) {
        if (!YAJL_IS_INTEGER(a) || YAJL_GET_INTEGER(a) < 1) {
            return ngx_http_agent_reply_error(r, 422, "\"config."
                                              "recursion_limit\" must be a "
                                              "number of steps");
        }

        in->recursion = (ngx_uint_t) ngx_min(YAJL_GET_INTEGER(a), 1000000);
    }

    in->modes = lr->modes;
    in->metadata = lr->record.row.metadata;
    in->waits = lr->waits;
    in->go = lr->go;
    in->answers = lr->answers;
    in->before = 1;
    in->over = 1;

    if (ctx->redrive) {
        ngx_http_agent_lg_redrive_turn(lr, ctx->redrive, in);
    }

    return ngx_http_agent_turn_begin(turn, &s);
}
