
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_REPLY_H_INCLUDED_
#define _NGX_HTTP_AGENT_REPLY_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_engine.h"


ngx_http_agent_store_call_t *ngx_http_agent_reply_sc(ngx_http_request_t *r);
ngx_int_t ngx_http_agent_reply_wait(ngx_http_request_t *r);
void ngx_http_agent_reply_finish(ngx_http_request_t *r, ngx_int_t rc);
ngx_int_t ngx_http_agent_reply_rc(ngx_http_request_t *r, ngx_int_t rc);
ngx_uint_t ngx_http_agent_reply_plain(ngx_http_request_t *r);
ngx_int_t ngx_http_agent_reply_error_json(ngx_pool_t *pool, ngx_uint_t detail,
    ngx_str_t *text, ngx_str_t *out);
ngx_int_t ngx_http_agent_reply_send(ngx_http_request_t *r, ngx_uint_t status,
    ngx_str_t *json);
ngx_int_t ngx_http_agent_reply_json(ngx_http_request_t *r, ngx_uint_t status,
    ngx_http_agent_json_t *j);
ngx_int_t ngx_http_agent_reply_send_chain(ngx_http_request_t *r,
    ngx_uint_t status, ngx_chain_t *out, off_t size);
void ngx_http_agent_reply_hold(ngx_http_request_t *r);
ngx_int_t ngx_http_agent_reply_release(ngx_http_request_t *r, ngx_int_t rc);
ngx_int_t ngx_http_agent_reply_not_allowed(ngx_http_request_t *r,
    ngx_uint_t allowed);
ngx_int_t ngx_http_agent_reply_error(ngx_http_request_t *r, ngx_uint_t status,
    const char *fmt, ...);
ngx_int_t ngx_http_agent_reply_no_session(ngx_http_request_t *r,
    ngx_str_t *id);
ngx_int_t ngx_http_agent_reply_session_lock(ngx_http_request_t *r,
    ngx_str_t *id, ngx_str_t *run_id, const char *after);
void ngx_http_agent_reply_path(ngx_http_request_t *r, ngx_str_t *path);
ngx_int_t ngx_http_agent_reply_parse(ngx_http_request_t *r,
    ngx_str_t *body, yajl_val *v, ngx_uint_t optional);
ngx_int_t ngx_http_agent_reply_session_create(ngx_http_request_t *r,
    ngx_str_t *id, ngx_str_t *title, yajl_val metadata,
    ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_reply_scope_id(ngx_pool_t *pool, ngx_str_t *owner,
    ngx_str_t *id, ngx_str_t *scoped);
ngx_int_t ngx_http_agent_reply_session_scope(ngx_http_request_t *r,
    ngx_str_t *id);
ngx_int_t ngx_http_agent_reply_session_get(ngx_http_request_t *r,
    ngx_str_t *id, ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_reply_session(ngx_http_request_t *r, ngx_str_t *id,
    ngx_http_agent_session_t *s, ngx_int_t rc);


#endif /* _NGX_HTTP_AGENT_REPLY_H_INCLUDED_ */
