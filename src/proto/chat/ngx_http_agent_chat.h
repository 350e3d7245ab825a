
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_CHAT_H_INCLUDED_
#define _NGX_HTTP_AGENT_CHAT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"


char *ngx_http_agent_conf_graph(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
char *ngx_http_agent_conf_graph_use(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
char *ngx_http_agent_conf_graph_stream(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
char *ngx_http_agent_conf_graph_merge(ngx_conf_t *cf,
    ngx_http_agent_loc_conf_t *conf);


#endif /* _NGX_HTTP_AGENT_CHAT_H_INCLUDED_ */
