
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"


/*
 * "node NAME sql query=CHANNEL result=CHANNEL error=CHANNEL ok=CHANNEL
 * [failed=CHANNEL] [event=NAME]": the SQL a model wrote into a channel
 * (seed 002's code step, in SQL), run through the read-only layer of
 * execute_sql_query.  failed= gets {"code", "error"} of each attempt that
 * failed (an append channel: seed 002's failed_attempts); event= sends
 * each attempt as it ends, {"query", "ok", "result", "error"}.
 */


#define NGX_HTTP_AGENT_SQL_PARAMS  5


typedef struct {
    ngx_str_t                  names[NGX_HTTP_AGENT_SQL_PARAMS];
    ngx_int_t                  channels[NGX_HTTP_AGENT_SQL_PARAMS];
    ngx_str_t                  event;
} ngx_http_agent_node_sql_conf_t;


typedef struct {
    ngx_http_agent_tool_call_t       call;
    ngx_http_agent_node_sql_conf_t  *conf;
    ngx_str_t                        query;
} ngx_http_agent_node_sql_ctx_t;


enum {
    NGX_HTTP_AGENT_SQL_QUERY = 0,
    NGX_HTTP_AGENT_SQL_RESULT,
    NGX_HTTP_AGENT_SQL_ERROR,
    NGX_HTTP_AGENT_SQL_OK,
    NGX_HTTP_AGENT_SQL_FAILED
};


static const char  *ngx_http_agent_node_sql_params[] = {
    "query", "result", "error", "ok", "failed"
};


static void *ngx_http_agent_node_sql_create(ngx_conf_t *cf);
static ngx_int_t ngx_http_agent_node_sql_check(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);
static ngx_int_t ngx_http_agent_node_sql_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);
static void ngx_http_agent_node_sql_done(ngx_http_agent_tool_call_t *call);
static ngx_int_t ngx_http_agent_node_sql_result(
    ngx_http_agent_tool_call_t *call);
static ngx_int_t ngx_http_agent_node_sql_attempt(
    ngx_http_agent_node_sql_ctx_t *ctx, ngx_str_t *error, ngx_str_t *result,
    ngx_int_t channel);
static void ngx_http_agent_node_sql_cancel(ngx_http_agent_run_t *run);


/* in the order of ngx_http_agent_node_sql_params */
static ngx_http_agent_param_t  ngx_http_agent_node_sql_params_table[] = {
    { ngx_string("query"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_sql_conf_t, names[0]), NULL },
    { ngx_string("result"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_sql_conf_t, names[1]), NULL },
    { ngx_string("error"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_sql_conf_t, names[2]), NULL },
    { ngx_string("ok"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_sql_conf_t, names[3]), NULL },
    { ngx_string("failed"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_sql_conf_t, names[4]), NULL },
    { ngx_string("event"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_sql_conf_t, event),
      &ngx_http_agent_stream_event_post },
    ngx_http_agent_null_param
};


ngx_http_agent_kind_t  ngx_http_agent_sql_kind = {
    ngx_string("sql"),
    ngx_http_agent_node_sql_create,
    ngx_http_agent_node_sql_params_table,
    ngx_http_agent_node_sql_check,
    ngx_http_agent_node_sql_run,
    0,
    NULL,
    0
};


static void *
ngx_http_agent_node_sql_create(ngx_conf_t *cf)
{
    ngx_uint_t                       i;
    ngx_http_agent_node_sql_conf_t  *sc;

    sc = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_node_sql_conf_t));
    if (sc == NULL) {
        return NULL;
    }

    for (i = 0; i < NGX_HTTP_AGENT_SQL_PARAMS; i++) {
        sc->channels[i] = -1;
    }

    return sc;
}

