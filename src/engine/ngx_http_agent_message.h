
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MESSAGE_H_INCLUDED_
#define _NGX_HTTP_AGENT_MESSAGE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_msg.h"
#include "ngx_http_agent_json.h"


/* one tool call of an AI message */
typedef struct {
    ngx_str_t                  id;
    ngx_str_t                  name;
    yajl_val                   args;        /* parsed, or NULL */
    ngx_str_t                  arguments;   /* as JSON text, or the raw
                                               text that did not parse */
    ngx_str_t                  answer;      /* a human's result instead
                                               of a run (JSON), or empty */
} ngx_http_agent_call_t;


/* message_json()'s full: as a checkpoint keeps it, its metadata too */
#define NGX_HTTP_AGENT_MESSAGE_KEPT  2


ngx_int_t ngx_http_agent_message_calls(ngx_pool_t *pool, ngx_str_t *json,
    ngx_array_t **calls, ngx_uint_t parse);
void ngx_http_agent_message_call_json(ngx_http_agent_json_t *j,
    ngx_str_t *id, ngx_str_t *name, ngx_str_t *arguments);
void ngx_http_agent_message_lc(ngx_http_agent_json_t *j, ngx_pool_t *pool,
    ngx_http_agent_msg_t *m, ngx_str_t *id);
ngx_uint_t ngx_http_agent_message_document(ngx_str_t *mime);
ngx_int_t ngx_http_agent_message_pair(ngx_pool_t *pool, ngx_array_t *in,
    ngx_uint_t from, ngx_array_t **out);
void ngx_http_agent_message_json(ngx_http_agent_json_t *j,
    ngx_str_t *session_id, ngx_http_agent_msg_t *m, ngx_uint_t full);


/* for the files of src/engine/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_message_unanswered(ngx_pool_t *pool,
    ngx_http_agent_msg_t *m, ngx_str_t *why, ngx_array_t *out);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_MESSAGE_H_INCLUDED_ */
