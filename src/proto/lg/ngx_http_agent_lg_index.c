
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_llm.h"


/*
 * The store's semantic index (LangGraph's "index"): with agent_embeddings,
 * an item put is embedded as a document from its index fields (the put's
 * "index": [paths], or the directive's fields=, "$" the whole value), and
 * a search's "query" as a query; the store keeps the item's vector beside
 * it and ranks by cosine similarity (docs/memory.md).  "index": false
 * keeps an item out of it.
 */


#define NGX_HTTP_AGENT_LG_INDEX_FIELDS  16
#define NGX_HTTP_AGENT_LG_INDEX_PATH    256


static ngx_int_t ngx_http_agent_lg_index_text(ngx_http_request_t *r,
    yajl_val value, ngx_str_t *fields, ngx_uint_t n, ngx_str_t *text);
static yajl_val ngx_http_agent_lg_index_path(yajl_val v, ngx_str_t *path);
static ngx_int_t ngx_http_agent_lg_index_embed(ngx_http_request_t *r,
    ngx_str_t *text, ngx_uint_t query, ngx_str_t *vector);


/*
 * an item's vector (empty: not embedded), NGX_AGAIN while the model
 * answers, or the status of an error answered
 */

ngx_int_t
ngx_http_agent_lg_index_put(ngx_http_request_t *r, yajl_val value,
    yajl_val index, ngx_str_t *vector)
{
    ngx_str_t                     text, *fields;
    ngx_uint_t                    i, n;
    ngx_http_agent_embed_conf_t  *ecf;

    ngx_str_null(vector);

    ecf = ngx_http_agent_embed_conf(r);

    if (ecf == NULL || (index && YAJL_IS_FALSE(index))) {
        return NGX_OK;
    }

    fields = ecf->fields->elts;
    n = ecf->fields->nelts;

    if (index && !YAJL_IS_NULL(index)) {
        if (!YAJL_IS_ARRAY(index) || index->u.array.len == 0
            || index->u.array.len > NGX_HTTP_AGENT_LG_INDEX_FIELDS)
        {
            return ngx_http_agent_reply_error(r, 422, "\"index\" must be "
                                              "false or a list of at most "
                                              "%d fields",
                                              NGX_HTTP_AGENT_LG_INDEX_FIELDS);
        }

        n = index->u.array.len;
        fields = ngx_palloc(r->pool, n * sizeof(ngx_str_t));
        if (fields == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        for (i = 0; i < n; i++) {
            if (!YAJL_IS_STRING(index->u.array.values[i])) {
                return ngx_http_agent_reply_error(r, 422, "\"index\" must "
                                                  "list fields as strings");
            }

            fields[i].data = (u_char *) YAJL_GET_STRING(
                                                  index->u.array.values[i]);
            fields[i].len = ngx_strlen(fields[i].data);

            if (fields[i].len == 0
                || fields[i].len > NGX_HTTP_AGENT_LG_INDEX_PATH)
            {
                return ngx_http_agent_reply_error(r, 422, "a field of "
                                                  "\"index\" is at most %d "
                                                  "bytes",
                                                  NGX_HTTP_AGENT_LG_INDEX_PATH);
            }
        }
    }

    if (ngx_http_agent_lg_index_text(r, value, fields, n, &text) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (text.len == 0) {
        /* none of its fields: nothing to find it by meaning */
        return NGX_OK;
    }

    return ngx_http_agent_lg_index_embed(r, &text, 0, vector);
}


/* a search's query as a query's vector; empty: no agent_embeddings */

ngx_int_t
ngx_http_agent_lg_index_query(ngx_http_request_t *r, ngx_str_t *query,
    ngx_str_t *vector)
{
    ngx_str_null(vector);

    if (query->len == 0 || ngx_http_agent_embed_conf(r) == NULL) {
        return NGX_OK;
    }

    return ngx_http_agent_lg_index_embed(r, query, 1, vector);
}


static ngx_int_t
ngx_http_agent_lg_index_embed(ngx_http_request_t *r, ngx_str_t *text,
    ngx_uint_t query, ngx_str_t *vector)
{
    ngx_int_t  rc;
    ngx_str_t  err;

    rc = ngx_http_agent_embed_text(r, ngx_http_agent_reply_sc(r), text,
                                   query, vector, &err);

    if (rc == NGX_OK || rc == NGX_AGAIN) {
        return rc;
    }

    if (rc == NGX_DECLINED) {
        ngx_str_null(vector);
        return NGX_OK;
    }

    return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_GATEWAY,
                                      "the embeddings model failed: %V",
                                      &err);
}


/*
 * the fields' text, one a line: a string as it is, anything else as our
 * JSON of it; a path no value has adds nothing
 */

static ngx_int_t
ngx_http_agent_lg_index_text(ngx_http_request_t *r, yajl_val value,
    ngx_str_t *fields, ngx_uint_t n, ngx_str_t *text)
{
    u_char      *p;
    size_t       len;
    yajl_val     v;
    ngx_str_t   *parts;
    ngx_uint_t   i;

    parts = ngx_pcalloc(r->pool, n * sizeof(ngx_str_t));
    if (parts == NULL) {
        return NGX_ERROR;
    }

    len = 0;

    for (i = 0; i < n; i++) {
        v = ngx_http_agent_lg_index_path(value, &fields[i]);

        if (v == NULL || YAJL_IS_NULL(v)) {
            continue;
        }

        if (YAJL_IS_STRING(v)) {
            parts[i].data = (u_char *) YAJL_GET_STRING(v);
            parts[i].len = ngx_strlen(parts[i].data);

        } else if (ngx_http_agent_json_encode(r->pool, v, &parts[i])
                   != NGX_OK)
        {
            return NGX_ERROR;
        }

        len += parts[i].len + 1;
    }

    ngx_str_null(text);

    if (len == 0) {
        return NGX_OK;
    }

    p = ngx_pnalloc(r->pool, len);
    if (p == NULL) {
        return NGX_ERROR;
    }

    text->data = p;

    for (i = 0; i < n; i++) {
        if (parts[i].len) {
            if (p != text->data) {
                *p++ = '\n';
            }

            p = ngx_cpymem(p, parts[i].data, parts[i].len);
        }
    }

    text->len = p - text->data;

    return NGX_OK;
}


/* "$" the value itself, "a.b" its key a's key b */

static yajl_val
ngx_http_agent_lg_index_path(yajl_val v, ngx_str_t *path)
{
    u_char      *p, *last, *dot;
    size_t       len;
    ngx_uint_t   i;

    if (path->len == 1 && path->data[0] == '$') {
        return v;
    }

    p = path->data;
    last = p + path->len;

    if (path->len > 2 && p[0] == '$' && p[1] == '.') {
        p += 2;
    }

    while (p < last) {
        dot = ngx_strlchr(p, last, '.');
        len = (dot ? dot : last) - p;

        if (v == NULL || !YAJL_IS_OBJECT(v)) {
            return NULL;
        }

        for (i = 0; i < v->u.object.len; i++) {
            if (ngx_strlen(v->u.object.keys[i]) == len
                && ngx_strncmp(v->u.object.keys[i], p, len) == 0)
            {
                break;
            }
        }

        if (i == v->u.object.len) {
            return NULL;
        }

        v = v->u.object.values[i];
        p += len + (dot ? 1 : 0);
    }

    return v;
}
