
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine_int.h"
#include "ngx_http_agent_util.h"


/*
 * A graph's channel statement (graph_conf.c reads the block):
 *
 *     channel NAME REDUCER [default=JSON] [scope=turn] [type=T] [enum=A,B]
 *             [config=on];
 *
 * type= and enum= are what its JSON Schema says; config=on lets a run's
 * config.configurable write it, as a runtime context does.
 */


static char *ngx_http_agent_graph_default(ngx_conf_t *cf, void *post,
    void *data);


static ngx_str_t  ngx_http_agent_reducers[] = {
    ngx_string("messages"),
    ngx_string("append"),
    ngx_string("sum"),
    ngx_string("value"),
    ngx_string("merge"),
    ngx_null_string
};


static ngx_conf_enum_t  ngx_http_agent_graph_scopes[] = {
    { ngx_string("session"), 0 },
    { ngx_string("turn"), 1 },
    { ngx_null_string, 0 }
};


/* type=: what a channel's JSON Schema says (NGX_HTTP_AGENT_TYPE_NAMES) */
static ngx_conf_enum_t  ngx_http_agent_graph_type_names[] = {
    { ngx_string("string"), 1 },
    { ngx_string("number"), 2 },
    { ngx_string("integer"), 3 },
    { ngx_string("boolean"), 4 },
    { ngx_string("object"), 5 },
    { ngx_string("array"), 6 },
    { ngx_null_string, 0 }
};


static ngx_conf_post_t  ngx_http_agent_graph_default_post = {
    ngx_http_agent_graph_default
};


static ngx_http_agent_param_t  ngx_http_agent_graph_channel_params[] = {
    { ngx_string("scope"), ngx_http_agent_params_set_enum,
      offsetof(ngx_http_agent_channel_t, turn), ngx_http_agent_graph_scopes },
    { ngx_string("default"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_channel_t, dflt),
      &ngx_http_agent_graph_default_post },
    { ngx_string("type"), ngx_http_agent_params_set_enum,
      offsetof(ngx_http_agent_channel_t, type),
      ngx_http_agent_graph_type_names },
    { ngx_string("enum"), ngx_http_agent_params_set_list,
      offsetof(ngx_http_agent_channel_t, choices), NULL },
    { ngx_string("config"), ngx_http_agent_params_set_flag,
      offsetof(ngx_http_agent_channel_t, config), NULL },
    ngx_http_agent_null_param
};


char *
ngx_http_agent_graph_channel_conf(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph)
{
    yajl_val                   v;
    ngx_str_t                 *value, err;
    ngx_uint_t                 i;
    ngx_http_agent_channel_t  *ch;

    value = cf->args->elts;

    if (cf->args->nelts < 3 || cf->args->nelts > 8) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "channel: use "
                           "\"channel NAME REDUCER [default=JSON] "
                           "[scope=turn] [type=T] [enum=A,B] "
                           "[config=on];\"");
        return NGX_CONF_ERROR;
    }

    if (ngx_http_agent_graph_channel(graph, &value[1]) != NGX_ERROR) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "channel \"%V\" is declared "
                           "twice (messages, input and session_id are "
                           "built in)", &value[1]);
        return NGX_CONF_ERROR;
    }

    if (ngx_http_agent_params_name(&value[1]) != NGX_OK) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "channel name \"%V\": "
                           "letters, digits and _ only", &value[1]);
        return NGX_CONF_ERROR;
    }

    /* "__run__", "__interrupt__": the state's own keys */

    if (value[1].len > 1 && value[1].data[0] == '_' && value[1].data[1] == '_')
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "channel name \"%V\": "
                           "names that start with \"__\" are the state's "
                           "own", &value[1]);
        return NGX_CONF_ERROR;
    }

    ch = ngx_array_push(&graph->channels);
    if (ch == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_memzero(ch, sizeof(ngx_http_agent_channel_t));
    ch->name = value[1];

    for (i = 0; ngx_http_agent_reducers[i].len; i++) {
        if (ngx_http_agent_reducers[i].len == value[2].len
            && ngx_strncmp(ngx_http_agent_reducers[i].data, value[2].data,
                           value[2].len) == 0)
        {
            break;
        }
    }

    if (ngx_http_agent_reducers[i].len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "unknown reducer \"%V\" of "
                           "channel \"%V\": use messages, append, sum, value "
                           "or merge", &value[2], &value[1]);
        return NGX_CONF_ERROR;
    }

    ch->reducer = i;

    if (ngx_http_agent_params_parse(cf, ngx_http_agent_graph_channel_params,
                                    &value[3], cf->args->nelts - 3, ch,
                                    "channel", &value[1])
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (ch->config == 1 && ch->reducer == NGX_HTTP_AGENT_REDUCE_MESSAGES) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "channel \"%V\": messages "
                           "are not configurable", &value[1]);
        return NGX_CONF_ERROR;
    }

    if (ch->dflt.len == 0) {
        return NGX_CONF_OK;
    }

    ngx_str_set(&err, "");

    v = ngx_http_agent_json_parse(cf->temp_pool, ch->dflt.data, ch->dflt.len,
                                  &err);

    if (v == NULL || (ch->reducer == NGX_HTTP_AGENT_REDUCE_SUM
                      && !YAJL_IS_NUMBER(v))
        || ch->reducer == NGX_HTTP_AGENT_REDUCE_MESSAGES)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the default of channel "
                           "\"%V\" is not valid JSON for its reducer %V",
                           &value[1], &err);
        return NGX_CONF_ERROR;
    }

    /* kept as our generator writes it: compact */
    if (ngx_http_agent_json_encode(cf->pool, v, &ch->dflt) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_agent_graph_default(ngx_conf_t *cf, void *post, void *data)
{
    ngx_str_t  *dflt = data;

    return dflt->len ? NGX_CONF_OK : "a JSON value";
}
