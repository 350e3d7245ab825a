
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"


/*
 * "node NAME interrupt [value=CHANNEL] [resume=CHANNEL]": LangGraph's
 * interrupt(): the run stops here, its state saved with this node next
 * and {"node", "value"} kept as "__interrupt__"; the turn ends with an
 * interrupt event carrying the value (a plan to approve, a draft to edit).
 * A resumed run (POST /{id}/resume {"resume": ANSWER}, on any worker,
 * after a restart too) starts at this node, which writes the answer to
 * resume= and lets the graph go on: its edges may route on the answer.
 */


typedef struct {
    ngx_str_t                  value_name;
    ngx_int_t                  value;
    ngx_str_t                  resume_name;
    ngx_int_t                  resume;
} ngx_http_agent_node_interrupt_conf_t;


static ngx_int_t ngx_http_agent_node_interrupt_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);


static ngx_http_agent_param_t  ngx_http_agent_node_interrupt_params[] = {
    { ngx_string("value"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_interrupt_conf_t, value_name),
      &ngx_http_agent_param_optional },
    { ngx_string("resume"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_interrupt_conf_t, resume_name),
      &ngx_http_agent_param_optional },
    ngx_http_agent_null_param
};


ngx_http_agent_kind_t  ngx_http_agent_interrupt_kind = {
    ngx_string("interrupt"),
    NULL,
    ngx_http_agent_node_interrupt_params,
    NULL,
    ngx_http_agent_node_interrupt_run,
    0,
    NULL,
    sizeof(ngx_http_agent_node_interrupt_conf_t)
};


static ngx_int_t
ngx_http_agent_node_interrupt_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_interrupt_conf_t *ic = node->conf;

    ngx_str_t               value, none;
    ngx_http_agent_json_t  *j;

    ngx_str_set(&none, "null");

    if (run->resume.len) {

        /* the run resumed here: the answer in, the interrupt gone */

        if (ic->resume >= 0
            && ngx_http_agent_graph_write_value(run->update, ic->resume,
                                                &run->resume)
               != NGX_OK)
        {
            return NGX_ERROR;
        }

        ngx_str_null(&run->resume);

        return ngx_http_agent_state_set(run, "__interrupt__", &none);
    }

    value = none;

    if (ic->value >= 0
        && ngx_http_agent_graph_value(run, ic->value, &value) != NGX_OK)
    {
        return NGX_ERROR;
    }

    j = ngx_http_agent_json_create_obj(run->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_key(j, "node");
    ngx_http_agent_json_str(j, &node->name);
    ngx_http_agent_json_key(j, "value");
    ngx_http_agent_json_raw(j, &value);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_tools_approve_wait(run, j);
}
