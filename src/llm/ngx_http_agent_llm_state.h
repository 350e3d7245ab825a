
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_LLM_STATE_H_INCLUDED_
#define _NGX_HTTP_AGENT_LLM_STATE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include "ngx_http_agent_cost.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"


/*
 * A model call's types: the model it is made with, what it sends, its
 * state as the answer comes (ngx_http_agent_llm_state.c writes it).
 */


#define NGX_HTTP_AGENT_LLM_MAX_TOOL_CALLS  32
#define NGX_HTTP_AGENT_LLM_MAX_DIMS        8192


typedef struct ngx_http_agent_llm_s       ngx_http_agent_llm_t;
typedef struct ngx_http_agent_provider_s  ngx_http_agent_provider_t;


/* an agent_model: where it is, how to reach it, what to do when it fails */
typedef struct {
    ngx_str_t                      name;
    ngx_str_t                      url;
    ngx_str_t                      model;
    ngx_str_t                      key_env;
    ngx_array_t                   *aliases;     /* ngx_str_t */
    ngx_array_t                   *headers;     /* ngx_str_t "Name: value" */
    ngx_http_agent_provider_t     *provider;
    ngx_str_t                      fallback_name;
    void                          *fallback;    /* ngx_http_agent_model_t */
    ngx_uint_t                     retries;
    ngx_msec_t                     backoff;
    ngx_msec_t                     connect_timeout;
    ngx_msec_t                     first_token_timeout;
    ngx_msec_t                     idle_timeout;
    ngx_msec_t                     timeout;
    ngx_uint_t                     max_tokens;
    ngx_flag_t                     cache;
    ngx_http_agent_price_t         price;
    ngx_str_t                      file;
    ngx_uint_t                     line;
} ngx_http_agent_model_t;


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


/* what a call sends, whichever provider writes it */
typedef struct {
    ngx_str_t                     *system;
    ngx_array_t                   *messages;    /* ngx_http_agent_msg_t */
    ngx_str_t                     *tools;       /* OpenAI's "tools" array */
    ngx_uint_t                     tools_off;   /* declared, not to be
                                                   called: the last round */
    ngx_uint_t                     history;     /* messages of earlier
                                                   turns: a stable prefix */
    ngx_str_t                     *session;     /* whose: its encoding
                                                   kept (llm_prefix.c) */

    /* the location's timeouts, for models that set none of their own */
    ngx_msec_t                     connect_timeout;
    ngx_msec_t                     idle_timeout;
    ngx_msec_t                     timeout;

    /* an embeddings call (llm/embed.c): texts in, vectors out */
    ngx_array_t                   *inputs;      /* ngx_str_t; NULL: a chat
                                                   call */
    ngx_uint_t                     query;       /* as queries, not as
                                                   documents */
    ngx_uint_t                     dims;        /* asked (0: the model's),
                                                   then answered */
    float                         *vectors;     /* inputs' nelts of dims */
} ngx_http_agent_llm_req_t;


typedef ngx_int_t (*ngx_http_agent_llm_chunk_pt)(void *data, ngx_str_t *text);
typedef void (*ngx_http_agent_llm_done_pt)(void *data, ngx_int_t rc);


struct ngx_http_agent_llm_s {
    ngx_pool_t                    *pool;
    ngx_log_t                     *log;
    ngx_http_agent_curl_t         *curl;

    ngx_http_agent_llm_chunk_pt    on_chunk;
    ngx_http_agent_llm_done_pt     on_done;
    void                          *data;

    /* the call */
    ngx_http_agent_model_t        *model;       /* answering now */
    ngx_http_agent_provider_t     *provider;
    ngx_http_agent_llm_req_t      *req;
    ngx_str_t                      key;
    ngx_uint_t                     attempt;     /* of this model */
    ngx_uint_t                     hops;        /* fallbacks taken */
    ngx_msec_t                     start;
    ngx_msec_t                     ttft;        /* 0: no token yet */
    ngx_event_t                    retry;
    ngx_event_t                    first;
    ngx_pool_t                    *request;     /* the attempt's body and
                                                   what it was made of */

    /* the stream parser */
    ngx_http_agent_llm_buf_t       line;
    ngx_http_agent_llm_buf_t       content;
    ngx_http_agent_llm_buf_t       errbody;
    ngx_http_agent_llm_call_t     *calls;       /* made at the first */
    ngx_uint_t                     ncalls;
    ngx_int_t                      block;       /* anthropic: the call of
                                                   the open block, or -1 */
    ngx_str_t                      finish_reason;
    int64_t                        prompt_tokens;
    int64_t                        completion_tokens;
    int64_t                        cached_tokens;
    int64_t                        cache_write_tokens;
    int64_t                        reserved;    /* in agent_limit's
                                                   budgets, until settled */
    int64_t                        reserved_cost; /* nanodollars */
    long                           status;
    long                           retry_after; /* seconds, or -1 */

    ngx_str_t                      error;

    unsigned                       seen_done:1;
    unsigned                       answered:1;  /* a token came */
    unsigned                       failed:1;
    unsigned                       retryable:1;
};


/* for the files of src/llm/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_llm_buf_add(ngx_pool_t *pool,
    ngx_http_agent_llm_buf_t *b, u_char *p, size_t len, size_t max);
void ngx_http_agent_llm_excerpt(ngx_http_agent_llm_t *llm, ngx_str_t *s);
ngx_int_t ngx_http_agent_llm_fail(ngx_http_agent_llm_t *llm,
    const char *fmt, ...);
void ngx_http_agent_llm_hide_key(ngx_http_agent_llm_t *llm, ngx_str_t *s);
ngx_uint_t ngx_http_agent_llm_prefix_find(ngx_http_agent_llm_t *llm,
    ngx_str_t *json);
void ngx_http_agent_llm_prefix_keep(ngx_http_agent_llm_t *llm,
    ngx_str_t *reused, u_char *json, size_t len);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_LLM_STATE_H_INCLUDED_ */
