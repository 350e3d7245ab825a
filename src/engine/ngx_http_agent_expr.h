
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_EXPR_H_INCLUDED_
#define _NGX_HTTP_AGENT_EXPR_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_graph_desc.h"


/* for the files of src/engine/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_http_agent_expr_t *ngx_http_agent_expr_parse(ngx_pool_t *pool,
    ngx_http_agent_graph_t *graph, ngx_str_t *text, u_char *err,
    size_t errlen);
/* NGX_OK: it holds, NGX_DECLINED: it does not, NGX_ERROR */
ngx_int_t ngx_http_agent_expr_test(ngx_http_agent_run_t *run,
    ngx_http_agent_expr_t *e);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_EXPR_H_INCLUDED_ */
