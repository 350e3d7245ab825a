
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_SEND_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_SEND_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <libpq-fe.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg_query.h"


/*
 * A statement sent (pg_send.c): on its call's connection, in line
 * behind the others.
 */
#pragma GCC visibility push(hidden)


/* NGX_AGAIN: the caller is woken with the answer */
ngx_int_t ngx_http_agent_pg_send(ngx_http_agent_pg_query_t *q,
    ngx_uint_t forget);
ngx_int_t ngx_http_agent_pg_ask(ngx_http_agent_store_call_t *sc,
    ngx_uint_t stmt, ngx_http_agent_pg_decode_pt decode, const char *fmt,
    ...);
ngx_int_t ngx_http_agent_pg_follow(ngx_http_agent_pg_query_t *q,
    ngx_http_agent_pg_query_t *next);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_SEND_H_INCLUDED_ */
