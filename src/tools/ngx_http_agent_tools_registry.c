/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_engine.h"


/* the tools a model may call: a new tool is its own file and a line here */

extern ngx_http_agent_tool_t  ngx_http_agent_tool_load_csv_data;
extern ngx_http_agent_tool_t  ngx_http_agent_tool_execute_sql_query;
extern ngx_http_agent_tool_t  ngx_http_agent_tool_ask_database;
extern ngx_http_agent_tool_t  ngx_http_agent_tool_ask_analyst;


static ngx_http_agent_tool_t  *ngx_http_agent_tools[] = {
    &ngx_http_agent_tool_load_csv_data,
    &ngx_http_agent_tool_execute_sql_query,
    &ngx_http_agent_tool_ask_database,
    &ngx_http_agent_tool_ask_analyst,
    NULL
};


/* the built-in tools, then the agent_tool locations: *i starts at 0 */

ngx_http_agent_tool_t *
ngx_http_agent_tools_next(ngx_array_t *extra, ngx_uint_t *i)
{
    ngx_uint_t               n;
    ngx_http_agent_tool_t  **x;

    n = sizeof(ngx_http_agent_tools) / sizeof(ngx_http_agent_tool_t *) - 1;

    if (*i < n) {
        return ngx_http_agent_tools[(*i)++];
    }

    if (extra == NULL || *i - n >= extra->nelts) {
        return NULL;
    }

    x = extra->elts;

    return x[(*i)++ - n];
}


ngx_http_agent_tool_t *
ngx_http_agent_tools_find(ngx_array_t *extra, ngx_str_t *name)
{
    ngx_uint_t              i;
    ngx_http_agent_tool_t  *t;

    i = 0;

    while ((t = ngx_http_agent_tools_next(extra, &i))) {
        if (t->name.len == name->len
            && ngx_strncmp(t->name.data, name->data, name->len) == 0)
        {
            return t;
        }
    }

    return NULL;
}


/*
 * The prompt files of the tools a node binds, read once into prompts
 * (ngx_keyval_t: file name, text): a tool named in the list needs its
 * files, as a node needs its prompt=; "all" reads those that agent_prompts
 * has, and a tool without them answers an error when it is called.
 */

ngx_int_t
ngx_http_agent_tools_prompts(ngx_conf_t *cf, ngx_str_t *list, ngx_str_t *dir,
    ngx_array_t **prompts)
{
    ngx_str_t              *file, text;
    ngx_uint_t              i, k, all;
    ngx_keyval_t           *kv;
    ngx_http_agent_tool_t  *t;

    all = (list->len == 3 && ngx_strncmp(list->data, "all", 3) == 0);

    for (i = 0; ngx_http_agent_tools[i]; i++) {
        t = ngx_http_agent_tools[i];

        if (!ngx_http_agent_tools_allowed(list, &t->name)) {
            continue;
        }

        for (k = 0; k < 2; k++) {
            file = k ? &t->fixer : &t->prompt;

            if (file->len == 0
                || (*prompts && ngx_http_agent_tools_prompt(*prompts, file)))
            {
                continue;
            }

            if (dir->len == 0) {
                if (all) {
                    continue;
                }

                ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the tool \"%V\" "
                                   "asks a model with the prompt \"%V\": "
                                   "set agent_prompts to the folder it is "
                                   "in", &t->name, file);
                return NGX_ERROR;
            }

            if (ngx_http_agent_prompt_load(cf, dir, file, &text) != NGX_OK) {
                return NGX_ERROR;
            }

            if (*prompts == NULL) {
                *prompts = ngx_array_create(cf->pool, 4,
                                            sizeof(ngx_keyval_t));
                if (*prompts == NULL) {
                    return NGX_ERROR;
                }
            }

            kv = ngx_array_push(*prompts);
            if (kv == NULL) {
                return NGX_ERROR;
            }

            kv->key = *file;
            kv->value = text;
        }
    }

    return NGX_OK;
}
