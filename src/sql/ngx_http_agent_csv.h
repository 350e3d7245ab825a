
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_CSV_H_INCLUDED_
#define _NGX_HTTP_AGENT_CSV_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


#define NGX_HTTP_AGENT_CSV_MAX_COLUMNS  1000


ngx_int_t ngx_http_agent_csv_import(ngx_pool_t *pool, ngx_log_t *log,
    u_char *data, size_t len, ngx_uint_t first,
    ngx_http_agent_resource_t *res, ngx_str_t *err);
ngx_int_t ngx_http_agent_csv_table_name(ngx_pool_t *pool, ngx_str_t *file,
    ngx_array_t *taken, ngx_str_t *table);


#endif /* _NGX_HTTP_AGENT_CSV_H_INCLUDED_ */
