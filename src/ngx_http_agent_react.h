
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_REACT_H_INCLUDED_
#define _NGX_HTTP_AGENT_REACT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_graph.h"
#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_sql.h"


/* the channels of the react graph */
enum {
    NGX_HTTP_AGENT_REACT_MESSAGES = 0,
    NGX_HTTP_AGENT_REACT_MODEL_CALLS,
    NGX_HTTP_AGENT_REACT_PROMPT_TOKENS,
    NGX_HTTP_AGENT_REACT_COMPLETION_TOKENS,
    NGX_HTTP_AGENT_REACT_SESSION_ID,
    NGX_HTTP_AGENT_REACT_CURRENT_QUERY,
    NGX_HTTP_AGENT_REACT_CSV_RESOURCES,
    NGX_HTTP_AGENT_REACT_DB_SCHEMA
};


/* the nodes */
enum {
    NGX_HTTP_AGENT_REACT_LOAD_CSV_METADATA = 0,
    NGX_HTTP_AGENT_REACT_MODEL,
    NGX_HTTP_AGENT_REACT_TOOLS
};


typedef ngx_int_t (*ngx_http_agent_react_emit_pt)(void *data,
    ngx_str_t *json);


/* what a turn gives the react nodes */
typedef struct {
    ngx_str_t                       session_id;
    ngx_http_agent_model_t         *model;
    ngx_str_t                       api_key;
    ngx_str_t                      *system_prompt;
    ngx_http_agent_loc_conf_t      *alcf;
    ngx_http_agent_sql_ctx_t        sql;
    int64_t                         calls_at_start;

    ngx_http_agent_react_emit_pt    emit;
    void                           *emit_data;

    ngx_http_agent_llm_t           *llm;
    ngx_pool_t                     *call_pool;
    ngx_uint_t                      tools_bound;
    ngx_uint_t                      call_cleanup;

    /* the tools node: the calls of the last AI message, one at a time */
    void                           *calls;          /* yajl_val */
    size_t                          call;
    ngx_str_t                       call_id;
    ngx_str_t                       call_name;
    ngx_http_agent_sql_job_t       *job;

    /* all the answer text the client was sent in this turn */
    u_char                         *text;
    size_t                          text_len;
    size_t                          text_cap;
} ngx_http_agent_react_t;


extern ngx_http_agent_graph_t  ngx_http_agent_react_graph;


#endif /* _NGX_HTTP_AGENT_REACT_H_INCLUDED_ */
