
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCPSERVER_REPLY_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCPSERVER_REPLY_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_json.h"


/* a request's, kept across its passes (ctx->proto) */
typedef struct {
    ngx_str_t                  id;          /* the JSON-RPC id, or empty */
    ngx_str_t                  thread_id;   /* a new thread's, once made */
} ngx_http_agent_mcpserver_req_t;


ngx_int_t ngx_http_agent_mcpserver_answer(ngx_http_request_t *r,
    ngx_uint_t status, ngx_str_t *id, ngx_http_agent_json_t *j);
ngx_int_t ngx_http_agent_mcpserver_error(ngx_http_request_t *r,
    ngx_uint_t status, ngx_int_t code, const char *fmt, ...);
ngx_int_t ngx_http_agent_mcpserver_refused(ngx_http_request_t *r,
    ngx_str_t *msg, ngx_str_t *out);


#endif /* _NGX_HTTP_AGENT_MCPSERVER_REPLY_H_INCLUDED_ */
