
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_SQLITE_LATER_H_INCLUDED_
#define _NGX_HTTP_AGENT_SQLITE_LATER_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


/*
 * NGX_AGENT_STORE_DEFER, a test's knob (sqlite_later.c): the SQLite store
 * answers later, through the answers kept in the call, as PostgreSQL does.
 */
#pragma GCC visibility push(hidden)


/* what an operation writes for its caller: a struct, rows it adds */
typedef struct {
    ngx_int_t                      rc;
    void                          *out[2];
    size_t                         size[2];
    ngx_array_t                   *rows[2];
    ngx_uint_t                     nrows[2];   /* before the operation */
} ngx_http_agent_sqlite_outs_t;


/* the operations as they answer at once */
extern ngx_http_agent_store_backend_t  ngx_http_agent_sqlite_now;


void ngx_http_agent_sqlite_later_init(void);
void ngx_http_agent_sqlite_later_sessions(void);
void ngx_http_agent_sqlite_later_runs(void);
void ngx_http_agent_sqlite_outs(ngx_http_agent_sqlite_outs_t *o, void *out,
    size_t size, ngx_array_t *rows);
ngx_uint_t ngx_http_agent_sqlite_kept(ngx_http_agent_store_call_t *sc,
    ngx_uint_t op, ngx_str_t *k1, ngx_str_t *k2,
    ngx_http_agent_sqlite_outs_t *o);
ngx_int_t ngx_http_agent_sqlite_later(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_sqlite_outs_t *o, ngx_int_t rc);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_SQLITE_LATER_H_INCLUDED_ */
