
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_env.h"
#include "ngx_http_agent_node_llm.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_prompt.h"
#include "ngx_http_agent_template.h"


/* the parameters of "node NAME llm", read and checked by nginx -t */


void *
ngx_http_agent_node_llm_create_conf(ngx_conf_t *cf)
{
    ngx_http_agent_node_llm_conf_t  *lc;

    lc = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_node_llm_conf_t));
    if (lc == NULL) {
        return NULL;
    }

    lc->output = NGX_HTTP_AGENT_CH_MESSAGES;
    lc->summary = -1;
    lc->stream = -1;
    lc->history = 1;

    return lc;
}


#define ngx_http_agent_is(s, lit)                                             \
    ((s)->len == sizeof(lit) - 1                                              \
     && ngx_strncmp((s)->data, lit, sizeof(lit) - 1) == 0)


ngx_int_t
ngx_http_agent_node_llm_param(ngx_conf_t *cf, void *conf, ngx_str_t *key,
    ngx_str_t *value)
{
    ngx_http_agent_node_llm_conf_t *lc = conf;

    if (ngx_http_agent_is(key, "prompt")) {
        lc->prompt_file = *value;
        return NGX_OK;
    }

    if (ngx_http_agent_is(key, "tools")) {
        lc->tools_list = *value;
        return NGX_OK;
    }

    if (ngx_http_agent_is(key, "model")) {
        lc->model_name = *value;
        return NGX_OK;
    }

    if (ngx_http_agent_is(key, "output")) {
        lc->output_name = *value;
        return NGX_OK;
    }

    if (ngx_http_agent_is(key, "event")) {
        lc->event = *value;

        if (ngx_http_agent_stream_reserved(value)) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "event=%V: letters, "
                               "digits, _ and -, and not the name of an "
                               "event of the turn's own", value);
            return NGX_ERROR;
        }

        return NGX_OK;
    }

    if (ngx_http_agent_is(key, "summary")) {
        lc->summary_name = *value;
        return NGX_OK;
    }

    if (ngx_http_agent_is(key, "history") || ngx_http_agent_is(key, "stream"))
    {
        if (!ngx_http_agent_is(value, "on")
            && !ngx_http_agent_is(value, "off"))
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%V=%V: use on or off",
                               key, value);
            return NGX_ERROR;
        }

        if (key->data[0] == 'h') {
            lc->history = (value->len == 2);

        } else {
            lc->stream = (value->len == 2);
        }

        return NGX_OK;
    }

    if (ngx_http_agent_is(key, "format")) {
        if (ngx_http_agent_is(value, "json")) {
            lc->json = 1;
            return NGX_OK;
        }

        if (ngx_http_agent_is(value, "text")) {
            return NGX_OK;
        }

        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "format=%V: use text or "
                           "json", value);
        return NGX_ERROR;
    }

    return NGX_DECLINED;
}


ngx_int_t
ngx_http_agent_node_llm_check(ngx_conf_t *cf, ngx_http_agent_graph_t *graph,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_llm_conf_t *lc = node->conf;

    ngx_int_t                    rc;
    ngx_http_agent_env_conf_t    ec;

    ngx_http_agent_env_conf(cf, &ec);

    if (lc->prompt_file.len && graph->builtin) {

        /* missing: an error only for a location that runs this graph */

        rc = ngx_http_agent_prompt_builtin(cf, ec.prompts_dir,
                                           &lc->prompt_file, &lc->prompt);
        if (rc == NGX_ERROR) {
            return NGX_ERROR;
        }

        if (rc == NGX_DECLINED) {
            graph->prompt_missing = 1;
        }

    } else if (lc->prompt_file.len
               && ngx_http_agent_prompt_load(cf, ec.prompts_dir,
                                             &lc->prompt_file, &lc->prompt)
                  != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (lc->model_name.len) {
        lc->model = ngx_http_agent_env_conf_model(cf, &lc->model_name);

        if (lc->model == NULL) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "model=%V of the node "
                               "\"%V\": no agent_model of that name",
                               &lc->model_name, &node->name);
            return NGX_ERROR;
        }
    }

    if (lc->output_name.len
        && !ngx_http_agent_is(&lc->output_name, "messages")
        && ngx_http_agent_channel_conf(cf, graph, node, "output",
                                       &lc->output_name, &lc->output, 0)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (lc->summary_name.len
        && ngx_http_agent_channel_conf(cf, graph, node, "summary",
                                       &lc->summary_name, &lc->summary, 0)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (lc->event.len && lc->output == NGX_HTTP_AGENT_CH_MESSAGES) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "event= of the node \"%V\" "
                           "needs output=CHANNEL", &node->name);
        return NGX_ERROR;
    }

    if (lc->json && lc->output == NGX_HTTP_AGENT_CH_MESSAGES) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "format=json of the node "
                           "\"%V\" needs output=CHANNEL", &node->name);
        return NGX_ERROR;
    }

    if (lc->stream == -1) {
        lc->stream = (lc->output == NGX_HTTP_AGENT_CH_MESSAGES);
    }

    if (lc->tools_list.len == 0 || ngx_http_agent_is(&lc->tools_list, "none"))
    {
        return NGX_OK;
    }

    if (lc->output != NGX_HTTP_AGENT_CH_MESSAGES) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "tools= of the node \"%V\" "
                           "needs output=messages: tool calls are messages",
                           &node->name);
        return NGX_ERROR;
    }

    if (ngx_http_agent_toolset_add(cf, &lc->toolset, ec.tools,
                                   ec.mcps, &lc->tools_list)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* without a server the definitions are the configuration's: made once */

    if (!ngx_http_agent_toolset_waits(&lc->toolset)
        && ngx_http_agent_toolset_json(cf->pool, cf->log, &lc->toolset,
                                       &lc->tools)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_tools_prompts(cf, &lc->tools_list,
                                        ec.prompts_dir,
                                        ec.tool_prompts);
}
