
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_json.h"
#include "ngx_http_agent_message.h"
#include "ngx_http_agent_state.h"
#include "ngx_http_agent_tools_approve.h"


/*
 * approve= of a tools node: a human sees the tool calls before they run.
 * The node interrupts with the calls, [{"id", "name", "args"}]; the answer
 * (POST /{id}/resume) is "approve", "reject", or an object:
 *
 *     {"action": "approve"}
 *     {"action": "edit", "args": {...}}            the first call's
 *     {"action": "edit", "calls": {"ID": {...}}}   by call id
 *     {"action": "reject", "reason": "..."}
 *
 * Edited arguments replace the model's (written anew, an object each); a
 * rejected round runs nothing and every call answers that a human
 * rejected it, with the reason, so the model can go on.  An answer of any
 * other shape is a rejection that says so.
 */


static ngx_int_t ngx_http_agent_tools_approve_edit(ngx_pool_t *pool,
    ngx_http_agent_call_t *c, yajl_val args);


ngx_int_t
ngx_http_agent_tools_approve_ask(ngx_http_agent_run_t *run,
    ngx_str_t *node, ngx_array_t *calls)
{
    ngx_uint_t              i;
    ngx_http_agent_call_t  *c;
    ngx_http_agent_json_t  *j;

    c = calls->elts;

    j = ngx_http_agent_json_create(run->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "node");
    ngx_http_agent_json_str(j, node);
    ngx_http_agent_json_key(j, "value");
    ngx_http_agent_json_arr(j);

    for (i = 0; i < calls->nelts; i++) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_str(j, &c[i].id);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &c[i].name);
        ngx_http_agent_json_key(j, "args");

        if (c[i].args) {
            ngx_http_agent_json_val(j, c[i].args);

        } else {
            ngx_http_agent_json_str(j, &c[i].arguments);
        }

        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &run->interrupt) != NGX_OK
        || ngx_http_agent_state_set(run, "__interrupt__", &run->interrupt)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    return NGX_HTTP_AGENT_INTERRUPT;
}


/* NGX_OK: run them (edited or not); NGX_DECLINED: rejected, *reason why */

ngx_int_t
ngx_http_agent_tools_approve_answer(ngx_http_agent_run_t *run,
    ngx_array_t *calls, ngx_str_t *reason)
{
    size_t                  k;
    yajl_val                v, args, map;
    ngx_str_t               action, none, id;
    ngx_uint_t              i;
    ngx_http_agent_call_t  *c;

    ngx_str_set(&none, "null");
    ngx_str_set(reason, "no reason given");

    v = ngx_http_agent_json_parse(run->pool, run->resume.data,
                                  run->resume.len, NULL);

    ngx_str_null(&run->resume);

    if (ngx_http_agent_state_set(run, "__interrupt__", &none) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_str_set(&action, "");

    if (v && YAJL_IS_STRING(v)) {
        action.data = (u_char *) YAJL_GET_STRING(v);
        action.len = ngx_strlen(action.data);

    } else if (v && YAJL_IS_OBJECT(v)) {
        (void) ngx_http_agent_json_get_str(v, "action", &action);
        (void) ngx_http_agent_json_get_str(v, "reason", reason);
    }

    if (action.len == 7 && ngx_strncmp(action.data, "approve", 7) == 0) {
        return NGX_OK;
    }

    if (action.len == 6 && ngx_strncmp(action.data, "reject", 6) == 0) {
        return NGX_DECLINED;
    }

    if (!(action.len == 4 && ngx_strncmp(action.data, "edit", 4) == 0)) {
        ngx_str_set(reason, "the answer was not approve, edit or reject");
        return NGX_DECLINED;
    }

    c = calls->elts;
    args = ngx_http_agent_json_get(v, "args");
    map = ngx_http_agent_json_get(v, "calls");

    if (args && calls->nelts
        && ngx_http_agent_tools_approve_edit(run->pool, &c[0], args)
           != NGX_OK)
    {
        ngx_str_set(reason, "the edited arguments are not a JSON object");
        return NGX_DECLINED;
    }

    for (k = 0; map && YAJL_IS_OBJECT(map) && k < map->u.object.len; k++) {
        id.data = (u_char *) map->u.object.keys[k];
        id.len = ngx_strlen(id.data);

        for (i = 0; i < calls->nelts; i++) {
            if (c[i].id.len == id.len
                && ngx_strncmp(c[i].id.data, id.data, id.len) == 0
                && ngx_http_agent_tools_approve_edit(run->pool, &c[i],
                                                     map->u.object.values[k])
                   != NGX_OK)
            {
                ngx_str_set(reason, "the edited arguments are not a JSON "
                            "object");
                return NGX_DECLINED;
            }
        }
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_tools_approve_edit(ngx_pool_t *pool, ngx_http_agent_call_t *c,
    yajl_val args)
{
    if (!YAJL_IS_OBJECT(args)) {
        return NGX_ERROR;
    }

    if (ngx_http_agent_json_encode(pool, args, &c->arguments) != NGX_OK) {
        return NGX_ERROR;
    }

    c->args = ngx_http_agent_json_parse(pool, c->arguments.data,
                                        c->arguments.len, NULL);

    return c->args ? NGX_OK : NGX_ERROR;
}
