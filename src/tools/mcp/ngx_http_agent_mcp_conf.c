
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_mcp_int.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"


/*
 * agent_mcp, read at configuration: a server, its parameters, and the
 * tools the graphs' steps bind of it (a worker keeps only those).
 */


#define NGX_HTTP_AGENT_MCP_TOOLS     128


static ngx_http_agent_param_bounds_t  ngx_http_agent_mcp_positive = {
    1, NGX_MAX_INT_T_VALUE
};

static ngx_http_agent_param_bounds_t  ngx_http_agent_mcp_max_size = {
    1024, NGX_MAX_INT_T_VALUE
};


static ngx_http_agent_param_t  ngx_http_agent_mcp_params[] = {
    { ngx_string("url"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_mcp_t, url), NULL },
    { ngx_string("key_env"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_mcp_t, key_env), NULL },
    { ngx_string("tools"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_mcp_t, filter), NULL },
    { ngx_string("timeout"), ngx_http_agent_params_set_msec,
      offsetof(ngx_http_agent_mcp_t, timeout),
      &ngx_http_agent_mcp_positive },
    { ngx_string("ttl"), ngx_http_agent_params_set_msec,
      offsetof(ngx_http_agent_mcp_t, ttl), &ngx_http_agent_mcp_positive },
    { ngx_string("max_size"), ngx_http_agent_params_set_size,
      offsetof(ngx_http_agent_mcp_t, max), &ngx_http_agent_mcp_max_size },
    { ngx_string("max_tools"), ngx_http_agent_params_set_num,
      offsetof(ngx_http_agent_mcp_t, max_tools),
      &ngx_http_agent_mcp_positive },
    { ngx_string("headers"), ngx_http_agent_params_set_headers,
      offsetof(ngx_http_agent_mcp_t, headers), ":" },
    ngx_http_agent_null_param
};


char *
ngx_http_agent_mcp_directive(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_main_conf_t *amcf = conf;

    u_char                 *p;
    ngx_str_t              *value;
    ngx_http_agent_mcp_t   *mcp, **slot;
    ngx_http_agent_tool_t  *tool;

    value = cf->args->elts;

    if (amcf->mcps == NULL) {
        amcf->mcps = ngx_array_create(cf->pool, 2,
                                      sizeof(ngx_http_agent_mcp_t *));
        if (amcf->mcps == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    for (p = value[1].data; p < value[1].data + value[1].len; p++) {
        if (!(isalnum(*p) || *p == '_' || *p == '-')) {
            return "needs a NAME of letters, digits, \"_\" and \"-\"";
        }
    }

    if (value[1].len == 0 || ngx_http_agent_mcp_find(amcf->mcps, &value[1]))
    {
        return "needs a NAME that no other agent_mcp has";
    }

    if (!ngx_http_agent_id_valid(&value[1])) {
        return "needs a NAME of A-Z a-z 0-9 _ -: it may prefix tool names";
    }

    /* each its own: nodes and tools keep pointers to it */

    slot = ngx_array_push(amcf->mcps);
    mcp = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_mcp_t));
    if (slot == NULL || mcp == NULL) {
        return NGX_CONF_ERROR;
    }

    *slot = mcp;
    mcp->name = value[1];
    mcp->timeout = 30000;
    mcp->ttl = 300000;
    mcp->max = 1024 * 1024;
    mcp->max_tools = NGX_HTTP_AGENT_MCP_TOOLS;

    mcp->headers = ngx_array_create(cf->pool, 2, sizeof(ngx_str_t));
    if (mcp->headers == NULL) {
        return NGX_CONF_ERROR;
    }

    if (ngx_http_agent_params_parse(cf, ngx_http_agent_mcp_params, &value[2],
                                    cf->args->nelts - 2, mcp, "agent_mcp",
                                    &value[1])
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    /* calls point here, not into a list that a refresh replaces */

    tool = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_tool_t));
    if (tool == NULL) {
        return NGX_CONF_ERROR;
    }

    tool->name = mcp->name;
    tool->run = ngx_http_agent_mcp_tool_run;
    tool->idempotent_of = ngx_http_agent_mcp_tool_idempotent;
    tool->data = mcp;
    tool->peer = 1;
    mcp->tool = tool;

    if (mcp->url.len < 8
        || (ngx_strncmp(mcp->url.data, "http://", 7) != 0
            && ngx_strncmp(mcp->url.data, "https://", 8) != 0))
    {
        return "needs url=http://... or https://..., the server's endpoint";
    }

    return NGX_CONF_OK;
}


/*
 * A step binds SERVER.tool (or SERVER.*, tool empty): the worker keeps
 * only the tools some step binds, so a long list costs no model call
 */

ngx_int_t
ngx_http_agent_mcp_keep(ngx_conf_t *cf, ngx_http_agent_mcp_t *mcp,
    ngx_str_t *tool)
{
    ngx_str_t  *name;

    if (tool->len == 0) {
        mcp->keep_all = 1;
        return NGX_OK;
    }

    if (mcp->keep == NULL) {
        mcp->keep = ngx_array_create(cf->pool, 4, sizeof(ngx_str_t));
        if (mcp->keep == NULL) {
            return NGX_ERROR;
        }
    }

    name = ngx_array_push(mcp->keep);
    if (name == NULL) {
        return NGX_ERROR;
    }

    *name = *tool;

    return NGX_OK;
}


ngx_http_agent_mcp_t *
ngx_http_agent_mcp_find(ngx_array_t *mcps, ngx_str_t *name)
{
    ngx_uint_t              i;
    ngx_http_agent_mcp_t  **mcp;

    if (mcps == NULL) {
        return NULL;
    }

    mcp = mcps->elts;

    for (i = 0; i < mcps->nelts; i++) {
        if (mcp[i]->name.len == name->len
            && ngx_strncmp(mcp[i]->name.data, name->data, name->len) == 0)
        {
            return mcp[i];
        }
    }

    return NULL;
}
