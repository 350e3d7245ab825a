
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCPSERVER_STREAM_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCPSERVER_STREAM_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_turn.h"


/* what tools/call tells its stream format */
typedef struct {
    ngx_http_agent_turn_record_t  record;   /* the call's run, kept */
    ngx_str_t                  id;          /* the request's, as JSON */
    ngx_str_t                  progress;    /* its progressToken as JSON,
                                               or empty */
    ngx_str_t                  interrupt;   /* the run waits: {"node",
                                               "value"} */
    ngx_uint_t                 steps;
    unsigned                   over:1;
} ngx_http_agent_mcpserver_out_t;


extern ngx_http_agent_format_t  ngx_http_agent_mcpserver_format;


void ngx_http_agent_mcpserver_stream_content(ngx_http_agent_json_t *j,
    ngx_str_t *text);


#endif /* _NGX_HTTP_AGENT_MCPSERVER_STREAM_H_INCLUDED_ */
