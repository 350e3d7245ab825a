
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MERMAID_H_INCLUDED_
#define _NGX_HTTP_AGENT_MERMAID_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_graph.h"


ngx_int_t ngx_http_agent_mermaid(ngx_pool_t *pool,
    ngx_http_agent_graph_t *graph, ngx_str_t *out);


#endif /* _NGX_HTTP_AGENT_MERMAID_H_INCLUDED_ */
