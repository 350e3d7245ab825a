
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCP_CONF_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCP_CONF_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_mcp_server.h"


char *ngx_http_agent_mcp_directive(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
ngx_http_agent_mcp_t *ngx_http_agent_mcp_find(ngx_array_t *mcps,
    ngx_str_t *name);
ngx_int_t ngx_http_agent_mcp_keep(ngx_conf_t *cf, ngx_http_agent_mcp_t *mcp,
    ngx_str_t *tool);


#endif /* _NGX_HTTP_AGENT_MCP_CONF_H_INCLUDED_ */
