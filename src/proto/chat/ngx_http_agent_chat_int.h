
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_CHAT_INT_H_INCLUDED_
#define _NGX_HTTP_AGENT_CHAT_INT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_engine.h"


/* for the files of src/proto/chat/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_chat_model_answer(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body);
ngx_int_t ngx_http_agent_chat_connection(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body);


#pragma GCC visibility pop


/* for the files of src/proto/chat/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_resources_add(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body);
ngx_int_t ngx_http_agent_resources_list(ngx_http_request_t *r,
    ngx_str_t *id);


#pragma GCC visibility pop


/* for the files of src/proto/chat/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_sessions_create(ngx_http_request_t *r,
    ngx_str_t *body);
ngx_int_t ngx_http_agent_sessions_list(ngx_http_request_t *r);
void ngx_http_agent_sessions_json(ngx_http_agent_json_t *j,
    ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_sessions_messages(ngx_http_request_t *r,
    ngx_str_t *id);
ngx_int_t ngx_http_agent_sessions_state(ngx_http_request_t *r, ngx_str_t *id);
ngx_int_t ngx_http_agent_sessions_graph_answer(ngx_http_request_t *r);
ngx_int_t ngx_http_agent_sessions_history(ngx_http_request_t *r,
    ngx_str_t *id);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_CHAT_INT_H_INCLUDED_ */
