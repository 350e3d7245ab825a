
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_SUBREQUEST_H_INCLUDED_
#define _NGX_HTTP_AGENT_SUBREQUEST_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


/* status: the location's (502: it failed, 504: timeout); body: as caught */
typedef void (*ngx_http_agent_subrequest_pt)(void *data, ngx_uint_t status,
    ngx_str_t *body, ngx_uint_t truncated);


typedef struct {
    ngx_http_request_t             *request;    /* the turn's */
    ngx_http_request_t             *sr;
    ngx_http_agent_subrequest_pt    handler;
    void                           *data;
    ngx_str_t                       body;
    size_t                          max;
    ngx_event_t                     kick;
    ngx_event_t                     timer;
    /* called when the subrequest has ended, also after a cancel */
    void                          (*ended)(void *data);
    void                           *ended_data;
    unsigned                        truncated:1;
    unsigned                        last:1;     /* its body's end came */
    unsigned                        cancelled:1;
    unsigned                        done:1;
} ngx_http_agent_subrequest_t;


void *ngx_http_agent_subrequest_fetch(void *data, ngx_str_t *uri,
    ngx_str_t *json, ngx_str_t *key, size_t max, ngx_msec_t timeout,
    ngx_http_agent_subrequest_pt handler, void *handler_data);
void ngx_http_agent_subrequest_drop(void *s);
ngx_int_t ngx_http_agent_subrequest_init(ngx_conf_t *cf);


/* for the files of src/tools/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

void ngx_http_agent_subrequest_cancel(ngx_http_agent_subrequest_t *s);
ngx_http_agent_subrequest_t *ngx_http_agent_subrequest_start(
    ngx_http_request_t *r, ngx_str_t *uri, ngx_str_t *json, ngx_str_t *key,
    size_t max, ngx_msec_t timeout, ngx_http_agent_subrequest_pt handler,
    void *data);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_SUBREQUEST_H_INCLUDED_ */
