
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCP_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCP_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include "ngx_http_agent_mcp_server.h"


typedef void (*ngx_http_agent_mcp_ready_pt)(void *data, ngx_int_t rc);


/* one who waits for a server's tools: a node about to call its model */
typedef struct {
    ngx_queue_t                    queue;
    ngx_http_agent_mcp_ready_pt    handler;
    void                          *data;
    ngx_str_t                     *name;       /* the server's */
    ngx_event_t                    timer;      /* its timeout= */
    unsigned                       waiting:1;
} ngx_http_agent_mcp_waiter_t;


ngx_int_t ngx_http_agent_mcp_ready(ngx_http_agent_mcp_t *mcp,
    ngx_http_agent_mcp_waiter_t *w, ngx_log_t *log);
void ngx_http_agent_mcp_unwait(ngx_http_agent_mcp_waiter_t *w);


/* for the files of src/tools/mcp/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

void ngx_http_agent_mcp_expired(ngx_http_agent_mcp_t *mcp);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_MCP_H_INCLUDED_ */
