
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_FILES_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_FILES_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <libpq-fe.h>

#include "ngx_http_agent_store.h"


/*
 * The PostgreSQL store's files (pg_files.c): a resource's bytes in
 * the store, their copy on each host that reads them.
 */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_pg_resource_add(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_http_agent_resource_t *res);
ngx_int_t ngx_http_agent_pg_resource_prepare(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_resource_t *res);
ngx_int_t ngx_http_agent_pg_local_path(ngx_pool_t *pool,
    ngx_http_agent_resource_t *r);
ngx_int_t ngx_http_agent_pg_resource_fetch(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_resource_t *res);
ngx_int_t ngx_http_agent_pg_resource_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_array_t *resources);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_FILES_H_INCLUDED_ */
