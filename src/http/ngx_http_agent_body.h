
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_BODY_H_INCLUDED_
#define _NGX_HTTP_AGENT_BODY_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


/* rc: NGX_OK with the body, or an HTTP status */
typedef void (*ngx_http_agent_body_pt)(ngx_http_request_t *r,
    ngx_str_t *body, ngx_int_t rc);


ngx_int_t ngx_http_agent_body_get(ngx_http_request_t *r, void *thread_pool,
    ngx_str_t *body, ngx_http_agent_body_pt done);


#endif /* _NGX_HTTP_AGENT_BODY_H_INCLUDED_ */
