
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCP_TOOL_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCP_TOOL_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_mcp.h"
#include "ngx_http_agent_tools.h"


/* a node's tools=NAME.* (tool empty) or NAME.tool */
typedef struct {
    ngx_http_agent_mcp_t          *mcp;
    ngx_str_t                      tool;
} ngx_http_agent_mcp_bound_t;


ngx_int_t ngx_http_agent_mcp_bind(ngx_conf_t *cf, ngx_array_t *mcps,
    ngx_str_t *list, ngx_array_t **bound);
ngx_http_agent_tool_t *ngx_http_agent_mcp_tool_find(ngx_array_t *mcps,
    ngx_str_t *name);
ngx_int_t ngx_http_agent_mcp_tools(ngx_pool_t *pool, ngx_str_t *fixed,
    ngx_array_t *bound, ngx_str_t *out);
ngx_int_t ngx_http_agent_mcp_tool_run(ngx_http_agent_tool_call_t *call);


#endif /* _NGX_HTTP_AGENT_MCP_TOOL_H_INCLUDED_ */
