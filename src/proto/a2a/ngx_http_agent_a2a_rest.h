
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_A2A_REST_H_INCLUDED_
#define _NGX_HTTP_AGENT_A2A_REST_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"


ngx_int_t ngx_http_agent_a2a_rest_route(ngx_http_request_t *r,
    ngx_str_t *path);
ngx_int_t ngx_http_agent_a2a_rest_read(ngx_http_request_t *r,
    ngx_str_t *body, ngx_http_agent_jsonrpc_t *rpc);
ngx_uint_t ngx_http_agent_a2a_rest_is(ngx_http_request_t *r);


#endif /* _NGX_HTTP_AGENT_A2A_REST_H_INCLUDED_ */
