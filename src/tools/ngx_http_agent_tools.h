
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TOOLS_H_INCLUDED_
#define _NGX_HTTP_AGENT_TOOLS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>
#include <ngx_http.h>

#include "ngx_http_agent_ops.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_sql.h"
#include "ngx_http_agent_util.h"


/* status: the location's (502: it failed, 504: timeout); body: as caught */
typedef void (*ngx_http_agent_fetch_pt)(void *data, ngx_uint_t status,
    ngx_str_t *body, ngx_uint_t truncated);


/*
 * What the turn lends the node kinds of the protocol beneath it: they
 * see neither the request nor the module's configuration.  fetch() POSTs
 * JSON to an nginx location (node http, an agent_tool location) and
 * returns the call under way, or NULL; done() follows unless it is
 * cancelled.  The location's settings that steps obey are copied here.
 */
typedef struct {
    void                         *(*fetch)(void *data, ngx_str_t *uri,
                                       ngx_str_t *json, ngx_str_t *key,
                                       size_t max, ngx_msec_t timeout,
                                       ngx_http_agent_fetch_pt done,
                                       void *done_data);
    void                          (*fetch_cancel)(void *call);
    void                           *data;      /* the turn's, for fetch */

    /* the location's agent_llm_*_timeout */
    ngx_msec_t                      llm_connect_timeout;
    ngx_msec_t                      llm_idle_timeout;
    ngx_msec_t                      llm_timeout;
    ngx_uint_t                      max_tool_rounds;
    ngx_uint_t                      sql_concurrency;
    ngx_uint_t                      tool_concurrency;
    ngx_array_t                    *tool_prompts;  /* agent_tool_prompt */

    /*
     * a client's own tools (Open Responses' function tools; ngx_keyval_t:
     * the name, the definition as the graph's are written), offered
     * beside a step's: their calls are not run here, the run waits for
     * the client's outputs as at an interrupt (node_tools_calls.c)
     */
    ngx_array_t                    *client_tools;

    /*
     * a step's pending writes (LangGraph's): write() keeps a tool call's
     * result as it comes (index: the call's place in its round); kept()
     * gives back one kept before the run's worker died, by the call's
     * id, so that it is not run again (NGX_OK), or NGX_DECLINED
     */
    void                          (*write)(ngx_http_agent_run_t *run,
                                       ngx_uint_t index, ngx_str_t *id,
                                       ngx_str_t *result);
    ngx_int_t                     (*kept)(ngx_http_agent_run_t *run,
                                       ngx_str_t *id, ngx_str_t *result);

    /*
     * exactly once (docs/runs.md): claim() keeps that a call starts before
     * it runs (NGX_DECLINED: the run is another worker's now, it must not
     * run); kept() answers NGX_DONE for a call claimed and never
     * answered; key() is a call's (or a node's) Idempotency-Key, the same
     * on every attempt and worker
     */
    ngx_int_t                     (*claim)(ngx_http_agent_run_t *run,
                                       ngx_uint_t index, ngx_str_t *id);
    ngx_int_t                     (*key)(ngx_http_agent_run_t *run,
                                       ngx_str_t *id, ngx_str_t *key);

    /*
     * the location's agent_embeddings (docs/memory.md), the model calls
     * of the LangGraph API's store: embed() a text as a query, index() an
     * item's value as a document from its fields (n 0: the directive's
     * fields=).  NGX_OK with the vector (empty: none of the fields is
     * there), NGX_AGAIN (sc's pass is woken once the model answers),
     * NGX_ERROR with the reason in err, NGX_DECLINED: no agent_embeddings
     */
    ngx_int_t                     (*embed)(void *data,
                                       ngx_http_agent_store_call_t *sc,
                                       ngx_str_t *text, ngx_str_t *vector,
                                       ngx_str_t *err);
    ngx_int_t                     (*index)(void *data,
                                       ngx_http_agent_store_call_t *sc,
                                       yajl_val value, ngx_str_t *fields,
                                       ngx_uint_t n, ngx_str_t *vector,
                                       ngx_str_t *err);
} ngx_http_agent_services_t;


