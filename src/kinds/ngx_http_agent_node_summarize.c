
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"


/*
 * "node NAME summarize output=CHANNEL [keep=N] [max_tokens=N]
 * [prompt=FILE]": seed 003's summarizer.  Past N messages not yet summed
 * up (or an estimated token count, four bytes a token), the model sums up
 * all but the last N into {"text", "count"}: an llm node with
 * summary=CHANNEL then sends the text and only the messages after count.
 * The stored history is not touched: every message stays listable.
 */


#define NGX_HTTP_AGENT_SUMMARY_LINE  2000


typedef struct {
    ngx_str_t                  output_name;
    ngx_int_t                  output;
    ngx_uint_t                 keep;
    ngx_uint_t                 max_tokens;
    ngx_str_t                  prompt_file;
    ngx_str_t                  prompt;
} ngx_http_agent_node_summarize_conf_t;


typedef struct {
    ngx_http_agent_run_t      *run;
    ngx_http_agent_node_summarize_conf_t  *conf;
    ngx_http_agent_ask_t      *ask;
    ngx_uint_t                 count;
} ngx_http_agent_node_summarize_ctx_t;


static void *ngx_http_agent_node_summarize_create(ngx_conf_t *cf);
static ngx_int_t ngx_http_agent_node_summarize_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);
static void ngx_http_agent_node_summarize_done(void *data, ngx_int_t rc,
    ngx_str_t *text);
static void ngx_http_agent_node_summarize_cancel(ngx_http_agent_run_t *run);


static ngx_str_t  ngx_http_agent_summary_prompt = ngx_string(
    "Sum up the conversation below for an assistant that will continue "
    "it without seeing it: keep the facts, figures, names, decisions and "
    "open questions, drop greetings and repetition. Write at most 200 "
    "words of plain text.");


static ngx_http_agent_param_bounds_t  ngx_http_agent_node_summarize_one = {
    1, NGX_MAX_INT_T_VALUE
};


static ngx_http_agent_param_t  ngx_http_agent_node_summarize_params[] = {
    { ngx_string("output"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_summarize_conf_t, output_name),
      &ngx_http_agent_param_required },
    { ngx_string("prompt"), ngx_http_agent_params_set_file,
      offsetof(ngx_http_agent_node_summarize_conf_t, prompt_file),
      &ngx_http_agent_param_optional },
    { ngx_string("keep"), ngx_http_agent_params_set_num,
      offsetof(ngx_http_agent_node_summarize_conf_t, keep),
      &ngx_http_agent_node_summarize_one },
    { ngx_string("max_tokens"), ngx_http_agent_params_set_num,
      offsetof(ngx_http_agent_node_summarize_conf_t, max_tokens),
      &ngx_http_agent_node_summarize_one },
    ngx_http_agent_null_param
};


ngx_http_agent_kind_t  ngx_http_agent_summarize_kind = {
    ngx_string("summarize"),
    ngx_http_agent_node_summarize_create,
    ngx_http_agent_node_summarize_params,
    NULL,
    ngx_http_agent_node_summarize_run,
    0,
    NULL,
    0
};


static void *
ngx_http_agent_node_summarize_create(ngx_conf_t *cf)
{
    ngx_http_agent_node_summarize_conf_t  *sc;

    sc = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_node_summarize_conf_t));
    if (sc == NULL) {
        return NULL;
    }

    sc->keep = 6;
    sc->prompt = ngx_http_agent_summary_prompt;

    return sc;
}


