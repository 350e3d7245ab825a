
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_JSONRPC_H_INCLUDED_
#define _NGX_HTTP_AGENT_JSONRPC_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_json.h"


/* JSON-RPC's error codes */
#define NGX_HTTP_AGENT_JSONRPC_PARSE_ERROR       -32700
#define NGX_HTTP_AGENT_JSONRPC_INVALID_REQUEST   -32600
#define NGX_HTTP_AGENT_JSONRPC_METHOD_NOT_FOUND  -32601
#define NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS    -32602
#define NGX_HTTP_AGENT_JSONRPC_INTERNAL_ERROR    -32603
#define NGX_HTTP_AGENT_JSONRPC_SERVER_ERROR      -32000


/* one JSON-RPC message a client sent */
typedef struct {
    ngx_str_t                  id;          /* as JSON (a number or a
                                               string, written again by
                                               our generator), or empty */
    ngx_str_t                  method;
    yajl_val                   params;      /* an object, or NULL */
    yajl_val                   result;      /* a response's "result",
                                               or NULL: its "error" */
    ngx_int_t                  code;        /* an error to answer, or 0 */
    ngx_str_t                  error;
    unsigned                   notification:1; /* no "id": no answer,
                                                  not even an error */
    unsigned                   response:1;  /* no "method": the answer
                                               to a request of ours */
} ngx_http_agent_jsonrpc_t;


void ngx_http_agent_jsonrpc_read(ngx_pool_t *pool, ngx_str_t *body,
    ngx_http_agent_jsonrpc_t *rpc);
ngx_int_t ngx_http_agent_jsonrpc_result(ngx_pool_t *pool, ngx_str_t *id,
    ngx_str_t *result, ngx_str_t *out);
ngx_int_t ngx_http_agent_jsonrpc_error(ngx_pool_t *pool, ngx_str_t *id,
    ngx_int_t code, ngx_str_t *msg, ngx_str_t *out);


#endif /* _NGX_HTTP_AGENT_JSONRPC_H_INCLUDED_ */
