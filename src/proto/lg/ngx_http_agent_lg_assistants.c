
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_store_run.h"


/*
 * The assistants' endpoints (lg_assistant.c finds, shows and searches
 * them).  An assistant a client makes over one of the location's graphs,
 * and its versions: created, updated (each update a new version, the latest),
 * one made the latest again, deleted; its versions listed.  The store
 * keeps them for their owner (assistant_put and the rest).
 */


static ngx_int_t ngx_http_agent_lg_assistant_create(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, yajl_val v);
static ngx_int_t ngx_http_agent_lg_assistant_update(ngx_http_request_t *r,
    ngx_str_t *id, yajl_val v);
static ngx_int_t ngx_http_agent_lg_assistant_delete(ngx_http_request_t *r,
    ngx_str_t *id);
static ngx_int_t ngx_http_agent_lg_assistant_versions(ngx_http_request_t *r,
    ngx_str_t *id, yajl_val v);
static ngx_int_t ngx_http_agent_lg_assistant_latest(ngx_http_request_t *r,
    ngx_str_t *id, yajl_val v);
static ngx_int_t ngx_http_agent_lg_assistant_threads(ngx_http_request_t *r,
    ngx_str_t *id);
static ngx_int_t ngx_http_agent_lg_assistant_doc(ngx_http_request_t *r,
    ngx_http_agent_assistant_row_t *row, yajl_val v, yajl_val old);


/* the assistants' endpoints */

ngx_int_t
ngx_http_agent_lg_assistants(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body)
{
    yajl_val    v;
    ngx_int_t   rc;
    ngx_uint_t  optional;

    if (req->route == NGX_HTTP_AGENT_LG_ASSISTANT
        && r->method == NGX_HTTP_GET)
    {
        return ngx_http_agent_lg_assistant_get(r, &req->id);
    }

    if (req->route == NGX_HTTP_AGENT_LG_ASSISTANT_GRAPH) {
        return ngx_http_agent_lg_assistant_graph(r, &req->id);
    }

    if (req->route == NGX_HTTP_AGENT_LG_ASSISTANT_SCHEMAS) {
        return ngx_http_agent_lg_assistant_schemas(r, &req->id, 0);
    }

    if (req->route == NGX_HTTP_AGENT_LG_ASSISTANT_SUBGRAPHS) {
        return ngx_http_agent_lg_assistant_schemas(r, &req->id, 1);
    }

    if (req->route == NGX_HTTP_AGENT_LG_ASSISTANT
        && r->method == NGX_HTTP_DELETE)
    {
        return ngx_http_agent_lg_assistant_delete(r, &req->id);
    }

    optional = (req->route == NGX_HTTP_AGENT_LG_ASSISTANTS_SEARCH
                || req->route == NGX_HTTP_AGENT_LG_ASSISTANTS_COUNT
                || req->route == NGX_HTTP_AGENT_LG_ASSISTANT_VERSIONS);

    rc = ngx_http_agent_reply_parse(r, body, &v, optional);
    if (rc != NGX_OK) {
        return rc;
    }

    switch (req->route) {

    case NGX_HTTP_AGENT_LG_ASSISTANTS:
        return ngx_http_agent_lg_assistant_create(r, req, v);

    case NGX_HTTP_AGENT_LG_ASSISTANT:
        return ngx_http_agent_lg_assistant_update(r, &req->id, v);

    case NGX_HTTP_AGENT_LG_ASSISTANT_VERSIONS:
        return ngx_http_agent_lg_assistant_versions(r, &req->id, v);

    case NGX_HTTP_AGENT_LG_ASSISTANT_LATEST:
        return ngx_http_agent_lg_assistant_latest(r, &req->id, v);

    default:
        return ngx_http_agent_lg_assistant_search(r, req, v);
    }
}


/* POST /assistants {graph_id, assistant_id, config, ..., if_exists} */

