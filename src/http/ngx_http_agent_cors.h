
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_CORS_H_INCLUDED_
#define _NGX_HTTP_AGENT_CORS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


/* agent_cors ORIGIN ... [credentials=on] | * | off */
typedef struct {
    ngx_array_t               *origins;     /* ngx_str_t */
    unsigned                   any:1;       /* "*" */
    unsigned                   credentials:1;
} ngx_http_agent_cors_t;


char *ngx_http_agent_cors(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
ngx_int_t ngx_http_agent_cors_handler(ngx_http_request_t *r,
    ngx_http_agent_cors_t *cors);
ngx_uint_t ngx_http_agent_cors_origin(ngx_http_request_t *r,
    ngx_http_agent_cors_t *cors);


#endif /* _NGX_HTTP_AGENT_CORS_H_INCLUDED_ */
