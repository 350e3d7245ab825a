
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_env.h"
#include "ngx_http_agent_json.h"
#include "ngx_http_agent_template.h"


/*
 * "node NAME template text=TEMPLATE [output=messages|CHANNEL]": a fixed
 * answer, or a channel written from others, with no model call.
 */


typedef struct {
    ngx_str_t                  text;
    ngx_str_t                  output_name;
    ngx_int_t                  output;
} ngx_http_agent_node_template_conf_t;


static void *ngx_http_agent_node_template_create(ngx_conf_t *cf);
static ngx_int_t ngx_http_agent_node_template_param(ngx_conf_t *cf,
    void *conf, ngx_str_t *key, ngx_str_t *value);
static ngx_int_t ngx_http_agent_node_template_check(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);
static ngx_int_t ngx_http_agent_node_template_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);


ngx_http_agent_kind_t  ngx_http_agent_template_kind = {
    ngx_string("template"),
    ngx_http_agent_node_template_create,
    ngx_http_agent_node_template_param,
    ngx_http_agent_node_template_check,
    ngx_http_agent_node_template_run,
    0,
    NULL
};


static void *
ngx_http_agent_node_template_create(ngx_conf_t *cf)
{
    ngx_http_agent_node_template_conf_t  *tc;

    tc = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_node_template_conf_t));
    if (tc == NULL) {
        return NULL;
    }

    tc->output = NGX_HTTP_AGENT_CH_MESSAGES;

    return tc;
}


static ngx_int_t
ngx_http_agent_node_template_param(ngx_conf_t *cf, void *conf,
    ngx_str_t *key, ngx_str_t *value)
{
    ngx_http_agent_node_template_conf_t *tc = conf;

    if (key->len == 4 && ngx_strncmp(key->data, "text", 4) == 0) {
        tc->text = *value;
        return NGX_OK;
    }

    if (key->len == 6 && ngx_strncmp(key->data, "output", 6) == 0) {
        tc->output_name = *value;
        return NGX_OK;
    }

    return NGX_DECLINED;
}


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

    if (tc->output_name.len) {
        return ngx_http_agent_channel_conf(cf, graph, node, "output",
                                           &tc->output_name, &tc->output, 1);
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_node_template_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_template_conf_t *tc = node->conf;

    ngx_str_t               text, json;
    ngx_http_agent_msg_t    msg;
    ngx_http_agent_event_t  ev;

    if (ngx_http_agent_template_render(run, run->pool, &tc->text, &text)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (tc->output != NGX_HTTP_AGENT_CH_MESSAGES) {
        if (ngx_http_agent_json_quote(run->pool, &text, &json) != NGX_OK) {
            return NGX_ERROR;
        }

        return ngx_http_agent_graph_write_value(run->update, tc->output,
                                                &json);
    }

    ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));
    ev.type = NGX_HTTP_AGENT_EV_CHUNK;
    ev.text = &text;

    if (ngx_http_agent_emit(run, &ev) != NGX_OK) {
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
