
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_RESOURCES_H_INCLUDED_
#define _NGX_HTTP_AGENT_RESOURCES_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_engine.h"


/* for the files of src/proto/chat/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_resources_add(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body);
ngx_int_t ngx_http_agent_resources_list(ngx_http_request_t *r,
    ngx_str_t *id);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_RESOURCES_H_INCLUDED_ */
