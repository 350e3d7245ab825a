
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_REPLY_RPC_H_INCLUDED_
#define _NGX_HTTP_AGENT_REPLY_RPC_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"


/* a JSON-RPC request's, kept across its passes (the context's proto) */
typedef struct {
    ngx_str_t                  id;          /* the JSON-RPC id, or empty */
    ngx_str_t                  thread_id;   /* a new thread's, once made */
    ngx_str_t                  run_id;      /* a new run's, once made */
    unsigned                   response:1;  /* the message answers one of
                                               ours: an error keeps its
                                               HTTP status, names no id */
    ngx_int_t                (*problem)(ngx_http_request_t *r,
                                        ngx_int_t code, ngx_str_t *msg,
                                        ngx_uint_t *status, ngx_str_t *out);
                                            /* an error in the protocol's
                                               own shape instead (A2A's
                                               HTTP+JSON binding) */
    unsigned                   ok:1;        /* a malformed request is 200
                                               too, as other request
                                               errors (A2A's TCK) */
} ngx_http_agent_reply_rpc_t;


ngx_http_agent_reply_rpc_t *ngx_http_agent_reply_rpc(ngx_http_request_t *r);
ngx_int_t ngx_http_agent_reply_rpc_taken(ngx_http_request_t *r,
    ngx_uint_t status);
ngx_int_t ngx_http_agent_reply_rpc_read(ngx_http_request_t *r,
    ngx_str_t *body, ngx_http_agent_jsonrpc_t *rpc, ngx_uint_t notified,
    ngx_uint_t responses);
ngx_int_t ngx_http_agent_reply_rpc_result(ngx_http_request_t *r,
    ngx_http_agent_json_t *j);
ngx_int_t ngx_http_agent_reply_rpc_error(ngx_http_request_t *r,
    ngx_uint_t status, ngx_int_t code, const char *fmt, ...);
ngx_int_t ngx_http_agent_reply_rpc_thread(ngx_http_request_t *r,
    ngx_str_t *id, ngx_uint_t create, ngx_http_agent_session_t *s);


#endif /* _NGX_HTTP_AGENT_REPLY_RPC_H_INCLUDED_ */
