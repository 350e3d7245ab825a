
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_json.h"


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


ngx_http_agent_tool_t *
ngx_http_agent_tool_find(ngx_str_t *name)
{
    ngx_uint_t              i;
    ngx_http_agent_tool_t  *t;

    for (i = 0; ngx_http_agent_tools[i]; i++) {
        t = ngx_http_agent_tools[i];

        if (t->name.len == name->len
            && ngx_strncmp(t->name.data, name->data, name->len) == 0)
        {
            return t;
        }
    }

    return NULL;
}


/* "all" or "a,b": whether the model may call name */

ngx_uint_t
ngx_http_agent_tools_allowed(ngx_str_t *list, ngx_str_t *name)
{
    u_char  *p, *q, *last;

    if (list->len == 0 || (list->len == 3
                           && ngx_strncmp(list->data, "all", 3) == 0))
    {
        return 1;
    }

    p = list->data;
    last = list->data + list->len;

    while (p < last) {
        q = ngx_strlchr(p, last, ',');
        if (q == NULL) {
            q = last;
        }

        if ((size_t) (q - p) == name->len
            && ngx_strncmp(p, name->data, name->len) == 0)
        {
            return 1;
        }

        p = q + 1;
    }

    return 0;
}


/* tools=all|A,B: the definitions the model is sent, checked by nginx -t */

ngx_int_t
ngx_http_agent_tools_conf(ngx_conf_t *cf, ngx_str_t *list, ngx_str_t *json)
{
    u_char                 *p, *q, *last, *d;
    size_t                  size;
    ngx_str_t               name;
    ngx_uint_t              i, all;
    ngx_http_agent_tool_t  *t;

    all = (list->len == 3 && ngx_strncmp(list->data, "all", 3) == 0);

    p = list->data;
    last = list->data + list->len;

    while (!all && p < last) {
        q = ngx_strlchr(p, last, ',');
        if (q == NULL) {
            q = last;
        }

        name.data = p;
        name.len = q - p;

        if (ngx_http_agent_tool_find(&name) == NULL) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "tools=%V: there is no "
                               "tool \"%V\"", list, &name);
            return NGX_ERROR;
        }

        p = q + 1;
    }

    size = 2;

    for (i = 0; ngx_http_agent_tools[i]; i++) {
        size += ngx_http_agent_tools[i]->definition.len + 1;
    }

    d = ngx_pnalloc(cf->pool, size);
    if (d == NULL) {
        return NGX_ERROR;
    }

    json->data = d;
    *d++ = '[';

    for (i = 0; ngx_http_agent_tools[i]; i++) {
        t = ngx_http_agent_tools[i];

        if (!all && !ngx_http_agent_tools_allowed(list, &t->name)) {
            continue;
        }

        if (d - json->data > 1) {
            *d++ = ',';
        }

        d = ngx_cpymem(d, t->definition.data, t->definition.len);
    }

    *d++ = ']';
    json->len = d - json->data;

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_tool_error(ngx_pool_t *pool, ngx_str_t *err,
    ngx_str_t *result)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "error");
    ngx_http_agent_json_str(j, err);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, result);
}
