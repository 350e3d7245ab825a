
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCPSERVER_SESSION_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCPSERVER_SESSION_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"


ngx_int_t ngx_http_agent_mcpserver_session_make(ngx_http_request_t *r,
    yajl_val params);
ngx_int_t ngx_http_agent_mcpserver_session_level(ngx_http_request_t *r,
    ngx_uint_t log);
ngx_uint_t ngx_http_agent_mcpserver_session_log(ngx_http_request_t *r);
ngx_int_t ngx_http_agent_mcpserver_session_check(ngx_http_request_t *r);
ngx_uint_t ngx_http_agent_mcpserver_session_elicits(ngx_http_request_t *r);
ngx_uint_t ngx_http_agent_mcpserver_session_run_id(ngx_http_request_t *r,
    ngx_str_t *request, u_char *out);


#endif /* _NGX_HTTP_AGENT_MCPSERVER_SESSION_H_INCLUDED_ */
