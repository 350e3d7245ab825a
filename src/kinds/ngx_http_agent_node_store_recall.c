
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_kinds_int.h"


/*
 * The store node's recall (op=recall): what it looks for, and what it
 * found written for the graph, a list and lines for a prompt; the
 * search itself is the store's (node_store.c's pass).
 */


static ngx_int_t ngx_http_agent_node_store_lines(ngx_http_agent_run_t *run,
    ngx_array_t *items, ngx_str_t *json);


/* recall's own parameters, and only recall's */

ngx_int_t
ngx_http_agent_node_store_recall_check(ngx_conf_t *cf,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_store_conf_t *sc = node->conf;

    if (sc->op != NGX_HTTP_AGENT_STORE_RECALL) {
        if (sc->k || sc->min_score || sc->from_name.len
            || sc->text_name.len)
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the store node \"%V\":"
                               " k=, min_score=, from= and text= are "
                               "recall's", &node->name);
            return NGX_ERROR;
        }

        return NGX_OK;
    }

    if (sc->query.len || sc->limit || sc->key.len || sc->value.len
        || sc->index || sc->ttl)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the store node \"%V\": "
                           "recall takes namespace=, from=, k=, min_score=, "
                           "output= and text= (no query=, limit=, key=, "
                           "value=, index= or ttl=)", &node->name);
        return NGX_ERROR;
    }

    if (sc->output < 0 && sc->text < 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the store node \"%V\" "
                           "needs output=CHANNEL or text=CHANNEL to recall",
                           &node->name);
        return NGX_ERROR;
    }

    if (sc->k == 0) {
        sc->k = 5;
    }

    if (sc->from < 0) {
        sc->from = NGX_HTTP_AGENT_CH_INPUT;
    }

    return NGX_OK;
}


/* min_score=S: a cosine similarity from 0 to 1, kept in thousandths */

char *
ngx_http_agent_node_store_recall_score(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf)
{
    ngx_int_t  n;

    n = ngx_atofp(value->data, value->len, 3);

    if (n == NGX_ERROR || n > 1000) {
        return "a score from 0 to 1, such as 0.35";
    }

    *(ngx_int_t *) ((char *) conf + p->offset) = n;

    return NGX_CONF_OK;
}


/* what recall looks for: from='s text (a string as it is), its start */

