
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"


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


/*
 * A tool as the model is offered it, {"type": "function", "function":
 * {name, description, parameters}}, written by our generator whoever
 * declared it: schema an object, or NULL for one of no properties; desc
 * NULL for none
 */

ngx_int_t
ngx_http_agent_tools_define(ngx_pool_t *pool, ngx_str_t *name,
    ngx_str_t *desc, yajl_val schema, ngx_str_t *def)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create_obj(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "function");
    ngx_http_agent_json_key(j, "function");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, name);

    if (desc) {
        ngx_http_agent_json_key(j, "description");
        ngx_http_agent_json_str(j, desc);
    }

    ngx_http_agent_json_key(j, "parameters");

    if (schema) {
        ngx_http_agent_json_val(j, schema);

    } else {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "object");
        ngx_http_agent_json_key(j, "properties");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, def);
}


/* the text of a prompt file that ngx_http_agent_tools_prompts() read */

ngx_str_t *
ngx_http_agent_tools_prompt(ngx_array_t *prompts, ngx_str_t *file)
{
    ngx_uint_t     i;
    ngx_keyval_t  *kv;

    if (prompts == NULL) {
        return NULL;
    }

    kv = prompts->elts;

    for (i = 0; i < prompts->nelts; i++) {
        if (kv[i].key.len == file->len
            && ngx_strncmp(kv[i].key.data, file->data, file->len) == 0)
        {
            return &kv[i].value;
        }
    }

    return NULL;
}


/*
 * A call that may run again after a take-over (docs/runs.md): its tool
 * says it is idempotent, or is SQL, which only reads
 */

ngx_uint_t
ngx_http_agent_tools_idempotent(ngx_http_agent_tool_call_t *call)
{
    ngx_http_agent_tool_t  *tool;

    tool = call->tool;

    if (tool == NULL) {
        return 0;
    }

    if (tool->idempotent || tool->sql) {
        return 1;
    }

    return tool->idempotent_of ? tool->idempotent_of(call) : 0;
}
