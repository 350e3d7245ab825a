
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_GROW_H_INCLUDED_
#define _NGX_HTTP_AGENT_GROW_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


ngx_int_t ngx_http_agent_grow(void *buf, size_t used, size_t *size,
    size_t need, size_t max, ngx_log_t *log);


#endif /* _NGX_HTTP_AGENT_GROW_H_INCLUDED_ */
