
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_kinds_int.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_engine.h"


/* the parameters of "node NAME llm", read and checked by nginx -t */


static ngx_conf_enum_t  ngx_http_agent_node_llm_formats[] = {
    { ngx_string("text"), 0 },
    { ngx_string("json"), 1 },
    { ngx_null_string, 0 }
};


ngx_http_agent_param_t  ngx_http_agent_node_llm_params[] = {
    { ngx_string("prompt"), ngx_http_agent_params_set_file,
      offsetof(ngx_http_agent_node_llm_conf_t, prompt_file),
      &ngx_http_agent_param_optional },
    { ngx_string("tools"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_llm_conf_t, tools_list), NULL },
    { ngx_string("model"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_llm_conf_t, model_name), NULL },
    { ngx_string("output"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_llm_conf_t, output_name),
      &ngx_http_agent_param_messages },
    { ngx_string("event"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_llm_conf_t, event),
      &ngx_http_agent_stream_event_post },
    { ngx_string("summary"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_llm_conf_t, summary_name),
      &ngx_http_agent_param_optional },
    { ngx_string("history"), ngx_http_agent_params_set_flag,
      offsetof(ngx_http_agent_node_llm_conf_t, history), NULL },
    { ngx_string("stream"), ngx_http_agent_params_set_flag,
      offsetof(ngx_http_agent_node_llm_conf_t, stream), NULL },
    { ngx_string("format"), ngx_http_agent_params_set_enum,
      offsetof(ngx_http_agent_node_llm_conf_t, json),
      ngx_http_agent_node_llm_formats },
    { ngx_string("cache_response"), ngx_http_agent_params_set_msec,
      offsetof(ngx_http_agent_node_llm_conf_t, cache_response), NULL },
    { ngx_string("cache_shared"), ngx_http_agent_params_set_flag,
      offsetof(ngx_http_agent_node_llm_conf_t, cache_shared), NULL },
    { ngx_string("cache_similar"), ngx_http_agent_node_store_recall_score,
      offsetof(ngx_http_agent_node_llm_conf_t, cache_similar), NULL },
    ngx_http_agent_null_param
};


void *
ngx_http_agent_node_llm_create_conf(ngx_conf_t *cf)
{
    ngx_http_agent_node_llm_conf_t  *lc;

    lc = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_node_llm_conf_t));
    if (lc == NULL) {
        return NULL;
    }

    lc->stream = -1;
    lc->history = 1;
    lc->cache_similar = -1;

    return lc;
}


#define ngx_http_agent_is(s, lit)                                             \
    ((s)->len == sizeof(lit) - 1                                              \
     && ngx_strncmp((s)->data, lit, sizeof(lit) - 1) == 0)


ngx_int_t
ngx_http_agent_node_llm_check(ngx_conf_t *cf, ngx_http_agent_graph_t *graph,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_llm_conf_t *lc = node->conf;

    if (lc->model_name.len) {
        lc->model = ngx_http_agent_env_conf_model(cf, &lc->model_name);

        if (lc->model == NULL) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "model=%V of the node "
                               "\"%V\": no agent_model of that name",
                               &lc->model_name, &node->name);
            return NGX_ERROR;
        }
    }

    if ((lc->event.len || lc->json)
        && lc->output == NGX_HTTP_AGENT_CH_MESSAGES)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s of the node \"%V\" "
                           "needs output=CHANNEL",
                           lc->event.len ? "event=" : "format=json",
                           &node->name);
        return NGX_ERROR;
    }

    if (lc->stream == -1) {
        lc->stream = (lc->output == NGX_HTTP_AGENT_CH_MESSAGES);
    }

    /* near answers of the owner's own, kept as the exact cache keeps */
    if (lc->cache_similar >= 0
        && (lc->cache_similar == 0 || lc->cache_response == 0
            || lc->cache_shared))
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "cache_similar= of the "
                           "node \"%V\" needs a score above 0, and "
                           "cache_response=TTL without cache_shared=on",
                           &node->name);
        return NGX_ERROR;
    }

    if (lc->cache_similar > 0) {
        lc->scope.data = ngx_pnalloc(cf->pool,
                                     graph->name.len + 1 + node->name.len);
        if (lc->scope.data == NULL) {
            return NGX_ERROR;
        }

        lc->scope.len = ngx_sprintf(lc->scope.data, "%V/%V", &graph->name,
                                    &node->name)
                        - lc->scope.data;
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

    if (ngx_http_agent_toolset_bind(cf, &lc->toolset, &lc->tools_list, 1)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* without a server the definitions are the configuration's: made once */

    if (ngx_http_agent_toolset_waits(&lc->toolset)) {
        return NGX_OK;
    }

    return ngx_http_agent_toolset_json(cf->pool, cf->log, &lc->toolset,
                                       &lc->tools);
}
