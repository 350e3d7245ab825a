
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_ASSISTANT_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_ASSISTANT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


/* The PostgreSQL store's assistants (pg_assistant.c). */


#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_pg_assistant_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_assistant_row_t *row);
ngx_int_t ngx_http_agent_pg_assistant_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, int64_t version,
    ngx_http_agent_assistant_row_t *row);
ngx_int_t ngx_http_agent_pg_assistant_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *graph_id, ngx_str_t *id, ngx_array_t *rows);
ngx_int_t ngx_http_agent_pg_assistant_latest(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, int64_t version, ngx_str_t *now);
ngx_int_t ngx_http_agent_pg_assistant_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_ASSISTANT_H_INCLUDED_ */