/*
 * What the kinds read of the module's configuration while it is read
 * (the node's conf and check): the glue fills it in
 */
typedef struct {
    ngx_str_t                      *prompts_dir;
    ngx_array_t                   **tool_prompts;  /* made when first set */
    ngx_array_t                    *tools;         /* agent_tool */
    ngx_array_t                    *mcps;          /* agent_mcp */
} ngx_http_agent_env_conf_t;


/*
 * What a turn gives the node kinds of its run (run->data): the session,
 * the model, the services of the turn, the SQL context and the stream.
 * Nothing here names a graph, a node or a channel of one.
 */
typedef struct {
    ngx_str_t                       session_id;
    ngx_str_t                       owner;     /* agent_owner's; empty:
                                                  none (the store's items) */
    ngx_http_agent_services_t       services;
    ngx_http_agent_model_t         *model;     /* the session's */
    ngx_http_agent_sql_ctx_t        sql;
    ngx_http_agent_stream_t        *stream;

    /* summed over the model calls of the turn */
    int64_t                         prompt_tokens;
    int64_t                         completion_tokens;
    int64_t                         cached_tokens;
    int64_t                         cache_write_tokens;
    int64_t                         cost;        /* nanodollars */
    ngx_uint_t                      priced;      /* a call had a price */
    ngx_uint_t                      model_calls;
    ngx_uint_t                      tool_calls;
    ngx_str_t                       answered_by; /* the last model called */
    ngx_msec_t                      start;
    ngx_msec_t                      llm_time;    /* in model calls */
    ngx_msec_t                      ttft;        /* start to first token */
    ngx_http_agent_limits_t        *limits;      /* the budgets it spends */
    ngx_http_agent_trace_t         *trace;       /* its spans, or NULL */
    ngx_uint_t                      cache;       /* the exact cache's
                                                    answer: ENV_CACHE_* */

    /*
     * location and MCP calls under way, and location subrequests that
     * outlived their call (agent_tool_concurrency); peer_freed, while a
     * tools node waits for a place, is called as one ends
     */
    ngx_uint_t                      peer_calls;
    void                          (*peer_freed)(void *data);
    void                           *peer_data;
} ngx_http_agent_env_t;


#define NGX_HTTP_AGENT_ENV_CACHE_MISS  1
#define NGX_HTTP_AGENT_ENV_CACHE_HIT   2
#define NGX_HTTP_AGENT_ENV_CACHE_NEAR  3    /* cache_similar='s hit */


ngx_int_t ngx_http_agent_env_emit(ngx_http_agent_run_t *run,
    ngx_http_agent_event_t *ev);
ngx_int_t ngx_http_agent_env_reserve(ngx_http_agent_run_t *run,
    ngx_http_agent_llm_t *llm, ngx_http_agent_model_t *model,
    ngx_http_agent_llm_req_t *req);
void ngx_http_agent_env_usage(ngx_http_agent_env_t *env,
    ngx_http_agent_llm_t *llm);
ngx_int_t ngx_http_agent_env_sql(ngx_http_agent_run_t *run);

/* the glue's: what the kinds look up of the configuration */
void ngx_http_agent_env_conf(ngx_conf_t *cf, ngx_http_agent_env_conf_t *ec);
ngx_http_agent_model_t *ngx_http_agent_env_conf_model(ngx_conf_t *cf,
    ngx_str_t *name);


/* for the files of src/tools/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

void ngx_http_agent_env_peer_end(void *data);

#pragma GCC visibility pop


typedef struct ngx_http_agent_ask_s  ngx_http_agent_ask_t;

/* rc NGX_OK: text is the answer (in the run's pool); else run->error */
typedef void (*ngx_http_agent_ask_done_pt)(void *data, ngx_int_t rc,
    ngx_str_t *text);


/* one model call that is not streamed: summaries, SQL, chart specs */
struct ngx_http_agent_ask_s {
    ngx_http_agent_run_t           *run;
    ngx_pool_t                     *pool;
    ngx_http_agent_llm_t           *llm;
    ngx_http_agent_llm_req_t        req;
    ngx_http_agent_model_t         *model;
    ngx_http_agent_ask_done_pt      done;
    void                           *data;
};


