
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_responses_int.h"
#include "ngx_http_agent_util.h"


/*
 * The client's own tools, called (node_tools_calls.c): the run waits for
 * their outputs, and the response ends, completed, with a function_call
 * item per call, as OpenAI's does; streamed, each item's arguments as
 * function_call_arguments events.  An item's id, fc{N}_{run}_{thread},
 * names the conversation for a client that sends it back with the
 * outputs and no previous_response_id.  The events' head and send are
 * here, for responses_stream.c too.
 */


static void ngx_http_agent_responses_call(ngx_http_agent_json_t *j,
    ngx_str_t *id, ngx_str_t *call_id, ngx_str_t *name, ngx_str_t *args,
    ngx_uint_t done);
static void ngx_http_agent_responses_args(ngx_http_agent_json_t *j,
    ngx_http_agent_responses_out_t *o, ngx_str_t *id, const char *type);


/* NGX_DECLINED: what the run waits for is not the client's calls */

ngx_int_t
ngx_http_agent_responses_calls(ngx_http_agent_stream_t *s, ngx_pool_t *pool,
    ngx_http_agent_responses_out_t *o, ngx_http_agent_json_t *j,
    ngx_str_t *interrupt)
{
    u_char                 *p;
    size_t                  i;
    yajl_val                v, value, c, args;
    ngx_str_t               id, call_id, name, arguments, tail, none, *item;
    ngx_http_agent_json_t  *k;

    v = ngx_http_agent_json_parse(pool, interrupt->data, interrupt->len,
                                  NULL);

    args = v ? ngx_http_agent_json_get(v, "client") : NULL;
    value = v ? ngx_http_agent_json_get(v, "value") : NULL;

    if (args == NULL || !YAJL_IS_TRUE(args)
        || value == NULL || !YAJL_IS_ARRAY(value))
    {
        return NGX_DECLINED;
    }

    /* "_{run}_{thread}" */
    tail.data = o->id.data + 4;
    tail.len = o->id.len - 4;
    ngx_str_set(&none, "");

    for (i = 0; i < value->u.array.len; i++) {
        c = value->u.array.values[i];

        if (ngx_http_agent_json_get_str(c, "id", &call_id) != NGX_OK
            || ngx_http_agent_json_get_str(c, "name", &name) != NGX_OK)
        {
            continue;
        }

        /* the arguments as our generator wrote them, or the model's text */

        args = ngx_http_agent_json_get(c, "args");

        if (args && YAJL_IS_STRING(args)) {
            (void) ngx_http_agent_json_get_str(c, "args", &arguments);

        } else if (args == NULL) {
            ngx_str_set(&arguments, "{}");

        } else if (ngx_http_agent_json_encode(pool, args, &arguments)
                   != NGX_OK)
        {
            return NGX_ERROR;
        }

        p = ngx_pnalloc(pool, tail.len + 2 + NGX_SIZE_T_LEN);
        k = ngx_http_agent_json_create(pool);

        if (p == NULL || k == NULL) {
            return NGX_ERROR;
        }

        id.data = p;
        id.len = ngx_sprintf(p, "fc%uz%V", i, &tail) - p;

        if (s) {
            ngx_http_agent_responses_head(j, o, "response.output_item.added");
            ngx_http_agent_json_key(j, "output_index");
            ngx_http_agent_json_int(j, o->items->nelts);
            ngx_http_agent_json_key(j, "item");
            ngx_http_agent_responses_call(j, &id, &call_id, &name, &none, 0);
            ngx_http_agent_json_end(j);

            if (ngx_http_agent_responses_send(s, j,
                                              "response.output_item.added", 0)
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            ngx_http_agent_responses_args(j, o, &id,
                                      "response.function_call_arguments.delta");
            ngx_http_agent_json_key(j, "delta");
            ngx_http_agent_json_str(j, &arguments);
            ngx_http_agent_json_end(j);

            if (ngx_http_agent_responses_send(s, j,
                                      "response.function_call_arguments.delta",
                                      0)
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            ngx_http_agent_responses_args(j, o, &id,
                                      "response.function_call_arguments.done");
            ngx_http_agent_json_key(j, "name");
            ngx_http_agent_json_str(j, &name);
            ngx_http_agent_json_key(j, "arguments");
            ngx_http_agent_json_str(j, &arguments);
            ngx_http_agent_json_end(j);

            if (ngx_http_agent_responses_send(s, j,
                                      "response.function_call_arguments.done",
                                      0)
                != NGX_OK)
            {
                return NGX_ERROR;
            }
        }

        item = ngx_array_push(o->items);
        if (item == NULL) {
            return NGX_ERROR;
        }

        ngx_http_agent_responses_call(k, &id, &call_id, &name, &arguments, 1);

        if (ngx_http_agent_json_done(k, item) != NGX_OK) {
            return NGX_ERROR;
        }

        if (s == NULL) {
            continue;
        }

        if (ngx_http_agent_responses_item_done(s, j, o, item) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


static void
ngx_http_agent_responses_call(ngx_http_agent_json_t *j, ngx_str_t *id,
    ngx_str_t *call_id, ngx_str_t *name, ngx_str_t *args, ngx_uint_t done)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, id);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "function_call");
    ngx_http_agent_json_key(j, "status");
    ngx_http_agent_json_cstr(j, done ? "completed" : "in_progress");
    ngx_http_agent_json_key(j, "call_id");
    ngx_http_agent_json_str(j, call_id);
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, name);
    ngx_http_agent_json_key(j, "arguments");
    ngx_http_agent_json_str(j, args);
    ngx_http_agent_json_end(j);
}


/* {"type", "sequence_number", "item_id", "output_index", ... left open */

static void
ngx_http_agent_responses_args(ngx_http_agent_json_t *j,
    ngx_http_agent_responses_out_t *o, ngx_str_t *id, const char *type)
{
    ngx_http_agent_responses_head(j, o, type);
    ngx_http_agent_json_key(j, "item_id");
    ngx_http_agent_json_str(j, id);
    ngx_http_agent_json_key(j, "output_index");
    ngx_http_agent_json_int(j, o->items->nelts);
}


ngx_int_t
ngx_http_agent_responses_send(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, const char *type, ngx_uint_t now)
{
    ngx_str_t  name, json;

    if (ngx_http_agent_json_scratch(j, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    name.data = (u_char *) type;
    name.len = ngx_strlen(type);

    return s->sink(s->sink_data, &name, &json, now);
}


/* {"type", "sequence_number", ... left open */

void
ngx_http_agent_responses_head(ngx_http_agent_json_t *j,
    ngx_http_agent_responses_out_t *o, const char *type)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, type);
    ngx_http_agent_json_key(j, "sequence_number");
    ngx_http_agent_json_int(j, o->seq++);
}


/* response.output_item.done: the item just kept, whole */

ngx_int_t
ngx_http_agent_responses_item_done(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, ngx_http_agent_responses_out_t *o,
    ngx_str_t *item)
{
    ngx_http_agent_responses_head(j, o, "response.output_item.done");
    ngx_http_agent_json_key(j, "output_index");
    ngx_http_agent_json_int(j, o->items->nelts - 1);
    ngx_http_agent_json_key(j, "item");
    ngx_http_agent_json_raw(j, item);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_responses_send(s, j, "response.output_item.done", 1);
}
