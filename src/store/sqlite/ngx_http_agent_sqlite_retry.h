
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_SQLITE_RETRY_H_INCLUDED_
#define _NGX_HTTP_AGENT_SQLITE_RETRY_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


/*
 * A busy SQLite file (sqlite_retry.c): an operation whose caller can wait
 * is tried again from a timer.  Below the rest of the back end: it knows
 * of the store's calls only, not of the file.
 */
#pragma GCC visibility push(hidden)


/* set by a statement that failed: SQLite found the file busy */
extern ngx_uint_t     ngx_http_agent_sqlite_busy_seen;

/* how long the busy handler yields before it gives up, in ms */
extern ngx_msec_t     ngx_http_agent_sqlite_spin;


/* an operation tried again on a busy file */
typedef ngx_int_t (*ngx_http_agent_sqlite_try_pt)(
    ngx_http_agent_store_call_t *sc, void *args);

ngx_uint_t ngx_http_agent_sqlite_can_wait(ngx_http_agent_store_call_t *sc,
    ngx_uint_t replay);
ngx_int_t ngx_http_agent_sqlite_busy(ngx_http_agent_store_call_t *sc,
    ngx_int_t rc, ngx_http_agent_sqlite_try_pt try, void *args, size_t size);
void ngx_http_agent_sqlite_cancel(ngx_http_agent_store_call_t *sc);
ngx_int_t ngx_http_agent_sqlite_wake_later(ngx_http_agent_store_call_t *sc);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_SQLITE_RETRY_H_INCLUDED_ */
