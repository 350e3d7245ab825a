
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_A2A_LIST_H_INCLUDED_
#define _NGX_HTTP_AGENT_A2A_LIST_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_a2a_task.h"


ngx_int_t ngx_http_agent_a2a_list(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc);
ngx_int_t ngx_http_agent_a2a_history_of(yajl_val v,
    ngx_http_agent_a2a_hist_t *h);
ngx_http_agent_a2a_state_e ngx_http_agent_a2a_state(ngx_pool_t *pool,
    ngx_http_agent_turn_outcome_t *out, ngx_str_t *text);


#endif /* _NGX_HTTP_AGENT_A2A_LIST_H_INCLUDED_ */
