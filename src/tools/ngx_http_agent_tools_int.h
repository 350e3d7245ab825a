
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TOOLS_INT_H_INCLUDED_
#define _NGX_HTTP_AGENT_TOOLS_INT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"


/* for the files of src/tools/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_vega_clean(ngx_http_agent_json_t *j, yajl_val spec,
    ngx_str_t *err);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_TOOLS_INT_H_INCLUDED_ */
