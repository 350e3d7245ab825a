
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCPSERVER_TOOLS_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCPSERVER_TOOLS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_util.h"


/* the MCP server's own location configuration: its tools, its asking */
typedef struct {
    /* agent_mcp_server_tools: ngx_str_t names, their agent_tool tools */
    ngx_array_t               *tool_names;
    ngx_array_t               *tools;
    ngx_msec_t                 elicitation; /* an answer waited for so
                                               long; 0: none asked */
} ngx_http_agent_mcpserver_conf_t;


char *ngx_http_agent_mcpserver_tools_merge(ngx_conf_t *cf,
    ngx_http_agent_mcpserver_conf_t *conf, ngx_http_agent_proto_t *proto);
ngx_int_t ngx_http_agent_mcpserver_tools_list(ngx_http_request_t *r,
    ngx_http_agent_json_t *j);
ngx_int_t ngx_http_agent_mcpserver_tools_call(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc, ngx_str_t *name);


#endif /* _NGX_HTTP_AGENT_MCPSERVER_TOOLS_H_INCLUDED_ */
