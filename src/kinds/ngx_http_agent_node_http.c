
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"


/*
 * "node NAME http location=/internal/path [input=A,B] [output=C,D]
 * [timeout=TIME] [max_size=SIZE]": a step that is an nginx location (a
 * js_content handler, or proxy_pass to any service).  The input channels
 * go as one JSON object in a POST subrequest ({"A": value, ...}; messages
 * as [{"role", "content", ...}]); the answer must be a JSON object whose
 * keys update the channels of the same names through their reducers
 * (output= limits them; messages are not written this way).  A status of
 * 400 and above, a body that is no JSON object or a timeout fails the
 * step with a sentence that says which.
 */


#define NGX_HTTP_AGENT_HTTP_MAX      (1024 * 1024)
#define NGX_HTTP_AGENT_HTTP_TIMEOUT  60000
#define NGX_HTTP_AGENT_HTTP_SHOWN    200


typedef struct {
    ngx_str_t                  uri;
    ngx_str_t                  input_list;
    ngx_str_t                  output_list;
    ngx_array_t                inputs;      /* ngx_int_t channels */
    ngx_array_t                outputs;     /* ngx_int_t channels */
    ngx_msec_t                 timeout;
    size_t                     max;
} ngx_http_agent_node_http_conf_t;


typedef struct {
    ngx_http_agent_run_t             *run;
    ngx_http_agent_node_t            *node;
    void                             *sub;       /* the fetch under way */
} ngx_http_agent_node_http_ctx_t;


static ngx_int_t ngx_http_agent_node_http_check(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);
static ngx_int_t ngx_http_agent_node_http_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);
static void ngx_http_agent_node_http_done(void *data, ngx_uint_t status,
    ngx_str_t *body, ngx_uint_t truncated);
static ngx_int_t ngx_http_agent_node_http_answer(
    ngx_http_agent_node_http_ctx_t *ctx, ngx_uint_t status, ngx_str_t *body,
    ngx_uint_t truncated);
static void ngx_http_agent_node_http_cancel(ngx_http_agent_run_t *run);


static ngx_http_agent_param_bounds_t  ngx_http_agent_node_http_timeout = {
    1, NGX_MAX_INT_T_VALUE
};

static ngx_http_agent_param_bounds_t  ngx_http_agent_node_http_max = {
    64, NGX_MAX_INT_T_VALUE
};


static ngx_http_agent_param_t  ngx_http_agent_node_http_params[] = {
    { ngx_string("location"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_http_conf_t, uri), NULL },
    { ngx_string("input"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_http_conf_t, input_list), NULL },
    { ngx_string("output"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_http_conf_t, output_list), NULL },
    { ngx_string("timeout"), ngx_http_agent_params_set_msec,
      offsetof(ngx_http_agent_node_http_conf_t, timeout),
      &ngx_http_agent_node_http_timeout },
    { ngx_string("max_size"), ngx_http_agent_params_set_size,
      offsetof(ngx_http_agent_node_http_conf_t, max),
      &ngx_http_agent_node_http_max },
    ngx_http_agent_null_param
};


ngx_http_agent_kind_t  ngx_http_agent_http_kind = {
    ngx_string("http"),
    NULL,
    ngx_http_agent_node_http_params,
    ngx_http_agent_node_http_check,
    ngx_http_agent_node_http_run,
    0,
    NULL,
    sizeof(ngx_http_agent_node_http_conf_t)
};


static ngx_int_t
ngx_http_agent_node_http_check(ngx_conf_t *cf, ngx_http_agent_graph_t *graph,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_http_conf_t *hc = node->conf;

    /* not set: 0, below their bounds */
    hc->timeout = hc->timeout ? hc->timeout : NGX_HTTP_AGENT_HTTP_TIMEOUT;
    hc->max = hc->max ? hc->max : NGX_HTTP_AGENT_HTTP_MAX;

    if (hc->uri.len == 0 || hc->uri.data[0] != '/') {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the http node \"%V\" needs "
                           "location=/PATH", &node->name);
        return NGX_ERROR;
    }

    if (ngx_http_agent_graph_conf_channels(cf, graph, node, "input",
                                           &hc->input_list, &hc->inputs, 1)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_graph_conf_channels(cf, graph, node, "output",
                                              &hc->output_list, &hc->outputs,
                                              0);
}


