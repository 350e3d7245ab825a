
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"


/*
 * The LangGraph store (long-term memory across threads): items, JSON
 * objects under a namespace (a list of labels) and a key, put, got,
 * deleted and searched by namespace prefix, by what their values hold and
 * by words; their namespaces listed.  The items are the request's owner's
 * (agent_owner), kept by the store (item_put and the rest), so that every
 * worker and host sharing it sees them.
 */


#define NGX_HTTP_AGENT_LG_NS_DEPTH      16
#define NGX_HTTP_AGENT_LG_KEY_MAX       1024
#define NGX_HTTP_AGENT_LG_QUERY_MAX     1024
#define NGX_HTTP_AGENT_LG_NS_READ       10000


static ngx_int_t ngx_http_agent_lg_store_put(ngx_http_request_t *r,
    yajl_val v);
static ngx_int_t ngx_http_agent_lg_store_get(ngx_http_request_t *r);
static ngx_int_t ngx_http_agent_lg_store_delete(ngx_http_request_t *r,
    yajl_val v);
static ngx_int_t ngx_http_agent_lg_store_search(ngx_http_request_t *r,
    yajl_val v);
static ngx_int_t ngx_http_agent_lg_store_namespaces(ngx_http_request_t *r,
    yajl_val v);
static ngx_int_t ngx_http_agent_lg_store_ns(ngx_http_request_t *r,
    yajl_val v, const char *name, ngx_uint_t empty, ngx_str_t *ns);
static ngx_int_t ngx_http_agent_lg_store_key(ngx_http_request_t *r,
    yajl_val v, ngx_str_t *key);
static ngx_int_t ngx_http_agent_lg_store_page(ngx_http_request_t *r,
    yajl_val v, ngx_uint_t dflt, ngx_http_agent_item_query_t *q);
static void ngx_http_agent_lg_store_labels(ngx_http_agent_json_t *j,
    ngx_str_t *ns);
static ngx_str_t *ngx_http_agent_lg_store_owner(ngx_http_request_t *r);
static void ngx_http_agent_lg_store_item(ngx_http_agent_json_t *j,
    ngx_http_agent_item_t *item, ngx_uint_t score);


ngx_int_t
ngx_http_agent_lg_store(ngx_http_request_t *r, ngx_http_agent_lg_req_t *req,
    ngx_str_t *body)
{
    yajl_val   v;
    ngx_int_t  rc;

    if (r->method == NGX_HTTP_GET) {
        return ngx_http_agent_lg_store_get(r);
    }

    rc = ngx_http_agent_reply_parse(r, body, &v,
                                    req->route != NGX_HTTP_AGENT_LG_STORE);
    if (rc != NGX_OK) {
        return rc;
    }

    switch (req->route) {

    case NGX_HTTP_AGENT_LG_STORE_SEARCH:
        return ngx_http_agent_lg_store_search(r, v);

    case NGX_HTTP_AGENT_LG_STORE_NAMESPACES:
        return ngx_http_agent_lg_store_namespaces(r, v);

    default:
        return r->method == NGX_HTTP_PUT ? ngx_http_agent_lg_store_put(r, v)
                                         : ngx_http_agent_lg_store_delete(r, v);
    }
}


/* PUT /store/items {namespace, key, value, index, ttl}: 204 */

