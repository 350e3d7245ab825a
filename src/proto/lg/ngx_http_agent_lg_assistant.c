
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <ngx_sha1.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_store_run.h"


/*
 * An assistant found, shown, searched.  Each graph a location may run is
 * one of its own, made by
 * the system (its id LangGraph's uuid5 of the graph's name); a client
 * makes others over those graphs (POST /assistants), each a
 * configuration of a graph with versions, kept in the store for its
 * owner so that every worker and host sees them.  The graphs in
 * nginx.conf stay the only code.
 */


static void ngx_http_agent_lg_assistant_json(ngx_http_agent_json_t *j,
    ngx_http_agent_graph_t *g);


/* LangGraph's namespace for assistant ids: uuid5(NAMESPACE_GRAPH, graph) */
static u_char  ngx_http_agent_lg_namespace[16] = {
    0x6b, 0xa7, 0xb8, 0x21, 0x9d, 0xad, 0x11, 0xd1,
    0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8
};


/* an assistant's id: its graph's name's uuid5, as LangGraph's servers */

void
ngx_http_agent_lg_assistant_id(ngx_str_t *graph, u_char *buf)
{
    u_char      h[20];
    ngx_sha1_t  sha1;

    ngx_sha1_init(&sha1);
    ngx_sha1_update(&sha1, ngx_http_agent_lg_namespace, 16);
    ngx_sha1_update(&sha1, graph->data, graph->len);
    ngx_sha1_final(h, &sha1);

    h[6] = (h[6] & 0x0f) | 0x50;
    h[8] = (h[8] & 0x3f) | 0x80;

    ngx_sprintf(buf, "%02xd%02xd%02xd%02xd-%02xd%02xd-%02xd%02xd-%02xd%02xd-"
                "%02xd%02xd%02xd%02xd%02xd%02xd",
                h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9],
                h[10], h[11], h[12], h[13], h[14], h[15]);
}


/*
 * The graph an assistant id names, by name or by its uuid5: one of the
 * location's (its own, agent_assistants), never another declared graph
 */

ngx_http_agent_graph_t *
ngx_http_agent_lg_assistant(ngx_http_request_t *r, ngx_str_t *id)
{
    u_char                      buf[36];
    ngx_uint_t                  i;
    ngx_http_agent_graph_t    **g;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    if (alcf->assistant_graphs == NULL) {
        return NULL;
    }

    g = alcf->assistant_graphs->elts;

    for (i = 0; i < alcf->assistant_graphs->nelts; i++) {
        if (g[i]->name.len == id->len
            && ngx_strncmp(g[i]->name.data, id->data, id->len) == 0)
        {
            return g[i];
        }

        if (id->len == 36) {
            ngx_http_agent_lg_assistant_id(&g[i]->name, buf);

            if (ngx_strncasecmp(buf, id->data, 36) == 0) {
                return g[i];
            }
        }
    }

    return NULL;
}


/*
 * The graph an assistant id names and, for one a client made, its row:
 * NGX_OK, NGX_DECLINED (none of this owner's, or over a graph this
 * location does not serve), NGX_AGAIN, NGX_ERROR
 */

ngx_int_t
ngx_http_agent_lg_assistant_find(ngx_http_request_t *r, ngx_str_t *id,
    ngx_http_agent_graph_t **graph, ngx_http_agent_assistant_row_t *row)
{
    ngx_int_t  rc;
    ngx_str_t  key;

    ngx_memzero(row, sizeof(ngx_http_agent_assistant_row_t));

    *graph = ngx_http_agent_lg_assistant(r, id);

    if (*graph) {
        return NGX_OK;
    }

    if (!ngx_http_agent_id_valid(id)) {
        return NGX_DECLINED;
    }

    key = *id;

    rc = ngx_http_agent_lg_assistant_scope(r, &key, row);
    if (rc != NGX_OK) {
        return rc;
    }

    *graph = ngx_http_agent_lg_assistant(r, &row->graph_id);

    return *graph ? NGX_OK : NGX_DECLINED;
}