static ngx_int_t
ngx_http_agent_node_http_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_http_conf_t *hc = node->conf;

    ngx_int_t                        *ch;
    ngx_str_t                         body, value, key;
    ngx_uint_t                        i, n;
    ngx_array_t                      *msgs;
    ngx_http_agent_msg_t             *m;
    ngx_http_agent_env_t             *env;
    ngx_http_agent_json_t            *j;
    ngx_http_agent_channel_t         *chans;
    ngx_http_agent_node_http_ctx_t   *ctx;

    env = run->data;
    chans = run->graph->channels.elts;

    j = ngx_http_agent_json_create(run->pool);
    ctx = ngx_pcalloc(run->pool, sizeof(ngx_http_agent_node_http_ctx_t));
    if (j == NULL || ctx == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);

    ch = hc->inputs.elts;

    for (i = 0; i < hc->inputs.nelts; i++) {
        ngx_http_agent_json_str(j, &chans[ch[i]].name);

        if (ch[i] == NGX_HTTP_AGENT_CH_MESSAGES) {
            msgs = run->state[ch[i]].messages;
            m = msgs->elts;

            ngx_http_agent_json_arr(j);

            for (n = 0; n < msgs->nelts; n++) {
                ngx_http_agent_message_json(j, NULL, &m[n], 1);
            }

            ngx_http_agent_json_arr_end(j);
            continue;
        }

        if (ngx_http_agent_graph_value(run, ch[i], &value) != NGX_OK) {
            return NGX_ERROR;
        }

        ngx_http_agent_json_raw(j, &value);
    }

    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &body) != NGX_OK) {
        return NGX_ERROR;
    }

    ctx->run = run;
    ctx->node = node;
    run->node_data = ctx;

    /* the same Idempotency-Key at each attempt of the step, on any worker */
    ngx_str_null(&key);

    if (env->services.key
        && env->services.key(run, &node->name, &key) != NGX_OK)
    {
        return NGX_ERROR;
    }

    ctx->sub = env->services.fetch(env->services.data, &hc->uri, &body, &key,
                                   hc->max, hc->timeout,
                                   ngx_http_agent_node_http_done, ctx);
    if (ctx->sub == NULL) {
        return ngx_http_agent_graph_fail(run, "node_failed", "the node "
                                         "\"%V\" could not call %V",
                                         &node->name, &hc->uri);
    }

    run->cancel = ngx_http_agent_node_http_cancel;

    return NGX_AGAIN;
}


static void
ngx_http_agent_node_http_done(void *data, ngx_uint_t status, ngx_str_t *body,
    ngx_uint_t truncated)
{
    ngx_http_agent_node_http_ctx_t *ctx = data;

    ngx_http_agent_run_t  *run;

    run = ctx->run;
    run->cancel = NULL;
    ctx->sub = NULL;

    ngx_http_agent_graph_node_done(run,
                                   ngx_http_agent_node_http_answer(ctx, status,
                                                                   body,
                                                                   truncated));
}


/* the answer's keys into the channels they name, through their reducers */

static ngx_int_t
ngx_http_agent_node_http_answer(ngx_http_agent_node_http_ctx_t *ctx,
    ngx_uint_t status, ngx_str_t *body, ngx_uint_t truncated)
{
    ngx_http_agent_node_http_conf_t *hc = ctx->node->conf;

    size_t                     i;
    yajl_val                   v, val;
    ngx_int_t                  ch, *out;
    ngx_str_t                  name, json, shown;
    ngx_uint_t                 k;
    ngx_http_agent_run_t      *run;
    ngx_http_agent_channel_t  *chans;

    run = ctx->run;
    chans = run->graph->channels.elts;

    shown = *body;
    shown.len = ngx_min(shown.len, NGX_HTTP_AGENT_HTTP_SHOWN);

    if (status >= NGX_HTTP_BAD_REQUEST) {
        return ngx_http_agent_graph_fail(run, "node_failed", "the node "
                                         "\"%V\" got %ui from %V%s%V",
                                         &ctx->node->name, status, &hc->uri,
                                         shown.len ? ": " : "", &shown);
    }

    v = truncated ? NULL
                  : ngx_http_agent_json_parse(run->pool, body->data,
                                              body->len, NULL);

    if (v == NULL || !YAJL_IS_OBJECT(v)) {
        return ngx_http_agent_graph_fail(run, "node_failed", "the node "
                                         "\"%V\" got no JSON object from %V"
                                         "%s", &ctx->node->name, &hc->uri,
                                         truncated ? " (it was larger than "
                                         "max_size)" : "");
    }

    for (i = 0; i < v->u.object.len; i++) {
        name.data = (u_char *) v->u.object.keys[i];
        name.len = ngx_strlen(name.data);
        val = v->u.object.values[i];

        ch = ngx_http_agent_graph_channel(run->graph, &name);

        if (ch != NGX_ERROR && hc->outputs.nelts) {
            out = hc->outputs.elts;

            for (k = 0; k < hc->outputs.nelts; k++) {
                if (out[k] == ch) {
                    break;
                }
            }

            if (k == hc->outputs.nelts) {
                ch = NGX_ERROR;
            }
        }

        if (ch == NGX_ERROR || ch == NGX_HTTP_AGENT_CH_MESSAGES) {
            ngx_log_error(NGX_LOG_INFO, run->log, 0, "agent: the node \"%V\" "
                          "left out \"%V\" of the answer of %V: not a "
                          "channel it may write", &ctx->node->name, &name,
                          &hc->uri);
            continue;
        }

        if (chans[ch].reducer == NGX_HTTP_AGENT_REDUCE_SUM) {
            if (!YAJL_IS_NUMBER(val)) {
                return ngx_http_agent_graph_fail(run, "node_failed", "the "
                                                 "node \"%V\": \"%V\" is a "
                                                 "sum, %V gave no number",
                                                 &ctx->node->name, &name,
                                                 &hc->uri);
            }

            if (ngx_http_agent_graph_write_number(run->update, ch,
                                                  YAJL_GET_DOUBLE(val))
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            continue;
        }

        if (ngx_http_agent_json_encode(run->pool, val, &json) != NGX_OK
            || ngx_http_agent_graph_write_value(run->update, ch, &json)
               != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


static void
ngx_http_agent_node_http_cancel(ngx_http_agent_run_t *run)
{
    ngx_http_agent_node_http_ctx_t *ctx = run->node_data;

    ngx_http_agent_env_t  *env;

    env = run->data;

    if (ctx && ctx->sub) {
        env->services.fetch_cancel(ctx->sub);
        ctx->sub = NULL;
    }
}
