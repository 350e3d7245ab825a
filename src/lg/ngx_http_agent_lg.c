
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
 * agent_langgraph_api: the LangGraph Agent Server's routes over our
 * graphs (assistants), sessions (threads) and checkpoints, so that
 * LangGraph's own SDK and UIs work against nginx.  This file routes and
 * answers what needs no store; threads and their state are lg_thread.c's,
 * runs lg_run.c's, runs as records and joins lg_runs.c's.
 */


typedef struct {
    const char                *path;        /* "*": an id */
    ngx_uint_t                 methods;
    ngx_http_agent_lg_route_e  route;
} ngx_http_agent_lg_path_t;


static ngx_int_t ngx_http_agent_lg_match(const char *path, ngx_str_t *seg,
    ngx_uint_t n, ngx_http_agent_lg_req_t *req);
static ngx_int_t ngx_http_agent_lg_info(ngx_http_request_t *r,
    ngx_uint_t info);
static ngx_int_t ngx_http_agent_lg_assistants(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body);
static void ngx_http_agent_lg_assistant_json(ngx_http_agent_json_t *j,
    ngx_http_agent_graph_t *g);


static ngx_http_agent_lg_path_t  ngx_http_agent_lg_paths[] = {
    { "", NGX_HTTP_GET, NGX_HTTP_AGENT_LG_OK },
    { "ok", NGX_HTTP_GET, NGX_HTTP_AGENT_LG_OK },
    { "info", NGX_HTTP_GET, NGX_HTTP_AGENT_LG_INFO },
    { "assistants/search", NGX_HTTP_POST,
      NGX_HTTP_AGENT_LG_ASSISTANTS_SEARCH },
    { "assistants/*", NGX_HTTP_GET, NGX_HTTP_AGENT_LG_ASSISTANT },
    { "threads", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_THREADS },
    { "threads/search", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_THREADS_SEARCH },
    { "threads/*", NGX_HTTP_GET|NGX_HTTP_DELETE, NGX_HTTP_AGENT_LG_THREAD },
    { "threads/*/state", NGX_HTTP_GET|NGX_HTTP_POST,
      NGX_HTTP_AGENT_LG_STATE },
    { "threads/*/state/*", NGX_HTTP_GET, NGX_HTTP_AGENT_LG_STATE_AT },
    { "threads/*/history", NGX_HTTP_GET|NGX_HTTP_POST,
      NGX_HTTP_AGENT_LG_HISTORY },
    { "threads/*/runs", NGX_HTTP_GET|NGX_HTTP_POST, NGX_HTTP_AGENT_LG_RUNS },
    { "threads/*/runs/stream", NGX_HTTP_POST,
      NGX_HTTP_AGENT_LG_RUNS_STREAM },
    { "threads/*/runs/wait", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_RUNS_WAIT },
    { "threads/*/runs/*", NGX_HTTP_GET, NGX_HTTP_AGENT_LG_RUN },
    { "threads/*/runs/*/cancel", NGX_HTTP_POST,
      NGX_HTTP_AGENT_LG_RUN_CANCEL },
    { "threads/*/runs/*/stream", NGX_HTTP_GET, NGX_HTTP_AGENT_LG_RUN_JOIN },
    { "threads/*/runs/*/join", NGX_HTTP_GET,
      NGX_HTTP_AGENT_LG_RUN_JOIN_JSON },
    { "runs/stream", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_STATELESS_STREAM },
    { "runs/wait", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_STATELESS_WAIT },
    { NULL, 0, 0 }
};


/* LangGraph's namespace for assistant ids: uuid5(NAMESPACE_GRAPH, graph) */
static u_char  ngx_http_agent_lg_namespace[16] = {
    0x6b, 0xa7, 0xb8, 0x21, 0x9d, 0xad, 0x11, 0xd1,
    0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8
};