static ngx_int_t
ngx_http_agent_lg_store_put(ngx_http_request_t *r, yajl_val v)
{
    u_char                 *p;
    yajl_val                value, index, ttl;
    ngx_int_t               rc;
    ngx_http_agent_ctx_t   *ctx;
    ngx_http_agent_item_t   item;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    ngx_memzero(&item, sizeof(ngx_http_agent_item_t));

    rc = ngx_http_agent_lg_store_ns(r, v, "namespace", 0, &item.ns);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_lg_store_key(r, v, &item.key);
    if (rc != NGX_OK) {
        return rc;
    }

    value = ngx_http_agent_json_get(v, "value");

    if (value == NULL || !YAJL_IS_OBJECT(value)) {
        return ngx_http_agent_reply_error(r, 422, "\"value\" must be a JSON "
                                          "object");
    }

    /* ours, compact: what the store keeps and what a query finds */

    if (ngx_http_agent_json_encode(r->pool, value, &item.value) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    index = ngx_http_agent_json_get(v, "index");

    if (index == NULL || !YAJL_IS_FALSE(index)) {
        ngx_http_agent_store_item_text(&item);
    }

    /* by meaning too, with agent_embeddings: the model's vector of it */
    rc = ngx_http_agent_lg_index_put(r, value, index, &item.vector);
    if (rc != NGX_OK) {
        return rc;
    }

    ttl = ngx_http_agent_json_get(v, "ttl");

    if (ttl && !YAJL_IS_NULL(ttl)) {
        if (!YAJL_IS_NUMBER(ttl) || YAJL_GET_DOUBLE(ttl) <= 0
            || YAJL_GET_DOUBLE(ttl) > 525600.0 * 100)
        {
            return ngx_http_agent_reply_error(r, 422, "\"ttl\" is minutes, "
                                              "more than 0, or null");
        }

        item.expires = ngx_time() + (int64_t) (YAJL_GET_DOUBLE(ttl) * 60);
    }

    if (ctx->owner) {
        item.owner = *ctx->owner;
    }

    p = ngx_pnalloc(r->pool, 32);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    item.updated_at.data = p;
    item.updated_at.len = ngx_http_agent_store_now(p) - p;

    rc = ngx_http_agent_store_item_put(ngx_http_agent_reply_sc(r), &item,
                                       ngx_time());
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_reply_send(r, NGX_HTTP_NO_CONTENT, NULL);
}


/* GET /store/items?namespace=a.b&key=k: the item, or null */

static ngx_int_t
ngx_http_agent_lg_store_get(ngx_http_request_t *r)
{
    u_char                 *dst, *src;
    ngx_int_t               rc;
    ngx_str_t               arg, ns, key;
    ngx_uint_t              i;
    ngx_http_agent_json_t  *j;
    ngx_http_agent_item_t   item;

    ngx_str_null(&ns);
    ngx_str_null(&key);

    for (i = 0; i < 2; i++) {
        if (ngx_http_arg(r, (u_char *) (i ? "key" : "namespace"),
                         i ? 3 : 9, &arg)
            != NGX_OK || arg.len == 0 || arg.len > NGX_HTTP_AGENT_LG_KEY_MAX)
        {
            return ngx_http_agent_reply_error(r, 422, "\"namespace\" and "
                                              "\"key\" are required");
        }

        dst = ngx_pnalloc(r->pool, arg.len);
        if (dst == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        src = arg.data;
        arg.data = dst;
        ngx_unescape_uri(&dst, &src, arg.len, NGX_UNESCAPE_URI);
        arg.len = dst - arg.data;

        if (i) {
            key = arg;

        } else {
            ns = arg;
        }
    }

    rc = ngx_http_agent_store_item_get(ngx_http_agent_reply_sc(r),
                                       ngx_http_agent_lg_store_owner(r), &ns,
                                       &key, ngx_time(), &item);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL || (rc != NGX_OK && rc != NGX_DECLINED)) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (rc == NGX_DECLINED) {
        /* as LangGraph's servers: none is null, the SDK's getItem's too */
        ngx_http_agent_json_null(j);

    } else {
        ngx_http_agent_lg_store_item(j, &item, 0);
    }

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/* DELETE /store/items {namespace, key}: 204, there or not */

static ngx_int_t
ngx_http_agent_lg_store_delete(ngx_http_request_t *r, yajl_val v)
{
    ngx_int_t  rc;
    ngx_str_t  ns, key;

    rc = ngx_http_agent_lg_store_ns(r, v, "namespace", 0, &ns);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_lg_store_key(r, v, &key);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_store_item_delete(ngx_http_agent_reply_sc(r),
                                          ngx_http_agent_lg_store_owner(r),
                                          &ns, &key);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_reply_send(r, NGX_HTTP_NO_CONTENT, NULL);
}


/*
 * POST /store/items/search {namespace_prefix, filter, query, limit,
 * offset}: {"items": [...]}, with a query each item's "score"
 */

static ngx_int_t
ngx_http_agent_lg_store_search(ngx_http_request_t *r, yajl_val v)
{
    yajl_val                      filter;
    ngx_int_t                     rc;
    ngx_uint_t                    i;
    ngx_array_t                  *items;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_item_t        *item;
    ngx_http_agent_item_query_t   q;

    rc = ngx_http_agent_lg_store_page(r, v, 10, &q);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_lg_store_ns(r, v, "namespace_prefix", 1, &q.prefix);
    if (rc != NGX_OK) {
        return rc;
    }

    filter = v ? ngx_http_agent_json_get(v, "filter") : NULL;

    if (filter && !YAJL_IS_NULL(filter)) {
        if (!YAJL_IS_OBJECT(filter)) {
            return ngx_http_agent_reply_error(r, 422, "\"filter\" must be a "
                                              "JSON object");
        }

        if (filter->u.object.len
            && ngx_http_agent_json_encode(r->pool, filter, &q.filter)
               != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    rc = v ? ngx_http_agent_json_get_str(v, "query", &q.query) : NGX_DECLINED;

    if (rc == NGX_ERROR || q.query.len > NGX_HTTP_AGENT_LG_QUERY_MAX) {
        return ngx_http_agent_reply_error(r, 422, "\"query\" must be a "
                                          "string of at most %d bytes",
                                          NGX_HTTP_AGENT_LG_QUERY_MAX);
    }

    /* with agent_embeddings, by meaning: the query's vector first */
    rc = ngx_http_agent_lg_index_query(r, &q.query, &q.vector);
    if (rc != NGX_OK) {
        return rc;
    }

    items = ngx_array_create(r->pool, 8, sizeof(ngx_http_agent_item_t));
    if (items == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_agent_store_item_search(ngx_http_agent_reply_sc(r), &q,
                                          items);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL || rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_key(j, "items");
    ngx_http_agent_json_arr(j);

    item = items->elts;

    for (i = 0; i < items->nelts; i++) {
        ngx_http_agent_lg_store_item(j, &item[i], q.query.len != 0);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/*
 * POST /store/namespaces {prefix, suffix, max_depth, limit, offset}:
 * {"namespaces": [[labels], ...]}, each once, cut at max_depth labels
 */

static ngx_int_t
ngx_http_agent_lg_store_namespaces(ngx_http_request_t *r, yajl_val v)
{
    u_char                       *p, *last;
    yajl_val                      depth;
    ngx_int_t                     rc;
    ngx_str_t                    *ns, cut, prev;
    ngx_uint_t                    i, max, n, limit, labels;
    ngx_array_t                  *all;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_item_query_t   q;

    rc = ngx_http_agent_lg_store_page(r, v, 100, &q);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_lg_store_ns(r, v, "prefix", 1, &q.prefix);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_lg_store_ns(r, v, "suffix", 1, &q.suffix);
    if (rc != NGX_OK) {
        return rc;
    }

    depth = v ? ngx_http_agent_json_get(v, "max_depth") : NULL;
    max = 0;

    if (depth && !YAJL_IS_NULL(depth)) {
        if (!YAJL_IS_INTEGER(depth) || YAJL_GET_INTEGER(depth) < 1) {
            return ngx_http_agent_reply_error(r, 422, "\"max_depth\" must be "
                                              "a number of labels, 1 or "
                                              "more");
        }

        max = (ngx_uint_t) ngx_min(YAJL_GET_INTEGER(depth),
                                   NGX_HTTP_AGENT_LG_NS_DEPTH);
    }

    /* the store lists them in order; cut, each once, then the page */

    limit = q.limit;
    q.limit = NGX_HTTP_AGENT_LG_NS_READ;

    all = ngx_array_create(r->pool, 8, sizeof(ngx_str_t));
    if (all == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_agent_store_item_namespaces(ngx_http_agent_reply_sc(r), &q,
                                              all);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL || rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_key(j, "namespaces");
    ngx_http_agent_json_arr(j);

    ns = all->elts;
    ngx_str_null(&prev);
    n = 0;

    for (i = 0; i < all->nelts && n < q.offset + limit; i++) {
        cut = ns[i];

        if (max) {
            last = cut.data + cut.len;
            labels = 1;

            for (p = cut.data; p < last; p++) {
                if (*p == '.' && labels++ == max) {
                    cut.len = p - cut.data;
                    break;
                }
            }
        }

        /* "a.b" cut from "a.b.c" after "a.b" itself: once */
        if (prev.data && prev.len == cut.len
            && ngx_strncmp(prev.data, cut.data, cut.len) == 0)
        {
            continue;
        }

        prev = cut;

        if (n++ < q.offset) {
            continue;
        }

        ngx_http_agent_lg_store_labels(j, &cut);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/*
 * a namespace: a list of labels, each a non-empty string without "."
 * (LangGraph's rule: the store joins them with it); empty: none or []
 */

static ngx_int_t
ngx_http_agent_lg_store_ns(ngx_http_request_t *r, yajl_val v,
    const char *name, ngx_uint_t empty, ngx_str_t *ns)
{
    u_char    *p;
    size_t     len;
    yajl_val   a, label;
    ngx_uint_t i;

    ngx_str_null(ns);

    a = v ? ngx_http_agent_json_get(v, name) : NULL;

    if (a == NULL || YAJL_IS_NULL(a)) {
        if (empty) {
            return NGX_OK;
        }

        goto invalid;
    }

    if (!YAJL_IS_ARRAY(a) || a->u.array.len > NGX_HTTP_AGENT_LG_NS_DEPTH
        || (a->u.array.len == 0 && !empty))
    {
        goto invalid;
    }

    len = 0;

    for (i = 0; i < a->u.array.len; i++) {
        label = a->u.array.values[i];

        if (!YAJL_IS_STRING(label) || label->u.string[0] == '\0'
            || ngx_strchr(label->u.string, '.') != NULL)
        {
            goto invalid;
        }

        len += ngx_strlen(label->u.string) + 1;
    }

    if (len > NGX_HTTP_AGENT_LG_KEY_MAX) {
        goto invalid;
    }

    if (len == 0) {
        return NGX_OK;
    }

    p = ngx_pnalloc(r->pool, len);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ns->data = p;

    for (i = 0; i < a->u.array.len; i++) {
        if (i) {
            *p++ = '.';
        }

        p = ngx_cpymem(p, a->u.array.values[i]->u.string,
                       ngx_strlen(a->u.array.values[i]->u.string));
    }

    ns->len = p - ns->data;

    return NGX_OK;

invalid:

    return ngx_http_agent_reply_error(r, 422, "\"%s\" must be a list of 1 to "
                                      "%d labels, each a string without "
                                      "\".\"", name,
                                      NGX_HTTP_AGENT_LG_NS_DEPTH);
}


static ngx_int_t
ngx_http_agent_lg_store_key(ngx_http_request_t *r, yajl_val v,
    ngx_str_t *key)
{
    if (ngx_http_agent_json_get_str(v, "key", key) != NGX_OK
        || key->len == 0 || key->len > NGX_HTTP_AGENT_LG_KEY_MAX)
    {
        return ngx_http_agent_reply_error(r, 422, "\"key\" must be a string "
                                          "of 1 to %d bytes",
                                          NGX_HTTP_AGENT_LG_KEY_MAX);
    }

    return NGX_OK;
}


/* limit (dflt, at most 1000) and offset; the owner and the time */

static ngx_int_t
ngx_http_agent_lg_store_page(ngx_http_request_t *r, yajl_val v,
    ngx_uint_t dflt, ngx_http_agent_item_query_t *q)
{
    ngx_uint_t             i;
    yajl_val               n;
    ngx_http_agent_ctx_t  *ctx;

    static const char  *names[] = { "limit", "offset" };

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    ngx_memzero(q, sizeof(ngx_http_agent_item_query_t));

    q->limit = dflt;
    q->now = ngx_time();

    if (ctx->owner) {
        q->owner = *ctx->owner;
    }

    for (i = 0; i < 2; i++) {
        n = v ? ngx_http_agent_json_get(v, names[i]) : NULL;

        if (n == NULL || YAJL_IS_NULL(n)) {
            continue;
        }

        if (!YAJL_IS_INTEGER(n) || YAJL_GET_INTEGER(n) < (i ? 0 : 1)
            || YAJL_GET_INTEGER(n) > (i ? 1000000 : 1000))
        {
            return ngx_http_agent_reply_error(r, 422, "\"%s\" must be a "
                                              "number, %s", names[i],
                                              i ? "0 to 1000000"
                                                : "1 to 1000");
        }

        if (i) {
            q->offset = (ngx_uint_t) YAJL_GET_INTEGER(n);

        } else {
            q->limit = (ngx_uint_t) YAJL_GET_INTEGER(n);
        }
    }

    return NGX_OK;
}


/* "a.b" as ["a", "b"] */

static void
ngx_http_agent_lg_store_labels(ngx_http_agent_json_t *j, ngx_str_t *ns)
{
    u_char     *p, *s, *last;
    ngx_str_t   label;

    ngx_http_agent_json_arr(j);

    last = ns->data + ns->len;

    for (s = ns->data, p = s; p <= last; p++) {
        if (p == last || *p == '.') {
            label.data = s;
            label.len = p - s;
            ngx_http_agent_json_str(j, &label);
            s = p + 1;
        }
    }

    ngx_http_agent_json_arr_end(j);
}


static void
ngx_http_agent_lg_store_item(ngx_http_agent_json_t *j,
    ngx_http_agent_item_t *item, ngx_uint_t score)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "namespace");
    ngx_http_agent_lg_store_labels(j, &item->ns);
    ngx_http_agent_json_key(j, "key");
    ngx_http_agent_json_str(j, &item->key);
    ngx_http_agent_json_key(j, "value");
    ngx_http_agent_json_raw(j, &item->value);
    ngx_http_agent_json_key(j, "created_at");
    ngx_http_agent_json_str(j, &item->created_at);
    ngx_http_agent_json_key(j, "updated_at");
    ngx_http_agent_json_str(j, &item->updated_at);

    if (score) {
        ngx_http_agent_json_key(j, "score");
        ngx_http_agent_json_double(j, item->score);
    }

    ngx_http_agent_json_end(j);
}


/* the request's owner (agent_owner), an empty string for none */

static ngx_str_t *
ngx_http_agent_lg_store_owner(ngx_http_request_t *r)
{
    ngx_http_agent_ctx_t  *ctx;

    static ngx_str_t  none = ngx_string("");

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    return ctx->owner ? ctx->owner : &none;
}
