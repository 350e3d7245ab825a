
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_VARIABLES_H_INCLUDED_
#define _NGX_HTTP_AGENT_VARIABLES_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_engine.h"


ngx_int_t ngx_http_agent_variables_add(ngx_conf_t *cf);


char *ngx_http_agent_variables_input(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);


/* for the files of src/turn/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_variables_inputs(ngx_http_request_t *r,
    ngx_http_agent_run_t *run, ngx_array_t *update);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_VARIABLES_H_INCLUDED_ */
