
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm_int.h"


/*
 * provider=azure: an Azure OpenAI deployment.  The URL is the deployment's
 * chat completions URL with its api-version
 * (https://NAME.openai.azure.com/openai/deployments/DEPLOYMENT/chat/
 * completions?api-version=...); the key goes in "api-key"; the body and
 * the stream are OpenAI's.
 */


static ngx_int_t ngx_http_agent_azure_request(ngx_http_agent_llm_t *llm,
    ngx_str_t *url, ngx_array_t *headers, ngx_str_t *body);
static ngx_int_t ngx_http_agent_azure_embed(ngx_http_agent_llm_t *llm,
    ngx_str_t *url, ngx_array_t *headers, ngx_str_t *body);
static ngx_int_t ngx_http_agent_azure_key(ngx_http_agent_llm_t *llm,
    ngx_array_t *headers);


ngx_http_agent_provider_t  ngx_http_agent_provider_azure = {
    ngx_string("azure"),
    ngx_null_string,
    ngx_http_agent_azure_request,
    ngx_http_agent_provider_openai_event,
    ngx_http_agent_azure_embed,
    ngx_http_agent_provider_openai_embedded
};


static ngx_int_t
ngx_http_agent_azure_request(ngx_http_agent_llm_t *llm, ngx_str_t *url,
    ngx_array_t *headers, ngx_str_t *body)
{
    *url = llm->model->url;

    if (ngx_http_agent_azure_key(llm, headers) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_agent_provider_openai_body(llm, body);
}


/* the deployment's embeddings URL: .../embeddings?api-version=... */

static ngx_int_t
ngx_http_agent_azure_embed(ngx_http_agent_llm_t *llm, ngx_str_t *url,
    ngx_array_t *headers, ngx_str_t *body)
{
    if (ngx_http_agent_azure_key(llm, headers) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_agent_provider_openai_embed_body(llm, url, body);
}


static ngx_int_t
ngx_http_agent_azure_key(ngx_http_agent_llm_t *llm, ngx_array_t *headers)
{
    if (llm->key.len == 0) {
        return NGX_OK;
    }

    return ngx_http_agent_provider_header(llm, headers, "api-key: %V",
                                          &llm->key);
}