static ngx_int_t
ngx_http_agent_lg_assistant_create(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, yajl_val v)
{
    ngx_int_t                        rc;
    ngx_str_t                        if_exists, given;
    ngx_http_agent_ctx_t            *ctx;
    ngx_http_agent_graph_t          *g;
    ngx_http_agent_assistant_row_t   row, old;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    ngx_memzero(&row, sizeof(ngx_http_agent_assistant_row_t));

    if (ngx_http_agent_json_get_str(v, "graph_id", &row.graph_id) != NGX_OK) {
        return ngx_http_agent_reply_error(r, 422, "\"graph_id\" is required: "
                                          "a graph this location serves");
    }

    g = ngx_http_agent_lg_assistant(r, &row.graph_id);

    if (g == NULL) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "Graph \"%V\" not found",
                                          &row.graph_id);
    }

    row.graph_id = g->name;

    rc = ngx_http_agent_json_get_str(v, "assistant_id", &row.assistant_id);

    if (rc == NGX_ERROR
        || (rc == NGX_OK
            && (!ngx_http_agent_id_valid(&row.assistant_id)
                || ngx_http_agent_lg_assistant(r, &row.assistant_id))))
    {
        return ngx_http_agent_reply_error(r, 422, "\"assistant_id\" takes 1 "
                                          "to 64 letters, digits, \"-\" or "
                                          "\"_\", and not a graph's own");
    }

    given = row.assistant_id;

    if (rc != NGX_OK) {
        /* the same id in each pass of the request */

        if (ngx_http_agent_lg_made(r, &row.assistant_id) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    rc = ngx_http_agent_lg_assistant_doc(r, &row, v, NULL);
    if (rc != NGX_OK) {
        return rc;
    }

    row.version = 1;
    row.latest = 1;
    row.versions = 1;
    row.created_at = row.updated_at;

    if (ctx->owner) {
        row.owner = *ctx->owner;
    }

    /* the owner's own of the id given, under it or scoped to the owner */

    rc = given.len ? ngx_http_agent_lg_assistant_scope(r, &row.assistant_id,
                                                       &old)
                   : NGX_DECLINED;

    if (rc == NGX_DECLINED) {
        rc = ngx_http_agent_store_assistant_put(ngx_http_agent_reply_sc(r),
                                                &row);

        if (rc == NGX_DECLINED && ctx->owner) {
            /* another owner's: this one's under the id scoped to it */

            if (ngx_http_agent_reply_scope_id(r->pool, ctx->owner,
                                              &row.assistant_id,
                                              &row.assistant_id)
                != NGX_OK)
            {
                return NGX_HTTP_INTERNAL_SERVER_ERROR;
            }

            rc = ngx_http_agent_store_assistant_put(
                                          ngx_http_agent_reply_sc(r), &row);
        }

        if (rc == NGX_DECLINED) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT,
                                              "Assistant \"%V\" already "
                                              "exists", &given);
        }

    } else if (rc == NGX_OK) {
        if (ngx_http_agent_json_get_str(v, "if_exists", &if_exists) != NGX_OK
            || if_exists.len != 10
            || ngx_strncmp(if_exists.data, "do_nothing", 10) != 0)
        {
            return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT,
                                              "Assistant \"%V\" already "
                                              "exists", &given);
        }

        row = old;
    }

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_lg_assistant_send(r, &row);
}


/*
 * PATCH /assistants/{id}: a new version, the latest one, of what was the
 * latest with the fields given (metadata merged into its own)
 */

static ngx_int_t
ngx_http_agent_lg_assistant_update(ngx_http_request_t *r, ngx_str_t *id,
    yajl_val v)
{
    yajl_val                         old;
    ngx_int_t                        rc;
    ngx_str_t                        graph_id;
    ngx_http_agent_ctx_t            *ctx;
    ngx_http_agent_graph_t          *g;
    ngx_http_agent_assistant_row_t   row;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    rc = ngx_http_agent_lg_assistant_found(r, id, &g, &row);
    if (rc != NGX_OK) {
        return rc;
    }

    if (row.assistant_id.len == 0) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT,
                                          "the assistant of the graph \"%V\" "
                                          "is nginx.conf's: create another "
                                          "over the graph", &g->name);
    }

    if (ngx_http_agent_json_get_str(v, "graph_id", &graph_id) == NGX_OK) {
        g = ngx_http_agent_lg_assistant(r, &graph_id);

        if (g == NULL) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                              "Graph \"%V\" not found",
                                              &graph_id);
        }

        row.graph_id = g->name;
    }

    old = ngx_http_agent_json_parse(r->pool, row.doc.data, row.doc.len,
                                    NULL);

    rc = ngx_http_agent_lg_assistant_doc(r, &row, v, old);
    if (rc != NGX_OK) {
        return rc;
    }

    row.version = row.versions + 1;
    row.latest = row.version;
    row.versions = row.version;

    if (ctx->owner) {
        row.owner = *ctx->owner;
    }

    rc = ngx_http_agent_store_assistant_put(ngx_http_agent_reply_sc(r), &row);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT,
                                          "the assistant changed meanwhile: "
                                          "try again");
    }

    if (rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_lg_assistant_send(r, &row);
}


