
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TURN_WRITES_H_INCLUDED_
#define _NGX_HTTP_AGENT_TURN_WRITES_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_store.h"


void ngx_http_agent_turn_writes_keep(ngx_http_agent_run_t *run,
    ngx_uint_t index, ngx_str_t *id, ngx_str_t *result);
ngx_int_t ngx_http_agent_turn_writes_kept(ngx_http_agent_run_t *run,
    ngx_str_t *id, ngx_str_t *result);
ngx_int_t ngx_http_agent_turn_writes_claim(ngx_http_agent_run_t *run,
    ngx_uint_t index, ngx_str_t *id);
ngx_int_t ngx_http_agent_turn_key(ngx_http_agent_run_t *run, ngx_str_t *id,
    ngx_str_t *key);
ngx_int_t ngx_http_agent_turn_writes_read(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_row_t *row);


#endif /* _NGX_HTTP_AGENT_TURN_WRITES_H_INCLUDED_ */
