
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TEMPLATE_H_INCLUDED_
#define _NGX_HTTP_AGENT_TEMPLATE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_graph.h"


ngx_int_t ngx_http_agent_template_render(ngx_http_agent_run_t *run,
    ngx_pool_t *pool, ngx_str_t *tpl, ngx_str_t *out);


/* for the files of src/engine/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_TEMPLATE_H_INCLUDED_ */
