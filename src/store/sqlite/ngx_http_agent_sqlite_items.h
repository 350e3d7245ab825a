
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_SQLITE_ITEMS_H_INCLUDED_
#define _NGX_HTTP_AGENT_SQLITE_ITEMS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"


/* The SQLite store's items of the LangGraph store (sqlite_items.c). */


#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_sqlite_item_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_t *item, int64_t now, ngx_uint_t quota_items,
    size_t quota_size);
ngx_int_t ngx_http_agent_sqlite_item_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *ns, ngx_str_t *key, int64_t now,
    ngx_http_agent_item_t *item);
ngx_int_t ngx_http_agent_sqlite_item_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *ns, ngx_str_t *key);
ngx_int_t ngx_http_agent_sqlite_item_search(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q, ngx_array_t *items);
void ngx_http_agent_sqlite_item_row(ngx_pool_t *pool, sqlite3_stmt *stmt,
    ngx_http_agent_item_t *item);
ngx_int_t ngx_http_agent_sqlite_item_namespaces(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_item_query_t *q,
    ngx_array_t *namespaces);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_SQLITE_ITEMS_H_INCLUDED_ */
