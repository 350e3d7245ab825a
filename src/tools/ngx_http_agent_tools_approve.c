
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_tools.h"


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
 * or LangChain's HITLResponse, a decision per call in their order:
 *
 *     {"decisions": [{"type": "approve"},
 *                    {"type": "edit", "edited_action": {"args": {...}}},
 *                    {"type": "reject", "message": "..."},
 *                    {"type": "respond", "message": "..."}]}
 *
 * Edited arguments replace the model's (written anew, an object each); a
 * rejected round runs nothing and every call answers that a human
 * rejected it, with the reason, so the model can go on; a decision
 * rejects or answers its own call only ("respond": the message is the
 * call's result).  An answer of any other shape is a rejection that says
 * so.  The interrupt is marked "approve" (the LangGraph API shows it as
 * LangChain's HITLRequest).
 */


static ngx_int_t ngx_http_agent_tools_approve_edit(ngx_pool_t *pool,
    ngx_http_agent_call_t *c, yajl_val args);
static ngx_int_t ngx_http_agent_tools_approve_decisions(ngx_pool_t *pool,
    ngx_array_t *calls, yajl_val decisions, ngx_str_t *reason);


ngx_int_t
ngx_http_agent_tools_approve_ask(ngx_http_agent_run_t *run,
    ngx_str_t *node, ngx_array_t *calls)
{
    ngx_uint_t              i;
    ngx_http_agent_call_t  *c;
    ngx_http_agent_json_t  *j;

    c = calls->elts;

    j = ngx_http_agent_tools_approve_open(run, node);
    if (j == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < calls->nelts; i++) {
        ngx_http_agent_tools_approve_call(j, &c[i]);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "approve");
    ngx_http_agent_json_bool(j, 1);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_tools_approve_wait(run, j);
}


/* an interrupt of calls begun: {"node": NODE, "value": [ */

ngx_http_agent_json_t *
ngx_http_agent_tools_approve_open(ngx_http_agent_run_t *run, ngx_str_t *node)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create_obj(run->pool);
    if (j == NULL) {
        return NULL;
    }

    ngx_http_agent_json_key(j, "node");
    ngx_http_agent_json_str(j, node);
    ngx_http_agent_json_key(j, "value");
    ngx_http_agent_json_arr(j);

    return j;
}


/* the run waits: the interrupt j wrote, {"node", "value", ...}, kept */

ngx_int_t
ngx_http_agent_tools_approve_wait(ngx_http_agent_run_t *run,
    ngx_http_agent_json_t *j)
{
    if (ngx_http_agent_json_done(j, &run->interrupt) != NGX_OK
        || ngx_http_agent_state_set(run, "__interrupt__", &run->interrupt)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    return NGX_HTTP_AGENT_INTERRUPT;
}


/* a resumed run: the answer (NULL: not JSON) read once, the wait over */

ngx_int_t
ngx_http_agent_tools_approve_resumed(ngx_http_agent_run_t *run,
    yajl_val *answer)
{
    ngx_str_t  none;

    *answer = ngx_http_agent_json_parse(run->pool, run->resume.data,
                                        run->resume.len, NULL);

    ngx_str_null(&run->resume);
    ngx_str_set(&none, "null");

    return ngx_http_agent_state_set(run, "__interrupt__", &none);
}


/* NGX_OK: run them (edited or not); NGX_DECLINED: rejected, *reason why */

/* a call as an interrupt shows it, {"id", "name", "args"} */

void
ngx_http_agent_tools_approve_call(ngx_http_agent_json_t *j,
    ngx_http_agent_call_t *c)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, &c->id);
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, &c->name);
    ngx_http_agent_json_key(j, "args");

    if (c->args) {
        ngx_http_agent_json_val(j, c->args);

    } else {
        ngx_http_agent_json_str(j, &c->arguments);
    }

    ngx_http_agent_json_end(j);
}


ngx_int_t
ngx_http_agent_tools_approve_answer(ngx_http_agent_run_t *run,
    ngx_array_t *calls, ngx_str_t *reason)
{
    size_t                  k;
    yajl_val                v, args, map;
    ngx_str_t               action, id;
    ngx_uint_t              i;
    ngx_http_agent_call_t  *c;

    ngx_str_set(reason, "no reason given");

    if (ngx_http_agent_tools_approve_resumed(run, &v) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_str_set(&action, "");

    if (v && YAJL_IS_STRING(v)) {
        action.data = (u_char *) YAJL_GET_STRING(v);
        action.len = ngx_strlen(action.data);

    } else if (v && YAJL_IS_OBJECT(v)) {
        map = ngx_http_agent_json_get(v, "decisions");

        if (map) {
            return ngx_http_agent_tools_approve_decisions(run->pool, calls,
                                                          map, reason);
        }

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


/* LangChain's decisions, one per call in order: each call's own */

static ngx_int_t
ngx_http_agent_tools_approve_decisions(ngx_pool_t *pool, ngx_array_t *calls,
    yajl_val decisions, ngx_str_t *reason)
{
    u_char                 *p;
    yajl_val                d, a, args;
    ngx_str_t               type, text;
    ngx_uint_t              i;
    ngx_http_agent_call_t  *c;

    if (!YAJL_IS_ARRAY(decisions) || decisions->u.array.len != calls->nelts) {
        ngx_str_set(reason, "the decisions were not one per tool call");
        return NGX_DECLINED;
    }

    c = calls->elts;

    for (i = 0; i < calls->nelts; i++) {
        d = decisions->u.array.values[i];

        if (!YAJL_IS_OBJECT(d)
            || ngx_http_agent_json_get_str(d, "type", &type) != NGX_OK)
        {
            ngx_str_set(reason, "a decision without a \"type\"");
            return NGX_DECLINED;
        }

        ngx_str_null(&text);
        (void) ngx_http_agent_json_get_str(d, "message", &text);

        if (type.len == 7 && ngx_strncmp(type.data, "approve", 7) == 0) {
            continue;
        }

        if (type.len == 4 && ngx_strncmp(type.data, "edit", 4) == 0) {
            /* "args" (LangChain 1.0), "arguments" (before) */

            a = ngx_http_agent_json_get(d, "edited_action");
            args = a ? ngx_http_agent_json_get(a, "args") : NULL;

            if (a && args == NULL) {
                args = ngx_http_agent_json_get(a, "arguments");
            }

            if (args == NULL
                || ngx_http_agent_tools_approve_edit(pool, &c[i], args)
                   != NGX_OK)
            {
                ngx_str_set(reason, "the edited arguments are not a JSON "
                            "object");
                return NGX_DECLINED;
            }

            continue;
        }

        if (type.len == 7 && ngx_strncmp(type.data, "respond", 7) == 0) {
            /* the human answers as the tool would: its result */
            if (ngx_http_agent_json_quote(pool, &text, &c[i].answer)
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            continue;
        }

        if (!(type.len == 6 && ngx_strncmp(type.data, "reject", 6) == 0)) {
            ngx_str_set(reason, "a decision is approve, edit, reject or "
                        "respond");
            return NGX_DECLINED;
        }

        if (text.len == 0) {
            /* LangChain's words for a rejection without a message */
            p = ngx_pnalloc(pool, c[i].name.len + c[i].id.len + 64);
            if (p == NULL) {
                return NGX_ERROR;
            }

            text.data = p;
            text.len = ngx_sprintf(p, "User rejected the tool call for `%V` "
                                   "with id %V", &c[i].name, &c[i].id)
                       - p;
        }

        if (ngx_http_agent_json_error(pool, &text, &c[i].answer) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}

