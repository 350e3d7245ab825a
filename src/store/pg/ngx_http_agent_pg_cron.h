
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_CRON_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_CRON_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


/* PostgreSQL's crons (pg_cron.c) */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_pg_cron_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_cron_row_t *row);
ngx_int_t ngx_http_agent_pg_cron_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, ngx_http_agent_cron_row_t *row);
ngx_int_t ngx_http_agent_pg_cron_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_array_t *rows);
ngx_int_t ngx_http_agent_pg_cron_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id);
ngx_int_t ngx_http_agent_pg_cron_due(ngx_http_agent_store_call_t *sc,
    int64_t now, ngx_array_t *rows);
ngx_int_t ngx_http_agent_pg_cron_claim(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t was, int64_t next);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_CRON_H_INCLUDED_ */
