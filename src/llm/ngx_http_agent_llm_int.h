
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_LLM_INT_H_INCLUDED_
#define _NGX_HTTP_AGENT_LLM_INT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_util.h"


/* for the files of src/llm/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_http_agent_provider_t *ngx_http_agent_providers_find(ngx_str_t *name);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_LLM_INT_H_INCLUDED_ */