static ngx_int_t
ngx_http_agent_node_summarize_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_summarize_conf_t *sc = node->conf;

    u_char                               *p;
    size_t                                size, bytes, len;
    yajl_val                              v, n;
    ngx_str_t                             json, old, user;
    ngx_uint_t                            covered, cut, i;
    ngx_array_t                          *msgs;
    ngx_http_agent_msg_t                 *m;
    ngx_http_agent_node_summarize_ctx_t  *ctx;

    msgs = run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages;
    m = msgs->elts;

    if (ngx_http_agent_graph_value(run, sc->output, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    covered = 0;
    ngx_str_null(&old);

    v = ngx_http_agent_json_parse(run->pool, json.data, json.len, NULL);

    if (v && YAJL_IS_OBJECT(v)) {
        n = ngx_http_agent_json_get(v, "count");

        if (n && YAJL_IS_INTEGER(n) && YAJL_GET_INTEGER(n) > 0
            && (ngx_uint_t) YAJL_GET_INTEGER(n) <= msgs->nelts)
        {
            covered = YAJL_GET_INTEGER(n);
        }

        (void) ngx_http_agent_json_get_str(v, "text", &old);
    }

    bytes = 0;

    for (i = covered; i < msgs->nelts; i++) {
        bytes += m[i].content.len + m[i].tool_calls.len;
    }

    if (msgs->nelts - covered <= sc->keep
        && !(sc->max_tokens && bytes / 4 > sc->max_tokens))
    {
        return NGX_OK;
    }

    /* all but the last keep, cut before a user message: calls stay whole */

    cut = msgs->nelts > sc->keep ? msgs->nelts - sc->keep : 0;

    while (cut > covered && !(m[cut].role.len && m[cut].role.data[0] == 'u'))
    {
        cut--;
    }

    if (cut <= covered) {
        return NGX_OK;
    }

    size = old.len + 64;

    for (i = covered; i < cut; i++) {
        size += ngx_min(m[i].content.len, NGX_HTTP_AGENT_SUMMARY_LINE)
                + m[i].role.len + 8;
    }

    p = ngx_pnalloc(run->pool, size);
    if (p == NULL) {
        return NGX_ERROR;
    }

    user.data = p;

    if (old.len) {
        p = ngx_sprintf(p, "Summary so far:\n%V\n\n", &old);
    }

    for (i = covered; i < cut; i++) {
        if (m[i].content.len == 0) {
            continue;
        }

        len = ngx_min(m[i].content.len, NGX_HTTP_AGENT_SUMMARY_LINE);
        p = ngx_sprintf(p, "%V: %*s\n", &m[i].role, len, m[i].content.data);
    }

    user.len = p - user.data;

    ctx = ngx_pcalloc(run->pool, sizeof(ngx_http_agent_node_summarize_ctx_t));
    if (ctx == NULL) {
        return NGX_ERROR;
    }

    ctx->run = run;
    ctx->conf = sc;
    ctx->count = cut;

    run->node_data = ctx;

    ctx->ask = ngx_http_agent_ask(run, &sc->prompt, &user,
                                  ngx_http_agent_node_summarize_done, ctx);
    if (ctx->ask == NULL) {
        return NGX_ERROR;
    }

    run->cancel = ngx_http_agent_node_summarize_cancel;

    return NGX_AGAIN;
}


static void
ngx_http_agent_node_summarize_done(void *data, ngx_int_t rc, ngx_str_t *text)
{
    ngx_http_agent_node_summarize_ctx_t *ctx = data;

    ngx_str_t               json;
    ngx_http_agent_run_t   *run;
    ngx_http_agent_json_t  *j;

    run = ctx->run;
    ctx->ask = NULL;
    run->cancel = NULL;

    if (rc != NGX_OK) {
        ngx_http_agent_graph_node_done(run, NGX_ERROR);
        return;
    }

    j = ngx_http_agent_json_create(run->pool);
    if (j == NULL) {
        ngx_http_agent_graph_node_done(run, NGX_ERROR);
        return;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "text");
    ngx_http_agent_json_str(j, text);
    ngx_http_agent_json_key(j, "count");
    ngx_http_agent_json_int(j, ctx->count);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &json) != NGX_OK
        || ngx_http_agent_graph_write_value(run->update, ctx->conf->output,
                                            &json)
           != NGX_OK)
    {
        ngx_http_agent_graph_node_done(run, NGX_ERROR);
        return;
    }

    ngx_http_agent_graph_node_done(run, NGX_OK);
}


static void
ngx_http_agent_node_summarize_cancel(ngx_http_agent_run_t *run)
{
    ngx_http_agent_node_summarize_ctx_t *ctx = run->node_data;

    if (ctx && ctx->ask) {
        ngx_http_agent_ask_cancel(ctx->ask);
        ctx->ask = NULL;
    }
}