ngx_int_t
ngx_http_agent_lg_route(ngx_http_request_t *r, ngx_http_agent_ctx_t *ctx)
{
    u_char                    *p, *last, *s;
    ngx_str_t                  seg[6];
    ngx_uint_t                 n, i, methods;
    ngx_http_agent_lg_req_t   *req;
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);

    req = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_lg_req_t));
    if (req == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->api = req;
    ctx->endpoint = NGX_HTTP_AGENT_EP_LANGGRAPH;

    p = r->uri.data;
    last = r->uri.data + r->uri.len;

    if (clcf->name.len <= r->uri.len && !clcf->regex) {
        p += clcf->name.len;
    }

    /* the path's segments, each an id or a word */

    n = 0;

    while (p < last) {
        while (p < last && *p == '/') {
            p++;
        }

        if (p == last) {
            break;
        }

        if (n == 6) {
            goto not_found;
        }

        s = p;

        while (p < last && *p != '/') {
            p++;
        }

        seg[n].data = s;
        seg[n].len = p - s;

        if (ngx_http_agent_lg_id_valid(&seg[n]) != NGX_OK) {
            goto not_found;
        }

        n++;
    }

    methods = 0;

    for (i = 0; ngx_http_agent_lg_paths[i].path; i++) {
        if (ngx_http_agent_lg_match(ngx_http_agent_lg_paths[i].path, seg, n,
                                    req)
            != NGX_OK)
        {
            continue;
        }

        if (r->method & ngx_http_agent_lg_paths[i].methods) {
            req->route = ngx_http_agent_lg_paths[i].route;
            return NGX_OK;
        }

        methods |= ngx_http_agent_lg_paths[i].methods;
    }

    if (methods == 0) {
        goto not_found;
    }

    return ngx_http_agent_not_allowed(r, methods);

not_found:

    return ngx_http_agent_error(r, NGX_HTTP_NOT_FOUND,
                                "no such endpoint: %V", &r->uri);
}


/* "threads/ * /runs/ *": the first id is the thread's, the last the other */

static ngx_int_t
ngx_http_agent_lg_match(const char *path, ngx_str_t *seg, ngx_uint_t n,
    ngx_http_agent_lg_req_t *req)
{
    size_t      len;
    ngx_uint_t  i, ids;

    ids = 0;

    for (i = 0; *path; i++) {
        len = ngx_strlen(path);

        if (ngx_strchr(path, '/')) {
            len = (u_char *) ngx_strchr(path, '/') - (u_char *) path;
        }

        if (i == n) {
            return NGX_DECLINED;
        }

        if (len == 1 && path[0] == '*') {
            if (ids++ == 0 && i == 1 && seg[0].len == 7
                && ngx_strncmp(seg[0].data, "threads", 7) == 0)
            {
                req->thread_id = seg[i];

            } else {
                req->id = seg[i];
            }

        } else if (seg[i].len != len
                   || ngx_strncmp(seg[i].data, path, len) != 0)
        {
            return NGX_DECLINED;
        }

        path += len;

        if (*path == '/') {
            path++;
        }
    }

    return i == n ? NGX_OK : NGX_DECLINED;
}


