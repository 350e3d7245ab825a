
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_LLM_STREAM_H_INCLUDED_
#define _NGX_HTTP_AGENT_LLM_STREAM_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm_state.h"


ngx_int_t ngx_http_agent_llm_message(ngx_http_agent_llm_t *llm,
    ngx_pool_t *pool, ngx_http_agent_msg_t *msg);


/* for the files of src/llm/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_llm_end(ngx_http_agent_llm_t *llm);
ngx_int_t ngx_http_agent_llm_finish(ngx_http_agent_llm_t *llm,
    ngx_str_t *reason);
ngx_int_t ngx_http_agent_llm_parse(ngx_http_agent_llm_t *llm, u_char *p,
    size_t len);
void ngx_http_agent_llm_reset(ngx_http_agent_llm_t *llm);
ngx_int_t ngx_http_agent_llm_text(ngx_http_agent_llm_t *llm, ngx_str_t *s);
ngx_int_t ngx_http_agent_llm_tool(ngx_http_agent_llm_t *llm,
    ngx_uint_t index, ngx_str_t *id, ngx_str_t *name, ngx_str_t *args);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_LLM_STREAM_H_INCLUDED_ */