/*
 * A version's document, written by our generator from the values given
 * (a JSON object each, a string each) over the old version's: name,
 * description, config, context, metadata (merged); its time now
 */

static ngx_int_t
ngx_http_agent_lg_assistant_doc(ngx_http_request_t *r,
    ngx_http_agent_assistant_row_t *row, yajl_val v, yajl_val old)
{
    yajl_val                x, o;
    ngx_uint_t              n;
    ngx_http_agent_json_t  *j;

    static const char      *keys[] = { "config", "context", "metadata",
                                       "name", "description" };

    j = ngx_http_agent_json_create(r->pool);

    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_obj(j);

    for (n = 0; n < 5; n++) {
        x = ngx_http_agent_json_get(v, keys[n]);
        o = old ? ngx_http_agent_json_get(old, keys[n]) : NULL;

        if (x && YAJL_IS_NULL(x)) {
            x = NULL;
        }

        if (x && (n < 3 ? !YAJL_IS_OBJECT(x) : !YAJL_IS_STRING(x))) {
            return ngx_http_agent_reply_error(r, 422, "\"%s\" must be %s",
                                              keys[n], n < 3 ? "an object"
                                                             : "a string");
        }

        ngx_http_agent_json_cstr(j, keys[n]);

        if (n == 2 && o && x && YAJL_IS_OBJECT(o)) {

            /* metadata: the new keys over the old */
            ngx_http_agent_json_merge(j, o, x);
            continue;
        }

        if (x == NULL) {
            x = o;
        }

        ngx_http_agent_lg_assistant_field(j, x, n, row);
    }

    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &row->doc) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* the same in each pass: the one stored is the one answered */
    if (ngx_http_agent_lg_now(r, &row->updated_at) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return NGX_OK;
}


/* DELETE /assistants/{id} */

static ngx_int_t
ngx_http_agent_lg_assistant_delete(ngx_http_request_t *r, ngx_str_t *id)
{
    ngx_int_t                        rc;
    ngx_str_t                        arg, key;
    ngx_http_agent_ctx_t            *ctx;
    ngx_http_agent_assistant_row_t   row;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    if (ngx_http_agent_lg_assistant(r, id)) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT,
                                          "a graph's own assistant is "
                                          "nginx.conf's: it cannot be "
                                          "deleted");
    }

    if (!ngx_http_agent_id_valid(id)) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "Assistant not found");
    }

    key = *id;

    rc = ngx_http_agent_lg_assistant_scope(r, &key, &row);

    if (rc == NGX_OK) {
        rc = ngx_http_agent_store_assistant_delete(ngx_http_agent_reply_sc(r),
                                                   ctx->owner, &key);
    }

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "Assistant not found");
    }

    if (rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_arg(r, (u_char *) "delete_threads", 14, &arg) == NGX_OK
        && arg.len == 4 && ngx_strncmp(arg.data, "true", 4) == 0)
    {
        rc = ngx_http_agent_lg_assistant_threads(r, id);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    return ngx_http_agent_reply_send(r, NGX_HTTP_NO_CONTENT, NULL);
}


/*
 * ?delete_threads=true: the owner's threads whose metadata names the
 * assistant (its runs'), those no run holds, at most 100 a request
 */

static ngx_int_t
ngx_http_agent_lg_assistant_threads(ngx_http_request_t *r, ngx_str_t *id)
{
    ngx_int_t                        rc;
    ngx_str_t                        filter;
    ngx_uint_t                       i;
    ngx_array_t                      sessions;
    ngx_http_agent_ctx_t            *ctx;
    ngx_http_agent_json_t           *j;
    ngx_http_agent_session_t        *s;
    ngx_http_agent_store_call_t     *sc;
    ngx_http_agent_session_query_t   q;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    sc = ngx_http_agent_reply_sc(r);

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_key(j, "assistant_id");
    ngx_http_agent_json_str(j, id);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &filter) != NGX_OK
        || ngx_array_init(&sessions, r->pool, 8,
                          sizeof(ngx_http_agent_session_t))
           != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_memzero(&q, sizeof(ngx_http_agent_session_query_t));
    q.limit = 100;
    q.owner = ctx->owner;
    q.metadata = &filter;

    rc = ngx_http_agent_store_session_list(sc, &q, &sessions);
    if (rc != NGX_OK) {
        return rc == NGX_AGAIN ? NGX_AGAIN : NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    s = sessions.elts;

    for (i = 0; i < sessions.nelts; i++) {

        /*
         * the lease first, for a second, under the assistant's id (the
         * same in each pass): a thread a run holds is left
         */

        rc = ngx_http_agent_store_lock(sc, &s[i].id, id, 1000);

        if (rc == NGX_AGAIN) {
            return NGX_AGAIN;
        }

        if (rc != NGX_OK) {
            continue;
        }

        rc = ngx_http_agent_store_session_delete(sc, &s[i].id);

        if (rc == NGX_AGAIN) {
            return NGX_AGAIN;
        }
    }

    return NGX_OK;
}


