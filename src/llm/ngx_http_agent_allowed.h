
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_ALLOWED_H_INCLUDED_
#define _NGX_HTTP_AGENT_ALLOWED_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_module.h"


ngx_http_agent_model_t *ngx_http_agent_allowed_model(
    ngx_http_agent_main_conf_t *amcf, ngx_http_agent_loc_conf_t *alcf,
    ngx_str_t *name);
ngx_http_agent_model_t *ngx_http_agent_allowed_model_default(
    ngx_http_agent_main_conf_t *amcf, ngx_http_agent_loc_conf_t *alcf);
ngx_http_agent_database_t *ngx_http_agent_allowed_database(
    ngx_http_agent_main_conf_t *amcf, ngx_http_agent_loc_conf_t *alcf,
    ngx_str_t *name);
char *ngx_http_agent_allowed_check(ngx_conf_t *cf,
    ngx_http_agent_loc_conf_t *alcf);
char *ngx_http_agent_allowed_slot(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);


#endif /* _NGX_HTTP_AGENT_ALLOWED_H_INCLUDED_ */
