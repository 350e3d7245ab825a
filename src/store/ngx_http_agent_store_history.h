
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_STORE_HISTORY_H_INCLUDED_
#define _NGX_HTTP_AGENT_STORE_HISTORY_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


/* a stored message's columns, as a back end reads them (store_history.c) */
enum {
    NGX_HTTP_AGENT_STORE_HISTORY_ROLE = 0,
    NGX_HTTP_AGENT_STORE_HISTORY_CONTENT,
    NGX_HTTP_AGENT_STORE_HISTORY_TOOL_CALLS,
    NGX_HTTP_AGENT_STORE_HISTORY_TOOL_CALL_ID,
    NGX_HTTP_AGENT_STORE_HISTORY_NAME,
    NGX_HTTP_AGENT_STORE_HISTORY_IMAGES,
    NGX_HTTP_AGENT_STORE_HISTORY_METADATA,
    NGX_HTTP_AGENT_STORE_HISTORY_CREATED_AT,
    /* the content with its images left out (agent_images_keep) */
    NGX_HTTP_AGENT_STORE_HISTORY_SHOWN,
    NGX_HTTP_AGENT_STORE_HISTORY_FIELDS
};


typedef struct ngx_http_agent_store_history_s  ngx_http_agent_store_history_t;


ngx_http_agent_store_history_t *ngx_http_agent_store_history_find(
    ngx_str_t *session, int64_t upto, int64_t *from, int64_t *last);
void ngx_http_agent_store_history_reset(ngx_http_agent_store_history_t *h);
void ngx_http_agent_store_history_drop(ngx_http_agent_store_history_t *h);
ngx_int_t ngx_http_agent_store_history_add(ngx_http_agent_store_history_t *h,
    int64_t id, int64_t seq, ngx_str_t *f);
ngx_int_t ngx_http_agent_store_history_out(ngx_http_agent_store_history_t *h,
    ngx_pool_t *pool, int64_t upto, ngx_int_t images_keep,
    ngx_array_t *messages);
u_char *ngx_http_agent_store_history_text(u_char *p, size_t len);


#endif /* _NGX_HTTP_AGENT_STORE_HISTORY_H_INCLUDED_ */
