
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TOOLS_APPROVE_H_INCLUDED_
#define _NGX_HTTP_AGENT_TOOLS_APPROVE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_util.h"


ngx_int_t ngx_http_agent_tools_approve_ask(ngx_http_agent_run_t *run,
    ngx_str_t *node, ngx_array_t *calls);
ngx_int_t ngx_http_agent_tools_approve_answer(ngx_http_agent_run_t *run,
    ngx_array_t *calls, ngx_str_t *reason);
void ngx_http_agent_tools_approve_call(ngx_http_agent_json_t *j,
    ngx_http_agent_call_t *c);
ngx_http_agent_json_t *ngx_http_agent_tools_approve_open(
    ngx_http_agent_run_t *run, ngx_str_t *node);
ngx_int_t ngx_http_agent_tools_approve_wait(ngx_http_agent_run_t *run,
    ngx_http_agent_json_t *j);
ngx_int_t ngx_http_agent_tools_approve_resumed(ngx_http_agent_run_t *run,
    yajl_val *answer);


#endif /* _NGX_HTTP_AGENT_TOOLS_APPROVE_H_INCLUDED_ */
