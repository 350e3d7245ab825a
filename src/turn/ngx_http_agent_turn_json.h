
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TURN_JSON_H_INCLUDED_
#define _NGX_HTTP_AGENT_TURN_JSON_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_stream.h"


/* for the files of src/turn/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_uint_t ngx_http_agent_turn_json_wanted(ngx_http_request_t *r);
ngx_int_t ngx_http_agent_turn_json_send(ngx_http_request_t *r,
    ngx_http_agent_run_t *run, ngx_http_agent_event_t *ev,
    ngx_str_t *session_id, ngx_str_t *run_id);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_TURN_JSON_H_INCLUDED_ */
