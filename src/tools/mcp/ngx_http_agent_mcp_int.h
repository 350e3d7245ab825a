
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCP_INT_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCP_INT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_mcp.h"
#include "ngx_http_agent_tools.h"


typedef struct ngx_http_agent_mcp_call_s  ngx_http_agent_mcp_call_t;

typedef void (*ngx_http_agent_mcp_call_pt)(ngx_http_agent_mcp_call_t *rpc,
    ngx_int_t rc, long status, ngx_http_agent_mcp_answer_t *a);


/* one JSON-RPC request over HTTP */
struct ngx_http_agent_mcp_call_s {
    ngx_http_agent_mcp_t          *mcp;
    ngx_pool_t                    *pool;       /* its own */
    ngx_http_agent_curl_t         *curl;
    ngx_str_t                      body;
    int64_t                        id;         /* 0: a notification */
    ngx_http_agent_mcp_call_pt     handler;
    void                          *data;
    unsigned                       truncated:1;
};


/* for the files of src/tools/mcp/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

void ngx_http_agent_mcp_close(ngx_http_agent_mcp_call_t *rpc);
ngx_http_agent_mcp_call_t *ngx_http_agent_mcp_send(ngx_http_agent_mcp_t *mcp,
    const char *method, ngx_str_t *params, ngx_log_t *log,
    ngx_http_agent_mcp_call_pt handler, void *data);

#pragma GCC visibility pop


/* for the files of src/tools/mcp/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_mcp_tool_run(ngx_http_agent_tool_call_t *call);
ngx_uint_t ngx_http_agent_mcp_tool_idempotent(
    ngx_http_agent_tool_call_t *call);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_MCP_INT_H_INCLUDED_ */
