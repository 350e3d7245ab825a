
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_SQLITE_WAL_H_INCLUDED_
#define _NGX_HTTP_AGENT_SQLITE_WAL_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>


/* the WAL's checkpoint of the worker's handle, on the thread pool */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_sqlite_wal_init(ngx_cycle_t *cycle, sqlite3 *db,
    ngx_str_t *path, void *thread_pool);
void ngx_http_agent_sqlite_wal_close(void);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_SQLITE_WAL_H_INCLUDED_ */
