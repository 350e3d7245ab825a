
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TOOL_LOCATION_H_INCLUDED_
#define _NGX_HTTP_AGENT_TOOL_LOCATION_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_subrequest.h"


char *ngx_http_agent_tool_location(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
void *ngx_http_agent_tool_location_call(ngx_http_request_t *r,
    ngx_http_agent_tool_t *tool, yajl_val args,
    ngx_http_agent_subrequest_pt handler, void *data);
ngx_uint_t ngx_http_agent_tool_location_is(ngx_http_agent_tool_t *tool);


#endif /* _NGX_HTTP_AGENT_TOOL_LOCATION_H_INCLUDED_ */