/*
 * Ids per owner (ngx_http_agent_reply_scope_id): the owner's assistant a
 * client's id names, under that id or else under the id scoped to the
 * owner, then *id; NGX_OK, NGX_DECLINED (neither), NGX_AGAIN, NGX_ERROR
 */

ngx_int_t
ngx_http_agent_lg_assistant_scope(ngx_http_request_t *r, ngx_str_t *id,
    ngx_http_agent_assistant_row_t *row)
{
    ngx_int_t              rc;
    ngx_str_t              scoped;
    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    rc = ngx_http_agent_store_assistant_get(ngx_http_agent_reply_sc(r),
                                            ctx->owner, id, 0, row);

    if (rc != NGX_DECLINED || ctx->owner == NULL) {
        return rc;
    }

    if (ngx_http_agent_reply_scope_id(r->pool, ctx->owner, id, &scoped)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    rc = ngx_http_agent_store_assistant_get(ngx_http_agent_reply_sc(r),
                                            ctx->owner, &scoped, 0, row);
    if (rc == NGX_OK) {
        *id = scoped;
    }

    return rc;
}


/* GET /assistants/{id} */

ngx_int_t
ngx_http_agent_lg_assistant_get(ngx_http_request_t *r, ngx_str_t *id)
{
    ngx_int_t                        rc;
    ngx_http_agent_json_t           *j;
    ngx_http_agent_graph_t          *g;
    ngx_http_agent_assistant_row_t   row;

    rc = ngx_http_agent_lg_assistant_found(r, id, &g, &row);
    if (rc != NGX_OK) {
        return rc;
    }

    if (row.assistant_id.len) {
        return ngx_http_agent_lg_assistant_send(r, &row);
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_lg_assistant_json(j, g);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/*
 * The assistant an endpoint names: NGX_OK, or what answered it (404
 * "Assistant not found", 500) or NGX_AGAIN
 */

ngx_int_t
ngx_http_agent_lg_assistant_found(ngx_http_request_t *r, ngx_str_t *id,
    ngx_http_agent_graph_t **graph, ngx_http_agent_assistant_row_t *row)
{
    ngx_int_t  rc;

    rc = ngx_http_agent_lg_assistant_find(r, id, graph, row);

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "Assistant not found");
    }

    if (rc != NGX_OK && rc != NGX_AGAIN) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return rc;
}


/* one a client made, answered as its latest version */

ngx_int_t
ngx_http_agent_lg_assistant_send(ngx_http_request_t *r,
    ngx_http_agent_assistant_row_t *row)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_lg_assistant_row_json(r->pool, j, row, 1);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/*
 * GET /assistants/{id}/graph: its graph as LangGraph draws it, nodes and
 * edges; the edges of a node with a condition are all conditional (ours
 * are tried in order: the last is the else)
 */

ngx_int_t
ngx_http_agent_lg_assistant_graph(ngx_http_request_t *r, ngx_str_t *id)
{
    ngx_int_t                        rc;
    ngx_uint_t                       i, k, cond;
    ngx_http_agent_json_t           *j;
    ngx_http_agent_edge_t           *e;
    ngx_http_agent_node_t           *n;
    ngx_http_agent_graph_t          *g;
    ngx_http_agent_assistant_row_t   row;

    rc = ngx_http_agent_lg_assistant_found(r, id, &g, &row);
    if (rc != NGX_OK) {
        return rc;
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    n = g->nodes.elts;

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "nodes");
    ngx_http_agent_json_arr(j);

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_cstr(j, "__start__");
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "schema");
    ngx_http_agent_json_key(j, "data");
    ngx_http_agent_json_cstr(j, "__start__");
    ngx_http_agent_json_end(j);

    for (i = 0; i < g->nodes.nelts; i++) {
        if (n[i].part) {
            /* then=: a part of other nodes' steps, no node of the graph */
            continue;
        }

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_str(j, &n[i].name);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "runnable");
        ngx_http_agent_json_key(j, "data");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_arr(j);
        ngx_http_agent_json_cstr(j, "nginx");
        ngx_http_agent_json_str(j, &n[i].kind->name);
        ngx_http_agent_json_arr_end(j);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &n[i].name);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_cstr(j, "__end__");
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "schema");
    ngx_http_agent_json_key(j, "data");
    ngx_http_agent_json_cstr(j, "__end__");
    ngx_http_agent_json_end(j);

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "edges");
    ngx_http_agent_json_arr(j);

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "source");
    ngx_http_agent_json_cstr(j, "__start__");
    ngx_http_agent_json_key(j, "target");
    ngx_http_agent_json_str(j, &n[g->entry].name);
    ngx_http_agent_json_end(j);

    for (i = 0; i < g->nodes.nelts; i++) {
        e = n[i].edges.elts;
        cond = 0;

        for (k = 0; k < n[i].edges.nelts; k++) {
            cond |= (e[k].cond != NULL);
        }

        for (k = 0; k < n[i].edges.nelts; k++) {
            ngx_http_agent_json_obj(j);
            ngx_http_agent_json_key(j, "source");
            ngx_http_agent_json_str(j, &n[i].name);
            ngx_http_agent_json_key(j, "target");

            if (e[k].to == NGX_HTTP_AGENT_END) {
                ngx_http_agent_json_cstr(j, "__end__");

            } else {
                ngx_http_agent_json_str(j, &e[k].to_name);
            }

            if (cond) {
                ngx_http_agent_json_key(j, "conditional");
                ngx_http_agent_json_bool(j, 1);
            }

            if (e[k].cond) {
                ngx_http_agent_json_key(j, "data");
                ngx_http_agent_json_str(j, &e[k].text);
            }

            ngx_http_agent_json_end(j);
        }
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/* a page of a list: its metadata filter, limit (10, at most 1000), offset */

void
ngx_http_agent_lg_page(yajl_val v, ngx_http_agent_lg_filter_t *f,
    ngx_int_t *limit, ngx_int_t *offset)
{
    yajl_val  x;

    *limit = 10;
    *offset = 0;

    f->metadata = ngx_http_agent_json_get(v, "metadata");

    if (f->metadata && !YAJL_IS_OBJECT(f->metadata)) {
        f->metadata = NULL;
    }

    x = ngx_http_agent_json_get(v, "limit");

    if (x && YAJL_IS_INTEGER(x)) {
        *limit = ngx_max(0, ngx_min(YAJL_GET_INTEGER(x), 1000));
    }

    x = ngx_http_agent_json_get(v, "offset");

    if (x && YAJL_IS_INTEGER(x) && YAJL_GET_INTEGER(x) > 0) {
        *offset = YAJL_GET_INTEGER(x);
    }
}


/*
 * POST /assistants/search and /count {graph_id, name, metadata, limit,
 * offset}: the owner's assistants, newest first, then the location's
 * graphs' own
 */

ngx_int_t
ngx_http_agent_lg_assistant_search(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, yajl_val v)
{
    yajl_val                          doc, meta;
    ngx_int_t                         rc, limit, offset, n;
    ngx_str_t                         name;
    ngx_uint_t                        i, count;
    ngx_array_t                       rows;
    ngx_http_agent_ctx_t             *ctx;
    ngx_http_agent_json_t            *j;
    ngx_http_agent_graph_t          **g;
    ngx_http_agent_loc_conf_t        *alcf;
    ngx_http_agent_lg_filter_t        f;
    ngx_http_agent_assistant_row_t   *row;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    ngx_memzero(&f, sizeof(ngx_http_agent_lg_filter_t));

    ngx_http_agent_lg_page(v, &f, &limit, &offset);

    if (ngx_http_agent_json_get_str(v, "graph_id", &f.graph_id) == NGX_ERROR
        || ngx_http_agent_json_get_str(v, "name", &f.name) == NGX_ERROR)
    {
        return ngx_http_agent_reply_error(r, 422, "\"graph_id\" and "
                                          "\"name\" are strings");
    }

    if (ngx_array_init(&rows, r->pool, 8,
                       sizeof(ngx_http_agent_assistant_row_t))
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_agent_store_assistant_list(ngx_http_agent_reply_sc(r),
                                             ctx->owner,
                                             f.graph_id.len ? &f.graph_id
                                                            : NULL,
                                             NULL, &rows);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (req->route != NGX_HTTP_AGENT_LG_ASSISTANTS_COUNT) {
        ngx_http_agent_json_arr(j);
    }

    count = 0;
    n = 0;
    row = rows.elts;

    for (i = 0; i < rows.nelts; i++) {
        doc = ngx_http_agent_json_parse(r->pool, row[i].doc.data,
                                        row[i].doc.len, NULL);
        meta = doc ? ngx_http_agent_json_get(doc, "metadata") : NULL;

        if (doc == NULL
            || ngx_http_agent_json_get_str(doc, "name", &name) != NGX_OK)
        {
            name = row[i].graph_id;
        }

        if (ngx_http_agent_lg_assistant(r, &row[i].graph_id) == NULL
            || !ngx_http_agent_lg_assistant_match(&f, &row[i].graph_id,
                                                  &name, meta))
        {
            continue;
        }

        count++;

        if (req->route != NGX_HTTP_AGENT_LG_ASSISTANTS_COUNT
            && n++ >= offset && n <= offset + limit)
        {
            ngx_http_agent_lg_assistant_row_json(r->pool, j, &row[i], 1);
        }
    }

    /* the graphs' own: made by the system */

    g = alcf->assistant_graphs ? alcf->assistant_graphs->elts : NULL;

    for (i = 0; g && i < alcf->assistant_graphs->nelts; i++) {
        f.system = 1;

        if (!ngx_http_agent_lg_assistant_match(&f, &g[i]->name,
                                               &g[i]->name, NULL))
        {
            continue;
        }

        count++;

        if (req->route != NGX_HTTP_AGENT_LG_ASSISTANTS_COUNT
            && n++ >= offset && n <= offset + limit)
        {
            ngx_http_agent_lg_assistant_json(j, g[i]);
        }
    }

    if (req->route == NGX_HTTP_AGENT_LG_ASSISTANTS_COUNT) {
        ngx_http_agent_json_int(j, count);

    } else {
        ngx_http_agent_json_arr_end(j);
    }

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/*
 * Whether an assistant passes a search: its graph, a part of its name
 * (any case), the metadata asked for within its own (a graph's own
 * assistant has {"created_by": "system"})
 */

ngx_uint_t
ngx_http_agent_lg_assistant_match(ngx_http_agent_lg_filter_t *f,
    ngx_str_t *graph_id, ngx_str_t *name, yajl_val metadata)
{
    size_t       i;
    yajl_val     x;
    ngx_uint_t   k;

    if (f->graph_id.len
        && (f->graph_id.len != graph_id->len
            || ngx_strncmp(f->graph_id.data, graph_id->data, graph_id->len)
               != 0))
    {
        return 0;
    }

    if (f->name.len) {
        if (f->name.len > name->len) {
            return 0;
        }

        for (k = 0; k + f->name.len <= name->len; k++) {
            if (ngx_strncasecmp(name->data + k, f->name.data, f->name.len)
                == 0)
            {
                break;
            }
        }

        if (k + f->name.len > name->len) {
            return 0;
        }
    }

    if (f->metadata == NULL) {
        return 1;
    }

    for (i = 0; i < f->metadata->u.object.len; i++) {
        x = f->metadata->u.object.values[i];

        if (f->system) {
            /* {"created_by": "system"} is all a graph's own carries */
            if (ngx_strcmp(f->metadata->u.object.keys[i], "created_by") != 0
                || !YAJL_IS_STRING(x)
                || ngx_strcmp(x->u.string, "system") != 0)
            {
                return 0;
            }

            continue;
        }

        if (metadata == NULL
            || !ngx_http_agent_json_contains(
                   ngx_http_agent_json_get(metadata,
                                           f->metadata->u.object.keys[i]),
                   x))
        {
            return 0;
        }
    }

    return 1;
}


/*
 * An assistant's field n of config, context, metadata, name, description:
 * x, or what LangGraph shows for none ({}, the graph's id for a name,
 * null for a description)
 */

void
ngx_http_agent_lg_assistant_field(ngx_http_agent_json_t *j, yajl_val x,
    ngx_uint_t n, ngx_http_agent_assistant_row_t *row)
{
    if (x) {
        ngx_http_agent_json_val(j, x);

    } else if (n < 3) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_end(j);

    } else if (n == 3) {
        ngx_http_agent_json_str(j, &row->graph_id);

    } else {
        ngx_http_agent_json_null(j);
    }
}


/*
 * A stored assistant's version as LangGraph shows it, written anew from
 * its parsed document; updated: the assistant (created_at its own,
 * updated_at its version's), not one of its versions
 */

void
ngx_http_agent_lg_assistant_row_json(ngx_pool_t *pool,
    ngx_http_agent_json_t *j, ngx_http_agent_assistant_row_t *row,
    ngx_uint_t updated)
{
    yajl_val     doc, x;
    ngx_uint_t   n;

    static const char  *keys[] = { "config", "context", "metadata",
                                   "name", "description" };

    doc = ngx_http_agent_json_parse(pool, row->doc.data, row->doc.len, NULL);

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "assistant_id");
    ngx_http_agent_json_bytes(j, row->assistant_id.data,
                        ngx_http_agent_store_id_shown(&row->assistant_id));
    ngx_http_agent_json_key(j, "graph_id");
    ngx_http_agent_json_str(j, &row->graph_id);

    for (n = 0; n < 5; n++) {
        x = doc ? ngx_http_agent_json_get(doc, keys[n]) : NULL;

        ngx_http_agent_json_cstr(j, keys[n]);

        ngx_http_agent_lg_assistant_field(j, x, n, row);
    }

    ngx_http_agent_json_key(j, "version");
    ngx_http_agent_json_int(j, row->version);
    ngx_http_agent_json_key(j, "created_at");
    ngx_http_agent_json_str(j, updated ? &row->created_at : &row->updated_at);

    if (updated) {
        ngx_http_agent_json_key(j, "updated_at");
        ngx_http_agent_json_str(j, &row->updated_at);
    }

    ngx_http_agent_json_end(j);
}


static void
ngx_http_agent_lg_assistant_json(ngx_http_agent_json_t *j,
    ngx_http_agent_graph_t *g)
{
    u_char                     buf[36];
    ngx_uint_t                 i, any;
    ngx_http_agent_channel_t  *ch;

    ngx_http_agent_lg_assistant_id(&g->name, buf);

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "assistant_id");
    ngx_http_agent_json_bytes(j, buf, 36);
    ngx_http_agent_json_key(j, "graph_id");
    ngx_http_agent_json_str(j, &g->name);
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, &g->name);
    ngx_http_agent_json_key(j, "description");
    ngx_http_agent_json_null(j);
    ngx_http_agent_json_key(j, "config");
    ngx_http_agent_json_obj(j);

    /* the defaults of its configurable channels (config=on) */

    ch = g->channels.elts;
    any = 0;

    for (i = 0; i < g->channels.nelts; i++) {
        if (ch[i].config != 1 || ch[i].dflt.len == 0) {
            continue;
        }

        if (!any) {
            ngx_http_agent_json_key(j, "configurable");
            ngx_http_agent_json_obj(j);
            any = 1;
        }

        ngx_http_agent_json_str(j, &ch[i].name);
        ngx_http_agent_json_raw(j, &ch[i].dflt);
    }

    if (any) {
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "context");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "metadata");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "created_by");
    ngx_http_agent_json_cstr(j, "system");
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "version");
    ngx_http_agent_json_int(j, 1);
    ngx_http_agent_json_key(j, "created_at");
    ngx_http_agent_json_cstr(j, "1970-01-01T00:00:00.000Z");
    ngx_http_agent_json_key(j, "updated_at");
    ngx_http_agent_json_cstr(j, "1970-01-01T00:00:00.000Z");
    ngx_http_agent_json_end(j);
}
