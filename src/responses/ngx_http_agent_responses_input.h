
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_RESPONSES_INPUT_H_INCLUDED_
#define _NGX_HTTP_AGENT_RESPONSES_INPUT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_json.h"


/* a response's id: "resp_", the turn's run id, "_", the thread */
#define NGX_HTTP_AGENT_RESPONSES_RUN_LEN  36


/* POST /responses, read */
typedef struct {
    ngx_str_t                  model;       /* a graph's name */
    ngx_str_t                  text;        /* the user's input */
    ngx_str_t                  thread_id;   /* conversation, or the one of
                                               previous_response_id; or
                                               empty: a new one */
    ngx_str_t                  previous;    /* previous_response_id */
    ngx_str_t                  param;       /* the field a refusal names */
    unsigned                   stream:1;
    unsigned                   background:1; /* the run outlives its
                                                client */
} ngx_http_agent_responses_input_t;


ngx_int_t ngx_http_agent_responses_input(ngx_pool_t *pool, yajl_val v,
    ngx_http_agent_responses_input_t *in, ngx_str_t *why);
ngx_int_t ngx_http_agent_responses_thread(ngx_str_t *id, ngx_str_t *thread);


#endif /* _NGX_HTTP_AGENT_RESPONSES_INPUT_H_INCLUDED_ */
