
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_GRAPH_CHANNEL_H_INCLUDED_
#define _NGX_HTTP_AGENT_GRAPH_CHANNEL_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_graph.h"


char *ngx_http_agent_graph_channel_conf(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph);


#endif /* _NGX_HTTP_AGENT_GRAPH_CHANNEL_H_INCLUDED_ */
