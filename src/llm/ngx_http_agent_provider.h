
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PROVIDER_H_INCLUDED_
#define _NGX_HTTP_AGENT_PROVIDER_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm_state.h"
#include "ngx_http_agent_util.h"


/* one wire format: it writes the request and reads the stream's events */
struct ngx_http_agent_provider_s {
    ngx_str_t                      name;
    ngx_str_t                      url;         /* the default, or empty */

    ngx_int_t                    (*request)(ngx_http_agent_llm_t *llm,
                                      ngx_str_t *url, ngx_array_t *headers,
                                      ngx_str_t *body);
    ngx_int_t                    (*event)(ngx_http_agent_llm_t *llm,
                                      yajl_val v);

    /* embeddings (llm->req->inputs), where the provider has them */
    ngx_int_t                    (*embed)(ngx_http_agent_llm_t *llm,
                                      ngx_str_t *url, ngx_array_t *headers,
                                      ngx_str_t *body);
    ngx_int_t                    (*embedded)(ngx_http_agent_llm_t *llm,
                                      yajl_val v);
};


/* writes the parts of message i of the call */
typedef void (*ngx_http_agent_provider_part_pt)(ngx_http_agent_llm_t *llm,
    ngx_http_agent_json_t *j, ngx_http_agent_msg_t *m, ngx_uint_t i);


/* what the providers share (the registry is ngx_http_agent_providers.c) */


/* for the files of src/llm/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_array_t *ngx_http_agent_provider_calls(ngx_http_agent_json_t *j,
    ngx_http_agent_msg_t *m);
ngx_int_t ngx_http_agent_provider_function(ngx_http_agent_json_t *j,
    yajl_val t, yajl_val *params);
ngx_int_t ngx_http_agent_provider_header(ngx_http_agent_llm_t *llm,
    ngx_array_t *headers, const char *fmt, ...);
ngx_int_t ngx_http_agent_provider_image(yajl_val images, size_t i,
    ngx_str_t *mime, ngx_str_t *data);
yajl_val ngx_http_agent_provider_images(ngx_http_agent_llm_t *llm,
    ngx_http_agent_msg_t *m);
int64_t ngx_http_agent_provider_int(yajl_val v, const char *name);
void ngx_http_agent_provider_object(ngx_http_agent_json_t *j, yajl_val v);
yajl_val ngx_http_agent_provider_tools(ngx_http_agent_llm_t *llm);
ngx_int_t ngx_http_agent_provider_vectors(ngx_http_agent_llm_t *llm,
    yajl_val list, const char *key);
void ngx_http_agent_provider_turns(ngx_http_agent_llm_t *llm,
    ngx_http_agent_json_t *j, const char *key, ngx_str_t *ai,
    ngx_http_agent_provider_part_pt part);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PROVIDER_H_INCLUDED_ */
