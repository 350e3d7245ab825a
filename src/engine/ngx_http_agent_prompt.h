
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PROMPT_H_INCLUDED_
#define _NGX_HTTP_AGENT_PROMPT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


#define NGX_HTTP_AGENT_PROMPT_SYSTEM  "react_system.md"


typedef struct {
    ngx_str_t                  name;
    ngx_str_t                  value;
} ngx_http_agent_prompt_var_t;


ngx_int_t ngx_http_agent_prompt_load(ngx_conf_t *cf, ngx_str_t *dir,
    ngx_str_t *file, ngx_str_t *out);


/* for the files of src/engine/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_prompt_builtin(ngx_conf_t *cf, ngx_str_t *dir,
    ngx_str_t *file, ngx_str_t *out);
ngx_int_t ngx_http_agent_prompt_render(ngx_pool_t *pool, ngx_str_t *tpl,
    ngx_http_agent_prompt_var_t *vars, ngx_uint_t n, ngx_str_t *out);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PROMPT_H_INCLUDED_ */
