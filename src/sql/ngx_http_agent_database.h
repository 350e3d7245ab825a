
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_DATABASE_H_INCLUDED_
#define _NGX_HTTP_AGENT_DATABASE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_module.h"


char *ngx_http_agent_database(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
ngx_http_agent_database_t *ngx_http_agent_database_find(
    ngx_http_agent_main_conf_t *amcf, ngx_str_t *name);
char *ngx_http_agent_database_use(ngx_conf_t *cf,
    ngx_http_agent_loc_conf_t *alcf);


#endif /* _NGX_HTTP_AGENT_DATABASE_H_INCLUDED_ */
