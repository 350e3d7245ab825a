
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_A2A_CONTINUE_H_INCLUDED_
#define _NGX_HTTP_AGENT_A2A_CONTINUE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_turn.h"


ngx_int_t ngx_http_agent_a2a_latest(ngx_http_request_t *r, ngx_str_t *task,
    ngx_http_agent_turn_outcome_t *out);
ngx_int_t ngx_http_agent_a2a_link(ngx_pool_t *pool, ngx_str_t *task,
    ngx_str_t *metadata);
void ngx_http_agent_a2a_linked(ngx_pool_t *pool,
    ngx_http_agent_run_row_t *row, ngx_str_t *task);
ngx_int_t ngx_http_agent_a2a_close(ngx_http_request_t *r,
    ngx_http_agent_turn_outcome_t *out, ngx_str_t *task);


#endif /* _NGX_HTTP_AGENT_A2A_CONTINUE_H_INCLUDED_ */
