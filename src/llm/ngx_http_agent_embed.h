
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_EMBED_H_INCLUDED_
#define _NGX_HTTP_AGENT_EMBED_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_store.h"


/* agent_embeddings MODEL [dims=N] [fields=a,b.c]: a location's */
typedef struct {
    ngx_str_t                      name;
    ngx_http_agent_model_t        *model;     /* NULL: no embeddings */
    ngx_uint_t                     dims;      /* 0: the model's own */
    ngx_array_t                   *fields;    /* ngx_str_t: what of an
                                                 item is embedded */
} ngx_http_agent_embed_conf_t;


extern ngx_module_t  ngx_http_agent_embed_module;


ngx_http_agent_embed_conf_t *ngx_http_agent_embed_conf(
    ngx_http_request_t *r);
ngx_int_t ngx_http_agent_embed_text(ngx_http_request_t *r,
    ngx_http_agent_store_call_t *sc, ngx_str_t *text, ngx_uint_t query,
    ngx_str_t *vector, ngx_str_t *err);
ngx_int_t ngx_http_agent_embed_item(ngx_http_request_t *r,
    ngx_http_agent_store_call_t *sc, yajl_val value, ngx_str_t *fields,
    ngx_uint_t n, ngx_str_t *vector, ngx_str_t *err);


#endif /* _NGX_HTTP_AGENT_EMBED_H_INCLUDED_ */
