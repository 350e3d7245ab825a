
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TOOLS_H_INCLUDED_
#define _NGX_HTTP_AGENT_TOOLS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_util.h"


/* what a provider takes as a function's name: [A-Za-z0-9_-]{1,64} */
#define NGX_HTTP_AGENT_TOOL_NAME_MAX  64


typedef struct ngx_http_agent_tool_s       ngx_http_agent_tool_t;
typedef struct ngx_http_agent_tool_call_s  ngx_http_agent_tool_call_t;


/* one call of a tool by the model, while it runs */
struct ngx_http_agent_tool_call_s {
    ngx_http_agent_run_t           *run;
    ngx_http_agent_tool_t          *tool;
    ngx_str_t                       id;
    ngx_str_t                       name;        /* as the model called */
    ngx_str_t                       tool_name;   /* as its owner knows it:
                                                    an MCP server's */
    ngx_str_t                       arguments;   /* as the model wrote */
    yajl_val                        args;        /* parsed, or NULL */
    ngx_msec_t                      timeout;     /* 0: the location's */
    ngx_uint_t                      attempt;
    ngx_msec_t                      started;   /* its first attempt */
    ngx_str_t                       key;         /* Idempotency-Key: the
                                                    same at each attempt,
                                                    on any worker */

    ngx_str_t                       result;      /* JSON */
    ngx_str_t                       answer;      /* a human's result: it
                                                    does not run */
    ngx_array_t                    *writes;      /* channel updates */

    /* an asynchronous tool calls done() and may be cancelled */
    void                          (*done)(ngx_http_agent_tool_call_t *call);
    void                          (*cancel)(ngx_http_agent_tool_call_t *c);
    void                           *data;        /* the tool's */
    void                           *owner;       /* the node's */
    ngx_event_t                     deadline;    /* the node's timeout= */
    unsigned                        finished:1;
    unsigned                        counted:1;   /* in env->peer_calls */
    /* its work runs on after its end (a location's subrequest): the tool
       gives its place back when that ends */
    unsigned                        orphan:1;
    /* cut by a take-over, not run again: its outcome unknown */
    unsigned                        unknown:1;
};


/* NGX_OK: result set; NGX_AGAIN: done() follows; NGX_ERROR */
typedef ngx_int_t (*ngx_http_agent_tool_run_pt)(
    ngx_http_agent_tool_call_t *call);


struct ngx_http_agent_tool_s {
    ngx_str_t                       name;
    ngx_str_t                       definition;  /* {"type":"function",..} */
    ngx_http_agent_tool_run_pt      run;
    ngx_uint_t                      sql;         /* agent_sql_concurrency */
    /* templates in agent_prompts the tool asks a model with, or empty */
    ngx_str_t                       prompt;
    ngx_str_t                       fixer;
    void                           *data;        /* an agent_tool's */
    /* a tool that ends itself at timeout= (SQL, with a better error than
       ours) is stopped by the node only this much later */
    ngx_msec_t                      grace;
    /* a location or an MCP server: agent_tool_concurrency */
    unsigned                        peer:1;
    /* run again after a take-over (idempotent=on; SQL tools always) */
    unsigned                        idempotent:1;
    /* whether a call is, where its tool cannot say alone (MCP's tools) */
    ngx_uint_t                    (*idempotent_of)(
                                       ngx_http_agent_tool_call_t *call);
};


/* extra: the agent_tool locations (ngx_http_agent_tool_t *), or NULL */
ngx_http_agent_tool_t *ngx_http_agent_tools_find(ngx_array_t *extra,
    ngx_str_t *name);
ngx_http_agent_tool_t *ngx_http_agent_tools_next(ngx_array_t *extra,
    ngx_uint_t *i);
ngx_int_t ngx_http_agent_tools_prompts(ngx_conf_t *cf, ngx_str_t *list,
    ngx_str_t *dir, ngx_array_t **prompts);
ngx_uint_t ngx_http_agent_tools_allowed(ngx_str_t *list, ngx_str_t *name);
ngx_int_t ngx_http_agent_tools_error(ngx_pool_t *pool, ngx_str_t *err,
    ngx_str_t *result);
ngx_uint_t ngx_http_agent_tools_idempotent(ngx_http_agent_tool_call_t *call);


/* for the files of src/tools/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_str_t *ngx_http_agent_tools_prompt(ngx_array_t *prompts,
    ngx_str_t *file);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_TOOLS_H_INCLUDED_ */
