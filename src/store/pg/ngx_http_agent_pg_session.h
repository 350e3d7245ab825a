
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_SESSION_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_SESSION_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <libpq-fe.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg_query.h"


/*
 * The PostgreSQL store's sessions and their lease (pg_session.c).
 */
#pragma GCC visibility push(hidden)


/* a session's row from column col on, in the order of SESSION_COLS */
void ngx_http_agent_pg_session_row(ngx_pool_t *pool, PGresult *res, int row,
    int col, ngx_http_agent_session_t *s);

/* a lease asked for: the session, the run, until when */
typedef struct {
    ngx_str_t                  id;
    ngx_str_t                  run_id;
    int64_t                    expires;
    int64_t                    gen;      /* the turn's (fencing) */
} ngx_http_agent_pg_lock_t;


ngx_int_t ngx_http_agent_pg_take_over(ngx_http_agent_pg_query_t *q,
    PGresult *res, int owner_col, int host_col, int pid_col,
    ngx_http_agent_pg_lock_t *lk, ngx_http_agent_pg_decode_pt decode);

/* for the table */
ngx_int_t ngx_http_agent_pg_session_create(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *title, ngx_str_t *metadata, ngx_str_t *owner,
    ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_pg_session_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_pg_session_count(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_session_query_t *q, int64_t *count);
ngx_int_t ngx_http_agent_pg_session_list(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_session_query_t *q, ngx_array_t *sessions);
ngx_int_t ngx_http_agent_pg_session_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id);
ngx_int_t ngx_http_agent_pg_session_set(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_uint_t field, ngx_str_t *value);
ngx_int_t ngx_http_agent_pg_session_copy(ngx_http_agent_store_call_t *sc,
    ngx_str_t *from, ngx_str_t *to, ngx_str_t *now);
ngx_int_t ngx_http_agent_pg_lock(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_msec_t lease);
ngx_int_t ngx_http_agent_pg_lock_renew(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_msec_t lease);
ngx_int_t ngx_http_agent_pg_unlock(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_SESSION_H_INCLUDED_ */
