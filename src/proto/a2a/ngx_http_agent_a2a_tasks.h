
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_A2A_TASKS_H_INCLUDED_
#define _NGX_HTTP_AGENT_A2A_TASKS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"

/* the task methods */
#define NGX_HTTP_AGENT_A2A_GET        0
#define NGX_HTTP_AGENT_A2A_LIST       1
#define NGX_HTTP_AGENT_A2A_CANCEL     2
#define NGX_HTTP_AGENT_A2A_SUBSCRIBE  3
#define NGX_HTTP_AGENT_A2A_PUSH_GET   4
#define NGX_HTTP_AGENT_A2A_PUSH_LIST  5


ngx_int_t ngx_http_agent_a2a_tasks(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc, ngx_uint_t method, ngx_uint_t legacy);


#endif /* _NGX_HTTP_AGENT_A2A_TASKS_H_INCLUDED_ */
