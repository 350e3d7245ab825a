
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm_int.h"


/*
 * The providers of agent_model provider=...: a new one is its file and a
 * line here.
 */


extern ngx_http_agent_provider_t  ngx_http_agent_provider_openai;
extern ngx_http_agent_provider_t  ngx_http_agent_provider_azure;
extern ngx_http_agent_provider_t  ngx_http_agent_provider_anthropic;
extern ngx_http_agent_provider_t  ngx_http_agent_provider_gemini;


static ngx_http_agent_provider_t  *ngx_http_agent_providers[] = {
    &ngx_http_agent_provider_openai,
    &ngx_http_agent_provider_azure,
    &ngx_http_agent_provider_anthropic,
    &ngx_http_agent_provider_gemini,
    NULL
};


ngx_http_agent_provider_t *
ngx_http_agent_providers_find(ngx_str_t *name)
{
    ngx_http_agent_provider_t  **p;

    for (p = ngx_http_agent_providers; *p; p++) {
        if ((*p)->name.len == name->len
            && ngx_strncmp((*p)->name.data, name->data, name->len) == 0)
        {
            return *p;
        }
    }

    return NULL;
}
