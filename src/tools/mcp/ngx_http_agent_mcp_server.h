
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MCP_SERVER_H_INCLUDED_
#define _NGX_HTTP_AGENT_MCP_SERVER_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


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


#endif /* _NGX_HTTP_AGENT_MCP_SERVER_H_INCLUDED_ */