ngx_http_agent_ask_t *ngx_http_agent_ask(ngx_http_agent_run_t *run,
    ngx_str_t *system, ngx_str_t *user, ngx_http_agent_ask_done_pt done,
    void *data);
void ngx_http_agent_ask_cancel(ngx_http_agent_ask_t *ask);
ngx_int_t ngx_http_agent_ask_fenced(ngx_str_t *text);


/* status: the location's (502: it failed, 504: timeout); body: as caught */
typedef void (*ngx_http_agent_subrequest_pt)(void *data, ngx_uint_t status,
    ngx_str_t *body, ngx_uint_t truncated);


typedef struct {
    ngx_http_request_t             *request;    /* the turn's */
    ngx_http_request_t             *sr;
    ngx_http_agent_subrequest_pt    handler;
    void                           *data;
    ngx_str_t                       body;
    size_t                          max;
    ngx_event_t                     kick;
    ngx_event_t                     timer;
    /* called when the subrequest has ended, also after a cancel */
    void                          (*ended)(void *data);
    void                           *ended_data;
    unsigned                        truncated:1;
    unsigned                        last:1;     /* its body's end came */
    unsigned                        cancelled:1;
    unsigned                        done:1;
} ngx_http_agent_subrequest_t;


void *ngx_http_agent_subrequest_fetch(void *data, ngx_str_t *uri,
    ngx_str_t *json, ngx_str_t *key, size_t max, ngx_msec_t timeout,
    ngx_http_agent_subrequest_pt handler, void *handler_data);
void ngx_http_agent_subrequest_drop(void *s);
ngx_int_t ngx_http_agent_subrequest_init(ngx_conf_t *cf);


/* for the files of src/tools/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

void ngx_http_agent_subrequest_cancel(ngx_http_agent_subrequest_t *s);
ngx_http_agent_subrequest_t *ngx_http_agent_subrequest_start(
    ngx_http_request_t *r, ngx_str_t *uri, ngx_str_t *json, ngx_str_t *key,
    size_t max, ngx_msec_t timeout, ngx_http_agent_subrequest_pt handler,
    void *data);

#pragma GCC visibility pop


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
ngx_uint_t ngx_http_agent_tools_idempotent(ngx_http_agent_tool_call_t *call);
ngx_int_t ngx_http_agent_tools_define(ngx_pool_t *pool, ngx_str_t *name,
    ngx_str_t *desc, yajl_val schema, ngx_str_t *def);


/* for the files of src/tools/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_str_t *ngx_http_agent_tools_prompt(ngx_array_t *prompts,
    ngx_str_t *file);

#pragma GCC visibility pop


char *ngx_http_agent_tool_location(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
void *ngx_http_agent_tool_location_call(ngx_http_request_t *r,
    ngx_http_agent_tool_t *tool, yajl_val args,
    ngx_http_agent_subrequest_pt handler, void *data);
ngx_uint_t ngx_http_agent_tool_location_is(ngx_http_agent_tool_t *tool);


ngx_int_t ngx_http_agent_tools_approve_ask(ngx_http_agent_run_t *run,
    ngx_str_t *node, ngx_array_t *calls);
ngx_int_t ngx_http_agent_tools_approve_answer(ngx_http_agent_run_t *run,
    ngx_array_t *calls, ngx_str_t *reason);
void ngx_http_agent_tools_approve_call(ngx_http_agent_json_t *j,
    ngx_http_agent_call_t *c);
ngx_http_agent_json_t *ngx_http_agent_tools_approve_open(
    ngx_http_agent_run_t *run, ngx_str_t *node);
ngx_int_t ngx_http_agent_tools_approve_wait(ngx_http_agent_run_t *run,
    ngx_http_agent_json_t *j);
ngx_int_t ngx_http_agent_tools_approve_resumed(ngx_http_agent_run_t *run,
    yajl_val *answer);


#endif /* _NGX_HTTP_AGENT_TOOLS_H_INCLUDED_ */