ngx_int_t
ngx_http_agent_node_store_recall_about(ngx_http_agent_run_t *run,
    ngx_http_agent_node_store_ctx_t *ctx)
{
    ngx_http_agent_node_store_conf_t *sc = ctx->node->conf;

    size_t     len;
    yajl_val   v;
    ngx_str_t  json;

    if (ngx_http_agent_graph_value(run, sc->from, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    v = ngx_http_agent_json_parse(run->pool, json.data, json.len, NULL);

    if (v && YAJL_IS_STRING(v)) {
        ctx->about.data = (u_char *) YAJL_GET_STRING(v);
        ctx->about.len = ngx_strlen(ctx->about.data);

    } else if (v && !YAJL_IS_NULL(v)) {
        ctx->about = json;
    }

    len = ctx->about.len;

    if (len > NGX_HTTP_AGENT_STORE_RECALL_MAX) {
        len = NGX_HTTP_AGENT_STORE_RECALL_MAX;

        /* where a character starts */
        while (len && (ctx->about.data[len] & 0xc0) == 0x80) {
            len--;
        }
    }

    ctx->about.len = len;

    return NGX_OK;
}


/* the items found at min_score or above: output='s list, text='s lines */

ngx_int_t
ngx_http_agent_node_store_recall_write(
    ngx_http_agent_node_store_ctx_t *ctx, ngx_array_t *items)
{
    ngx_http_agent_node_store_conf_t *sc = ctx->node->conf;

    ngx_str_t               json;
    ngx_uint_t              n;
    ngx_http_agent_run_t   *run;
    ngx_http_agent_item_t  *item;

    run = ctx->run;
    item = items->elts;

    /* the best first: those after the first below the minimum are too */

    for (n = 0; n < items->nelts; n++) {
        if (item[n].score * 1000 < (double) sc->min_score) {
            break;
        }
    }

    items->nelts = n;

    if (sc->output >= 0
        && (ngx_http_agent_node_store_items(run, items, &json) != NGX_OK
            || ngx_http_agent_graph_write_value(run->update, sc->output,
                                                &json) != NGX_OK))
    {
        return NGX_ERROR;
    }

    if (sc->text >= 0
        && (ngx_http_agent_node_store_lines(run, items, &json) != NGX_OK
            || ngx_http_agent_graph_write_value(run->update, sc->text,
                                                &json) != NGX_OK))
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* [{"namespace": "a.b", "key", "value", "score"}, ...] */

ngx_int_t
ngx_http_agent_node_store_items(ngx_http_agent_run_t *run,
    ngx_array_t *items, ngx_str_t *json)
{
    ngx_uint_t              i;
    ngx_http_agent_json_t  *j;
    ngx_http_agent_item_t  *item;

    j = ngx_http_agent_json_create(run->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    item = items->elts;

    ngx_http_agent_json_arr(j);

    for (i = 0; i < items->nelts; i++) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "namespace");
        ngx_http_agent_json_str(j, &item[i].ns);
        ngx_http_agent_json_key(j, "key");
        ngx_http_agent_json_str(j, &item[i].key);
        ngx_http_agent_json_key(j, "value");
        ngx_http_agent_json_raw(j, &item[i].value);
        ngx_http_agent_json_key(j, "score");
        ngx_http_agent_json_double(j, item[i].score);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);

    return ngx_http_agent_json_done(j, json);
}


/*
 * "- a; b" a line per item: its value's strings joined (a line break in
 * one a space), or its JSON when it has none; one JSON string, for a
 * prompt's {{channel}}
 */

static ngx_int_t
ngx_http_agent_node_store_lines(ngx_http_agent_run_t *run,
    ngx_array_t *items, ngx_str_t *json)
{
    u_char                 *p, *last;
    size_t                  len;
    yajl_val                v, m;
    ngx_str_t               text, s;
    ngx_uint_t              i, k, strings;
    ngx_http_agent_item_t  *item;

    item = items->elts;
    len = 0;

    for (i = 0; i < items->nelts; i++) {
        len += sizeof("- \n") - 1 + item[i].value.len;
    }

    text.data = ngx_pnalloc(run->pool, len + 1);
    if (text.data == NULL) {
        return NGX_ERROR;
    }

    p = text.data;

    for (i = 0; i < items->nelts; i++) {
        v = ngx_http_agent_json_parse(run->pool, item[i].value.data,
                                      item[i].value.len, NULL);
        if (v == NULL) {
            return NGX_ERROR;
        }

        if (i) {
            *p++ = '\n';
        }

        *p++ = '-';
        strings = 0;

        for (k = 0; YAJL_IS_OBJECT(v) && k < v->u.object.len; k++) {
            m = v->u.object.values[k];

            if (!YAJL_IS_STRING(m)) {
                continue;
            }

            /* "; " and its bytes: fewer than its member's JSON */
            s.data = (u_char *) YAJL_GET_STRING(m);
            s.len = ngx_strlen(s.data);

            if (strings++) {
                *p++ = ';';
            }

            *p++ = ' ';

            for (last = s.data + s.len; s.data < last; s.data++) {
                *p++ = (*s.data == '\n' || *s.data == '\r') ? ' ' : *s.data;
            }
        }

        if (strings == 0) {
            *p++ = ' ';
            p = ngx_cpymem(p, item[i].value.data, item[i].value.len);
        }
    }

    text.len = p - text.data;

    return ngx_http_agent_json_quote(run->pool, &text, json);
}
