
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"


/*
 * The LangGraph store's items on PostgreSQL (sqlite_items.c for SQLite):
 * a row each (owner, namespace, key; '' is no owner), their text found by
 * words through a GIN index of its tsvector.  A put is one statement, the
 * expired items it takes away with it.
 */


static ngx_int_t ngx_http_agent_pg_items_query(ngx_str_t *query);
static ngx_int_t ngx_http_agent_pg_items_ns(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);


/* a query of blanks only is none, as on SQLite */

static ngx_int_t
ngx_http_agent_pg_items_query(ngx_str_t *query)
{
    u_char  *p, *last;

    last = query->data + query->len;

    for (p = query->data; p < last; p++) {
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            return NGX_OK;
        }
    }

    return NGX_DECLINED;
}


static ngx_int_t
ngx_http_agent_pg_items_ns(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    int           i;
    ngx_str_t    *ns;
    ngx_pool_t   *pool;
    ngx_array_t  *namespaces;

    pool = q->sc->pool;

    if (ngx_http_agent_pg_new_rows(q, a, sizeof(ngx_str_t), &namespaces)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    for (i = 0; i < PQntuples(res); i++) {
        ns = ngx_array_push(namespaces);
        if (ns == NULL) {
            return NGX_ERROR;
        }

        if (ngx_http_agent_pg_str(pool, res, i, 0, ns) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_pg_item_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_t *item, int64_t now, ngx_uint_t quota_items,
    size_t quota_size)
{
    int64_t                      items, size;
    ngx_http_agent_pg_query_t   *q;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, item_put, &item->ns, &item->key);

    if (a) {
        /* no row written: the owner's quota is full */
        return a->rc == NGX_DECLINED ? NGX_BUSY : a->rc;
    }

    /* -1: no quota, and its sums are not made */
    items = (quota_items || quota_size)
            ? (quota_items ? (int64_t) quota_items : INT64_MAX) : -1;
    size = quota_size ? (int64_t) quota_size : INT64_MAX;

    q = ngx_http_agent_pg_query(sc, NGX_HTTP_AGENT_PG_ITEM_PUT,
                                ngx_http_agent_pg_changed);
    if (q == NULL) {
        return NGX_ERROR;
    }

    if (ngx_http_agent_pg_param(q, &item->owner) != NGX_OK
        || ngx_http_agent_pg_param(q, &item->ns) != NGX_OK
        || ngx_http_agent_pg_param(q, &item->key) != NGX_OK
        || ngx_http_agent_pg_param(q, &item->value) != NGX_OK
        || ngx_http_agent_pg_param(q, &item->text) != NGX_OK
        || ngx_http_agent_pg_param(q, &item->updated_at) != NGX_OK
        || ngx_http_agent_pg_param_int(q, item->expires) != NGX_OK
        || ngx_http_agent_pg_param_int(q, now) != NGX_OK
        || ngx_http_agent_pg_param_int(q, items) != NGX_OK
        || ngx_http_agent_pg_param_int(q, size) != NGX_OK
        || (item->vector.len
            ? ngx_http_agent_pg_param_bytes(q, item->vector.data,
                                            item->vector.len)
            : ngx_http_agent_pg_param(q, NULL)) != NGX_OK)
    {
        ngx_destroy_pool(q->pool);
        return NGX_ERROR;
    }

    return ngx_http_agent_pg_send(q, 0);
}


ngx_int_t
ngx_http_agent_pg_item_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *ns, ngx_str_t *key, int64_t now,
    ngx_http_agent_item_t *item)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, item_get, ns, key);

    if (a) {
        return ngx_http_agent_pg_answered_row(a, item);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_ITEM_GET,
                                 ngx_http_agent_pg_read, "sssi", owner,
                                 ns, key, now);
}


ngx_int_t
ngx_http_agent_pg_item_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *ns, ngx_str_t *key)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, item_delete, ns, key);

    if (a) {
        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_ITEM_DELETE,
                                 ngx_http_agent_pg_changed, "sss", owner,
                                 ns, key);
}


ngx_int_t
ngx_http_agent_pg_item_search(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q, ngx_array_t *items)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, item_search, &q->prefix, &q->query);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, items);
    }

    if (q->vector.len) {
        return ngx_http_agent_pg_near(sc, q);
    }

    if (ngx_http_agent_pg_items_query(&q->query) == NGX_OK) {
        return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_ITEM_QUERY,
                                     ngx_http_agent_pg_read,
                                     "sniniis", &q->owner, &q->prefix,
                                     q->now, &q->filter, (int64_t) q->limit,
                                     (int64_t) q->offset, &q->query);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_ITEM_SEARCH,
                                 ngx_http_agent_pg_read, "sninii", &q->owner,
                                 &q->prefix, q->now, &q->filter,
                                 (int64_t) q->limit, (int64_t) q->offset);
}


ngx_int_t
ngx_http_agent_pg_item_namespaces(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q, ngx_array_t *namespaces)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, item_namespaces, &q->prefix, &q->suffix);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, namespaces);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_ITEM_NAMESPACES,
                                 ngx_http_agent_pg_items_ns, "snini",
                                 &q->owner, &q->prefix, q->now, &q->suffix,
                                 (int64_t) q->limit);
}
