
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_RESPONSES_H_INCLUDED_
#define _NGX_HTTP_AGENT_RESPONSES_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"


/* a response's id: "resp_", the turn's run id, "_", the thread */
#define NGX_HTTP_AGENT_RESPONSES_RUN_LEN  36

/* the client's function tools a request may offer, and a call id's size */
#define NGX_HTTP_AGENT_RESPONSES_TOOLS    128
#define NGX_HTTP_AGENT_RESPONSES_CALL_ID  256


/* POST /responses, read */
typedef struct {
    ngx_str_t                  model;       /* a graph's name */
    ngx_str_t                  text;        /* the user's input */
    ngx_str_t                  thread_id;   /* conversation, or the one of
                                               previous_response_id; or
                                               empty: a new one */
    ngx_str_t                  previous;    /* previous_response_id */
    ngx_str_t                  param;       /* the field a refusal names */
    ngx_str_t                  instructions; /* echoed, not read */
    ngx_array_t               *tools;       /* ngx_keyval_t: the client's
                                               function tools (name, our
                                               definition), or NULL */
    ngx_array_t               *outputs;     /* ngx_keyval_t: the client's
                                               function_call_output items
                                               (call_id, output), or NULL:
                                               the input is text */
    unsigned                   stream:1;
    unsigned                   background:1; /* the run outlives its
                                                client */
} ngx_http_agent_responses_input_t;


ngx_int_t ngx_http_agent_responses_input(ngx_pool_t *pool, yajl_val v,
    ngx_http_agent_responses_input_t *in, ngx_str_t *why);
ngx_int_t ngx_http_agent_responses_thread(ngx_str_t *id, ngx_str_t *thread);


#endif /* _NGX_HTTP_AGENT_RESPONSES_H_INCLUDED_ */
