
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_AGUI_INT_H_INCLUDED_
#define _NGX_HTTP_AGENT_AGUI_INT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"


ngx_int_t ngx_http_agent_agui_route(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx);
ngx_int_t ngx_http_agent_agui_run(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx, ngx_str_t *body);


#endif /* _NGX_HTTP_AGENT_AGUI_INT_H_INCLUDED_ */
