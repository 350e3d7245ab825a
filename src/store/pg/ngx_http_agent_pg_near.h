
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_NEAR_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_NEAR_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


/* the items searched by meaning, page by page (pg_near.c) */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_pg_near(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_NEAR_H_INCLUDED_ */
