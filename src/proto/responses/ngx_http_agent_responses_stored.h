
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_RESPONSES_STORED_H_INCLUDED_
#define _NGX_HTTP_AGENT_RESPONSES_STORED_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


ngx_int_t ngx_http_agent_responses_stored(ngx_http_request_t *r,
    ngx_str_t *id);


#endif /* _NGX_HTTP_AGENT_RESPONSES_STORED_H_INCLUDED_ */
