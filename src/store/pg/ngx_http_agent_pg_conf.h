
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_CONF_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_CONF_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <libpq-fe.h>

#include "ngx_http_agent_store.h"


/*
 * The PostgreSQL store's configuration (pg_conf.c): the URL and its
 * parameters, a connection's parameters, the schema the master sets up.
 */
#pragma GCC visibility push(hidden)


typedef struct {
    ngx_str_t                  url;
    ngx_str_t                  password;
    ngx_uint_t                 pool;
    ngx_msec_t                 timeout;
} ngx_http_agent_pg_conf_t;


extern ngx_http_agent_pg_conf_t        ngx_http_agent_pg_conf;

/* where this host keeps the files of the resources it reads */
extern ngx_str_t                       ngx_http_agent_pg_resources_dir;


char *ngx_http_agent_pg_conf_read(ngx_conf_t *cf, ngx_str_t *url);
ngx_int_t ngx_http_agent_pg_init(ngx_cycle_t *cycle, ngx_str_t *path,
    ngx_str_t *resources_dir, ngx_uid_t user, ngx_gid_t group);

/* a connection's parameters (connect_timeout in s) */
void ngx_http_agent_pg_conninfo(const char **keys, const char **values,
    char *timeout, const char *connect);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_CONF_H_INCLUDED_ */
