
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TOOL_LOCATION_H_INCLUDED_
#define _NGX_HTTP_AGENT_TOOL_LOCATION_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


char *ngx_http_agent_tool_location(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);


#endif /* _NGX_HTTP_AGENT_TOOL_LOCATION_H_INCLUDED_ */
