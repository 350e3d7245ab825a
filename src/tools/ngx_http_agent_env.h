
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_ENV_H_INCLUDED_
#define _NGX_HTTP_AGENT_ENV_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_limit.h"
#include "ngx_http_agent_trace.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_sql.h"


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

    /*
     * location and MCP calls under way, and location subrequests that
     * outlived their call (agent_tool_concurrency); peer_freed, while a
     * tools node waits for a place, is called as one ends
     */
    ngx_uint_t                      peer_calls;
    void                          (*peer_freed)(void *data);
    void                           *peer_data;
} ngx_http_agent_env_t;


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


#endif /* _NGX_HTTP_AGENT_ENV_H_INCLUDED_ */
