
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_SQLITE_NEAR_H_INCLUDED_
#define _NGX_HTTP_AGENT_SQLITE_NEAR_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


/* the items searched by meaning, on a handle of its own (sqlite_near.c) */
#pragma GCC visibility push(hidden)

void ngx_http_agent_sqlite_near_init(ngx_str_t *path, void *thread_pool);
ngx_int_t ngx_http_agent_sqlite_near(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q, ngx_array_t *items);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_SQLITE_NEAR_H_INCLUDED_ */
