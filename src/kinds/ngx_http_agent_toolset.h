
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TOOLSET_H_INCLUDED_
#define _NGX_HTTP_AGENT_TOOLSET_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_mcp.h"


/* for the files of src/kinds/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


/* the longest tool name providers take, and MCP's */


/* one entry of a node's tools=: a tool of the registry, or an MCP
   server's tools (all of them, or one by name) */
typedef struct {
    ngx_http_agent_tool_t         *tool;
    ngx_http_agent_mcp_t          *mcp;
    ngx_str_t                      name;       /* the server's; empty: all */
} ngx_http_agent_toolset_entry_t;


/* the tools bound to a step: what a model is offered and all that a
   tools node runs */
typedef struct {
    ngx_array_t                   *entries;
} ngx_http_agent_toolset_t;


/* what a call resolved to: the tool, and the name its owner knows */
typedef struct {
    ngx_http_agent_tool_t         *tool;
    ngx_str_t                      name;
    ngx_http_agent_toolset_entry_t  *entry;
} ngx_http_agent_toolset_hit_t;


ngx_uint_t ngx_http_agent_toolset_empty(ngx_http_agent_toolset_t *set);
ngx_uint_t ngx_http_agent_toolset_waits(ngx_http_agent_toolset_t *set);
ngx_int_t ngx_http_agent_toolset_json(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_toolset_t *set, ngx_str_t *out);
ngx_int_t ngx_http_agent_toolset_find(ngx_pool_t *pool,
    ngx_http_agent_toolset_t *set, ngx_str_t *name,
    ngx_http_agent_toolset_hit_t *hit);
ngx_uint_t ngx_http_agent_toolset_holds(ngx_http_agent_toolset_t *set,
    ngx_http_agent_toolset_hit_t *hit);
ngx_int_t ngx_http_agent_toolset_client(ngx_pool_t *pool,
    ngx_http_agent_toolset_t *set, ngx_array_t *client, ngx_str_t **tools);

ngx_int_t ngx_http_agent_toolset_bind(ngx_conf_t *cf,
    ngx_http_agent_toolset_t *set, ngx_str_t *list, ngx_uint_t prompts);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_TOOLSET_H_INCLUDED_ */
