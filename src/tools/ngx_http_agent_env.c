
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_env.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_metrics.h"
#include "ngx_http_agent_provider.h"
#include "ngx_http_agent_model.h"


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
 * of agent_limit, so that turns at once cannot all spend the last of one
 */

ngx_int_t
ngx_http_agent_env_reserve(ngx_http_agent_run_t *run,
    ngx_http_agent_llm_t *llm, ngx_http_agent_model_t *model)
{
    ngx_http_agent_env_t *env = run->data;

    llm->reserved = model->max_tokens;

    if (ngx_http_agent_limit_reserve(env->limits, &llm->reserved) == NGX_OK) {
        return NGX_OK;
    }

    llm->reserved = 0;

    return ngx_http_agent_graph_fail(run, "budget_exceeded", "the token "
                                     "budget of agent_limit is spent, or "
                                     "held by the model calls running now; "
                                     "the steps done are saved");
}


/* a model call has ended: its tokens and times count for the turn */

void
ngx_http_agent_env_usage(ngx_http_agent_env_t *env, ngx_http_agent_llm_t *llm)
{
    ngx_http_agent_trace_call_t  call;

    env->model_calls++;

    if (env->trace && llm->model) {
        call.provider = &llm->model->provider->name;
        call.model = llm->model->model.len ? &llm->model->model
                                           : &llm->model->name;
        call.start = llm->start;
        call.ttft = llm->ttft;
        call.input_tokens = llm->prompt_tokens;
        call.output_tokens = llm->completion_tokens;
        call.cached_tokens = llm->cached_tokens;
        call.error = llm->error;

        ngx_http_agent_trace_model(env->trace, &call);
    }

    /* the budgets of agent_limit, with what the call really spent */
    ngx_http_agent_limit_charge(env->limits,
                                llm->prompt_tokens + llm->completion_tokens,
                                llm->reserved);
    llm->reserved = 0;

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
