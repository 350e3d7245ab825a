
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_HEADLESS_H_INCLUDED_
#define _NGX_HTTP_AGENT_HEADLESS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


ngx_http_request_t *ngx_http_agent_headless_create(ngx_http_conf_ctx_t *conf,
    ngx_str_t *uri, ngx_log_t *log);
ngx_uint_t ngx_http_agent_headless(ngx_http_request_t *r);
void ngx_http_agent_headless_close(ngx_http_request_t *r);


#endif /* _NGX_HTTP_AGENT_HEADLESS_H_INCLUDED_ */
