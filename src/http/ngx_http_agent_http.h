
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_HTTP_H_INCLUDED_
#define _NGX_HTTP_AGENT_HTTP_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_module.h"
#include "ngx_http_agent_engine.h"


/* rc: NGX_OK with the body, or an HTTP status */
typedef void (*ngx_http_agent_body_pt)(ngx_http_request_t *r,
    ngx_str_t *body, ngx_int_t rc);


ngx_int_t ngx_http_agent_body_get(ngx_http_request_t *r, void *thread_pool,
    ngx_str_t *body, ngx_http_agent_body_pt done);


/* agent_cors ORIGIN ... [credentials=on] | * | off */
typedef struct {
    ngx_array_t               *origins;     /* ngx_str_t */
    unsigned                   any:1;       /* "*" */
    unsigned                   credentials:1;
} ngx_http_agent_cors_t;


char *ngx_http_agent_cors(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
ngx_int_t ngx_http_agent_cors_handler(ngx_http_request_t *r,
    ngx_http_agent_cors_t *cors);
ngx_uint_t ngx_http_agent_cors_origin(ngx_http_request_t *r,
    ngx_http_agent_cors_t *cors);


ngx_http_request_t *ngx_http_agent_headless_create(ngx_http_conf_ctx_t *conf,
    ngx_str_t *uri, ngx_log_t *log);
ngx_uint_t ngx_http_agent_headless(ngx_http_request_t *r);
void ngx_http_agent_headless_close(ngx_http_request_t *r);


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


#endif /* _NGX_HTTP_AGENT_HTTP_H_INCLUDED_ */
