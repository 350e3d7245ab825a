
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_SQLITE_SESSION_H_INCLUDED_
#define _NGX_HTTP_AGENT_SQLITE_SESSION_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


/*
 * The SQLite store's sessions, their lease and their files' rows
 * (sqlite_session.c), for its table.
 */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_sqlite_session_open(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *owner, ngx_http_agent_session_t *s,
    ngx_str_t *run_id, ngx_msec_t lease, ngx_int_t images_keep,
    ngx_http_agent_checkpoint_t *cp, ngx_array_t *messages,
    ngx_array_t *resources);
ngx_int_t ngx_http_agent_sqlite_session_create(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *title, ngx_str_t *metadata, ngx_str_t *owner,
    ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_sqlite_session_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_sqlite_session_count(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_session_query_t *q,
    int64_t *count);
ngx_int_t ngx_http_agent_sqlite_session_list(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_session_query_t *q, ngx_array_t *sessions);
ngx_int_t ngx_http_agent_sqlite_session_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id);
ngx_int_t ngx_http_agent_sqlite_session_copy(ngx_http_agent_store_call_t *sc,
    ngx_str_t *from, ngx_str_t *to, ngx_str_t *now);
ngx_int_t ngx_http_agent_sqlite_session_set(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_uint_t field, ngx_str_t *value);
ngx_int_t ngx_http_agent_sqlite_lock(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_msec_t lease);
ngx_int_t ngx_http_agent_sqlite_lock_renew(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_msec_t lease);
ngx_int_t ngx_http_agent_sqlite_unlock(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id);
ngx_int_t ngx_http_agent_sqlite_resource_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_array_t *resources);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_SQLITE_SESSION_H_INCLUDED_ */
