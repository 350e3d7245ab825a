
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_HEADER_H_INCLUDED_
#define _NGX_HTTP_AGENT_HEADER_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


ngx_table_elt_t *ngx_http_agent_header_in(ngx_http_request_t *r,
    const char *name, ngx_uint_t *count);


#endif /* _NGX_HTTP_AGENT_HEADER_H_INCLUDED_ */