/* POST /assistants/{id}/versions {metadata, limit, offset}: newest first */

static ngx_int_t
ngx_http_agent_lg_assistant_versions(ngx_http_request_t *r, ngx_str_t *id,
    yajl_val v)
{
    yajl_val                          doc;
    ngx_int_t                         rc, limit, offset, n;
    ngx_str_t                         key;
    ngx_uint_t                        i;
    ngx_array_t                       rows;
    ngx_http_agent_ctx_t             *ctx;
    ngx_http_agent_json_t            *j;
    ngx_http_agent_lg_filter_t        f;
    ngx_http_agent_assistant_row_t   *row, one;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    ngx_memzero(&f, sizeof(ngx_http_agent_lg_filter_t));

    ngx_http_agent_lg_page(v, &f, &limit, &offset);

    if (!ngx_http_agent_id_valid(id)) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "Assistant not found");
    }

    if (ngx_array_init(&rows, r->pool, 8,
                       sizeof(ngx_http_agent_assistant_row_t))
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    key = *id;

    rc = ngx_http_agent_lg_assistant_scope(r, &key, &one);

    if (rc == NGX_OK || rc == NGX_DECLINED) {
        rc = ngx_http_agent_store_assistant_list(ngx_http_agent_reply_sc(r),
                                                 ctx->owner, NULL, &key,
                                                 &rows);
    }

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (rows.nelts == 0) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "Assistant not found");
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_arr(j);

    n = 0;
    row = rows.elts;

    for (i = 0; i < rows.nelts; i++) {
        doc = ngx_http_agent_json_parse(r->pool, row[i].doc.data,
                                        row[i].doc.len, NULL);

        if (!ngx_http_agent_lg_assistant_match(&f, &row[i].graph_id,
                                               &row[i].graph_id,
                                               doc ? ngx_http_agent_json_get(
                                                         doc, "metadata")
                                                   : NULL))
        {
            continue;
        }

        if (n++ >= offset && n <= offset + limit) {
            ngx_http_agent_lg_assistant_row_json(r->pool, j, &row[i], 0);
        }
    }

    ngx_http_agent_json_arr_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/* POST /assistants/{id}/latest {version} */

static ngx_int_t
ngx_http_agent_lg_assistant_latest(ngx_http_request_t *r, ngx_str_t *id,
    yajl_val v)
{
    yajl_val                         x;
    ngx_int_t                        rc;
    ngx_str_t                        at, key;
    ngx_http_agent_ctx_t            *ctx;
    ngx_http_agent_graph_t          *g;
    ngx_http_agent_assistant_row_t   row;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    x = ngx_http_agent_json_get(v, "version");

    if (x == NULL || !YAJL_IS_INTEGER(x) || YAJL_GET_INTEGER(x) < 1) {
        return ngx_http_agent_reply_error(r, 422, "\"version\" is a "
                                          "version's number");
    }

    if (!ngx_http_agent_id_valid(id)) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "Assistant not found");
    }

    if (ngx_http_agent_lg_now(r, &at) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    key = *id;

    rc = ngx_http_agent_lg_assistant_scope(r, &key, &row);

    if (rc == NGX_OK) {
        rc = ngx_http_agent_store_assistant_latest(ngx_http_agent_reply_sc(r),
                                                   ctx->owner, &key,
                                                   YAJL_GET_INTEGER(x), &at);
    }

    if (rc == NGX_OK) {
        rc = ngx_http_agent_lg_assistant_find(r, id, &g, &row);
    }

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "Assistant \"%V\" has no version "
                                          "%L", id, YAJL_GET_INTEGER(x));
    }

    if (rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_lg_assistant_send(r, &row);
}
