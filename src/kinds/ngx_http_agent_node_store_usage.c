
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_ops.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_kinds_int.h"


/*
 * The embeddings calls of a turn's graph nodes (a store node's put with
 * an index and its recall, an llm node's cache_similar=) are model calls
 * of the turn: their input's tokens reserved in agent_limit's budgets
 * (at the embeddings model's input price) before they start and settled
 * when they end, summed into the turn's usage and $agent_cost, and each a
 * span "embeddings {model}" under its node.  The metrics count them where
 * every embeddings call is counted, the API's too (llm/embed.c).
 */


static ngx_int_t ngx_http_agent_node_store_usage_start(void *data,
    ngx_http_agent_llm_t *llm, ngx_http_agent_model_t *model,
    ngx_http_agent_llm_req_t *req, ngx_str_t *err);
static void ngx_http_agent_node_store_usage_end(void *data,
    ngx_http_agent_llm_t *llm);


static ngx_http_agent_embed_watch_t  ngx_http_agent_node_store_usage_hooks = {
    ngx_http_agent_node_store_usage_start,
    ngx_http_agent_node_store_usage_end
};


/* the run's turn pays for the embeddings its nodes ask for */

ngx_int_t
ngx_http_agent_node_store_usage(ngx_http_agent_run_t *run)
{
    ngx_http_agent_env_t *env = run->data;

    if (env->services.embed == NULL) {
        return NGX_OK;
    }

    return ngx_http_agent_embed_watch(env->services.data,
                                      &ngx_http_agent_node_store_usage_hooks,
                                      env);
}


/* four bytes a token of the texts, as a chat call's input is reserved */

static ngx_int_t
ngx_http_agent_node_store_usage_start(void *data, ngx_http_agent_llm_t *llm,
    ngx_http_agent_model_t *model, ngx_http_agent_llm_req_t *req,
    ngx_str_t *err)
{
    ngx_http_agent_env_t *env = data;

    size_t      bytes;
    int64_t     input;
    ngx_str_t  *text;
    ngx_uint_t  i;

    text = req->inputs->elts;
    bytes = 0;

    for (i = 0; i < req->inputs->nelts; i++) {
        bytes += text[i].len;
    }

    input = (int64_t) (bytes + 3) / 4;

    llm->reserved = input;
    llm->reserved_cost = ngx_http_agent_cost_of(&model->price, input, 0, 0,
                                                0);

    if (ngx_http_agent_limit_reserve(env->limits, &llm->reserved,
                                     &llm->reserved_cost)
        == NGX_OK)
    {
        return NGX_OK;
    }

    llm->reserved = 0;
    llm->reserved_cost = 0;

    ngx_str_set(err, "the budget of agent_limit is spent, or held by the "
                     "model calls running now");

    return NGX_DECLINED;
}


static void
ngx_http_agent_node_store_usage_end(void *data, ngx_http_agent_llm_t *llm)
{
    ngx_http_agent_env_t *env = data;

    int64_t                       cost;
    ngx_http_agent_model_t       *m;
    ngx_http_agent_trace_call_t   call;

    m = llm->model;
    cost = m ? ngx_http_agent_cost_of(&m->price, llm->prompt_tokens, 0, 0, 0)
             : 0;

    if (env->trace && m) {
        ngx_memzero(&call, sizeof(ngx_http_agent_trace_call_t));
        call.operation = "embeddings";
        call.provider = &m->provider->name;
        call.model = m->model.len ? &m->model : &m->name;
        call.start = llm->start;
        call.input_tokens = llm->prompt_tokens;
        call.cost = m->price.set ? cost : -1;
        call.error = llm->error;

        ngx_http_agent_trace_model(env->trace, &call);
    }

    ngx_http_agent_limit_charge(env->limits, llm->prompt_tokens, cost,
                                llm->reserved, llm->reserved_cost);
    llm->reserved = 0;
    llm->reserved_cost = 0;

    env->prompt_tokens += llm->prompt_tokens;

    if (m && m->price.set) {
        env->cost += cost;
        env->priced = 1;
    }
}
