
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCPSERVER_RPC_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCPSERVER_RPC_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_json.h"
#include "ngx_http_agent_graph.h"


/* JSON-RPC's error codes */
#define NGX_HTTP_AGENT_RPC_PARSE_ERROR       -32700
#define NGX_HTTP_AGENT_RPC_INVALID_REQUEST   -32600
#define NGX_HTTP_AGENT_RPC_METHOD_NOT_FOUND  -32601
#define NGX_HTTP_AGENT_RPC_INVALID_PARAMS    -32602
#define NGX_HTTP_AGENT_RPC_INTERNAL_ERROR    -32603


/* one JSON-RPC message a client sent */
typedef struct {
    ngx_str_t                  id;          /* as JSON (a number or a
                                               string, written again by
                                               our generator), or empty:
                                               a notification */
    ngx_str_t                  method;
    yajl_val                   params;      /* an object, or NULL */
    ngx_int_t                  code;        /* an error to answer, or 0 */
    ngx_str_t                  error;
} ngx_http_agent_mcpserver_rpc_t;


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


void ngx_http_agent_mcpserver_rpc_read(ngx_pool_t *pool, ngx_str_t *body,
    ngx_http_agent_mcpserver_rpc_t *rpc);
ngx_int_t ngx_http_agent_mcpserver_rpc_call(ngx_pool_t *pool,
    yajl_val params, ngx_http_agent_graph_t *graph,
    ngx_http_agent_mcpserver_call_t *call, ngx_str_t *why);


#endif /* _NGX_HTTP_AGENT_MCPSERVER_RPC_H_INCLUDED_ */
