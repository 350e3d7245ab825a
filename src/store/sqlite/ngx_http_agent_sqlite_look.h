
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_SQLITE_LOOK_H_INCLUDED_
#define _NGX_HTTP_AGENT_SQLITE_LOOK_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


/* the take-over check's reads, on a handle of their own (sqlite_look.c) */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_sqlite_look_init(ngx_cycle_t *cycle,
    ngx_str_t *path, void *thread_pool);
void ngx_http_agent_sqlite_look_close(void);

ngx_int_t ngx_http_agent_sqlite_run_lost(ngx_http_agent_store_call_t *sc,
    ngx_array_t *lost);
ngx_int_t ngx_http_agent_sqlite_run_orphans(ngx_http_agent_store_call_t *sc,
    ngx_array_t *orphans);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_SQLITE_LOOK_H_INCLUDED_ */
