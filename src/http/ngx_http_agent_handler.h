
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_HANDLER_H_INCLUDED_
#define _NGX_HTTP_AGENT_HANDLER_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_reply.h"


ngx_int_t ngx_http_agent_handler(ngx_http_request_t *r);
ngx_int_t ngx_http_agent_handler_redrive(ngx_http_request_t *r, void *data);


#endif /* _NGX_HTTP_AGENT_HANDLER_H_INCLUDED_ */