static ngx_int_t
ngx_http_agent_node_sql_check(ngx_conf_t *cf, ngx_http_agent_graph_t *graph,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_sql_conf_t *sc = node->conf;

    ngx_uint_t  i;

    if (sc->names[NGX_HTTP_AGENT_SQL_QUERY].len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the sql node \"%V\" needs "
                           "query=CHANNEL", &node->name);
        return NGX_ERROR;
    }

    for (i = 0; i < NGX_HTTP_AGENT_SQL_PARAMS; i++) {
        if (sc->names[i].len
            && ngx_http_agent_graph_conf_channel(cf, graph, node,
                                         ngx_http_agent_node_sql_params[i],
                                         &sc->names[i], &sc->channels[i], 0)
               != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_node_sql_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_sql_conf_t *sc = node->conf;

    yajl_val                        v;
    ngx_int_t                       rc;
    ngx_str_t                       json, query, name;
    ngx_http_agent_json_t          *j;
    ngx_http_agent_tool_call_t     *call;
    ngx_http_agent_node_sql_ctx_t  *ctx;

    if (ngx_http_agent_graph_value(run, sc->channels[NGX_HTTP_AGENT_SQL_QUERY],
                                   &json)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    v = ngx_http_agent_json_parse(run->pool, json.data, json.len, NULL);

    if (v && YAJL_IS_STRING(v)) {
        query.data = (u_char *) YAJL_GET_STRING(v);
        query.len = ngx_strlen(query.data);

    } else if (v && YAJL_IS_OBJECT(v)
               && ngx_http_agent_json_get_str(v, "query", &query) == NGX_OK)
    {
        /* {"query": ...}, as a model asked for JSON may write it */

    } else {
        ngx_str_null(&query);
    }

    /* a fenced code block is unwrapped, the blanks around it dropped */
    (void) ngx_http_agent_ask_fenced(&query);

    while (query.len && isspace(query.data[0])) {
        query.data++;
        query.len--;
    }

    while (query.len && isspace(query.data[query.len - 1])) {
        query.len--;
    }

    ctx = ngx_pcalloc(run->pool, sizeof(ngx_http_agent_node_sql_ctx_t));
    if (ctx == NULL) {
        return NGX_ERROR;
    }

    ctx->conf = sc;
    ctx->query = query;
    call = &ctx->call;

    j = ngx_http_agent_json_create_obj(run->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_key(j, "query");
    ngx_http_agent_json_str(j, &query);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &call->arguments) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_str_set(&name, "execute_sql_query");

    call->run = run;
    call->owner = ctx;
    call->name = name;
    call->tool = ngx_http_agent_tools_find(NULL, &name);
    call->done = ngx_http_agent_node_sql_done;

    run->node_data = call;

    rc = call->tool->run(call);

    if (rc == NGX_AGAIN) {
        run->cancel = ngx_http_agent_node_sql_cancel;
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_graph_fail(run, "tool_error", "the SQL of the "
                                         "step \"%V\" could not be run",
                                         &node->name);
    }

    return ngx_http_agent_node_sql_result(call);
}


static void
ngx_http_agent_node_sql_done(ngx_http_agent_tool_call_t *call)
{
    call->run->cancel = NULL;

    ngx_http_agent_graph_node_done(call->run,
                                   ngx_http_agent_node_sql_result(call));
}


static ngx_int_t
ngx_http_agent_node_sql_result(ngx_http_agent_tool_call_t *call)
{
    ngx_http_agent_node_sql_ctx_t *ctx = call->owner;

    yajl_val                         v, err;
    ngx_int_t                        ok, *ch;
    ngx_str_t                        text, json, yes, no, null;
    ngx_http_agent_run_t            *run;
    ngx_http_agent_node_sql_conf_t  *sc;

    run = call->run;
    sc = ctx->conf;
    ch = sc->channels;

    ngx_str_set(&yes, "true");
    ngx_str_set(&no, "false");
    ngx_str_set(&null, "null");

    v = ngx_http_agent_json_parse(run->pool, call->result.data,
                                  call->result.len, NULL);
    if (v == NULL) {
        return NGX_ERROR;
    }

    err = ngx_http_agent_json_get(v, "error");
    ok = (err == NULL);

    if (ok) {
        ngx_str_null(&text);
        json = null;

    } else {
        if (YAJL_IS_STRING(err)) {
            text.data = (u_char *) YAJL_GET_STRING(err);
            text.len = ngx_strlen(text.data);

        } else {
            ngx_str_set(&text, "the query failed");
        }

        if (ngx_http_agent_json_quote(run->pool, &text, &json) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    if ((ch[NGX_HTTP_AGENT_SQL_OK] >= 0
         && ngx_http_agent_graph_write_value(run->update,
                                             ch[NGX_HTTP_AGENT_SQL_OK],
                                             ok ? &yes : &no)
            != NGX_OK)
        || (ch[NGX_HTTP_AGENT_SQL_ERROR] >= 0
            && ngx_http_agent_graph_write_value(run->update,
                                                ch[NGX_HTTP_AGENT_SQL_ERROR],
                                                &json)
               != NGX_OK)
        || (ok && ch[NGX_HTTP_AGENT_SQL_RESULT] >= 0
            && ngx_http_agent_graph_write_value(run->update,
                                                ch[NGX_HTTP_AGENT_SQL_RESULT],
                                                &call->result)
               != NGX_OK))
    {
        return NGX_ERROR;
    }

    if (!ok && ch[NGX_HTTP_AGENT_SQL_FAILED] >= 0
        && ngx_http_agent_node_sql_attempt(ctx, &text, NULL,
                                           ch[NGX_HTTP_AGENT_SQL_FAILED])
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (sc->event.len
        && ngx_http_agent_node_sql_attempt(ctx, ok ? NULL : &text,
                                           ok ? &call->result : NULL, -1)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * An attempt, as the failed= channel keeps it ({"code", "error"}) or as
 * the event= sends it ({"query", "ok", "result", "error"}); channel -1:
 * the event.  Written by our generator: the SQL is the model's text.
 */

static ngx_int_t
ngx_http_agent_node_sql_attempt(ngx_http_agent_node_sql_ctx_t *ctx,
    ngx_str_t *error, ngx_str_t *result, ngx_int_t channel)
{
    ngx_str_t                json;
    ngx_http_agent_run_t    *run;
    ngx_http_agent_json_t   *j;
    ngx_http_agent_event_t   ev;

    run = ctx->call.run;

    j = ngx_http_agent_json_create_obj(run->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_cstr(j, channel >= 0 ? "code" : "query");
    ngx_http_agent_json_str(j, &ctx->query);

    if (channel < 0) {
        ngx_http_agent_json_key(j, "ok");
        ngx_http_agent_json_bool(j, error == NULL);
        ngx_http_agent_json_key(j, "result");

        ngx_http_agent_json_raw(j, result);
    }

    ngx_http_agent_json_key(j, "error");

    if (error) {
        ngx_http_agent_json_str(j, error);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    if (channel >= 0) {
        return ngx_http_agent_graph_write_value(run->update, channel, &json);
    }

    ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));
    ev.type = NGX_HTTP_AGENT_EV_CUSTOM;
    ev.name = &ctx->conf->event;
    ev.json = &json;

    if (ngx_http_agent_env_emit(run, &ev) != NGX_OK) {
        return ngx_http_agent_graph_fail(run, "client_gone", "the client "
                                         "went away");
    }

    return NGX_OK;
}


static void
ngx_http_agent_node_sql_cancel(ngx_http_agent_run_t *run)
{
    ngx_http_agent_tool_call_t *call = run->node_data;

    if (call && call->cancel) {
        call->cancel(call);
        call->cancel = NULL;
    }
}
