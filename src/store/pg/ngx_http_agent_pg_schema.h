
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_SCHEMA_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_SCHEMA_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


#pragma GCC visibility push(hidden)


extern const char  *ngx_http_agent_pg_schema;


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_SCHEMA_H_INCLUDED_ */
