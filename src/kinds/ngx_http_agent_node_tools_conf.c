
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_env.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_template.h"
#include "ngx_http_agent_node_tools.h"


/* the parameters of a tools node, read and checked at configuration */


static ngx_int_t ngx_http_agent_node_tools_args_conf(ngx_conf_t *cf,
    ngx_http_agent_node_tools_conf_t *tc, ngx_str_t *value);
static ngx_int_t ngx_http_agent_node_tools_offered(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);


void *
ngx_http_agent_node_tools_create(ngx_conf_t *cf)
{
    ngx_http_agent_node_tools_conf_t  *tc;

    tc = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_node_tools_conf_t));
    if (tc == NULL) {
        return NULL;
    }

    return tc;
}


ngx_int_t
ngx_http_agent_node_tools_param(ngx_conf_t *cf, void *conf, ngx_str_t *key,
    ngx_str_t *value)
{
    ngx_http_agent_node_tools_conf_t *tc = conf;

    u_char                errstr[NGX_MAX_CONF_ERRSTR];
    ngx_int_t             n;
    ngx_regex_t         **re;
    ngx_regex_compile_t   rc;

    if (key->len == 5 && ngx_strncmp(key->data, "tools", 5) == 0) {
        tc->tools = *value;
        return NGX_OK;
    }

    if (key->len == 7 && ngx_strncmp(key->data, "timeout", 7) == 0) {
        tc->timeout = ngx_parse_time(value, 0);

        if (tc->timeout == (ngx_msec_t) NGX_ERROR || tc->timeout == 0) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "timeout=%V: a time "
                               "such as 500ms or 5s", value);
            return NGX_ERROR;
        }

        return NGX_OK;
    }

    if (key->len == 7 && ngx_strncmp(key->data, "retries", 7) == 0) {
        n = ngx_atoi(value->data, value->len);

        if (n == NGX_ERROR || n > 5) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "retries=%V: a number "
                               "from 0 to 5", value);
            return NGX_ERROR;
        }

        tc->retries = n;
        return NGX_OK;
    }

    if (key->len == 4 && ngx_strncmp(key->data, "call", 4) == 0) {
        tc->call = *value;
        return NGX_OK;
    }

    if (key->len == 5 && ngx_strncmp(key->data, "query", 5) == 0) {
        tc->query_name = *value;
        return NGX_OK;
    }

    if (key->len == 6 && ngx_strncmp(key->data, "output", 6) == 0) {
        tc->output_name = *value;
        return NGX_OK;
    }

    if (key->len == 7 && ngx_strncmp(key->data, "approve", 7) == 0) {
        if (value->len == 3 && ngx_strncmp(value->data, "off", 3) == 0) {
            ngx_str_null(&tc->approve);

        } else {
            tc->approve = *value;
        }

        return NGX_OK;
    }

    if (key->len == 4 && ngx_strncmp(key->data, "args", 4) == 0) {
        return ngx_http_agent_node_tools_args_conf(cf, tc, value);
    }

    if (key->len == 6 && ngx_strncmp(key->data, "redact", 6) == 0) {
        if (tc->redact == NULL) {
            tc->redact = ngx_array_create(cf->pool, 2, sizeof(ngx_regex_t *));
            if (tc->redact == NULL) {
                return NGX_ERROR;
            }
        }

        ngx_memzero(&rc, sizeof(ngx_regex_compile_t));
        rc.pattern = *value;
        rc.pool = cf->pool;
        rc.err.len = NGX_MAX_CONF_ERRSTR;
        rc.err.data = errstr;

        if (ngx_regex_compile(&rc) != NGX_OK) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "redact=%V: %V", value,
                               &rc.err);
            return NGX_ERROR;
        }

        re = ngx_array_push(tc->redact);
        if (re == NULL) {
            return NGX_ERROR;
        }

        *re = rc.regex;
        return NGX_OK;
    }

    return NGX_DECLINED;
}


