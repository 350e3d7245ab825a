
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_graph.h"


static void ngx_http_agent_graph_loop(ngx_http_agent_run_t *run);
static ngx_int_t ngx_http_agent_graph_step(ngx_http_agent_run_t *run,
    ngx_int_t rc);
static void ngx_http_agent_graph_finish(ngx_http_agent_run_t *run,
    ngx_int_t rc);


ngx_http_agent_run_t *
ngx_http_agent_graph_run_create(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_graph_t *graph)
{
    ngx_uint_t             i;
    ngx_http_agent_run_t  *run;

    run = ngx_pcalloc(pool, sizeof(ngx_http_agent_run_t));
    if (run == NULL) {
        return NULL;
    }

    run->pool = pool;
    run->log = log;
    run->graph = graph;
    run->limit = 25;
    run->current = graph->entry;

    run->state = ngx_pcalloc(pool,
                             graph->nchannels * sizeof(ngx_http_agent_value_t));
    if (run->state == NULL) {
        return NULL;
    }

    for (i = 0; i < graph->nchannels; i++) {
        if (graph->channels[i].kind != NGX_HTTP_AGENT_CHANNEL_MESSAGES) {
            continue;
        }

        run->state[i].messages = ngx_array_create(pool, 8,
                                                  sizeof(ngx_http_agent_msg_t));
        if (run->state[i].messages == NULL) {
            return NULL;
        }
    }

    return run;
}


ngx_int_t
ngx_http_agent_graph_channel(ngx_http_agent_graph_t *graph, const char *name)
{
    size_t      len;
    ngx_uint_t  i;

    len = ngx_strlen(name);

    for (i = 0; i < graph->nchannels; i++) {
        if (graph->channels[i].name.len == len
            && ngx_strncmp(graph->channels[i].name.data, name, len) == 0)
        {
            return i;
        }
    }

    return NGX_ERROR;
}


/* the reducers */

ngx_int_t
ngx_http_agent_graph_apply(ngx_http_agent_run_t *run, ngx_array_t *update)
{
    ngx_uint_t               i;
    ngx_http_agent_msg_t    *m;
    ngx_http_agent_write_t  *w;
    ngx_http_agent_value_t  *v;

    w = update->elts;

    for (i = 0; i < update->nelts; i++) {

        if (w[i].channel >= run->graph->nchannels) {
            return NGX_ERROR;
        }

        v = &run->state[w[i].channel];

        switch (run->graph->channels[w[i].channel].kind) {

        case NGX_HTTP_AGENT_CHANNEL_MESSAGES:
            if (w[i].value.messages == NULL) {
                break;
            }

            m = ngx_array_push_n(v->messages, w[i].value.messages->nelts);
            if (m == NULL) {
                return NGX_ERROR;
            }

            ngx_memcpy(m, w[i].value.messages->elts,
                       w[i].value.messages->nelts
                       * sizeof(ngx_http_agent_msg_t));
            break;

        case NGX_HTTP_AGENT_CHANNEL_COUNTER:
            v->counter += w[i].value.counter;
            break;

        default:
            v->json = w[i].value.json;
        }
    }

    return NGX_OK;
}


void
ngx_http_agent_graph_start(ngx_http_agent_run_t *run)
{
    ngx_http_agent_graph_loop(run);
}


static void
ngx_http_agent_graph_loop(ngx_http_agent_run_t *run)
{
    ngx_int_t               rc;
    ngx_http_agent_node_t  *node;

    while (!run->finished) {

        if (run->step >= run->limit) {
            ngx_http_agent_graph_fail(run, "recursion_limit",
                                      "the graph ran %ui steps without "
                                      "reaching its end", run->step);
            ngx_http_agent_graph_finish(run, NGX_ERROR);
            return;
        }

        node = &run->graph->nodes[run->current];

        run->update = ngx_http_agent_graph_update_create(run->pool);
        if (run->update == NULL) {
            ngx_http_agent_graph_finish(run, NGX_ERROR);
            return;
        }

        ngx_log_debug2(NGX_LOG_DEBUG_HTTP, run->log, 0,
                       "agent graph: step %ui node \"%V\"",
                       run->step, &node->name);

        run->in_node = 1;
        run->async_done = 0;
        rc = node->handler(run);
        run->in_node = 0;

        if (rc == NGX_AGAIN) {
            if (!run->async_done) {
                return;
            }

            rc = run->async_rc;
        }

        if (ngx_http_agent_graph_step(run, rc) != NGX_OK) {
            return;
        }
    }
}


void
ngx_http_agent_graph_node_done(ngx_http_agent_run_t *run, ngx_int_t rc)
{
    run->cancel = NULL;

    if (run->finished) {
        return;
    }

    if (run->in_node) {
        /* completed before the node returned: the loop goes on */
        run->async_done = 1;
        run->async_rc = rc;
        return;
    }

    if (ngx_http_agent_graph_step(run, rc) == NGX_OK) {
        ngx_http_agent_graph_loop(run);
    }
}


/* apply the node's update, route, checkpoint */

