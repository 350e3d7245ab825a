
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_message.h"


/*
 * Messages are stored provider-neutral: text, images as [{"mime_type",
 * "data"}], and tool calls as [{"id", "name", "arguments"}] with the
 * arguments as the parsed JSON value (or, when the model wrote something
 * that does not parse, its text as a string).  Each provider writes them
 * its own way when it builds a request.  Messages stored before this
 * format (OpenAI's {"id", "type", "function": {"name", "arguments"}}) are
 * read as well.
 */


ngx_int_t
ngx_http_agent_message_calls(ngx_pool_t *pool, ngx_str_t *json,
    ngx_array_t **calls)
{
    size_t                  i;
    yajl_val                v, c, fn, args;
    ngx_str_t               text;
    ngx_array_t            *a;
    ngx_http_agent_call_t  *call;

    *calls = NULL;

    v = ngx_http_agent_json_parse(pool, json->data, json->len, NULL);
    if (v == NULL || !YAJL_IS_ARRAY(v)) {
        return NGX_ERROR;
    }

    a = ngx_array_create(pool, ngx_max(v->u.array.len, 1),
                         sizeof(ngx_http_agent_call_t));
    if (a == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < v->u.array.len; i++) {
        c = v->u.array.values[i];

        call = ngx_array_push(a);
        if (call == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(call, sizeof(ngx_http_agent_call_t));

        if (ngx_http_agent_json_get_str(c, "id", &call->id) != NGX_OK) {
            a->nelts--;
            continue;
        }

        fn = ngx_http_agent_json_get(c, "function");

        if (fn && YAJL_IS_OBJECT(fn)) {
            /* stored before messages were provider-neutral */
            (void) ngx_http_agent_json_get_str(fn, "name", &call->name);
            args = ngx_http_agent_json_get(fn, "arguments");

        } else {
            (void) ngx_http_agent_json_get_str(c, "name", &call->name);
            args = ngx_http_agent_json_get(c, "arguments");
        }

        if (call->name.len == 0) {
            a->nelts--;
            continue;
        }

        if (args == NULL || YAJL_IS_NULL(args)) {
            continue;
        }

        if (!YAJL_IS_STRING(args)) {
            call->args = args;

            if (ngx_http_agent_json_encode(pool, args, &call->arguments)
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            continue;
        }

        /* a string: the model's text, parsed when it is JSON */

        text.data = (u_char *) YAJL_GET_STRING(args);
        text.len = ngx_strlen(text.data);

        call->arguments = text;
        call->args = text.len ? ngx_http_agent_json_parse(pool, text.data,
                                                          text.len, NULL)
                              : NULL;
    }

    *calls = a;

    return NGX_OK;
}


/* a call as stored: the arguments parsed when they parse, else as text */

void
ngx_http_agent_message_call_json(ngx_http_agent_json_t *j, ngx_str_t *id,
    ngx_str_t *name, ngx_str_t *arguments)
{
    yajl_val  v;

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, id);
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, name);
    ngx_http_agent_json_key(j, "arguments");

    v = arguments->len ? ngx_http_agent_json_parse(j->pool, arguments->data,
                                                   arguments->len, NULL)
                       : NULL;

    if (v) {
        ngx_http_agent_json_val(j, v);

    } else if (arguments->len) {
        ngx_http_agent_json_str(j, arguments);

    } else {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);
}
