
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCPSERVER_RPC_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCPSERVER_RPC_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_json.h"
#include "ngx_http_agent_jsonrpc.h"
#include "ngx_http_agent_graph.h"


/* tools/call's arguments, for a graph */
typedef struct {
    ngx_str_t                  message;
    ngx_str_t                  thread_id;   /* or empty: a new thread */
    ngx_str_t                  resume;      /* an interrupt's answer
                                               (JSON), or empty */
    yajl_val                   values;      /* other channels, or NULL */
    ngx_str_t                  progress;    /* _meta.progressToken as JSON,
                                               or empty */
} ngx_http_agent_mcpserver_call_t;


ngx_int_t ngx_http_agent_mcpserver_rpc_call(ngx_pool_t *pool,
    yajl_val params, ngx_http_agent_graph_t *graph,
    ngx_http_agent_mcpserver_call_t *call, ngx_str_t *why);


#endif /* _NGX_HTTP_AGENT_MCPSERVER_RPC_H_INCLUDED_ */
