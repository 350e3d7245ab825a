
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_REDACT_H_INCLUDED_
#define _NGX_HTTP_AGENT_REDACT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_json.h"


ngx_int_t ngx_http_agent_redact(ngx_pool_t *pool, ngx_array_t *re,
    ngx_str_t *json);


#endif /* _NGX_HTTP_AGENT_REDACT_H_INCLUDED_ */
