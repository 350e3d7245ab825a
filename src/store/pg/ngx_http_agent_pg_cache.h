
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_CACHE_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_CACHE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


/* The PostgreSQL store's cache entries (pg_cache.c). */

#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_pg_cache_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *key, int64_t now, ngx_str_t *value);
ngx_int_t ngx_http_agent_pg_cache_put(ngx_http_agent_store_call_t *sc,
    ngx_str_t *key, ngx_str_t *value, int64_t now, int64_t expires,
    ngx_uint_t items, size_t size);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_CACHE_H_INCLUDED_ */
