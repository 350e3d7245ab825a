
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCP_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCP_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include "ngx_http_agent_util.h"


/*
 * An MCP server: what agent_mcp says of it (ngx_http_agent_mcp_conf.c),
 * and a worker's session with it (ngx_http_agent_mcp.c).
 */


/* the stateless revision, spoken when the server answers server/discover */
#define NGX_HTTP_AGENT_MCP_MODERN  "2026-07-28"


typedef struct ngx_http_agent_mcp_s  ngx_http_agent_mcp_t;


/* a server in a worker: its session and its tools */
typedef struct {
    ngx_uint_t                     state;
    ngx_pool_t                    *pool;       /* the session's */
    ngx_str_t                      session;    /* Mcp-Session-Id */
    ngx_str_t                      version;    /* MCP-Protocol-Version */
    ngx_array_t                   *tools;      /* ngx_http_agent_tool_t */
    ngx_msec_t                     listed;
    ngx_queue_t                    waiters;
    int64_t                        id;
    ngx_uint_t                     pages;
    size_t                         size;       /* of the definitions */
    ngx_str_t                      error;
    ngx_msec_t                     ttl;        /* the server's ttlMs, or 0 */
    ngx_uint_t                     failures;   /* starts or lists, in a
                                                  row */
    ngx_msec_t                     retry;      /* none before, then */
    unsigned                       restarted:1; /* this list's, on a 404 */
    unsigned                       stale:1;
    unsigned                       modern:1;   /* 2026-07-28: stateless */
} ngx_http_agent_mcp_peer_t;


/* agent_mcp NAME url=URL [headers=..] [key_env=VAR] [timeout=] [tools=] */
struct ngx_http_agent_mcp_s {
    ngx_str_t                      name;
    ngx_str_t                      url;
    ngx_array_t                   *headers;    /* "Name: value", NUL-ended */
    ngx_str_t                      key_env;
    ngx_str_t                      filter;     /* tools=a,b; empty: all */
    ngx_array_t                   *keep;       /* ngx_str_t: the tools
                                                  steps bind */
    ngx_msec_t                     timeout;
    ngx_msec_t                     ttl;
    size_t                         max;        /* an answer, the list */
    ngx_uint_t                     max_tools;
    ngx_http_agent_mcp_peer_t     *peer;       /* the worker's */
    void                          *tool;       /* ngx_http_agent_tool_t:
                                                  what a call points to,
                                                  whatever list is current */
    unsigned                       keep_all:1; /* a step binds NAME.* */
};


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


char *ngx_http_agent_mcp_directive(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
ngx_http_agent_mcp_t *ngx_http_agent_mcp_find(ngx_array_t *mcps,
    ngx_str_t *name);
ngx_int_t ngx_http_agent_mcp_keep(ngx_conf_t *cf, ngx_http_agent_mcp_t *mcp,
    ngx_str_t *tool);


/* for the files of src/tools/mcp/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


typedef struct {
    yajl_val                   result;      /* the response's result */
    ngx_str_t                  error;       /* its error, or what is wrong */
    unsigned                   rpc_error:1; /* the server answered an error */
    unsigned                   list_changed:1;
} ngx_http_agent_mcp_answer_t;


ngx_int_t ngx_http_agent_mcp_rpc_answer(ngx_pool_t *pool, ngx_str_t *body,
    int64_t id, ngx_http_agent_mcp_answer_t *a);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_MCP_H_INCLUDED_ */
