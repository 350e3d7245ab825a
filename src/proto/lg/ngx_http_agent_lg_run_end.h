
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_LG_RUN_END_H_INCLUDED_
#define _NGX_HTTP_AGENT_LG_RUN_END_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_turn.h"


/* for the files of src/proto/lg/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


void ngx_http_agent_lg_run_done(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev);
ngx_int_t ngx_http_agent_lg_run_answer(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_LG_RUN_END_H_INCLUDED_ */
