
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"


/*
 * "node NAME guard output=CHANNEL [reason=CHANNEL] [max_length=N]
 * [deny=REGEX ...] [require=CHANNEL ...]": seed 003's ingress.  It checks
 * this turn's message before any model sees it and writes true (let it
 * through) or false with the reason; an edge on the channel routes a
 * refusal to an answer that costs no model call.
 */


typedef struct {
    ngx_str_t                  output_name;
    ngx_int_t                  output;
    ngx_str_t                  reason_name;
    ngx_int_t                  reason;
    size_t                     max_length;
    ngx_array_t               *deny;          /* ngx_regex_t * */
    ngx_array_t               *require;       /* ngx_str_t */
    ngx_array_t               *required;      /* ngx_int_t */
} ngx_http_agent_node_guard_conf_t;


static ngx_int_t ngx_http_agent_node_guard_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);


static ngx_int_t  ngx_http_agent_node_guard_caseless = NGX_REGEX_CASELESS;

static ngx_http_agent_param_bounds_t  ngx_http_agent_node_guard_length = {
    1, NGX_MAX_INT_T_VALUE
};


static ngx_http_agent_param_t  ngx_http_agent_node_guard_params[] = {
    { ngx_string("output"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_guard_conf_t, output_name),
      &ngx_http_agent_param_required },
    { ngx_string("reason"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_guard_conf_t, reason_name),
      &ngx_http_agent_param_optional },
    { ngx_string("max_length"), ngx_http_agent_params_set_size,
      offsetof(ngx_http_agent_node_guard_conf_t, max_length),
      &ngx_http_agent_node_guard_length },
    { ngx_string("require"), ngx_http_agent_params_set_channels,
      offsetof(ngx_http_agent_node_guard_conf_t, require),
      &ngx_http_agent_param_optional },
    { ngx_string("deny"), ngx_http_agent_params_set_regex,
      offsetof(ngx_http_agent_node_guard_conf_t, deny),
      &ngx_http_agent_node_guard_caseless },
    ngx_http_agent_null_param
};


ngx_http_agent_kind_t  ngx_http_agent_guard_kind = {
    ngx_string("guard"),
    NULL,
    ngx_http_agent_node_guard_params,
    NULL,
    ngx_http_agent_node_guard_run,
    0,
    NULL,
    sizeof(ngx_http_agent_node_guard_conf_t)
};


static ngx_int_t
ngx_http_agent_node_guard_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_guard_conf_t *gc = node->conf;

    u_char        *p, buf[256];
    yajl_val       v;
    ngx_str_t      json, text, reason, *names;
    ngx_int_t     *ch;
    ngx_uint_t     i;
    ngx_regex_t  **re;

    ngx_str_null(&reason);

    if (ngx_http_agent_graph_value(run, NGX_HTTP_AGENT_CH_INPUT, &json)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    v = ngx_http_agent_json_parse(run->pool, json.data, json.len, NULL);

    if (v && YAJL_IS_STRING(v)) {
        text.data = (u_char *) YAJL_GET_STRING(v);
        text.len = ngx_strlen(text.data);

    } else {
        ngx_str_set(&text, "");
    }

    if (gc->max_length && text.len > gc->max_length) {
        p = ngx_snprintf(buf, sizeof(buf), "the message is longer than %uz "
                         "bytes", gc->max_length);
        reason.data = buf;
        reason.len = p - buf;
        goto refuse;
    }

    for (i = 0; gc->required && i < gc->required->nelts; i++) {
        ch = gc->required->elts;
        names = gc->require->elts;

        if (ngx_http_agent_graph_value(run, ch[i], &json) != NGX_OK) {
            return NGX_ERROR;
        }

        if (json.len == 0 || ngx_strncmp(json.data, "null", 4) == 0
            || (json.len == 2 && json.data[0] == '"'))
        {
            p = ngx_snprintf(buf, sizeof(buf), "%V is required and missing",
                             &names[i]);
            reason.data = buf;
            reason.len = p - buf;
            goto refuse;
        }
    }

    re = gc->deny ? gc->deny->elts : NULL;

    for (i = 0; re && i < gc->deny->nelts; i++) {
        if (ngx_regex_exec(re[i], &text, NULL, 0) >= 0) {
            ngx_str_set(&reason, "the message is not allowed here");
            goto refuse;
        }
    }

    ngx_str_set(&json, "true");

    if (gc->reason >= 0) {
        ngx_str_set(&reason, "null");

        if (ngx_http_agent_graph_write_value(run->update, gc->reason,
                                             &reason)
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return ngx_http_agent_graph_write_value(run->update, gc->output, &json);

refuse:

    ngx_log_error(NGX_LOG_INFO, run->log, 0, "agent: guard \"%V\" refused "
                  "the message: %V", &node->name, &reason);

    ngx_str_set(&json, "false");

    if (ngx_http_agent_graph_write_value(run->update, gc->output, &json)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (gc->reason < 0) {
        return NGX_OK;
    }

    if (ngx_http_agent_json_quote(run->pool, &reason, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_agent_graph_write_value(run->update, gc->reason, &json);
}
