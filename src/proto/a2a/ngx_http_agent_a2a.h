
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_A2A_H_INCLUDED_
#define _NGX_HTTP_AGENT_A2A_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"


/* A2A's JSON-RPC error codes */
#define NGX_HTTP_AGENT_A2A_TASK_NOT_FOUND         -32001
#define NGX_HTTP_AGENT_A2A_TASK_NOT_CANCELABLE    -32002
#define NGX_HTTP_AGENT_A2A_PUSH_UNSUPPORTED       -32003
#define NGX_HTTP_AGENT_A2A_UNSUPPORTED_OPERATION  -32004
#define NGX_HTTP_AGENT_A2A_CONTENT_TYPE           -32005
#define NGX_HTTP_AGENT_A2A_CARD_NOT_CONFIGURED    -32007  /* 0.3's */

/* the longest id taken (docs/protocols.md) */
#define NGX_HTTP_AGENT_A2A_ID_MAX                 1024


/* SendMessage's (or message/send's) params, read */
typedef struct {
    ngx_str_t                  text;        /* the text parts, joined */
    ngx_str_t                  message_id;
    ngx_str_t                  context_id;  /* or empty: a new thread */
    ngx_str_t                  task_id;     /* the task it continues, or
                                               empty */
    ngx_str_t                  skill;       /* metadata.skill, or empty */
} ngx_http_agent_a2a_message_t;


ngx_int_t ngx_http_agent_a2a_message(ngx_pool_t *pool, yajl_val params,
    ngx_http_agent_a2a_message_t *m, ngx_int_t *code, ngx_str_t *why);
ngx_int_t ngx_http_agent_a2a_id(yajl_val v, const char *key, ngx_str_t *id);


#endif /* _NGX_HTTP_AGENT_A2A_H_INCLUDED_ */
