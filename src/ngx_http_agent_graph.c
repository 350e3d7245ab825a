
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_graph.h"
#include "ngx_http_agent_expr.h"
#include "ngx_http_agent_json.h"


/*
 * The engine: channels and their reducers, steps, edges and checkpoints.
 * It knows nothing of HTTP, the providers or SQL: node kinds do the work,
 * the embedder (a turn) persists and streams through run->handlers.
 */


static void ngx_http_agent_graph_loop(ngx_http_agent_run_t *run);
static ngx_int_t ngx_http_agent_graph_reduce(ngx_http_agent_run_t *run,
    ngx_http_agent_channel_t *ch, ngx_http_agent_value_t *v,
    ngx_http_agent_value_t *w);
static ngx_int_t ngx_http_agent_graph_append(ngx_pool_t *pool, ngx_str_t *old,
    ngx_str_t *add);
static ngx_int_t ngx_http_agent_graph_merge(ngx_pool_t *pool, ngx_str_t *old,
    ngx_str_t *add);
static ngx_int_t ngx_http_agent_graph_route(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);
static ngx_int_t ngx_http_agent_graph_step(ngx_http_agent_run_t *run,
    ngx_int_t rc);
static void ngx_http_agent_graph_finish(ngx_http_agent_run_t *run,
    ngx_int_t rc);


ngx_http_agent_run_t *
ngx_http_agent_graph_run_create(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_graph_t *graph)
{
    ngx_uint_t                 i;
    ngx_http_agent_run_t      *run;
    ngx_http_agent_channel_t  *ch;

    run = ngx_pcalloc(pool, sizeof(ngx_http_agent_run_t));
    if (run == NULL) {
        return NULL;
    }

    run->pool = pool;
    run->log = log;
    run->graph = graph;
    run->limit = 25;
    run->current = graph->entry;

    run->state = ngx_pcalloc(pool, graph->channels.nelts
                                   * sizeof(ngx_http_agent_value_t));
    if (run->state == NULL) {
        return NULL;
    }

    run->visits = ngx_pcalloc(pool, graph->nodes.nelts * sizeof(ngx_uint_t));
    if (run->visits == NULL) {
        return NULL;
    }

    ch = graph->channels.elts;

    for (i = 0; i < graph->channels.nelts; i++) {

        if (ch[i].reducer == NGX_HTTP_AGENT_REDUCE_MESSAGES) {
            run->state[i].messages = ngx_array_create(pool, 8,
                                                 sizeof(ngx_http_agent_msg_t));
            if (run->state[i].messages == NULL) {
                return NULL;
            }

            continue;
        }

        if (ch[i].reducer == NGX_HTTP_AGENT_REDUCE_SUM) {
            if (ch[i].dflt.len) {
                run->state[i].number = ngx_http_agent_json_number(&ch[i].dflt);
            }

            continue;
        }

        run->state[i].json = ch[i].dflt;
    }

    return run;
}


ngx_int_t
ngx_http_agent_graph_channel(ngx_http_agent_graph_t *graph, ngx_str_t *name)
{
    ngx_uint_t                 i;
    ngx_http_agent_channel_t  *ch;

    ch = graph->channels.elts;

    for (i = 0; i < graph->channels.nelts; i++) {
        if (ch[i].name.len == name->len
            && ngx_strncmp(ch[i].name.data, name->data, name->len) == 0)
        {
            return i;
        }
    }

    return NGX_ERROR;
}


