
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_NODE_TOOLS_CONF_H_INCLUDED_
#define _NGX_HTTP_AGENT_NODE_TOOLS_CONF_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_toolset.h"


/* for the files of src/kinds/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


typedef struct {
    ngx_str_t                     tools;        /* empty: what the llm
                                                   nodes before it offer */
    ngx_http_agent_toolset_t      offered;      /* theirs, or call= */
    ngx_http_agent_toolset_t      own;          /* tools=, or empty */
    ngx_msec_t                    timeout;
    ngx_uint_t                    retries;
    ngx_array_t                  *redact;       /* ngx_regex_t * */
    ngx_str_t                     call;         /* call=TOOL, or empty */
    ngx_str_t                     query_name;
    ngx_int_t                     query;
    ngx_str_t                     output_name;
    ngx_int_t                     output;
    ngx_array_t                  *args;         /* ngx_http_agent_tool_arg_t */
    ngx_str_t                     approve;      /* on, or A,B: a human
                                                   sees the calls first */
    ngx_uint_t                    on_unknown;   /* 1: a call cut by a
                                                   take-over asks a human */
} ngx_http_agent_node_tools_conf_t;


typedef struct {
    ngx_str_t                     tool;
    ngx_str_t                     arg;
    ngx_str_t                     channel_name;
    ngx_int_t                     channel;
} ngx_http_agent_tool_arg_t;


extern ngx_http_agent_param_t  ngx_http_agent_node_tools_params[];


ngx_int_t ngx_http_agent_node_tools_check(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_NODE_TOOLS_CONF_H_INCLUDED_ */
