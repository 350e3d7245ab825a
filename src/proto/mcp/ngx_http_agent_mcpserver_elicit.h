
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCPSERVER_ELICIT_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCPSERVER_ELICIT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_turn.h"


extern ngx_http_agent_turn_hooks_t  ngx_http_agent_mcpserver_elicit_hooks;


ngx_int_t ngx_http_agent_mcpserver_elicit_answer(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc);


#endif /* _NGX_HTTP_AGENT_MCPSERVER_ELICIT_H_INCLUDED_ */
