
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_REPLY_H_INCLUDED_
#define _NGX_HTTP_AGENT_REPLY_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_json.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_graph.h"


/* an error answer was sent: the caller stops, the handler finalizes */
#define NGX_HTTP_AGENT_SENT    -100

/* the store answers later: the request's pass runs again then */
#define NGX_HTTP_AGENT_WAITING -101


typedef enum {
    NGX_HTTP_AGENT_EP_SESSIONS = 0,
    NGX_HTTP_AGENT_EP_SESSION,
    NGX_HTTP_AGENT_EP_MESSAGES,
    NGX_HTTP_AGENT_EP_STATE,
    NGX_HTTP_AGENT_EP_HISTORY,
    NGX_HTTP_AGENT_EP_RESOURCES,
    NGX_HTTP_AGENT_EP_MESSAGE,
    NGX_HTTP_AGENT_EP_MODEL,
    NGX_HTTP_AGENT_EP_CONNECTION,
    NGX_HTTP_AGENT_EP_RESUME,
    NGX_HTTP_AGENT_EP_GRAPH,
    NGX_HTTP_AGENT_EP_LANGGRAPH
} ngx_http_agent_endpoint_e;


typedef struct {
    ngx_http_agent_endpoint_e       endpoint;
    ngx_str_t                       id;
    ngx_str_t                      *owner;     /* NULL: no agent_owner */
    ngx_str_t                       owner_value;
    ngx_int_t                       sent_rc;
    void                           *env;       /* the turn's, for the
                                                  $agent_ variables */
    void                           *sse;       /* its stream */
    void                           *api;       /* the LangGraph API's
                                                  request (lg.c) */

    /* the store's calls: a pass that waits on one runs again on its answer */
    ngx_http_agent_store_call_t     store;
    ngx_str_t                       body;
    ngx_str_t                       lock_id;

    /* an answer held until the lease it was given under is let go */
    ngx_chain_t                    *held;
    off_t                           held_size;
    ngx_uint_t                      held_status;

    unsigned                        has_body:1;
    unsigned                        waited:1;
    unsigned                        hold:1;
} ngx_http_agent_ctx_t;


ngx_http_agent_store_call_t *ngx_http_agent_sc(ngx_http_request_t *r);
void ngx_http_agent_finish(ngx_http_request_t *r, ngx_int_t rc);
ngx_int_t ngx_http_agent_send(ngx_http_request_t *r, ngx_uint_t status,
    ngx_str_t *json);
ngx_int_t ngx_http_agent_send_chain(ngx_http_request_t *r, ngx_uint_t status,
    ngx_chain_t *out, off_t size);
void ngx_http_agent_hold(ngx_http_request_t *r);
ngx_int_t ngx_http_agent_release(ngx_http_request_t *r, ngx_int_t rc);
ngx_int_t ngx_http_agent_not_allowed(ngx_http_request_t *r,
    ngx_uint_t allowed);
ngx_int_t ngx_http_agent_error(ngx_http_request_t *r, ngx_uint_t status,
    const char *fmt, ...);
ngx_int_t ngx_http_agent_session_lock(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *run_id, const char *after);
ngx_int_t ngx_http_agent_parse_object(ngx_http_request_t *r,
    ngx_str_t *body, yajl_val *v, ngx_uint_t optional);
ngx_int_t ngx_http_agent_session_create(ngx_http_request_t *r,
    ngx_str_t *id, ngx_str_t *title, yajl_val metadata,
    ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_session_get(ngx_http_request_t *r, ngx_str_t *id,
    ngx_http_agent_session_t *s);


#endif /* _NGX_HTTP_AGENT_REPLY_H_INCLUDED_ */
