
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCPSERVER_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCPSERVER_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"


/* tools/call's arguments, for a graph */
typedef struct {
    ngx_str_t                  message;
    ngx_str_t                  thread_id;   /* or empty: a new thread */
    ngx_str_t                  resume;      /* an interrupt's answer
                                               (JSON), or empty */
    yajl_val                   values;      /* other channels, or NULL */
    ngx_str_t                  progress;    /* _meta.progressToken as JSON,
                                               or empty */
    ngx_uint_t                 log;         /* the call's log level, one
                                               more than its index; 0:
                                               none asked */
} ngx_http_agent_mcpserver_call_t;


/* the client's answer to an elicitation of ours (mcpserver_elicit.c) */
typedef struct {
    ngx_str_t                  id;          /* the elicitation's */
    ngx_str_t                  thread;
    ngx_str_t                  checkpoint;  /* the interrupt it answers */
    ngx_str_t                  graph;
    ngx_str_t                  resume;      /* the answer as JSON, or
                                               empty: declined */
} ngx_http_agent_mcpserver_answer_in_t;


/* MCP's log levels (RFC 5424's), from the least severe */
#define NGX_HTTP_AGENT_MCPSERVER_LEVELS                                       \
    { "debug", "info", "notice", "warning", "error", "critical", "alert",     \
      "emergency", NULL }

/* the 2026-07-28 revision's level of one request, in its _meta */
#define NGX_HTTP_AGENT_MCPSERVER_LOG_META  "io.modelcontextprotocol/logLevel"


/* an elicitation's id: this, the thread, the checkpoint, the graph */
#define NGX_HTTP_AGENT_MCPSERVER_ELICIT  "elicit/"


ngx_int_t ngx_http_agent_mcpserver_rpc_call(ngx_pool_t *pool,
    yajl_val params, ngx_http_agent_graph_t *graph,
    ngx_http_agent_mcpserver_call_t *call, ngx_str_t *why);
ngx_uint_t ngx_http_agent_mcpserver_rpc_level(yajl_val v);
ngx_int_t ngx_http_agent_mcpserver_rpc_answer(ngx_pool_t *pool,
    ngx_http_agent_jsonrpc_t *rpc, ngx_http_agent_mcpserver_answer_in_t *e,
    ngx_str_t *why);


#endif /* _NGX_HTTP_AGENT_MCPSERVER_H_INCLUDED_ */
