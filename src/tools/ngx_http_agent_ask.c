
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"


/*
 * A model call made by a node or a tool for its own use: a system prompt
 * and one user message in, the answer's text out, nothing streamed.  It
 * uses the session's model and counts in the turn's usage.
 */


static void ngx_http_agent_ask_done(void *data, ngx_int_t rc);
static ngx_int_t ngx_http_agent_ask_chunk(void *data, ngx_str_t *text);
static void ngx_http_agent_ask_cleanup(void *data);
static void ngx_http_agent_ask_end(ngx_http_agent_ask_t *ask);


ngx_http_agent_ask_t *
ngx_http_agent_ask(ngx_http_agent_run_t *run, ngx_str_t *system,
    ngx_str_t *user, ngx_http_agent_ask_done_pt done, void *data)
{
    ngx_str_t               key;
    ngx_array_t            *messages;
    ngx_pool_cleanup_t     *cln;
    ngx_http_agent_msg_t   *m;
    ngx_http_agent_env_t   *env;
    ngx_http_agent_ask_t   *ask;

    env = run->data;

    ask = ngx_pcalloc(run->pool, sizeof(ngx_http_agent_ask_t));
    if (ask == NULL) {
        return NULL;
    }

    ask->run = run;
    ask->model = env->model;
    ask->done = done;
    ask->data = data;

    if (ngx_http_agent_llm_key(ask->model, &key) != NGX_OK) {
        (void) ngx_http_agent_graph_fail(run, "no_api_key", "the model "
                                         "\"%V\" has no API key",
                                         &ask->model->name);
        return NULL;
    }

    ask->pool = ngx_create_pool(4096, run->log);
    if (ask->pool == NULL) {
        return NULL;
    }

    cln = ngx_pool_cleanup_add(run->pool, 0);
    if (cln == NULL) {
        ngx_destroy_pool(ask->pool);
        return NULL;
    }

    cln->handler = ngx_http_agent_ask_cleanup;
    cln->data = ask;

    messages = ngx_array_create(ask->pool, 1, sizeof(ngx_http_agent_msg_t));
    if (messages == NULL) {
        return NULL;
    }

    m = ngx_array_push(messages);
    if (m == NULL) {
        return NULL;
    }

    ngx_memzero(m, sizeof(ngx_http_agent_msg_t));
    ngx_str_set(&m->role, "user");
    m->content = *user;

    ask->req.system = system;
    ask->req.messages = messages;
    ask->req.connect_timeout = env->services.llm_connect_timeout;
    ask->req.idle_timeout = env->services.llm_idle_timeout;
    ask->req.timeout = env->services.llm_timeout;

    ask->llm = ngx_http_agent_llm_create(ask->pool, run->log);
    if (ask->llm == NULL) {
        return NULL;
    }

    ask->llm->on_chunk = ngx_http_agent_ask_chunk;
    ask->llm->on_done = ngx_http_agent_ask_done;
    ask->llm->data = ask;

    if (ngx_http_agent_env_reserve(run, ask->llm, ask->model, &ask->req)
        != NGX_OK)
    {
        return NULL;
    }

    if (ngx_http_agent_llm_call(ask->llm, ask->model, &ask->req) != NGX_OK) {
        (void) ngx_http_agent_graph_fail(run, "llm_error", "%V",
                                         &ask->llm->error);
        return NULL;
    }

    return ask;
}


static ngx_int_t
ngx_http_agent_ask_chunk(void *data, ngx_str_t *text)
{
    return NGX_OK;
}


static void
ngx_http_agent_ask_done(void *data, ngx_int_t rc)
{
    ngx_http_agent_ask_t *ask = data;

    ngx_http_agent_msg_t   msg;
    ngx_http_agent_env_t  *env;
    ngx_http_agent_run_t  *run;

    run = ask->run;
    env = run->data;

    ngx_http_agent_env_usage(env, ask->llm);

    if (rc != NGX_OK) {
        if (ask->llm->error.len) {
            (void) ngx_http_agent_graph_fail(run, "llm_error", "%V",
                                             &ask->llm->error);

        } else {
            (void) ngx_http_agent_graph_fail(run, "llm_error", "the model "
                                             "call failed");
        }

        ngx_http_agent_ask_end(ask);
        ask->done(ask->data, NGX_ERROR, NULL);
        return;
    }


    rc = ngx_http_agent_llm_message(ask->llm, run->pool, &msg);

    ngx_http_agent_ask_end(ask);

    ask->done(ask->data, rc, &msg.content);
}


void
ngx_http_agent_ask_cancel(ngx_http_agent_ask_t *ask)
{
    if (ask && ask->llm) {
        ngx_http_agent_llm_cancel(ask->llm);
    }

    ngx_http_agent_ask_end(ask);
}


static void
ngx_http_agent_ask_end(ngx_http_agent_ask_t *ask)
{
    if (ask && ask->pool) {
        ngx_destroy_pool(ask->pool);
        ask->pool = NULL;
        ask->llm = NULL;
    }
}


static void
ngx_http_agent_ask_cleanup(void *data)
{
    ngx_http_agent_ask_end(data);
}


/* a fenced code block (```sql ... ```) is unwrapped in place */

ngx_int_t
ngx_http_agent_ask_fenced(ngx_str_t *text)
{
    u_char  *p, *last;

    p = text->data;
    last = text->data + text->len;

    if (text->len < 3
        || (p = ngx_strlcasestrn(p, last, (u_char *) "```", 2)) == NULL)
    {
        return NGX_DECLINED;
    }

    p += 3;

    while (p < last && *p != '\n') {
        p++;
    }

    text->data = p;
    p = ngx_strlcasestrn(p, last, (u_char *) "```", 2);
    text->len = (p ? p : last) - text->data;

    return NGX_OK;
}