ngx_int_t
ngx_http_agent_graph_node(ngx_http_agent_graph_t *graph, ngx_str_t *name)
{
    ngx_uint_t              i;
    ngx_http_agent_node_t  *n;

    n = graph->nodes.elts;

    for (i = 0; i < graph->nodes.nelts; i++) {
        if (n[i].name.len == name->len
            && ngx_strncmp(n[i].name.data, name->data, name->len) == 0)
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
    ngx_uint_t                 i;
    ngx_http_agent_write_t    *w;
    ngx_http_agent_channel_t  *ch;

    w = update->elts;
    ch = run->graph->channels.elts;

    for (i = 0; i < update->nelts; i++) {

        if (w[i].channel >= run->graph->channels.nelts) {
            return NGX_ERROR;
        }

        if (ngx_http_agent_graph_reduce(run, &ch[w[i].channel],
                                        &run->state[w[i].channel],
                                        &w[i].value)
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_graph_reduce(ngx_http_agent_run_t *run,
    ngx_http_agent_channel_t *ch, ngx_http_agent_value_t *v,
    ngx_http_agent_value_t *w)
{
    ngx_uint_t             i, k;
    ngx_http_agent_msg_t  *m, *add;

    switch (ch->reducer) {

    case NGX_HTTP_AGENT_REDUCE_MESSAGES:
        if (w->messages == NULL) {
            return NGX_OK;
        }

        add = w->messages->elts;

        for (i = 0; i < w->messages->nelts; i++) {

            /* a message with the id of one already there replaces it */
            if (add[i].seq) {
                m = v->messages->elts;

                for (k = 0; k < v->messages->nelts; k++) {
                    if (m[k].seq == add[i].seq) {
                        m[k] = add[i];
                        break;
                    }
                }

                if (k < v->messages->nelts) {
                    continue;
                }
            }

            m = ngx_array_push(v->messages);
            if (m == NULL) {
                return NGX_ERROR;
            }

            *m = add[i];
        }

        return NGX_OK;

    case NGX_HTTP_AGENT_REDUCE_SUM:
        v->number += w->number;
        return NGX_OK;

    case NGX_HTTP_AGENT_REDUCE_APPEND:
        return ngx_http_agent_graph_append(run->pool, &v->json, &w->json);

    case NGX_HTTP_AGENT_REDUCE_MERGE:
        return ngx_http_agent_graph_merge(run->pool, &v->json, &w->json);

    default: /* NGX_HTTP_AGENT_REDUCE_VALUE */
        v->json = w->json;
        return NGX_OK;
    }
}


/*
 * Both texts come from our generator (compact, no spaces between tokens):
 * an array is concatenated, anything else is appended as one element.
 */

static ngx_int_t
ngx_http_agent_graph_append(ngx_pool_t *pool, ngx_str_t *old, ngx_str_t *add)
{
    u_char     *p;
    size_t      olen, alen;
    ngx_str_t   a, o;

    if (add->len == 0) {
        ngx_str_set(&a, "null");

    } else {
        a = *add;
    }

    o = *old;

    if (o.len < 2 || o.data[0] != '[') {
        ngx_str_set(&o, "[]");
    }

    olen = o.len - 1;                         /* without the "]" */

    if (a.data[0] == '[') {
        a.data++;                             /* the elements alone */
        a.len -= 2;
    }

    alen = a.len;

    if (alen == 0) {
        *old = o;
        return NGX_OK;
    }

    p = ngx_pnalloc(pool, olen + alen + 2);
    if (p == NULL) {
        return NGX_ERROR;
    }

    old->data = p;
    p = ngx_cpymem(p, o.data, olen);

    if (olen > 1) {
        *p++ = ',';
    }

    p = ngx_cpymem(p, a.data, alen);
    *p++ = ']';

    old->len = p - old->data;

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_graph_merge(ngx_pool_t *pool, ngx_str_t *old, ngx_str_t *add)
{
    size_t                  i, k;
    yajl_val                o, a;
    ngx_http_agent_json_t  *j;

    o = old->len ? ngx_http_agent_json_parse(pool, old->data, old->len, NULL)
                 : NULL;
    a = add->len ? ngx_http_agent_json_parse(pool, add->data, add->len, NULL)
                 : NULL;

    if (a == NULL || !YAJL_IS_OBJECT(a)) {
        /* not an object: it replaces the value */
        *old = *add;
        return NGX_OK;
    }

    if (o == NULL || !YAJL_IS_OBJECT(o)) {
        *old = *add;
        return NGX_OK;
    }

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);

    for (i = 0; i < o->u.object.len; i++) {
        for (k = 0; k < a->u.object.len; k++) {
            if (ngx_strcmp(o->u.object.keys[i], a->u.object.keys[k]) == 0) {
                break;
            }
        }

        if (k < a->u.object.len) {
            continue;
        }

        ngx_http_agent_json_cstr(j, o->u.object.keys[i]);
        ngx_http_agent_json_val(j, o->u.object.values[i]);
    }

    for (k = 0; k < a->u.object.len; k++) {
        ngx_http_agent_json_cstr(j, a->u.object.keys[k]);
        ngx_http_agent_json_val(j, a->u.object.values[k]);
    }

    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, old);
}


/* the turn's input is a step of its own, as LangGraph's "__input__" is */

ngx_int_t
ngx_http_agent_graph_input(ngx_http_agent_run_t *run, ngx_array_t *update)
{
    ngx_str_t                  node;
    ngx_uint_t                 i;
    ngx_http_agent_channel_t  *ch;

    run->update = update;

    /* channels of scope=turn start each turn at their defaults */

    ch = run->graph->channels.elts;

    for (i = 0; i < run->graph->channels.nelts; i++) {
        if (!ch[i].turn) {
            continue;
        }

        if (ch[i].reducer == NGX_HTTP_AGENT_REDUCE_SUM) {
            run->state[i].number = ch[i].dflt.len
                                   ? ngx_http_agent_json_number(&ch[i].dflt)
                                   : 0;

        } else if (ch[i].reducer != NGX_HTTP_AGENT_REDUCE_MESSAGES) {
            run->state[i].json = ch[i].dflt;
        }
    }

    if (ngx_http_agent_graph_apply(run, update) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_str_set(&node, "__input__");

    run->current = run->graph->entry;

    return run->handlers->checkpoint(run, &node, run->graph->entry);
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

        node = (ngx_http_agent_node_t *) run->graph->nodes.elts
               + run->current;

        run->update = ngx_http_agent_graph_update_create(run->pool);
        if (run->update == NULL) {
            ngx_http_agent_graph_finish(run, NGX_ERROR);
            return;
        }

        ngx_log_debug2(NGX_LOG_DEBUG_HTTP, run->log, 0,
                       "agent graph: step %ui node \"%V\"",
                       run->step, &node->name);

        if (run->handlers->node
            && run->handlers->node(run, node, 1) != NGX_OK)
        {
            ngx_http_agent_graph_fail(run, "client_gone", "the client went "
                                      "away");
            ngx_http_agent_graph_finish(run, NGX_ERROR);
            return;
        }

        run->visits[run->current]++;
        run->node_data = NULL;

        run->in_node = 1;
        run->async_done = 0;
        rc = node->kind->run(run, node);
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

    node = (ngx_http_agent_node_t *) run->graph->nodes.elts + run->current;

    if (rc != NGX_OK) {
        if (run->error.len == 0) {
            ngx_http_agent_graph_fail(run, "node_failed",
                                      "the step \"%V\" failed", &node->name);
        }

        ngx_http_agent_graph_finish(run, NGX_ERROR);
        return NGX_ERROR;
    }

    if ((node->count >= 0
         && ngx_http_agent_graph_write_number(run->update, node->count, 1)
            != NGX_OK)
        || ngx_http_agent_graph_apply(run, run->update) != NGX_OK)
    {
        ngx_http_agent_graph_finish(run, NGX_ERROR);
        return NGX_ERROR;
    }

    next = ngx_http_agent_graph_route(run, node);

    if (next == NGX_ERROR) {
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

    if (run->handlers->node
        && run->handlers->node(run, node, 0) != NGX_OK)
    {
        ngx_http_agent_graph_fail(run, "client_gone", "the client went away");
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


/* the first edge whose condition holds; the last edge has none */

static ngx_int_t
ngx_http_agent_graph_route(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_int_t               rc;
    ngx_uint_t              i;
    ngx_http_agent_edge_t  *e;

    e = node->edges.elts;

    for (i = 0; i < node->edges.nelts; i++) {
        if (e[i].cond == NULL) {
            return e[i].to;
        }

        rc = ngx_http_agent_expr_test(run, e[i].cond);

        if (rc == NGX_ERROR) {
            return ngx_http_agent_graph_fail(run, "bad_route", "the "
                                             "condition \"%V\" of the step "
                                             "\"%V\" could not be evaluated",
                                             &e[i].text, &node->name);
        }

        if (rc == NGX_OK) {
            return e[i].to;
        }
    }

    return ngx_http_agent_graph_fail(run, "bad_route", "the step \"%V\" "
                                     "routed to no node", &node->name);
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
        if (w[i].channel == channel && w[i].value.messages) {
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
ngx_http_agent_graph_write_number(ngx_array_t *update, ngx_uint_t channel,
    double n)
{
    ngx_http_agent_write_t  *w;

    w = ngx_array_push(update);
    if (w == NULL) {
        return NGX_ERROR;
    }

    ngx_memzero(w, sizeof(ngx_http_agent_write_t));
    w->channel = channel;
    w->value.number = n;

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


/* a channel's value as JSON text ("null" when it has none) */

ngx_int_t
ngx_http_agent_graph_value(ngx_http_agent_run_t *run, ngx_uint_t channel,
    ngx_str_t *json)
{
    u_char                    *p;
    ngx_http_agent_channel_t  *ch;

    ch = (ngx_http_agent_channel_t *) run->graph->channels.elts + channel;

    switch (ch->reducer) {

    case NGX_HTTP_AGENT_REDUCE_MESSAGES:
        json->len = run->state[channel].messages->nelts;
        json->data = NULL;
        return NGX_DECLINED;

    case NGX_HTTP_AGENT_REDUCE_SUM:
        p = ngx_pnalloc(run->pool, NGX_INT64_LEN + 32);
        if (p == NULL) {
            return NGX_ERROR;
        }

        json->data = p;
        json->len = ngx_http_agent_json_number_text(p,
                                                run->state[channel].number)
                    - p;
        return NGX_OK;

    default:
        if (run->state[channel].json.len == 0) {
            ngx_str_set(json, "null");

        } else {
            *json = run->state[channel].json;
        }

        return NGX_OK;
    }
}
