
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_TX_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_TX_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <libpq-fe.h>

#include "ngx_http_agent_store.h"


/*
 * A unit of writes on PostgreSQL (pg_tx.c): a transaction on the
 * call's connection.
 */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_pg_begin(ngx_http_agent_store_call_t *sc);
ngx_int_t ngx_http_agent_pg_commit(ngx_http_agent_store_call_t *sc);
void ngx_http_agent_pg_rollback(ngx_http_agent_store_call_t *sc);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_TX_H_INCLUDED_ */
