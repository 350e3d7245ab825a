
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_STREAM_LG_STEPS_H_INCLUDED_
#define _NGX_HTTP_AGENT_STREAM_LG_STEPS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_stream.h"


/* for the files of src/proto/lg/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_lg_send_as(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, const char *mode, ngx_str_t *ns,
    ngx_uint_t now);
ngx_int_t ngx_http_agent_lg_task(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j);
ngx_int_t ngx_http_agent_lg_checkpoint_event(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j);
ngx_int_t ngx_http_agent_lg_subgraph_event(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_STREAM_LG_STEPS_H_INCLUDED_ */
