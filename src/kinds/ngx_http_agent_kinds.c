
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_graph_conf.h"


/* the node kinds: a new kind is its own file and one line here */

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


static ngx_http_agent_kind_t  *ngx_http_agent_kinds[] = {
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
    NULL
};


ngx_http_agent_kind_t *
ngx_http_agent_kind_find(ngx_str_t *name)
{
    ngx_uint_t              i;
    ngx_http_agent_kind_t  *k;

    for (i = 0; ngx_http_agent_kinds[i]; i++) {
        k = ngx_http_agent_kinds[i];

        if (k->name.len == name->len
            && ngx_strncmp(k->name.data, name->data, name->len) == 0)
        {
            return k;
        }
    }

    return NULL;
}
