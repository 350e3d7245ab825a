
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_RESPONSES_REPLAY_H_INCLUDED_
#define _NGX_HTTP_AGENT_RESPONSES_REPLAY_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_responses_calls.h"


ngx_int_t ngx_http_agent_responses_sink(void *data, ngx_str_t *name,
    ngx_str_t *json, ngx_uint_t now);
void ngx_http_agent_responses_poll(ngx_http_agent_turn_t *turn);
void ngx_http_agent_responses_done(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev);
ngx_int_t ngx_http_agent_responses_replay(ngx_http_request_t *r,
    ngx_str_t *run_id, ngx_str_t *thread);


#endif /* _NGX_HTTP_AGENT_RESPONSES_REPLAY_H_INCLUDED_ */
