
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"


/*
 * "node NAME format shape=FILE output=CHANNEL [event=NAME]": seed 001's
 * formatResponse.  The last AI message's text is parsed as JSON against a
 * shape (a JSON object in agent_prompts: each field with its default,
 * nested objects, and [ITEM] for a list of items of ITEM's shape); a
 * missing field or one of another type gets the default, fields the shape
 * does not name are dropped, text that is no JSON object gives the
 * defaults.  The result is written to the channel, and sent as a custom
 * event with event=.
 */


typedef struct {
    ngx_str_t                  shape_file;
    ngx_str_t                  shape_text;
    yajl_val                   shape;
    ngx_str_t                  output_name;
    ngx_int_t                  output;
    ngx_str_t                  event;
} ngx_http_agent_node_format_conf_t;


static ngx_int_t ngx_http_agent_node_format_check(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);
static ngx_int_t ngx_http_agent_node_format_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);
static void ngx_http_agent_node_format_value(ngx_http_agent_json_t *j,
    yajl_val shape, yajl_val v, ngx_uint_t depth);
static ngx_uint_t ngx_http_agent_node_format_same(yajl_val a, yajl_val b);


static ngx_http_agent_param_t  ngx_http_agent_node_format_params[] = {
    { ngx_string("shape"), ngx_http_agent_params_set_file,
      offsetof(ngx_http_agent_node_format_conf_t, shape_file),
      &ngx_http_agent_param_required },
    { ngx_string("output"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_format_conf_t, output_name),
      &ngx_http_agent_param_required },
    { ngx_string("event"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_format_conf_t, event),
      &ngx_http_agent_stream_event_post },
    ngx_http_agent_null_param
};


ngx_http_agent_kind_t  ngx_http_agent_format_kind = {
    ngx_string("format"),
    NULL,
    ngx_http_agent_node_format_params,
    ngx_http_agent_node_format_check,
    ngx_http_agent_node_format_run,
    0,
    NULL,
    sizeof(ngx_http_agent_node_format_conf_t)
};


static ngx_int_t
ngx_http_agent_node_format_check(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_format_conf_t *fc = node->conf;

    ngx_str_t  err;

    ngx_str_set(&err, "");

    fc->shape = ngx_http_agent_json_parse(cf->pool, fc->shape_text.data,
                                          fc->shape_text.len, &err);

    if (fc->shape == NULL || !YAJL_IS_OBJECT(fc->shape)) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "shape=%V of the node "
                           "\"%V\" is not a JSON object %V", &fc->shape_file,
                           &node->name, &err);
        return NGX_ERROR;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_node_format_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_format_conf_t *fc = node->conf;

    yajl_val                 v;
    ngx_str_t                text, json;
    ngx_uint_t               k;
    ngx_array_t             *msgs;
    ngx_http_agent_msg_t    *m;
    ngx_http_agent_json_t   *j;
    ngx_http_agent_event_t   ev;

    ngx_str_set(&text, "");

    msgs = run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages;
    m = msgs->elts;

    for (k = msgs->nelts; k > 0; k--) {
        if (m[k - 1].role.len && m[k - 1].role.data[0] == 'a') {
            text = m[k - 1].content;
            break;
        }
    }

    (void) ngx_http_agent_ask_fenced(&text);

    v = text.len ? ngx_http_agent_json_parse(run->pool, text.data, text.len,
                                             NULL)
                 : NULL;

    if (v && !YAJL_IS_OBJECT(v)) {
        v = NULL;
    }

    j = ngx_http_agent_json_create(run->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_node_format_value(j, fc->shape, v, 0);

    if (ngx_http_agent_json_done(j, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    if (fc->event.len) {
        ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));
        ev.type = NGX_HTTP_AGENT_EV_CUSTOM;
        ev.name = &fc->event;
        ev.json = &json;

        if (ngx_http_agent_env_emit(run, &ev) != NGX_OK) {
            return ngx_http_agent_graph_fail(run, "client_gone", "the client "
                                             "went away");
        }
    }

    return ngx_http_agent_graph_write_value(run->update, fc->output, &json);
}


/*
 * The value v (NULL: missing) written as the shape says: null takes any
 * value; an object is written field by field, each at its default when
 * missing or of another type, fields it does not name dropped; an array of
 * one element is an array of items of that shape (default empty, items of
 * another type dropped: seed 001's lists of suggestions); any other value
 * is the default unless v has its JSON type.
 */

static void
ngx_http_agent_node_format_value(ngx_http_agent_json_t *j, yajl_val shape,
    yajl_val v, ngx_uint_t depth)
{
    size_t    i;
    yajl_val  item;

    if (YAJL_IS_OBJECT(shape) && depth < 16) {
        if (v && !YAJL_IS_OBJECT(v)) {
            v = NULL;
        }

        ngx_http_agent_json_obj(j);

        for (i = 0; i < shape->u.object.len; i++) {
            ngx_http_agent_json_cstr(j, shape->u.object.keys[i]);
            ngx_http_agent_node_format_value(j, shape->u.object.values[i],
                                v ? ngx_http_agent_json_get(v,
                                                  shape->u.object.keys[i])
                                  : NULL,
                                depth + 1);
        }

        ngx_http_agent_json_end(j);
        return;
    }

    if (YAJL_IS_ARRAY(shape) && shape->u.array.len == 1 && depth < 16) {
        item = shape->u.array.values[0];

        ngx_http_agent_json_arr(j);

        for (i = 0; v && YAJL_IS_ARRAY(v) && i < v->u.array.len; i++) {
            if (ngx_http_agent_node_format_same(item, v->u.array.values[i])) {
                ngx_http_agent_node_format_value(j, item,
                                                 v->u.array.values[i],
                                                 depth + 1);
            }
        }

        ngx_http_agent_json_arr_end(j);
        return;
    }

    ngx_http_agent_json_val(j, (v && ngx_http_agent_node_format_same(shape, v))
                               ? v : shape);
}


/* a default of null takes any value; otherwise the JSON types must agree */

static ngx_uint_t
ngx_http_agent_node_format_same(yajl_val a, yajl_val b)
{
    if (YAJL_IS_NULL(a)) {
        return 1;
    }

    if ((YAJL_IS_TRUE(a) || YAJL_IS_FALSE(a))
        && (YAJL_IS_TRUE(b) || YAJL_IS_FALSE(b)))
    {
        return 1;
    }

    return (YAJL_IS_STRING(a) && YAJL_IS_STRING(b))
           || (YAJL_IS_NUMBER(a) && YAJL_IS_NUMBER(b))
           || (YAJL_IS_ARRAY(a) && YAJL_IS_ARRAY(b))
           || (YAJL_IS_OBJECT(a) && YAJL_IS_OBJECT(b));
}
