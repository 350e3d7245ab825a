
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_REDRIVE_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_REDRIVE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


/* PostgreSQL's lost runs and their claim (pg_redrive.c) */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_pg_run_lost(ngx_http_agent_store_call_t *sc,
    ngx_array_t *lost);
ngx_int_t ngx_http_agent_pg_run_orphans(ngx_http_agent_store_call_t *sc,
    ngx_array_t *orphans);
ngx_int_t ngx_http_agent_pg_run_claim(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_lost_t *lost, ngx_msec_t hold,
    ngx_http_agent_run_row_t *row);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_REDRIVE_H_INCLUDED_ */
