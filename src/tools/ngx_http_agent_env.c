
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_ops.h"
#include "ngx_http_agent_llm.h"


static int64_t ngx_http_agent_env_input(ngx_http_agent_llm_req_t *req);


ngx_int_t
ngx_http_agent_env_emit(ngx_http_agent_run_t *run, ngx_http_agent_event_t *ev)
{
    ngx_http_agent_env_t *env = run->data;

    if (env->stream == NULL) {
        return NGX_OK;
    }

    return ngx_http_agent_stream_emit(env->stream, ev);
}


/*
 * A model call is about to start: its max_tokens reserved in the budgets
 * of agent_limit, and their cost with its input's, so that turns at once
 * cannot all spend the last of one
 */

ngx_int_t
ngx_http_agent_env_reserve(ngx_http_agent_run_t *run,
    ngx_http_agent_llm_t *llm, ngx_http_agent_model_t *model,
    ngx_http_agent_llm_req_t *req)
{
    ngx_http_agent_env_t *env = run->data;

    llm->reserved = model->max_tokens;
    llm->reserved_cost = ngx_http_agent_cost_of(&model->price,
                                     ngx_http_agent_env_input(req),
                                     model->max_tokens ? model->max_tokens
                                     : NGX_HTTP_AGENT_LIMIT_ESTIMATE, 0, 0);

    if (ngx_http_agent_limit_reserve(env->limits, &llm->reserved,
                                     &llm->reserved_cost)
        == NGX_OK)
    {
        return NGX_OK;
    }

    llm->reserved = 0;
    llm->reserved_cost = 0;

    return ngx_http_agent_graph_fail(run, "budget_exceeded", "the %s "
                                     "budget of agent_limit is spent, or "
                                     "held by the model calls running now; "
                                     "the steps done are saved",
                                     env->limits->cost ? "cost" : "token");
}


/*
 * The input tokens a call is reserved for: four bytes a token of what it
 * sends but images, whose tokens the provider counts by their pixels
 */

static int64_t
ngx_http_agent_env_input(ngx_http_agent_llm_req_t *req)
{
    size_t                 bytes;
    ngx_uint_t             i;
    ngx_http_agent_msg_t  *m;

    bytes = (req->system ? req->system->len : 0)
            + (req->tools ? req->tools->len : 0);

    if (req->messages) {
        m = req->messages->elts;

        for (i = 0; i < req->messages->nelts; i++) {
            bytes += m[i].content.len + m[i].tool_calls.len;
        }
    }

    return (int64_t) (bytes + 3) / 4;
}


/* a model call has ended: its tokens and times count for the turn */

