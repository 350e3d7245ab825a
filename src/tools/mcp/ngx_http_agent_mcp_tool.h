
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCP_TOOL_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCP_TOOL_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_mcp.h"
#include "ngx_http_agent_tools.h"


/* for the files of src/tools/mcp/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_mcp_tool_run(ngx_http_agent_tool_call_t *call);
ngx_uint_t ngx_http_agent_mcp_tool_idempotent(
    ngx_http_agent_tool_call_t *call);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_MCP_TOOL_H_INCLUDED_ */
