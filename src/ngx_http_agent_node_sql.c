
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_env.h"
#include "ngx_http_agent_json.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_ask.h"
#include "ngx_http_agent_template.h"


/*
 * "node NAME sql query=CHANNEL result=CHANNEL error=CHANNEL ok=CHANNEL":
 * the SQL a model wrote into a channel (seed 002's code step, in SQL), run
 * through the read-only layer of execute_sql_query.
 */


typedef struct {
    ngx_str_t                  names[4];
    ngx_int_t                  channels[4];
} ngx_http_agent_node_sql_conf_t;


enum {
    NGX_HTTP_AGENT_SQL_QUERY = 0,
    NGX_HTTP_AGENT_SQL_RESULT,
    NGX_HTTP_AGENT_SQL_ERROR,
    NGX_HTTP_AGENT_SQL_OK
};


static const char  *ngx_http_agent_node_sql_params[] = {
    "query", "result", "error", "ok"
};


static void *ngx_http_agent_node_sql_create(ngx_conf_t *cf);
static ngx_int_t ngx_http_agent_node_sql_param(ngx_conf_t *cf, void *conf,
    ngx_str_t *key, ngx_str_t *value);
static ngx_int_t ngx_http_agent_node_sql_check(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);
static ngx_int_t ngx_http_agent_node_sql_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);
static void ngx_http_agent_node_sql_done(ngx_http_agent_tool_call_t *call);
static ngx_int_t ngx_http_agent_node_sql_result(
    ngx_http_agent_tool_call_t *call);
static void ngx_http_agent_node_sql_cancel(ngx_http_agent_run_t *run);


ngx_http_agent_kind_t  ngx_http_agent_sql_kind = {
    ngx_string("sql"),
    ngx_http_agent_node_sql_create,
    ngx_http_agent_node_sql_param,
    ngx_http_agent_node_sql_check,
    ngx_http_agent_node_sql_run,
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

    for (i = 0; i < 4; i++) {
        sc->channels[i] = -1;
    }

    return sc;
}


static ngx_int_t
ngx_http_agent_node_sql_param(ngx_conf_t *cf, void *conf, ngx_str_t *key,
    ngx_str_t *value)
{
    ngx_http_agent_node_sql_conf_t *sc = conf;

    ngx_uint_t  i;

    for (i = 0; i < 4; i++) {
        if (key->len == ngx_strlen(ngx_http_agent_node_sql_params[i])
            && ngx_strncmp(key->data, ngx_http_agent_node_sql_params[i],
                           key->len) == 0)
        {
            sc->names[i] = *value;
            return NGX_OK;
        }
    }

    return NGX_DECLINED;
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

    for (i = 0; i < 4; i++) {
        if (sc->names[i].len
            && ngx_http_agent_channel_conf(cf, graph, node,
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

    yajl_val                     v;
    ngx_int_t                    rc;
    ngx_str_t                    json, query, name;
    ngx_http_agent_json_t       *j;
    ngx_http_agent_tool_call_t  *call;

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

    /* a fenced code block is unwrapped */
    (void) ngx_http_agent_ask_fenced(&query);

    call = ngx_pcalloc(run->pool, sizeof(ngx_http_agent_tool_call_t));
    if (call == NULL) {
        return NGX_ERROR;
    }

    j = ngx_http_agent_json_create(run->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "query");
    ngx_http_agent_json_str(j, &query);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &call->arguments) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_str_set(&name, "execute_sql_query");

    call->run = run;
    call->owner = sc;
    call->name = name;
    call->tool = ngx_http_agent_tool_find(&name);
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
    ngx_http_agent_node_sql_conf_t *sc = call->owner;

    yajl_val               v, err;
    ngx_int_t              ok;
    ngx_str_t              text, json, yes, no, null;
    ngx_http_agent_run_t  *run;

    run = call->run;

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

    if (sc->channels[NGX_HTTP_AGENT_SQL_OK] >= 0
        && ngx_http_agent_graph_write_value(run->update,
                                        sc->channels[NGX_HTTP_AGENT_SQL_OK],
                                        ok ? &yes : &no)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (ok) {
        if ((sc->channels[NGX_HTTP_AGENT_SQL_RESULT] >= 0
             && ngx_http_agent_graph_write_value(run->update,
                                    sc->channels[NGX_HTTP_AGENT_SQL_RESULT],
                                    &call->result)
                != NGX_OK)
            || (sc->channels[NGX_HTTP_AGENT_SQL_ERROR] >= 0
                && ngx_http_agent_graph_write_value(run->update,
                                    sc->channels[NGX_HTTP_AGENT_SQL_ERROR],
                                    &null)
                   != NGX_OK))
        {
            return NGX_ERROR;
        }

        return NGX_OK;
    }

    if (sc->channels[NGX_HTTP_AGENT_SQL_ERROR] < 0) {
        return NGX_OK;
    }

    if (YAJL_IS_STRING(err)) {
        text.data = (u_char *) YAJL_GET_STRING(err);
        text.len = ngx_strlen(text.data);

    } else {
        ngx_str_set(&text, "the query failed");
    }

    if (ngx_http_agent_json_quote(run->pool, &text, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_agent_graph_write_value(run->update,
                                        sc->channels[NGX_HTTP_AGENT_SQL_ERROR],
                                        &json);
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
