
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_A2A_PUSH_H_INCLUDED_
#define _NGX_HTTP_AGENT_A2A_PUSH_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_a2a_task.h"


/*
 * a task's push notification config: its run's kwargs keep all but the
 * token and the credentials, which only its run's secret keeps
 */
typedef struct {
    ngx_str_t                  url;
    ngx_str_t                  id;
    ngx_str_t                  token;
    ngx_str_t                  scheme;
    ngx_str_t                  credentials;
    ngx_uint_t                 legacy;      /* named by 0.3: 0.3's body */
} ngx_http_agent_a2a_push_t;


extern ngx_http_agent_turn_hooks_t  ngx_http_agent_a2a_takeover_hooks;


ngx_int_t ngx_http_agent_a2a_push_read(ngx_http_request_t *r,
    yajl_val params, ngx_uint_t legacy, ngx_str_t *kwargs, ngx_str_t *secret,
    ngx_int_t *code, ngx_str_t *why);
void ngx_http_agent_a2a_push_done(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev);
ngx_int_t ngx_http_agent_a2a_push_answer(ngx_http_request_t *r,
    ngx_http_agent_a2a_out_t *o, ngx_http_agent_turn_outcome_t *out,
    ngx_uint_t list);


#endif /* _NGX_HTTP_AGENT_A2A_PUSH_H_INCLUDED_ */
