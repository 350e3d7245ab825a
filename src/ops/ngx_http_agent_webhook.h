
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_WEBHOOK_H_INCLUDED_
#define _NGX_HTTP_AGENT_WEBHOOK_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


/* agent_webhooks URL-PREFIX ... [key_env=VAR] */
typedef struct {
    ngx_array_t               *prefixes;    /* ngx_str_t */
    ngx_str_t                  key_env;     /* NUL-terminated, or empty */
} ngx_http_agent_webhooks_t;


char *ngx_http_agent_webhook_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
ngx_uint_t ngx_http_agent_webhook_allowed(ngx_http_agent_webhooks_t *hooks,
    ngx_str_t *url);
ngx_int_t ngx_http_agent_webhook_send(ngx_http_agent_webhooks_t *hooks,
    ngx_str_t *url, ngx_str_t *body, ngx_str_t *header, ngx_str_t *id,
    ngx_log_t *log);


#endif /* _NGX_HTTP_AGENT_WEBHOOK_H_INCLUDED_ */
