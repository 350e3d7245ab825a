
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_PRUNE_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_PRUNE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


/* agent_checkpoint_keep and a thread's storage (pg_prune.c) */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_pg_checkpoint_prune(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_uint_t keep, ngx_msec_t age);
ngx_int_t ngx_http_agent_pg_thread_storage(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_http_agent_storage_t *st);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_PRUNE_H_INCLUDED_ */
