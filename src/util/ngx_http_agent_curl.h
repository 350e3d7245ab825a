
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_CURL_H_INCLUDED_
#define _NGX_HTTP_AGENT_CURL_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include <curl/curl.h>


typedef struct ngx_http_agent_curl_s  ngx_http_agent_curl_t;

/* return NGX_OK to go on, NGX_ERROR to abort the transfer */
typedef ngx_int_t (*ngx_http_agent_curl_data_pt)(void *data, u_char *p,
    size_t len);

/* rc: NGX_OK, or NGX_ERROR with err set; status: the HTTP status or 0 */
typedef void (*ngx_http_agent_curl_done_pt)(void *data, ngx_int_t rc,
    long status, ngx_str_t *err);


struct ngx_http_agent_curl_s {
    CURL                          *easy;
    struct curl_slist             *headers;
    ngx_log_t                     *log;
    ngx_event_t                    idle;
    ngx_msec_t                     idle_timeout;
    ngx_http_agent_curl_data_pt    on_data;
    ngx_http_agent_curl_done_pt    on_done;
    void                          *data;
    long                           retry_after; /* seconds, or -1 */
    size_t                         body_len;    /* posted */
    const char                    *want_header; /* kept when answered */
    u_char                         header[128];
    size_t                         header_len;
    char                           errbuf[CURL_ERROR_SIZE];
};


ngx_int_t ngx_http_agent_curl_init_process(ngx_cycle_t *cycle);
void ngx_http_agent_curl_exit_process(ngx_cycle_t *cycle);
ngx_http_agent_curl_t *ngx_http_agent_curl_create(ngx_pool_t *pool,
    ngx_log_t *log);
ngx_int_t ngx_http_agent_curl_post(ngx_http_agent_curl_t *x, ngx_str_t *url,
    ngx_array_t *headers, ngx_str_t *body, ngx_msec_t connect_timeout,
    ngx_msec_t timeout);
ngx_uint_t ngx_http_agent_curl_sent(ngx_http_agent_curl_t *x);
void ngx_http_agent_curl_cancel(ngx_http_agent_curl_t *x);
void ngx_http_agent_curl_unwatch(ngx_connection_t *c, ngx_uint_t closed);


#endif /* _NGX_HTTP_AGENT_CURL_H_INCLUDED_ */
