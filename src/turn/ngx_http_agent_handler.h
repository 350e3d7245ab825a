
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_HANDLER_H_INCLUDED_
#define _NGX_HTTP_AGENT_HANDLER_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_reply.h"


extern ngx_http_module_t  ngx_http_agent_handler_module_ctx;


ngx_int_t ngx_http_agent_handler(ngx_http_request_t *r);
char *ngx_http_agent_handler_proto(ngx_conf_t *cf,
    ngx_http_agent_proto_t *proto, void *conf);


#endif /* _NGX_HTTP_AGENT_HANDLER_H_INCLUDED_ */
