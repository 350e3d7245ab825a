
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_module.h"
#include "ngx_http_agent_tools.h"


static ngx_int_t ngx_http_agent_turn_embed(void *data,
    ngx_http_agent_store_call_t *sc, ngx_str_t *text, ngx_str_t *vector,
    ngx_str_t *err);
static ngx_int_t ngx_http_agent_turn_index(void *data,
    ngx_http_agent_store_call_t *sc, yajl_val value, ngx_str_t *fields,
    ngx_uint_t n, ngx_str_t *vector, ngx_str_t *err);


/*
 * Before each step: the budgets of agent_limit and the turn's own caps.
 * A turn that has crossed one stops here, with an error event; what it
 * did before is saved.
 */

ngx_int_t
ngx_http_agent_turn_caps(ngx_http_agent_turn_t *turn,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_env_t       *env;
    ngx_http_agent_loc_conf_t  *alcf;

    env = &turn->env;
    alcf = ngx_http_get_module_loc_conf(turn->request, ngx_http_agent_module);

    if (env->limits && env->limits->over) {
        return ngx_http_agent_graph_fail(turn->run, "budget_exceeded",
                                         "the %s budget of agent_limit is "
                                         "spent; the steps done are saved",
                                         env->limits->cost ? "cost"
                                                           : "token");
    }

    if (alcf->turn_max_tokens > 0
        && env->prompt_tokens + env->completion_tokens
           >= alcf->turn_max_tokens)
    {
        return ngx_http_agent_graph_fail(turn->run, "turn_token_limit",
                                         "this turn has spent %L tokens, "
                                         "agent_turn_max_tokens is %i",
                                         env->prompt_tokens
                                         + env->completion_tokens,
                                         alcf->turn_max_tokens);
    }

    if (alcf->turn_max_tool_calls > 0 && node->kind->calls
        && env->tool_calls >= (ngx_uint_t) alcf->turn_max_tool_calls)
    {
        return ngx_http_agent_graph_fail(turn->run, "turn_tool_call_limit",
                                         "this turn has made %ui tool "
                                         "calls, agent_turn_max_tool_calls "
                                         "is %i", env->tool_calls,
                                         alcf->turn_max_tool_calls);
    }

    return NGX_OK;
}


/*
 * What the node kinds get of the request: its subrequests through the
 * tools layer, and the location's settings, copied
 */

void
ngx_http_agent_turn_services(ngx_http_request_t *r,
    ngx_http_agent_services_t *services)
{
    ngx_http_agent_loc_conf_t   *alcf;
    ngx_http_agent_main_conf_t  *amcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    amcf = ngx_http_get_module_main_conf(r, ngx_http_agent_module);

    services->fetch = ngx_http_agent_subrequest_fetch;
    services->fetch_cancel = ngx_http_agent_subrequest_drop;
    services->data = r;

    services->llm_connect_timeout = alcf->llm_connect_timeout;
    services->llm_idle_timeout = alcf->llm_idle_timeout;
    services->llm_timeout = alcf->llm_timeout;
    services->max_tool_rounds = alcf->max_tool_rounds;
    services->sql_concurrency = alcf->sql_concurrency;
    services->tool_concurrency = alcf->tool_concurrency;
    services->tool_prompts = amcf->tool_prompts;
    services->write = ngx_http_agent_turn_writes_keep;
    services->kept = ngx_http_agent_turn_writes_kept;
    services->claim = ngx_http_agent_turn_writes_claim;
    services->key = ngx_http_agent_turn_key;
    services->embed = ngx_http_agent_turn_embed;
    services->index = ngx_http_agent_turn_index;
}


/* the request's embeddings: its location's agent_embeddings (llm layer) */

static ngx_int_t
ngx_http_agent_turn_embed(void *data, ngx_http_agent_store_call_t *sc,
    ngx_str_t *text, ngx_str_t *vector, ngx_str_t *err)
{
    return ngx_http_agent_embed_text(data, sc, text, 1, vector, err);
}


static ngx_int_t
ngx_http_agent_turn_index(void *data, ngx_http_agent_store_call_t *sc,
    yajl_val value, ngx_str_t *fields, ngx_uint_t n, ngx_str_t *vector,
    ngx_str_t *err)
{
    return ngx_http_agent_embed_item(data, sc, value, fields, n, vector,
                                     err);
}
