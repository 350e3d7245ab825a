
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_mcp.h"
#include "ngx_http_agent_mcp_tool.h"
#include "ngx_http_agent_tools.h"


/*
 * agent_mcp, read at configuration: a server, its parameters, and the
 * tools the graphs' steps bind of it (a worker keeps only those).
 */


#define NGX_HTTP_AGENT_MCP_TOOLS     128


char *
ngx_http_agent_mcp_directive(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_main_conf_t *amcf = conf;

    u_char                *p, *q, *last;
    ngx_int_t              n;
    ngx_str_t             *value, key, val, *h;
    ngx_uint_t              i;
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

    if (!ngx_http_agent_tool_name_valid(&value[1])) {
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

    for (i = 2; i < cf->args->nelts; i++) {
        p = ngx_strlchr(value[i].data, value[i].data + value[i].len, '=');
        if (p == NULL) {
            return "takes KEY=VALUE parameters";
        }

        key.data = value[i].data;
        key.len = p - key.data;
        val.data = p + 1;
        val.len = value[i].data + value[i].len - val.data;

        if (key.len == 3 && ngx_strncmp(key.data, "url", 3) == 0) {
            mcp->url = val;

        } else if (key.len == 7 && ngx_strncmp(key.data, "key_env", 7) == 0) {
            mcp->key_env = val;

        } else if (key.len == 5 && ngx_strncmp(key.data, "tools", 5) == 0) {
            mcp->filter = val;

        } else if (key.len == 7 && ngx_strncmp(key.data, "timeout", 7) == 0) {
            mcp->timeout = ngx_parse_time(&val, 0);
            if (mcp->timeout == (ngx_msec_t) NGX_ERROR || mcp->timeout == 0) {
                return "has a timeout= that is not a time";
            }

        } else if (key.len == 3 && ngx_strncmp(key.data, "ttl", 3) == 0) {
            mcp->ttl = ngx_parse_time(&val, 0);
            if (mcp->ttl == (ngx_msec_t) NGX_ERROR || mcp->ttl == 0) {
                return "has a ttl= that is not a time";
            }

        } else if (key.len == 8 && ngx_strncmp(key.data, "max_size", 8) == 0) {
            mcp->max = ngx_parse_size(&val);
            if (mcp->max == (size_t) NGX_ERROR || mcp->max < 1024) {
                return "has a max_size= that is not a size of 1k or more";
            }

        } else if (key.len == 9 && ngx_strncmp(key.data, "max_tools", 9) == 0)
        {
            n = ngx_atoi(val.data, val.len);
            if (n == NGX_ERROR || n == 0) {
                return "has a max_tools= that is not a number of 1 or more";
            }

            mcp->max_tools = n;

        } else if (key.len == 7 && ngx_strncmp(key.data, "headers", 7) == 0) {

            /* Name:value,Name:value, each kept as "Name: value" */

            last = val.data + val.len;

            while (val.data < last) {
                q = ngx_strlchr(val.data, last, ',');
                if (q == NULL) {
                    q = last;
                }

                p = ngx_strlchr(val.data, q, ':');
                if (p == NULL || p == val.data) {
                    return "has headers= that are not Name:value,...";
                }

                h = ngx_array_push(mcp->headers);
                if (h == NULL) {
                    return NGX_CONF_ERROR;
                }

                h->len = q - val.data + 1;
                h->data = ngx_pnalloc(cf->pool, h->len + 1);
                if (h->data == NULL) {
                    return NGX_CONF_ERROR;
                }

                ngx_sprintf(h->data, "%*s: %*s%Z", p - val.data, val.data,
                            q - p - 1, p + 1);
                h->len = ngx_strlen(h->data);
                val.data = q + 1;
            }

        } else {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "agent_mcp: unknown "
                               "parameter \"%V\"", &key);
            return NGX_CONF_ERROR;
        }
    }

    /* calls point here, not into a list that a refresh replaces */

    tool = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_tool_t));
    if (tool == NULL) {
        return NGX_CONF_ERROR;
    }

    tool->name = mcp->name;
    tool->run = ngx_http_agent_mcp_tool_run;
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