ngx_int_t
ngx_http_agent_node_tools_check(ngx_conf_t *cf, ngx_http_agent_graph_t *graph,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_tools_conf_t *tc = node->conf;

    ngx_uint_t                   i;
    ngx_http_agent_tool_arg_t   *a;
    ngx_http_agent_env_conf_t    ec;

    ngx_http_agent_env_conf(cf, &ec);

    for (i = 0; tc->args && i < tc->args->nelts; i++) {
        a = (ngx_http_agent_tool_arg_t *) tc->args->elts + i;

        if (ngx_http_agent_channel_conf(cf, graph, node, "args",
                                        &a->channel_name, &a->channel, 0)
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    /* tools=: of those offered, only these run ("all": every one) */
    if (!(tc->tools.len == 3 && ngx_strncmp(tc->tools.data, "all", 3) == 0)
        && ngx_http_agent_toolset_add(cf, &tc->own, ec.tools, ec.mcps,
                                   &tc->tools)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (tc->call.len == 0) {
        return ngx_http_agent_node_tools_offered(cf, graph, node);
    }

    if (tc->query_name.len == 0) {
        ngx_str_set(&tc->query_name, "input");
    }

    if (ngx_strlchr(tc->call.data, tc->call.data + tc->call.len, ',')) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "call=%V of the node \"%V\" "
                           "names more than one tool", &tc->call,
                           &node->name);
        return NGX_ERROR;
    }

    if (ngx_http_agent_toolset_add(cf, &tc->offered, ec.tools, ec.mcps,
                                   &tc->call)
        != NGX_OK
        || ngx_http_agent_tools_prompts(cf, &tc->call, ec.prompts_dir,
                                        ec.tool_prompts)
           != NGX_OK
        || ngx_http_agent_channel_conf(cf, graph, node, "query",
                                       &tc->query_name, &tc->query, 0)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (tc->output_name.len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "call=%V of the node \"%V\" "
                           "needs output=CHANNEL: a call no model made has "
                           "no place among the messages", &tc->call,
                           &node->name);
        return NGX_ERROR;
    }

    return ngx_http_agent_channel_conf(cf, graph, node, "output",
                                       &tc->output_name, &tc->output, 0);
}


/*
 * What the model was offered: the tools= of the nodes that offer tools
 * (llm nodes) before this one, found back along the edges through nodes
 * that offer none (a router, a guard).  A call of any other name is
 * answered "not a tool of this step", whatever the model or a client that
 * wrote the messages asks
 */

static ngx_int_t
ngx_http_agent_node_tools_offered(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_tools_conf_t *tc = node->conf;

    u_char                      *seen;
    ngx_int_t                   *queue;
    ngx_str_t                   *list;
    ngx_uint_t                   i, k, head, tail, n;
    ngx_http_agent_edge_t       *edge;
    ngx_http_agent_node_t       *nodes;
    ngx_http_agent_env_conf_t    ec;

    ngx_http_agent_env_conf(cf, &ec);

    n = graph->nodes.nelts;
    nodes = graph->nodes.elts;

    seen = ngx_pcalloc(cf->temp_pool, n);
    queue = ngx_palloc(cf->temp_pool, n * sizeof(ngx_int_t));
    if (seen == NULL || queue == NULL) {
        return NGX_ERROR;
    }

    head = 0;
    tail = 0;
    queue[tail++] = node->index;
    seen[node->index] = 1;

    while (head < tail) {
        for (i = 0; i < n; i++) {
            edge = nodes[i].edges.elts;

            for (k = 0; k < nodes[i].edges.nelts; k++) {
                if (edge[k].to != queue[head]) {
                    continue;
                }

                if (nodes[i].kind->offers) {
                    list = nodes[i].kind->offers(nodes[i].conf);

                    if (ngx_http_agent_toolset_add(cf, &tc->offered,
                                                   ec.tools, ec.mcps,
                                                   list)
                        != NGX_OK)
                    {
                        return NGX_ERROR;
                    }

                } else if (!seen[i]) {
                    seen[i] = 1;
                    queue[tail++] = i;
                }

                break;
            }
        }

        head++;
    }

    if (ngx_http_agent_toolset_empty(&tc->offered)) {
        ngx_conf_log_error(NGX_LOG_WARN, cf, 0, "the tools node \"%V\" "
                           "follows no node that offers tools: it runs none",
                           &node->name);
    }

    return NGX_OK;
}


/* args=TOOL.ARG:CHANNEL,... */

static ngx_int_t
ngx_http_agent_node_tools_args_conf(ngx_conf_t *cf,
    ngx_http_agent_node_tools_conf_t *tc, ngx_str_t *value)
{
    u_char                     *p, *q, *dot, *colon, *last;
    ngx_http_agent_tool_arg_t  *a;

    if (tc->args == NULL) {
        tc->args = ngx_array_create(cf->pool, 2,
                                    sizeof(ngx_http_agent_tool_arg_t));
        if (tc->args == NULL) {
            return NGX_ERROR;
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
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "args=%V: TOOL.ARG:"
                               "CHANNEL, ...", value);
            return NGX_ERROR;
        }

        a = ngx_array_push(tc->args);
        if (a == NULL) {
            return NGX_ERROR;
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

    return NGX_OK;
}