static ngx_int_t
ngx_http_agent_graph_step(ngx_http_agent_run_t *run, ngx_int_t rc)
{
    ngx_int_t               next;
    ngx_http_agent_node_t  *node;

    node = &run->graph->nodes[run->current];

    if (rc != NGX_OK) {
        if (run->error.len == 0) {
            ngx_http_agent_graph_fail(run, "node_failed",
                                      "the step \"%V\" failed", &node->name);
        }

        ngx_http_agent_graph_finish(run, NGX_ERROR);
        return NGX_ERROR;
    }

    if (ngx_http_agent_graph_apply(run, run->update) != NGX_OK) {
        ngx_http_agent_graph_finish(run, NGX_ERROR);
        return NGX_ERROR;
    }

    next = node->route ? node->route(run) : node->next;

    if (next != NGX_HTTP_AGENT_END
        && (next < 0 || (ngx_uint_t) next >= run->graph->nnodes))
    {
        ngx_http_agent_graph_fail(run, "bad_route", "the step \"%V\" routed "
                                  "to no node", &node->name);
        ngx_http_agent_graph_finish(run, NGX_ERROR);
        return NGX_ERROR;
    }

    if (run->handlers->checkpoint(run, &node->name, next) != NGX_OK) {
        if (run->error.len == 0) {
            ngx_http_agent_graph_fail(run, "checkpoint_failed",
                                      "the state could not be saved");
        }

        ngx_http_agent_graph_finish(run, NGX_ERROR);
        return NGX_ERROR;
    }

    run->step++;

    if (next == NGX_HTTP_AGENT_END) {
        ngx_http_agent_graph_finish(run, NGX_OK);
        return NGX_DONE;
    }

    run->current = next;

    return NGX_OK;
}


static void
ngx_http_agent_graph_finish(ngx_http_agent_run_t *run, ngx_int_t rc)
{
    if (run->finished) {
        return;
    }

    run->finished = 1;
    run->handlers->done(run, rc);
}


/* the embedder stops the run: the client is gone; no callbacks follow */

void
ngx_http_agent_graph_cancel(ngx_http_agent_run_t *run)
{
    if (run->finished) {
        return;
    }

    run->finished = 1;

    if (run->cancel) {
        run->cancel(run);
        run->cancel = NULL;
    }
}


ngx_int_t
ngx_http_agent_graph_fail(ngx_http_agent_run_t *run, const char *code,
    const char *fmt, ...)
{
    u_char   *p, buf[512];
    va_list   args;

    va_start(args, fmt);
    p = ngx_vslprintf(buf, buf + sizeof(buf), fmt, args);
    va_end(args);

    run->error.data = ngx_pnalloc(run->pool, p - buf);
    if (run->error.data == NULL) {
        run->error.len = 0;
        return NGX_ERROR;
    }

    run->error.len = p - buf;
    ngx_memcpy(run->error.data, buf, p - buf);

    run->code.data = (u_char *) code;
    run->code.len = ngx_strlen(code);

    return NGX_ERROR;
}


ngx_array_t *
ngx_http_agent_graph_update_create(ngx_pool_t *pool)
{
    return ngx_array_create(pool, 4, sizeof(ngx_http_agent_write_t));
}


ngx_int_t
ngx_http_agent_graph_write_message(ngx_http_agent_run_t *run,
    ngx_array_t *update, ngx_uint_t channel, ngx_http_agent_msg_t *msg)
{
    ngx_uint_t               i;
    ngx_http_agent_msg_t    *m;
    ngx_http_agent_write_t  *w;

    w = update->elts;

    for (i = 0; i < update->nelts; i++) {
        if (w[i].channel == channel) {
            goto found;
        }
    }

    w = ngx_array_push(update);
    if (w == NULL) {
        return NGX_ERROR;
    }

    ngx_memzero(w, sizeof(ngx_http_agent_write_t));
    w->channel = channel;
    w->value.messages = ngx_array_create(run->pool, 2,
                                         sizeof(ngx_http_agent_msg_t));
    if (w->value.messages == NULL) {
        return NGX_ERROR;
    }

    i = 0;

found:

    m = ngx_array_push(w[i].value.messages);
    if (m == NULL) {
        return NGX_ERROR;
    }

    *m = *msg;

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_graph_write_counter(ngx_array_t *update, ngx_uint_t channel,
    int64_t n)
{
    ngx_http_agent_write_t  *w;

    w = ngx_array_push(update);
    if (w == NULL) {
        return NGX_ERROR;
    }

    ngx_memzero(w, sizeof(ngx_http_agent_write_t));
    w->channel = channel;
    w->value.counter = n;

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_graph_write_value(ngx_array_t *update, ngx_uint_t channel,
    ngx_str_t *json)
{
    ngx_http_agent_write_t  *w;

    w = ngx_array_push(update);
    if (w == NULL) {
        return NGX_ERROR;
    }

    ngx_memzero(w, sizeof(ngx_http_agent_write_t));
    w->channel = channel;
    w->value.json = *json;

    return NGX_OK;
}


ngx_http_agent_msg_t *
ngx_http_agent_graph_last_message(ngx_http_agent_run_t *run,
    ngx_uint_t channel)
{
    ngx_array_t  *a;

    a = run->state[channel].messages;

    if (a == NULL || a->nelts == 0) {
        return NULL;
    }

    return (ngx_http_agent_msg_t *) a->elts + a->nelts - 1;
}
