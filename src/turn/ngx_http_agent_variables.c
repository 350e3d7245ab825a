
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_ops.h"


/*
 * The $agent_ variables of a turn, for log_format and the like: the
 * session, the model that answered last, the tokens and tool calls summed
 * over the turn, the time spent in model calls and to the first token (in
 * seconds with milliseconds, as $upstream_response_time), what its calls
 * of models with a price cost in dollars.  Empty on a request that ran no
 * turn.
 */


enum {
    NGX_HTTP_AGENT_VAR_SESSION = 0,
    NGX_HTTP_AGENT_VAR_MODEL,
    NGX_HTTP_AGENT_VAR_PROMPT_TOKENS,
    NGX_HTTP_AGENT_VAR_COMPLETION_TOKENS,
    NGX_HTTP_AGENT_VAR_CACHED_TOKENS,
    NGX_HTTP_AGENT_VAR_TOOL_CALLS,
    NGX_HTTP_AGENT_VAR_LLM_TIME,
    NGX_HTTP_AGENT_VAR_TTFT,
    NGX_HTTP_AGENT_VAR_TRACE_ID,
    NGX_HTTP_AGENT_VAR_OWNER,
    NGX_HTTP_AGENT_VAR_COST,
    NGX_HTTP_AGENT_VAR_CACHE
};


static ngx_int_t ngx_http_agent_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);


static ngx_http_variable_t  ngx_http_agent_vars[] = {

    { ngx_string("agent_session"), NULL, ngx_http_agent_variable,
      NGX_HTTP_AGENT_VAR_SESSION, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("agent_model"), NULL, ngx_http_agent_variable,
      NGX_HTTP_AGENT_VAR_MODEL, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("agent_prompt_tokens"), NULL, ngx_http_agent_variable,
      NGX_HTTP_AGENT_VAR_PROMPT_TOKENS, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("agent_completion_tokens"), NULL, ngx_http_agent_variable,
      NGX_HTTP_AGENT_VAR_COMPLETION_TOKENS, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("agent_cached_tokens"), NULL, ngx_http_agent_variable,
      NGX_HTTP_AGENT_VAR_CACHED_TOKENS, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("agent_tool_calls"), NULL, ngx_http_agent_variable,
      NGX_HTTP_AGENT_VAR_TOOL_CALLS, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("agent_llm_time"), NULL, ngx_http_agent_variable,
      NGX_HTTP_AGENT_VAR_LLM_TIME, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("agent_ttft"), NULL, ngx_http_agent_variable,
      NGX_HTTP_AGENT_VAR_TTFT, NGX_HTTP_VAR_NOCACHEABLE, 0 },
    { ngx_string("agent_trace_id"), NULL, ngx_http_agent_variable,
      NGX_HTTP_AGENT_VAR_TRACE_ID, NGX_HTTP_VAR_NOCACHEABLE, 0 },
    { ngx_string("agent_owner"), NULL, ngx_http_agent_variable,
      NGX_HTTP_AGENT_VAR_OWNER, NGX_HTTP_VAR_NOCACHEABLE, 0 },
    { ngx_string("agent_cost"), NULL, ngx_http_agent_variable,
      NGX_HTTP_AGENT_VAR_COST, NGX_HTTP_VAR_NOCACHEABLE, 0 },
    { ngx_string("agent_cache"), NULL, ngx_http_agent_variable,
      NGX_HTTP_AGENT_VAR_CACHE, NGX_HTTP_VAR_NOCACHEABLE, 0 },

      ngx_http_null_variable
};