void
ngx_http_agent_env_usage(ngx_http_agent_env_t *env, ngx_http_agent_llm_t *llm)
{
    int64_t                      cost;
    ngx_http_agent_trace_call_t  call;

    env->model_calls++;

    /*
     * the response caches ($agent_cache): any hit of the turn's calls
     * shows, an exact one before a near one
     */
    if (llm->cache_key.len && env->cache != NGX_HTTP_AGENT_ENV_CACHE_HIT) {
        if (!llm->cache_hit) {
            env->cache = ngx_max(env->cache, NGX_HTTP_AGENT_ENV_CACHE_MISS);

        } else {
            env->cache = llm->cache_similar ? NGX_HTTP_AGENT_ENV_CACHE_NEAR
                                            : NGX_HTTP_AGENT_ENV_CACHE_HIT;
        }
    }

    /* the answering model's price: a fallback may cost more or less */
    cost = llm->model ? ngx_http_agent_cost_of(&llm->model->price,
                                               llm->prompt_tokens,
                                               llm->completion_tokens,
                                               llm->cached_tokens,
                                               llm->cache_write_tokens)
                      : 0;

    if (env->trace && llm->model) {
        call.operation = "chat";
        call.provider = &llm->model->provider->name;
        call.model = llm->model->model.len ? &llm->model->model
                                           : &llm->model->name;
        call.start = llm->start;
        call.ttft = llm->ttft;
        call.input_tokens = llm->prompt_tokens;
        call.output_tokens = llm->completion_tokens;
        call.cached_tokens = llm->cached_tokens;
        call.cost = llm->model->price.set ? cost : -1;
        call.error = llm->error;
        ngx_str_null(&call.cache);

        if (llm->cache_key.len && llm->cache_similar) {
            ngx_str_set(&call.cache, "similar");

        } else if (llm->cache_key.len && llm->cache_hit) {
            ngx_str_set(&call.cache, "hit");

        } else if (llm->cache_key.len) {
            ngx_str_set(&call.cache, "miss");
        }

        ngx_http_agent_trace_model(env->trace, &call);
    }

    /* the budgets of agent_limit, with what the call really spent */
    ngx_http_agent_limit_charge(env->limits,
                                llm->prompt_tokens + llm->completion_tokens,
                                cost, llm->reserved, llm->reserved_cost);
    llm->reserved = 0;
    llm->reserved_cost = 0;

    env->prompt_tokens += llm->prompt_tokens;
    env->completion_tokens += llm->completion_tokens;
    env->cached_tokens += llm->cached_tokens;
    env->cache_write_tokens += llm->cache_write_tokens;
    env->llm_time += ngx_current_msec - llm->start;

    if (llm->model) {
        env->answered_by = llm->model->name;

        ngx_http_agent_metrics_cstr(NGX_HTTP_AGENT_M_TOKENS,
                                    &llm->model->name, "input",
                                    llm->prompt_tokens);
        ngx_http_agent_metrics_cstr(NGX_HTTP_AGENT_M_TOKENS,
                                    &llm->model->name, "output",
                                    llm->completion_tokens);
        ngx_http_agent_metrics_cstr(NGX_HTTP_AGENT_M_TOKENS,
                                    &llm->model->name, "cached",
                                    llm->cached_tokens);

        if (llm->model->price.set) {
            env->cost += cost;
            env->priced = 1;

            ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_COST,
                                       &llm->model->name, NULL, cost);
        }

        if (llm->ttft) {
            ngx_http_agent_metrics_observe(NGX_HTTP_AGENT_M_TTFT_SECONDS,
                                           &llm->model->name, llm->ttft);
        }
    }

    if (env->ttft == 0 && llm->ttft) {
        env->ttft = llm->start + llm->ttft - env->start;
    }
}


/* the session's CSV tables, listed when the turn began, for the SQL layer */

ngx_int_t
ngx_http_agent_env_sql(ngx_http_agent_run_t *run)
{
    ngx_http_agent_env_t *env = run->data;

    if (env->sql.resources == NULL) {
        return ngx_http_agent_graph_fail(run, "store_error", "the session's "
                                         "CSV files could not be listed");
    }

    return NGX_OK;
}


/*
 * A location subrequest that outlived its call has ended (data: the env):
 * its place is free.  The env is the turn's, in the request's pool, which
 * the subrequest keeps alive until then.
 */

void
ngx_http_agent_env_peer_end(void *data)
{
    ngx_http_agent_env_t *env = data;

    if (env->peer_calls) {
        env->peer_calls--;
    }

    if (env->peer_freed) {
        env->peer_freed(env->peer_data);
    }
}


/*
 * The node kinds read the main configuration through these while it is
 * read: the prompts' folder, the tools and servers they may bind, the
 * models they may name.  They include no http header for it.
 */

void
ngx_http_agent_env_conf(ngx_conf_t *cf, ngx_http_agent_env_conf_t *ec)
{
    ngx_http_agent_main_conf_t  *amcf;

    amcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_agent_module);

    ec->prompts_dir = &amcf->prompts_dir;
    ec->tool_prompts = &amcf->tool_prompts;
    ec->tools = amcf->tools;
    ec->mcps = amcf->mcps;
}


ngx_http_agent_model_t *
ngx_http_agent_env_conf_model(ngx_conf_t *cf, ngx_str_t *name)
{
    ngx_http_agent_main_conf_t  *amcf;

    amcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_agent_module);

    return ngx_http_agent_model_find(amcf, name);
}
