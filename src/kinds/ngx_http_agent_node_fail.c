
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_engine.h"


/*
 * "node NAME fail [error=NAME] message=TEMPLATE": the run fails here, as a
 * node that raises does in LangGraph: its error event (and the run's
 * status, "error") carries the name and the rendered message.  A graph
 * says with it what cannot go on: retries spent, a guard's refusal that
 * is an error and not an answer.
 */


typedef struct {
    ngx_str_t                  error;
    ngx_str_t                  message;
} ngx_http_agent_node_fail_conf_t;


static ngx_int_t ngx_http_agent_node_fail_check(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);
static ngx_int_t ngx_http_agent_node_fail_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);


static ngx_http_agent_param_t  ngx_http_agent_node_fail_params[] = {
    { ngx_string("error"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_fail_conf_t, error), NULL },
    { ngx_string("message"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_fail_conf_t, message), NULL },
    ngx_http_agent_null_param
};


ngx_http_agent_kind_t  ngx_http_agent_fail_kind = {
    ngx_string("fail"),
    NULL,
    ngx_http_agent_node_fail_params,
    ngx_http_agent_node_fail_check,
    ngx_http_agent_node_fail_run,
    0,
    NULL,
    sizeof(ngx_http_agent_node_fail_conf_t)
};


static ngx_int_t
ngx_http_agent_node_fail_check(ngx_conf_t *cf, ngx_http_agent_graph_t *graph,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_fail_conf_t *fc = node->conf;

    if (fc->message.len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the fail node \"%V\" "
                           "needs message=", &node->name);
        return NGX_ERROR;
    }

    if (fc->error.len == 0) {
        ngx_str_set(&fc->error, "node_failed");

    } else if (ngx_http_agent_params_name(&fc->error) != NGX_OK) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the fail node \"%V\": "
                           "error=%V: letters, digits and _ only",
                           &node->name, &fc->error);
        return NGX_ERROR;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_node_fail_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_fail_conf_t *fc = node->conf;

    ngx_str_t  text;

    if (ngx_http_agent_template_render(run, run->pool, &fc->message, &text)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    run->error = text;
    run->code = fc->error;

    return NGX_ERROR;
}
