
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_LLM_INT_H_INCLUDED_
#define _NGX_HTTP_AGENT_LLM_INT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_util.h"


/* OpenAI's wire format, which Azure's deployments speak too */


/* for the files of src/llm/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_provider_openai_body(ngx_http_agent_llm_t *llm,
    ngx_str_t *body);
ngx_int_t ngx_http_agent_provider_openai_embed_body(
    ngx_http_agent_llm_t *llm, ngx_str_t *url, ngx_str_t *body);
ngx_int_t ngx_http_agent_provider_openai_embedded(ngx_http_agent_llm_t *llm,
    yajl_val v);
ngx_int_t ngx_http_agent_provider_openai_event(ngx_http_agent_llm_t *llm,
    yajl_val v);

#pragma GCC visibility pop


/* for the files of src/llm/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_http_agent_provider_t *ngx_http_agent_providers_find(ngx_str_t *name);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_LLM_INT_H_INCLUDED_ */
