
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_OPEN_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_OPEN_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <libpq-fe.h>

#include "ngx_http_agent_store.h"


/*
 * A turn's open of a session on PostgreSQL (pg_open.c): the lease
 * and the state the turn starts from, in one round trip.
 */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_pg_session_open(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *owner, ngx_http_agent_session_t *s,
    ngx_str_t *run_id, ngx_msec_t lease, ngx_int_t images_keep,
    ngx_http_agent_checkpoint_t *cp, ngx_array_t *messages,
    ngx_array_t *resources);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_OPEN_H_INCLUDED_ */
