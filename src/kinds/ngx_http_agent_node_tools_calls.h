/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_NODE_TOOLS_CALLS_H_INCLUDED_
#define _NGX_HTTP_AGENT_NODE_TOOLS_CALLS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_node_tools_conf.h"


/* for the files of src/kinds/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_node_tools_args(ngx_http_agent_run_t *run,
    ngx_http_agent_node_tools_conf_t *tc, ngx_http_agent_tool_call_t *c);
ngx_int_t ngx_http_agent_node_tools_own(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_array_t **calls);
ngx_int_t ngx_http_agent_node_tools_kept(ngx_http_agent_run_t *run,
    ngx_http_agent_tool_call_t *c);
ngx_int_t ngx_http_agent_node_tools_claim(ngx_http_agent_run_t *run,
    ngx_uint_t index, ngx_http_agent_tool_call_t *c);
ngx_int_t ngx_http_agent_node_tools_client(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_array_t *calls);
ngx_int_t ngx_http_agent_node_tools_write(ngx_http_agent_run_t *run,
    ngx_http_agent_node_tools_conf_t *tc, ngx_http_agent_tool_call_t *calls,
    ngx_uint_t n);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_NODE_TOOLS_CALLS_H_INCLUDED_ */