ngx_int_t
ngx_http_agent_lg_dispatch(ngx_http_request_t *r, ngx_http_agent_ctx_t *ctx,
    ngx_str_t *body)
{
    ngx_str_t                 none;
    ngx_http_agent_lg_req_t  *req;

    req = ctx->api;

    if (body == NULL) {
        ngx_str_set(&none, "");
        body = &none;
    }

    switch (req->route) {

    case NGX_HTTP_AGENT_LG_OK:
    case NGX_HTTP_AGENT_LG_INFO:
        return ngx_http_agent_lg_info(r, req->route);

    case NGX_HTTP_AGENT_LG_ASSISTANTS_SEARCH:
    case NGX_HTTP_AGENT_LG_ASSISTANT:
        return ngx_http_agent_lg_assistants(r, req, body);

    case NGX_HTTP_AGENT_LG_THREADS:
    case NGX_HTTP_AGENT_LG_THREADS_SEARCH:
        return req->route == NGX_HTTP_AGENT_LG_THREADS
               ? ngx_http_agent_lg_thread(r, req, body)
               : ngx_http_agent_lg_threads(r, req, body);

    case NGX_HTTP_AGENT_LG_THREAD:
        return ngx_http_agent_lg_thread(r, req, body);

    case NGX_HTTP_AGENT_LG_STATE:
        if (r->method == NGX_HTTP_POST) {
            return ngx_http_agent_lg_update_state(r, req, body);
        }

        /* fall through */

    case NGX_HTTP_AGENT_LG_STATE_AT:
        return ngx_http_agent_lg_state(r, req);

    case NGX_HTTP_AGENT_LG_HISTORY:
        return ngx_http_agent_lg_history(r, req, body);

    case NGX_HTTP_AGENT_LG_RUN_JOIN:
    case NGX_HTTP_AGENT_LG_RUN_JOIN_JSON:
        return ngx_http_agent_lg_join(r, req);

    case NGX_HTTP_AGENT_LG_RUNS:
    case NGX_HTTP_AGENT_LG_RUN:
    case NGX_HTTP_AGENT_LG_RUN_CANCEL:
        if (!(r->method == NGX_HTTP_POST
              && req->route == NGX_HTTP_AGENT_LG_RUNS))
        {
            return ngx_http_agent_lg_runs(r, req, body);
        }

        /* fall through */

    default:
        return ngx_http_agent_lg_run(r, req, body);
    }
}


/* an id in a path, and one a client gives to name a thread */

ngx_int_t
ngx_http_agent_lg_id_valid(ngx_str_t *id)
{
    size_t  i;

    if (id->len == 0 || id->len > NGX_HTTP_AGENT_LG_ID_MAX) {
        return NGX_DECLINED;
    }

    for (i = 0; i < id->len; i++) {
        if (!(isalnum(id->data[i]) || id->data[i] == '-'
              || id->data[i] == '_'))
        {
            return NGX_DECLINED;
        }
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_lg_send(ngx_http_request_t *r, ngx_uint_t status,
    ngx_http_agent_json_t *j)
{
    ngx_str_t  out;

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_send(r, status, &out);
}


static ngx_int_t
ngx_http_agent_lg_info(ngx_http_request_t *r, ngx_uint_t info)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_obj(j);

    if (info == NGX_HTTP_AGENT_LG_OK) {
        ngx_http_agent_json_key(j, "ok");
        ngx_http_agent_json_bool(j, 1);

    } else {
        ngx_http_agent_json_key(j, "version");
        ngx_http_agent_json_cstr(j, NGINX_VERSION);
        ngx_http_agent_json_key(j, "langgraph_js_version");
        ngx_http_agent_json_null(j);
        ngx_http_agent_json_key(j, "context");
        ngx_http_agent_json_cstr(j, "nginx");
        ngx_http_agent_json_key(j, "flags");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "assistants");
        ngx_http_agent_json_bool(j, 1);
        ngx_http_agent_json_key(j, "crons");
        ngx_http_agent_json_bool(j, 0);
        ngx_http_agent_json_key(j, "langsmith");
        ngx_http_agent_json_bool(j, 0);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);

    return ngx_http_agent_lg_send(r, NGX_HTTP_OK, j);
}


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


static ngx_int_t
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
            return ngx_http_agent_error(r, NGX_HTTP_NOT_FOUND,
                                        "No assistant found for \"%V\"",
                                        &req->id);
        }

        ngx_http_agent_lg_assistant_json(j, one);

        return ngx_http_agent_lg_send(r, NGX_HTTP_OK, j);
    }

    rc = ngx_http_agent_parse_object(r, body, &v, 1);
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
            return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
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
