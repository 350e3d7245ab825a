
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCP_RPC_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCP_RPC_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"


/* for the files of src/tools/mcp/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


typedef struct {
    yajl_val                   result;      /* the response's result */
    ngx_str_t                  error;       /* its error, or what is wrong */
    unsigned                   rpc_error:1; /* the server answered an error */
    unsigned                   list_changed:1;
} ngx_http_agent_mcp_answer_t;


ngx_int_t ngx_http_agent_mcp_rpc_answer(ngx_pool_t *pool, ngx_str_t *body,
    int64_t id, ngx_http_agent_mcp_answer_t *a);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_MCP_RPC_H_INCLUDED_ */
