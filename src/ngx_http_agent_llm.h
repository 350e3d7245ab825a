
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_LLM_H_INCLUDED_
#define _NGX_HTTP_AGENT_LLM_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_curl.h"
#include "ngx_http_agent_graph.h"


#define NGX_HTTP_AGENT_LLM_MAX_TOOL_CALLS  32


typedef struct {
    u_char                        *data;
    size_t                         len;
    size_t                         cap;
} ngx_http_agent_llm_buf_t;


typedef struct {
    ngx_http_agent_llm_buf_t       id;
    ngx_http_agent_llm_buf_t       name;
    ngx_http_agent_llm_buf_t       arguments;
} ngx_http_agent_llm_call_t;


typedef struct ngx_http_agent_llm_s  ngx_http_agent_llm_t;

typedef ngx_int_t (*ngx_http_agent_llm_chunk_pt)(void *data, ngx_str_t *text);
typedef void (*ngx_http_agent_llm_done_pt)(void *data, ngx_int_t rc);


struct ngx_http_agent_llm_s {
    ngx_pool_t                    *pool;
    ngx_log_t                     *log;
    ngx_http_agent_curl_t         *curl;

    ngx_http_agent_llm_chunk_pt    on_chunk;
    ngx_http_agent_llm_done_pt     on_done;
    void                          *data;

    /* the stream parser */
    ngx_http_agent_llm_buf_t       line;
    ngx_http_agent_llm_buf_t       text;
    ngx_http_agent_llm_buf_t       content;
    ngx_http_agent_llm_buf_t       errbody;
    ngx_http_agent_llm_call_t     *calls;       /* made at the first */
    ngx_uint_t                     ncalls;
    ngx_str_t                      finish_reason;
    int64_t                        prompt_tokens;
    int64_t                        completion_tokens;
    long                           status;

    ngx_str_t                      error;

    unsigned                       seen_done:1;
    unsigned                       failed:1;
};


ngx_http_agent_llm_t *ngx_http_agent_llm_create(ngx_pool_t *pool,
    ngx_log_t *log);
ngx_int_t ngx_http_agent_llm_build(ngx_pool_t *pool, ngx_str_t *model,
    ngx_str_t *system, ngx_array_t *messages, ngx_str_t *tools,
    ngx_str_t *body);
ngx_int_t ngx_http_agent_llm_start(ngx_http_agent_llm_t *llm, ngx_str_t *url,
    ngx_str_t *key, ngx_str_t *body, ngx_msec_t connect_timeout,
    ngx_msec_t idle_timeout, ngx_msec_t timeout);
void ngx_http_agent_llm_cancel(ngx_http_agent_llm_t *llm);
ngx_int_t ngx_http_agent_llm_parse(ngx_http_agent_llm_t *llm, u_char *p,
    size_t len);
ngx_int_t ngx_http_agent_llm_message(ngx_http_agent_llm_t *llm,
    ngx_pool_t *pool, ngx_http_agent_msg_t *msg);


#endif /* _NGX_HTTP_AGENT_LLM_H_INCLUDED_ */
