
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_NODE_LLM_CONF_H_INCLUDED_
#define _NGX_HTTP_AGENT_NODE_LLM_CONF_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_toolset.h"


/* for the files of src/kinds/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


/* an llm node's parameters, read by node_llm_conf.c, used by node_llm.c */
typedef struct {
    ngx_str_t                   prompt_file;
    ngx_str_t                   prompt;
    ngx_str_t                   tools_list;    /* as written */
    ngx_str_t                   tools;         /* JSON array, or empty:
                                                  none, or a server's */
    ngx_http_agent_toolset_t    toolset;       /* what the model is
                                                  offered */
    ngx_str_t                   output_name;
    ngx_int_t                   output;
    ngx_str_t                   model_name;
    ngx_http_agent_model_t     *model;
    ngx_str_t                   event;         /* a custom event */
    ngx_str_t                   summary_name;
    ngx_int_t                   summary;       /* -1: none */
    ngx_int_t                   stream;        /* -1: by output */
    ngx_flag_t                  history;
    ngx_uint_t                  json;          /* format=json */
} ngx_http_agent_node_llm_conf_t;


extern ngx_http_agent_param_t  ngx_http_agent_node_llm_params[];


void *ngx_http_agent_node_llm_create_conf(ngx_conf_t *cf);
ngx_int_t ngx_http_agent_node_llm_check(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_NODE_LLM_CONF_H_INCLUDED_ */
