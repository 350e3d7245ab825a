
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_AGUI_H_INCLUDED_
#define _NGX_HTTP_AGENT_AGUI_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"


/* AG-UI's RunAgentInput, as a run asks it (agui_input.c) */
typedef struct {
    ngx_str_t                  thread_id;
    ngx_str_t                  run_id;
    ngx_http_agent_msg_t      *msg;         /* the new user message, or
                                               NULL */
    ngx_str_t                  resume;      /* an interrupt's answer
                                               (JSON), or empty */
    ngx_str_t                  resume_at;   /* the interrupt it answers,
                                               or empty */
    yajl_val                   values;      /* state to write, or NULL */
} ngx_http_agent_agui_input_t;


ngx_int_t ngx_http_agent_agui_input(ngx_pool_t *pool, yajl_val v,
    ngx_http_agent_graph_t *graph, ngx_http_agent_agui_input_t *in,
    ngx_str_t *why);


#endif /* _NGX_HTTP_AGENT_AGUI_H_INCLUDED_ */
