
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <ngx_sha1.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"


/*
 * Assistants: each graph a location may run is one, its id LangGraph's
 * uuid5 of the graph's name
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


ngx_int_t
ngx_http_agent_lg_assistants(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body)
{
    yajl_val                     v;
    ngx_int_t                    rc, limit, offset, n;
    ngx_str_t                    graph_id;
    ngx_uint_t                   i;
    ngx_http_agent_json_t       *j;
    ngx_http_agent_graph_t     **g, *one;
    ngx_http_agent_loc_conf_t   *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (req->route == NGX_HTTP_AGENT_LG_ASSISTANT) {
        one = ngx_http_agent_lg_assistant(r, &req->id);

        if (one == NULL) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                              "No assistant found for \"%V\"",
                                              &req->id);
        }

        ngx_http_agent_lg_assistant_json(j, one);

        return ngx_http_agent_lg_send(r, NGX_HTTP_OK, j);
    }

    rc = ngx_http_agent_reply_parse(r, body, &v, 1);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_str_null(&graph_id);
    limit = 10;
    offset = 0;

    if (v) {
        if (ngx_http_agent_json_get_str(v, "graph_id", &graph_id)
            == NGX_ERROR)
        {
            return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                              "\"graph_id\" must be a string");
        }
    }

    if (v && ngx_http_agent_json_get(v, "limit")
        && YAJL_IS_INTEGER(ngx_http_agent_json_get(v, "limit")))
    {
        limit = YAJL_GET_INTEGER(ngx_http_agent_json_get(v, "limit"));
    }

    if (v && ngx_http_agent_json_get(v, "offset")
        && YAJL_IS_INTEGER(ngx_http_agent_json_get(v, "offset")))
    {
        offset = YAJL_GET_INTEGER(ngx_http_agent_json_get(v, "offset"));
    }

    /* the location's graphs only */
    g = alcf->assistant_graphs->elts;
    n = 0;

    ngx_http_agent_json_arr(j);

    for (i = 0; i < alcf->assistant_graphs->nelts; i++) {
        if (graph_id.len
            && (g[i]->name.len != graph_id.len
                || ngx_strncmp(g[i]->name.data, graph_id.data, graph_id.len)
                   != 0))
        {
            continue;
        }

        if (n++ < offset || n > offset + limit) {
            continue;
        }

        ngx_http_agent_lg_assistant_json(j, g[i]);
    }

    ngx_http_agent_json_arr_end(j);

    return ngx_http_agent_lg_send(r, NGX_HTTP_OK, j);
}


static void
ngx_http_agent_lg_assistant_json(ngx_http_agent_json_t *j,
    ngx_http_agent_graph_t *g)
{
    u_char  buf[36];

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
