
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_LLM_H_INCLUDED_
#define _NGX_HTTP_AGENT_LLM_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm_state.h"
#include "ngx_http_agent_llm_stream.h"


/* the call: attempts, retries, fallback (ngx_http_agent_llm.c) */
ngx_http_agent_llm_t *ngx_http_agent_llm_create(ngx_pool_t *pool,
    ngx_log_t *log);
ngx_int_t ngx_http_agent_llm_call(ngx_http_agent_llm_t *llm,
    ngx_http_agent_model_t *model, ngx_http_agent_llm_req_t *req);
void ngx_http_agent_llm_cancel(ngx_http_agent_llm_t *llm);
ngx_int_t ngx_http_agent_llm_key(ngx_http_agent_model_t *model,
    ngx_str_t *key);


#endif /* _NGX_HTTP_AGENT_LLM_H_INCLUDED_ */
