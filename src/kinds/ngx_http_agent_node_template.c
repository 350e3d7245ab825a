
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"


/*
 * "node NAME template text=TEMPLATE [output=messages|CHANNEL]
 * [role=assistant|tool] [json=on]": a fixed answer, or a channel written
 * from others, with no model call.  role=tool answers each tool call of
 * the last AI message with the text, as a node of LangGraph's that
 * returns a ToolMessage does.  json=on writes the text parsed, through
 * the channel's reducer: a boolean, a number a sum adds, an object.
 */


typedef struct {
    ngx_str_t                  text;
    ngx_str_t                  output_name;
    ngx_int_t                  output;
    ngx_uint_t                 tool;        /* role=tool */
    ngx_flag_t                 json;        /* json=on */
} ngx_http_agent_node_template_conf_t;


static ngx_int_t ngx_http_agent_node_template_check(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);
static ngx_int_t ngx_http_agent_node_template_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);


static ngx_int_t ngx_http_agent_node_template_tool(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_str_t *text);


static ngx_conf_enum_t  ngx_http_agent_node_template_roles[] = {
    { ngx_string("assistant"), 0 },
    { ngx_string("tool"), 1 },
    { ngx_null_string, 0 }
};


static ngx_http_agent_param_t  ngx_http_agent_node_template_params[] = {
    { ngx_string("role"), ngx_http_agent_params_set_enum,
      offsetof(ngx_http_agent_node_template_conf_t, tool),
      ngx_http_agent_node_template_roles },
    { ngx_string("text"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_template_conf_t, text), NULL },
    { ngx_string("json"), ngx_http_agent_params_set_flag,
      offsetof(ngx_http_agent_node_template_conf_t, json), NULL },
    { ngx_string("output"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_template_conf_t, output_name),
      &ngx_http_agent_param_messages },
    ngx_http_agent_null_param
};


ngx_http_agent_kind_t  ngx_http_agent_template_kind = {
    ngx_string("template"),
    NULL,
    ngx_http_agent_node_template_params,
    ngx_http_agent_node_template_check,
    ngx_http_agent_node_template_run,
    0,
    NULL,
    sizeof(ngx_http_agent_node_template_conf_t)
};


static ngx_int_t
ngx_http_agent_node_template_check(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_template_conf_t *tc = node->conf;

    if (tc->text.len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the template node \"%V\" "
                           "needs text=", &node->name);
        return NGX_ERROR;
    }

    if (tc->tool && tc->output != NGX_HTTP_AGENT_CH_MESSAGES) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the template node \"%V\": "
                           "role=tool writes messages, not a channel",
                           &node->name);
        return NGX_ERROR;
    }

    if (tc->json && tc->output == NGX_HTTP_AGENT_CH_MESSAGES) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the template node \"%V\": "
                           "json=on writes a channel: give it output=",
                           &node->name);
        return NGX_ERROR;
    }

    node->answers = tc->tool;

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_node_template_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_template_conf_t *tc = node->conf;

    yajl_val                   v;
    ngx_str_t                  text, json;
    ngx_http_agent_msg_t       msg;
    ngx_http_agent_event_t     ev;
    ngx_http_agent_channel_t  *ch;

    if (ngx_http_agent_template_render(run, run->pool, &tc->text, &text)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (tc->json) {

        /* the channels' values in it came from outside: parsed, written */

        v = ngx_http_agent_json_parse(run->pool, text.data, text.len, NULL);

        if (v == NULL) {
            return ngx_http_agent_graph_fail(run, "bad_json", "the node "
                                             "\"%V\" rendered no JSON "
                                             "value", &node->name);
        }

        ch = (ngx_http_agent_channel_t *) run->graph->channels.elts
             + tc->output;

        if (ch->reducer == NGX_HTTP_AGENT_REDUCE_SUM) {
            if (!YAJL_IS_NUMBER(v)) {
                return ngx_http_agent_graph_fail(run, "bad_json", "the node "
                                                 "\"%V\" rendered no "
                                                 "number for a sum",
                                                 &node->name);
            }

            return ngx_http_agent_graph_write_number(run->update,
                                                     tc->output,
                                                     YAJL_GET_DOUBLE(v));
        }

        if (ngx_http_agent_json_encode(run->pool, v, &json) != NGX_OK) {
            return NGX_ERROR;
        }

        return ngx_http_agent_graph_write_value(run->update, tc->output,
                                                &json);
    }

    if (tc->output != NGX_HTTP_AGENT_CH_MESSAGES) {
        if (ngx_http_agent_json_quote(run->pool, &text, &json) != NGX_OK) {
            return NGX_ERROR;
        }

        return ngx_http_agent_graph_write_value(run->update, tc->output,
                                                &json);
    }

    if (tc->tool) {
        return ngx_http_agent_node_template_tool(run, node, &text);
    }

    ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));
    ev.type = NGX_HTTP_AGENT_EV_CHUNK;
    ev.text = &text;

    if (ngx_http_agent_env_emit(run, &ev) != NGX_OK) {
        return ngx_http_agent_graph_fail(run, "client_gone", "the client "
                                         "went away");
    }

    ngx_memzero(&msg, sizeof(ngx_http_agent_msg_t));
    ngx_str_set(&msg.role, "assistant");
    msg.content = text;

    return ngx_http_agent_graph_write_message(run, run->update,
                                              NGX_HTTP_AGENT_CH_MESSAGES,
                                              &msg);
}


/* role=tool: the text answers each call of the last AI message */

static ngx_int_t
ngx_http_agent_node_template_tool(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_str_t *text)
{
    ngx_uint_t              i;
    ngx_array_t            *calls;
    ngx_http_agent_msg_t    msg, *last;
    ngx_http_agent_call_t  *c;

    last = ngx_http_agent_graph_last_message(run, NGX_HTTP_AGENT_CH_MESSAGES);

    if (last == NULL || last->role.data[0] != 'a'
        || last->tool_calls.len == 0)
    {
        return ngx_http_agent_graph_fail(run, "no_tool_calls", "the node "
                                         "\"%V\" answers tool calls, and "
                                         "the last message has none",
                                         &node->name);
    }

    if (ngx_http_agent_message_calls(run->pool, &last->tool_calls, &calls, 0)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    c = calls->elts;

    for (i = 0; i < calls->nelts; i++) {
        ngx_memzero(&msg, sizeof(ngx_http_agent_msg_t));
        ngx_str_set(&msg.role, "tool");
        msg.content = *text;
        msg.tool_call_id = c[i].id;
        msg.name = c[i].name;

        if (ngx_http_agent_graph_write_message(run, run->update,
                                               NGX_HTTP_AGENT_CH_MESSAGES,
                                               &msg)
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}
