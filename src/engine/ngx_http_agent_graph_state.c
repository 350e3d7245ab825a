
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_util.h"


/*
 * The channels of a run: the reducers that apply a step's update, the
 * writes that nodes make into an update, and the values they read.
 */


static ngx_int_t ngx_http_agent_graph_reduce(ngx_http_agent_run_t *run,
    ngx_http_agent_channel_t *ch, ngx_http_agent_value_t *v,
    ngx_http_agent_value_t *w);
static ngx_int_t ngx_http_agent_graph_append(ngx_pool_t *pool, ngx_str_t *old,
    ngx_str_t *add);
static ngx_int_t ngx_http_agent_graph_merge(ngx_pool_t *pool, ngx_str_t *old,
    ngx_str_t *add);


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
    ngx_uint_t             i, k, base;
    ngx_http_agent_msg_t  *m, *add;

    switch (ch->reducer) {

    case NGX_HTTP_AGENT_REDUCE_MESSAGES:
        if (w->messages == NULL) {
            return NGX_OK;
        }

        add = w->messages->elts;
        base = v->messages->nelts;

        for (i = 0; i < w->messages->nelts; i++) {

            /* a message with the id of one already there replaces it */
            if (add[i].replace && add[i].seq >= 0
                && (ngx_uint_t) add[i].seq < v->messages->nelts)
            {
                m = v->messages->elts;
                k = (ngx_uint_t) add[i].seq;

                m[k] = add[i];
                m[k].replace = 0;
                m[k].replaced = 1;
                continue;
            }

            /*
             * a client's id: the message with that id, replaced; only one
             * there before this write (a save writes rows it appended)
             */
            if (!add[i].replace && add[i].id.len) {
                m = v->messages->elts;

                for (k = 0; k < base; k++) {
                    if (m[k].id.len == add[i].id.len
                        && ngx_strncmp(m[k].id.data, add[i].id.data,
                                       add[i].id.len) == 0)
                    {
                        break;
                    }
                }

                if (k < base) {
                    /* the update says so to its save, as for our ids */
                    add[i].replace = 1;
                    add[i].seq = k;

                    m[k] = add[i];
                    m[k].replace = 0;
                    m[k].replaced = 1;
                    continue;
                }
            }

            /* no such message: appended (the update says so to its save) */
            add[i].replace = 0;

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

    ngx_http_agent_json_merge(j, o, a);

    return ngx_http_agent_json_done(j, old);
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
