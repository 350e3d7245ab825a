
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_SSE_H_INCLUDED_
#define _NGX_HTTP_AGENT_SSE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


/* an event's name at most (a longer one is sent with none) */
#define NGX_HTTP_AGENT_SSE_NAME  512


typedef struct {
    ngx_http_request_t        *request;
    ngx_uint_t                 id;
    ngx_event_t                heartbeat;
    ngx_msec_t                 interval;
    ngx_chain_t               *free;
    ngx_chain_t               *busy;
    ngx_chain_t               *out;        /* written, not yet sent */
    ngx_chain_t              **last_out;
    ngx_event_t                flush;
    unsigned                   failed:1;
    unsigned                   finished:1;
    unsigned                   keep:1;     /* a lost client ends nothing */
    unsigned                   counted:1;  /* in agent_open_streams */
    unsigned                   zero:1;     /* ids from 0: LangGraph's */
} ngx_http_agent_sse_t;


ngx_int_t ngx_http_agent_sse_start(ngx_http_agent_sse_t *sse,
    ngx_http_request_t *r, ngx_msec_t interval);
ngx_int_t ngx_http_agent_sse_named(ngx_http_agent_sse_t *sse, ngx_str_t *name,
    ngx_str_t *json, ngx_uint_t now);
ngx_int_t ngx_http_agent_sse_finish(ngx_http_agent_sse_t *sse);
void ngx_http_agent_sse_stop(ngx_http_agent_sse_t *sse);


/* for the files of src/stream/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_SSE_H_INCLUDED_ */
