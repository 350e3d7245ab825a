
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCPSERVER_INT_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCPSERVER_INT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_module.h"


extern ngx_http_agent_turn_hooks_t  ngx_http_agent_mcpserver_elicit_hooks;


ngx_int_t ngx_http_agent_mcpserver_elicit_answer(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc);


ngx_int_t ngx_http_agent_mcpserver_session_make(ngx_http_request_t *r,
    yajl_val params);
ngx_int_t ngx_http_agent_mcpserver_session_level(ngx_http_request_t *r,
    ngx_uint_t log);
ngx_uint_t ngx_http_agent_mcpserver_session_log(ngx_http_request_t *r);
ngx_int_t ngx_http_agent_mcpserver_session_check(ngx_http_request_t *r);
ngx_uint_t ngx_http_agent_mcpserver_session_elicits(ngx_http_request_t *r);
ngx_uint_t ngx_http_agent_mcpserver_session_run_id(ngx_http_request_t *r,
    ngx_str_t *request, u_char *out);


/* what tools/call tells its stream format */
typedef struct {
    ngx_http_agent_turn_record_t  record;   /* the call's run, kept */
    ngx_str_t                  id;          /* the request's, as JSON */
    ngx_str_t                  progress;    /* its progressToken as JSON,
                                               or empty */
    ngx_str_t                  interrupt;   /* the run waits: {"node",
                                               "value"} */
    ngx_str_t                  checkpoint;  /* ... at this checkpoint */
    ngx_str_t                  graph;       /* the tool's */
    ngx_uint_t                 log;         /* the least level logged,
                                               its index and one; 0:
                                               none */
    ngx_uint_t                 steps;
    unsigned                   over:1;
    unsigned                   elicit:1;    /* the client takes
                                               elicitation/create */
    unsigned                   held:1;      /* ... and was asked: the call
                                               waits for its answer */
} ngx_http_agent_mcpserver_out_t;


/* a tools/call's result */
typedef struct {
    ngx_str_t                 *id;          /* the call's, as JSON */
    ngx_str_t                 *text;
    ngx_str_t                 *thread;
    ngx_str_t                 *code;        /* an error's, or NULL */
    ngx_http_agent_run_t      *run;         /* its values, or NULL */
    yajl_val                   interrupt;   /* what it waits for, or NULL */
    unsigned                   error:1;
} ngx_http_agent_mcpserver_answer_t;


extern ngx_http_agent_format_t  ngx_http_agent_mcpserver_format;


void ngx_http_agent_mcpserver_stream_content(ngx_http_agent_json_t *j,
    ngx_str_t *text);
void ngx_http_agent_mcpserver_stream_answer(ngx_http_agent_json_t *j,
    ngx_http_agent_mcpserver_answer_t *a);
ngx_int_t ngx_http_agent_mcpserver_stream_waits(ngx_pool_t *pool,
    yajl_val interrupt, ngx_str_t *thread, ngx_str_t *text);
ngx_int_t ngx_http_agent_mcpserver_stream_elicit_id(ngx_pool_t *pool,
    ngx_str_t *thread, ngx_str_t *checkpoint, ngx_str_t *graph,
    ngx_str_t *id);
void ngx_http_agent_mcpserver_stream_elicit(ngx_http_agent_json_t *j,
    ngx_pool_t *pool, yajl_val interrupt, ngx_str_t *thread,
    ngx_str_t *checkpoint, ngx_str_t *graph);


ngx_int_t ngx_http_agent_mcpserver_route(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx);
ngx_int_t ngx_http_agent_mcpserver_run(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx, ngx_str_t *body);


/* the MCP server's own location configuration: its tools, its asking */
typedef struct {
    /* agent_mcp_server_tools: ngx_str_t names, their agent_tool tools */
    ngx_array_t               *tool_names;
    ngx_array_t               *tools;
    ngx_msec_t                 elicitation; /* an answer waited for so
                                               long; 0: none asked */
} ngx_http_agent_mcpserver_conf_t;


char *ngx_http_agent_mcpserver_tools_merge(ngx_conf_t *cf,
    ngx_http_agent_mcpserver_conf_t *conf, ngx_http_agent_proto_t *proto);
ngx_int_t ngx_http_agent_mcpserver_tools_list(ngx_http_request_t *r,
    ngx_http_agent_json_t *j);
ngx_int_t ngx_http_agent_mcpserver_tools_call(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc, ngx_str_t *name);


#endif /* _NGX_HTTP_AGENT_MCPSERVER_INT_H_INCLUDED_ */