ngx_int_t
ngx_http_agent_variables_add(ngx_conf_t *cf)
{
    ngx_http_variable_t  *var, *v;

    for (v = ngx_http_agent_vars; v->name.len; v++) {
        var = ngx_http_add_variable(cf, &v->name, v->flags);
        if (var == NULL) {
            return NGX_ERROR;
        }

        var->get_handler = v->get_handler;
        var->data = v->data;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_variable(ngx_http_request_t *r, ngx_http_variable_value_t *v,
    uintptr_t data)
{
    u_char                *p;
    int64_t                n;
    ngx_msec_t             ms;
    ngx_http_agent_ctx_t  *ctx;
    ngx_http_agent_env_t  *env;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    if (data == NGX_HTTP_AGENT_VAR_OWNER) {

        /* who agent_owner says this request is: agent_limit's key */

        if (ctx == NULL || ctx->owner == NULL) {
            v->not_found = 1;
            return NGX_OK;
        }

        v->valid = 1;
        v->no_cacheable = 1;
        v->not_found = 0;
        v->len = ctx->owner->len;
        v->data = ctx->owner->data;

        return NGX_OK;
    }

    if (ctx == NULL || ctx->env == NULL) {
        v->not_found = 1;
        return NGX_OK;
    }

    env = ctx->env;

    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;

    switch (data) {

    case NGX_HTTP_AGENT_VAR_TRACE_ID:
        if (env->trace == NULL) {
            v->not_found = 1;
            return NGX_OK;
        }

        p = ngx_pnalloc(r->pool, 32);
        if (p == NULL) {
            return NGX_ERROR;
        }

        ngx_http_agent_trace_id(env->trace, p);
        v->data = p;
        v->len = 32;
        return NGX_OK;

    case NGX_HTTP_AGENT_VAR_COST:
        if (!env->priced) {
            v->not_found = 1;
            return NGX_OK;
        }

        p = ngx_pnalloc(r->pool, NGX_HTTP_AGENT_COST_LEN);
        if (p == NULL) {
            return NGX_ERROR;
        }

        v->data = p;
        v->len = ngx_http_agent_cost_print(p, p + NGX_HTTP_AGENT_COST_LEN,
                                           env->cost)
                 - p;
        return NGX_OK;

    case NGX_HTTP_AGENT_VAR_CACHE:
        /* the response caches: "-" where no call looked */
        if (env->cache == NGX_HTTP_AGENT_ENV_CACHE_HIT) {
            ngx_str_set(v, "hit");

        } else if (env->cache == NGX_HTTP_AGENT_ENV_CACHE_NEAR) {
            ngx_str_set(v, "similar");

        } else if (env->cache == NGX_HTTP_AGENT_ENV_CACHE_MISS) {
            ngx_str_set(v, "miss");

        } else {
            ngx_str_set(v, "-");
        }

        return NGX_OK;

    case NGX_HTTP_AGENT_VAR_SESSION:
        v->len = env->session_id.len;
        v->data = env->session_id.data;
        return NGX_OK;

    case NGX_HTTP_AGENT_VAR_MODEL:
        v->len = env->answered_by.len;
        v->data = env->answered_by.data;
        return NGX_OK;

    case NGX_HTTP_AGENT_VAR_LLM_TIME:
    case NGX_HTTP_AGENT_VAR_TTFT:
        ms = (data == NGX_HTTP_AGENT_VAR_TTFT) ? env->ttft : env->llm_time;

        p = ngx_pnalloc(r->pool, NGX_TIME_T_LEN + 4);
        if (p == NULL) {
            return NGX_ERROR;
        }

        v->data = p;
        v->len = ngx_sprintf(p, "%T.%03M", (time_t) ms / 1000, ms % 1000)
                 - p;
        return NGX_OK;

    case NGX_HTTP_AGENT_VAR_PROMPT_TOKENS:
        n = env->prompt_tokens;
        break;

    case NGX_HTTP_AGENT_VAR_COMPLETION_TOKENS:
        n = env->completion_tokens;
        break;

    case NGX_HTTP_AGENT_VAR_CACHED_TOKENS:
        n = env->cached_tokens;
        break;

    default: /* NGX_HTTP_AGENT_VAR_TOOL_CALLS */
        n = env->tool_calls;
        break;
    }

    p = ngx_pnalloc(r->pool, NGX_INT64_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    v->data = p;
    v->len = ngx_sprintf(p, "%L", n) - p;

    return NGX_OK;
}


/* agent_input CHANNEL VALUE: nginx variables into the state, as strings */

ngx_int_t
ngx_http_agent_variables_inputs(ngx_http_request_t *r,
    ngx_http_agent_run_t *run, ngx_array_t *update)
{
    ngx_int_t                   ch;
    ngx_str_t                   value, json;
    ngx_uint_t                  i;
    ngx_http_agent_input_t     *in;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    /*
     * checked against the location's graphs (agent_use_graph, and for the
     * LangGraph API agent_assistants) when the configuration was read
     */

    if (alcf->inputs == NULL
        || (run->graph != alcf->graph
            && (alcf->proto == NULL
                || !(alcf->proto->flags & NGX_HTTP_AGENT_PROTO_GRAPHS))))
    {
        return NGX_OK;
    }

    in = alcf->inputs->elts;

    for (i = 0; i < alcf->inputs->nelts; i++) {
        ch = (run->graph == alcf->graph)
             ? in[i].channel
             : ngx_http_agent_graph_channel(run->graph, &in[i].name);

        if (ch == NGX_ERROR || ch == NGX_HTTP_AGENT_CH_MESSAGES) {
            return NGX_ERROR;
        }

        if (ngx_http_complex_value(r, in[i].value, &value) != NGX_OK
            || ngx_http_agent_json_quote(r->pool, &value, &json) != NGX_OK
            || ngx_http_agent_graph_write_value(update, ch, &json) != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* agent_input CHANNEL VALUE: the value compiled, the channel resolved
   when the graph of the location is known */

char *
ngx_http_agent_variables_input(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_loc_conf_t *alcf = conf;

    ngx_str_t                         *value;
    ngx_http_agent_input_t            *in;
    ngx_http_compile_complex_value_t   ccv;

    value = cf->args->elts;

    if (alcf->inputs == NGX_CONF_UNSET_PTR) {
        alcf->inputs = ngx_array_create(cf->pool, 2,
                                        sizeof(ngx_http_agent_input_t));
        if (alcf->inputs == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    in = ngx_array_push(alcf->inputs);
    if (in == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_memzero(in, sizeof(ngx_http_agent_input_t));
    in->name = value[1];
    in->file = cf->conf_file->file.name;
    in->line = cf->conf_file->line;

    in->value = ngx_palloc(cf->pool, sizeof(ngx_http_complex_value_t));
    if (in->value == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_memzero(&ccv, sizeof(ngx_http_compile_complex_value_t));
    ccv.cf = cf;
    ccv.value = &value[2];
    ccv.complex_value = in->value;

    if (ngx_http_compile_complex_value(&ccv) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}
