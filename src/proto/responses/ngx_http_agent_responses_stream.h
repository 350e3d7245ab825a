
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_RESPONSES_STREAM_H_INCLUDED_
#define _NGX_HTTP_AGENT_RESPONSES_STREAM_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_responses_calls.h"


extern ngx_http_agent_format_t      ngx_http_agent_responses_format;
extern ngx_http_agent_turn_hooks_t  ngx_http_agent_responses_hooks;


ngx_int_t ngx_http_agent_responses_stored_object(ngx_pool_t *pool,
    ngx_http_agent_responses_out_t *o, ngx_http_agent_turn_outcome_t *out,
    ngx_str_t *json);


#endif /* _NGX_HTTP_AGENT_RESPONSES_STREAM_H_INCLUDED_ */
