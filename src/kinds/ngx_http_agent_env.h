
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_ENV_H_INCLUDED_
#define _NGX_HTTP_AGENT_ENV_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_limit.h"
#include "ngx_http_agent_trace.h"
#include "ngx_http_agent_module.h"
#include "ngx_http_agent_graph.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_sql.h"


/*
 * What a turn gives the node kinds of its run (run->data): the session,
 * the model, the limits of the location, the SQL context and the stream.
 * Nothing here names a graph, a node or a channel of one.
 */
typedef struct {
    ngx_str_t                       session_id;
    ngx_http_request_t             *request;   /* for subrequests */
    ngx_http_agent_main_conf_t     *amcf;
    ngx_http_agent_loc_conf_t      *alcf;
    ngx_http_agent_model_t         *model;     /* the session's */
    ngx_http_agent_sql_ctx_t        sql;
    ngx_http_agent_stream_t        *stream;

    /* summed over the model calls of the turn */
    int64_t                         prompt_tokens;
    int64_t                         completion_tokens;
    int64_t                         cached_tokens;
    int64_t                         cache_write_tokens;
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


ngx_int_t ngx_http_agent_emit(ngx_http_agent_run_t *run,
    ngx_http_agent_event_t *ev);
ngx_int_t ngx_http_agent_env_reserve(ngx_http_agent_run_t *run,
    ngx_http_agent_llm_t *llm, ngx_http_agent_model_t *model);
void ngx_http_agent_env_usage(ngx_http_agent_env_t *env,
    ngx_http_agent_llm_t *llm);
ngx_int_t ngx_http_agent_env_sql(ngx_http_agent_run_t *run);
void ngx_http_agent_env_peer_end(void *data);


#endif /* _NGX_HTTP_AGENT_ENV_H_INCLUDED_ */
