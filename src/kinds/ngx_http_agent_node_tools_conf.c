
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_kinds_int.h"
#include "ngx_http_agent_engine.h"


/* the parameters of a tools node, read and checked at configuration */


static char *ngx_http_agent_node_tools_args_conf(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
static ngx_int_t ngx_http_agent_node_tools_offered(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);


static ngx_http_agent_param_bounds_t  ngx_http_agent_node_tools_timeout = {
    1, NGX_MAX_INT_T_VALUE
};

static ngx_http_agent_param_bounds_t  ngx_http_agent_node_tools_retries = {
    0, 5
};

/*
 * on_unknown=: a call cut by a take-over and not run again is told to
 * the model, or asked of a human (docs/runs.md, "Exactly once")
 */

static ngx_conf_enum_t  ngx_http_agent_node_tools_unknown[] = {
    { ngx_string("result"), 0 },
    { ngx_string("interrupt"), 1 },
    { ngx_null_string, 0 }
};


ngx_http_agent_param_t  ngx_http_agent_node_tools_params[] = {
    { ngx_string("tools"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_tools_conf_t, tools), NULL },
    { ngx_string("timeout"), ngx_http_agent_params_set_msec,
      offsetof(ngx_http_agent_node_tools_conf_t, timeout),
      &ngx_http_agent_node_tools_timeout },
    { ngx_string("retries"), ngx_http_agent_params_set_num,
      offsetof(ngx_http_agent_node_tools_conf_t, retries),
      &ngx_http_agent_node_tools_retries },
    { ngx_string("call"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_tools_conf_t, call), NULL },
    { ngx_string("query"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_tools_conf_t, query_name), NULL },
    { ngx_string("output"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_tools_conf_t, output_name), NULL },
    { ngx_string("approve"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_tools_conf_t, approve), NULL },
    { ngx_string("args"), ngx_http_agent_node_tools_args_conf, 0, NULL },
    { ngx_string("redact"), ngx_http_agent_params_set_regex,
      offsetof(ngx_http_agent_node_tools_conf_t, redact), NULL },
    { ngx_string("on_unknown"), ngx_http_agent_params_set_enum,
      offsetof(ngx_http_agent_node_tools_conf_t, on_unknown),
      ngx_http_agent_node_tools_unknown },
    ngx_http_agent_null_param
};


ngx_int_t
ngx_http_agent_node_tools_check(ngx_conf_t *cf, ngx_http_agent_graph_t *graph,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_tools_conf_t *tc = node->conf;

    ngx_uint_t                  i;
    ngx_http_agent_tool_arg_t  *a;

    /* approve=off: none; approve=on or approve=A,B */
    if (tc->approve.len == 3 && ngx_strncmp(tc->approve.data, "off", 3) == 0)
    {
        ngx_str_null(&tc->approve);
    }

    for (i = 0; tc->args && i < tc->args->nelts; i++) {
        a = (ngx_http_agent_tool_arg_t *) tc->args->elts + i;

        if (ngx_http_agent_graph_conf_channel(cf, graph, node, "args",
                                              &a->channel_name, &a->channel, 0)
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    /* tools=: of those offered, only these run ("all": every one) */
    if (!(tc->tools.len == 3 && ngx_strncmp(tc->tools.data, "all", 3) == 0)
        && ngx_http_agent_toolset_bind(cf, &tc->own, &tc->tools, 0)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (tc->call.len == 0) {
        return ngx_http_agent_node_tools_offered(cf, graph, node);
    }

    if (ngx_strlchr(tc->call.data, tc->call.data + tc->call.len, ',')
        || tc->output_name.len == 0)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "call=%V of the node \"%V\" "
                           "%s", &tc->call, &node->name,
                           tc->output_name.len ? "names more than one tool"
                           : "needs output=CHANNEL: a call no model made "
                             "has no place among the messages");
        return NGX_ERROR;
    }

    if (tc->query_name.len == 0) {
        ngx_str_set(&tc->query_name, "input");
    }

    if (ngx_http_agent_toolset_bind(cf, &tc->offered, &tc->call, 1)
        != NGX_OK
        || ngx_http_agent_graph_conf_channel(cf, graph, node, "query",
                                             &tc->query_name, &tc->query, 0)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_graph_conf_channel(cf, graph, node, "output",
                                             &tc->output_name, &tc->output, 0);
}


/*
 * What the model was offered: the tools= of the nodes that offer tools
 * before this one (ngx_http_agent_graph_conf_offers).  A call of any other
 * name is answered "not a tool of this step", whatever the model or a
 * client that wrote the messages asks
 */

static ngx_int_t
ngx_http_agent_node_tools_offered(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_tools_conf_t *tc = node->conf;

    ngx_str_t    **list;
    ngx_uint_t     i;
    ngx_array_t    lists;

    if (ngx_array_init(&lists, cf->temp_pool, 4, sizeof(ngx_str_t *))
        != NGX_OK
        || ngx_http_agent_graph_conf_offers(cf, graph, node, &lists) != NGX_OK)
    {
        return NGX_ERROR;
    }

    list = lists.elts;

    for (i = 0; i < lists.nelts; i++) {
        if (ngx_http_agent_toolset_bind(cf, &tc->offered, list[i], 0)
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    if (ngx_http_agent_toolset_empty(&tc->offered)) {
        ngx_conf_log_error(NGX_LOG_WARN, cf, 0, "the tools node \"%V\" "
                           "follows no node that offers tools: it runs none",
                           &node->name);
    }

    return NGX_OK;
}


/* args=TOOL.ARG:CHANNEL,... */

static char *
ngx_http_agent_node_tools_args_conf(ngx_conf_t *cf,
    ngx_http_agent_param_t *param, ngx_str_t *value, void *conf)
{
    ngx_http_agent_node_tools_conf_t *tc = conf;

    u_char                     *p, *q, *dot, *colon, *last;
    ngx_http_agent_tool_arg_t  *a;

    if (tc->args == NULL) {
        tc->args = ngx_array_create(cf->pool, 2,
                                    sizeof(ngx_http_agent_tool_arg_t));
        if (tc->args == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    p = value->data;
    last = value->data + value->len;

    while (p < last) {
        q = ngx_strlchr(p, last, ',');
        if (q == NULL) {
            q = last;
        }

        dot = ngx_strlchr(p, q, '.');
        colon = dot ? ngx_strlchr(dot, q, ':') : NULL;

        if (dot == NULL || colon == NULL || dot == p || colon == dot + 1
            || colon + 1 == q)
        {
            return "TOOL.ARG:CHANNEL, ...";
        }

        a = ngx_array_push(tc->args);
        if (a == NULL) {
            return NGX_CONF_ERROR;
        }

        a->tool.data = p;
        a->tool.len = dot - p;
        a->arg.data = dot + 1;
        a->arg.len = colon - dot - 1;
        a->channel_name.data = colon + 1;
        a->channel_name.len = q - colon - 1;
        a->channel = -1;

        p = q + 1;
    }

    return NGX_CONF_OK;
}
