
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_kinds.h"


/*
 * The node kinds: a new kind is its own file and one line here.  The glue
 * hands this list to the graph language (ngx_http_agent_graph_kinds).
 */

extern ngx_http_agent_kind_t  ngx_http_agent_llm_kind;
extern ngx_http_agent_kind_t  ngx_http_agent_tools_kind;
extern ngx_http_agent_kind_t  ngx_http_agent_sql_kind;
extern ngx_http_agent_kind_t  ngx_http_agent_template_kind;
extern ngx_http_agent_kind_t  ngx_http_agent_resources_kind;
extern ngx_http_agent_kind_t  ngx_http_agent_guard_kind;
extern ngx_http_agent_kind_t  ngx_http_agent_format_kind;
extern ngx_http_agent_kind_t  ngx_http_agent_summarize_kind;
extern ngx_http_agent_kind_t  ngx_http_agent_http_kind;
extern ngx_http_agent_kind_t  ngx_http_agent_interrupt_kind;
extern ngx_http_agent_kind_t  ngx_http_agent_fail_kind;
extern ngx_http_agent_kind_t  ngx_http_agent_store_kind;
extern ngx_http_agent_kind_t  ngx_http_agent_subgraph_kind;


ngx_http_agent_kind_t  *ngx_http_agent_kinds[] = {
    &ngx_http_agent_llm_kind,
    &ngx_http_agent_tools_kind,
    &ngx_http_agent_sql_kind,
    &ngx_http_agent_template_kind,
    &ngx_http_agent_resources_kind,
    &ngx_http_agent_guard_kind,
    &ngx_http_agent_format_kind,
    &ngx_http_agent_summarize_kind,
    &ngx_http_agent_http_kind,
    &ngx_http_agent_interrupt_kind,
    &ngx_http_agent_fail_kind,
    &ngx_http_agent_store_kind,
    &ngx_http_agent_subgraph_kind,
    NULL
};
