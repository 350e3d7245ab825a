
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


static ngx_int_t ngx_http_agent_lg_index_embed(ngx_http_request_t *r,
    ngx_int_t rc, ngx_str_t *err);


/*
 * an item's vector (empty: not embedded), NGX_AGAIN while the model
 * answers, or the status of an error answered
 */

ngx_int_t
ngx_http_agent_lg_index_put(ngx_http_request_t *r, yajl_val value,
    yajl_val index, ngx_str_t *vector)
{
    ngx_int_t    rc;
    ngx_str_t    err, *fields;
    ngx_uint_t   i, n;

    ngx_str_null(vector);

    if (ngx_http_agent_embed_conf(r) == NULL
        || (index && YAJL_IS_FALSE(index)))
    {
        return NGX_OK;
    }

    fields = NULL;
    n = 0;

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

    rc = ngx_http_agent_embed_item(r, ngx_http_agent_reply_sc(r), value,
                                   fields, n, vector, &err);

    return ngx_http_agent_lg_index_embed(r, rc, &err);
}


/* a search's query as a query's vector; empty: no agent_embeddings */

ngx_int_t
ngx_http_agent_lg_index_query(ngx_http_request_t *r, ngx_str_t *query,
    ngx_str_t *vector)
{
    ngx_int_t  rc;
    ngx_str_t  err;

    ngx_str_null(vector);

    if (query->len == 0 || ngx_http_agent_embed_conf(r) == NULL) {
        return NGX_OK;
    }

    rc = ngx_http_agent_embed_text(r, ngx_http_agent_reply_sc(r), query, 1,
                                   vector, &err);

    return ngx_http_agent_lg_index_embed(r, rc, &err);
}


/* the embedding's NGX_OK or NGX_AGAIN, or the request's error answered */

static ngx_int_t
ngx_http_agent_lg_index_embed(ngx_http_request_t *r, ngx_int_t rc,
    ngx_str_t *err)
{
    if (rc != NGX_ERROR) {
        return rc == NGX_DECLINED ? NGX_OK : rc;
    }

    return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_GATEWAY,
                                      "the embeddings model failed: %V",
                                      err);
}
