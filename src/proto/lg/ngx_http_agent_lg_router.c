
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"


/*
 * agent_langgraph_api: the LangGraph Agent Server's routes over our
 * graphs (assistants), sessions (threads) and checkpoints, so that
 * LangGraph's own SDK and UIs work against nginx.  This file routes and
 * answers /ok and /info; assistants are lg_assistants.c's, threads and
 * their state lg_thread.c's, runs lg_run.c's, runs as records and joins
 * lg_runs.c's, the store's items lg_store.c's.
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


static ngx_http_agent_lg_path_t  ngx_http_agent_lg_paths[] = {
    { "", NGX_HTTP_GET, NGX_HTTP_AGENT_LG_OK },
    { "ok", NGX_HTTP_GET, NGX_HTTP_AGENT_LG_OK },
    { "info", NGX_HTTP_GET, NGX_HTTP_AGENT_LG_INFO },
    { "assistants", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_ASSISTANTS },
    { "assistants/search", NGX_HTTP_POST,
      NGX_HTTP_AGENT_LG_ASSISTANTS_SEARCH },
    { "assistants/count", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_ASSISTANTS_COUNT },
    { "assistants/*", NGX_HTTP_GET|NGX_HTTP_PATCH|NGX_HTTP_DELETE,
      NGX_HTTP_AGENT_LG_ASSISTANT },
    { "assistants/*/versions", NGX_HTTP_POST,
      NGX_HTTP_AGENT_LG_ASSISTANT_VERSIONS },
    { "assistants/*/latest", NGX_HTTP_POST,
      NGX_HTTP_AGENT_LG_ASSISTANT_LATEST },
    { "assistants/*/graph", NGX_HTTP_GET, NGX_HTTP_AGENT_LG_ASSISTANT_GRAPH },
    { "assistants/*/schemas", NGX_HTTP_GET,
      NGX_HTTP_AGENT_LG_ASSISTANT_SCHEMAS },
    { "assistants/*/subgraphs", NGX_HTTP_GET,
      NGX_HTTP_AGENT_LG_ASSISTANT_SUBGRAPHS },
    { "threads", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_THREADS },
    { "threads/search", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_THREADS_SEARCH },
    { "threads/count", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_THREADS_COUNT },
    { "threads/*", NGX_HTTP_GET|NGX_HTTP_PATCH|NGX_HTTP_DELETE,
      NGX_HTTP_AGENT_LG_THREAD },
    { "threads/*/copy", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_THREAD_COPY },
    { "threads/*/storage", NGX_HTTP_GET, NGX_HTTP_AGENT_LG_THREAD_STORAGE },
    { "threads/*/state", NGX_HTTP_GET|NGX_HTTP_POST,
      NGX_HTTP_AGENT_LG_STATE },
    { "threads/*/state/*", NGX_HTTP_GET, NGX_HTTP_AGENT_LG_STATE_AT },
    { "threads/*/state/checkpoint", NGX_HTTP_POST,
      NGX_HTTP_AGENT_LG_STATE_CHECKPOINT },
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
    { "threads/*/runs/crons", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_CRONS },
    { "runs", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_STATELESS_RUNS },
    { "runs/crons", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_CRONS },
    { "runs/crons/search", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_CRONS_SEARCH },
    { "runs/crons/count", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_CRONS_COUNT },
    { "runs/crons/*", NGX_HTTP_PATCH|NGX_HTTP_DELETE, NGX_HTTP_AGENT_LG_CRON },
    { "runs/stream", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_STATELESS_STREAM },
    { "runs/wait", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_STATELESS_WAIT },
    { "store/items", NGX_HTTP_GET|NGX_HTTP_PUT|NGX_HTTP_DELETE,
      NGX_HTTP_AGENT_LG_STORE },
    { "store/items/search", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_STORE_SEARCH },
    { "store/namespaces", NGX_HTTP_POST, NGX_HTTP_AGENT_LG_STORE_NAMESPACES },
    { NULL, 0, 0 }
};


ngx_int_t
ngx_http_agent_lg_route(ngx_http_request_t *r, ngx_http_agent_ctx_t *ctx)
{
    u_char                    *p, *last, *s;
    ngx_str_t                  seg[6], path;
    ngx_uint_t                 n, i, methods;
    ngx_http_agent_lg_req_t   *req;

    req = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_lg_req_t));
    if (req == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->api = req;

    ngx_http_agent_reply_path(r, &path);

    p = path.data;
    last = path.data + path.len;

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

        if (!ngx_http_agent_id_valid(&seg[n])) {
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
            req->asked = req->thread_id;
            return NGX_OK;
        }

        methods |= ngx_http_agent_lg_paths[i].methods;
    }

    if (methods == 0) {
        goto not_found;
    }

    return ngx_http_agent_reply_not_allowed(r, methods);

not_found:

    return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
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
    ngx_int_t                 rc;
    ngx_str_t                 none;
    ngx_http_agent_lg_req_t  *req;

    req = ctx->api;

    if (body == NULL) {
        ngx_str_set(&none, "");
        body = &none;
    }

    /* the owner's thread the client's id names, found again in each pass */

    req->thread_id = req->asked;

    rc = ngx_http_agent_reply_session_scope(r, &req->thread_id);

    if (rc != NGX_OK) {
        return rc == NGX_AGAIN ? NGX_AGAIN : NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    switch (req->route) {

    case NGX_HTTP_AGENT_LG_OK:
    case NGX_HTTP_AGENT_LG_INFO:
        return ngx_http_agent_lg_info(r, req->route);

    case NGX_HTTP_AGENT_LG_ASSISTANTS:
    case NGX_HTTP_AGENT_LG_ASSISTANTS_SEARCH:
    case NGX_HTTP_AGENT_LG_ASSISTANTS_COUNT:
    case NGX_HTTP_AGENT_LG_ASSISTANT:
    case NGX_HTTP_AGENT_LG_ASSISTANT_VERSIONS:
    case NGX_HTTP_AGENT_LG_ASSISTANT_LATEST:
    case NGX_HTTP_AGENT_LG_ASSISTANT_GRAPH:
    case NGX_HTTP_AGENT_LG_ASSISTANT_SCHEMAS:
    case NGX_HTTP_AGENT_LG_ASSISTANT_SUBGRAPHS:
        return ngx_http_agent_lg_assistants(r, req, body);

    case NGX_HTTP_AGENT_LG_THREADS:
    case NGX_HTTP_AGENT_LG_THREADS_SEARCH:
        return req->route == NGX_HTTP_AGENT_LG_THREADS
               ? ngx_http_agent_lg_thread(r, req, body)
               : ngx_http_agent_lg_threads(r, req, body);

    case NGX_HTTP_AGENT_LG_THREAD:
    case NGX_HTTP_AGENT_LG_THREAD_COPY:
        return ngx_http_agent_lg_thread(r, req, body);

    case NGX_HTTP_AGENT_LG_THREADS_COUNT:
        return ngx_http_agent_lg_threads_count(r, body);

    case NGX_HTTP_AGENT_LG_THREAD_STORAGE:
        return ngx_http_agent_lg_storage(r, req);

    case NGX_HTTP_AGENT_LG_STATE:
        if (r->method == NGX_HTTP_POST) {
            return ngx_http_agent_lg_update_state(r, req, body);
        }

        /* fall through */

    case NGX_HTTP_AGENT_LG_STATE_AT:
        return ngx_http_agent_lg_state(r, req, NULL);

    case NGX_HTTP_AGENT_LG_STATE_CHECKPOINT:
        return ngx_http_agent_lg_state(r, req, body);

    case NGX_HTTP_AGENT_LG_HISTORY:
        return ngx_http_agent_lg_history(r, req, body);

    case NGX_HTTP_AGENT_LG_RUN_JOIN:
    case NGX_HTTP_AGENT_LG_RUN_JOIN_JSON:
        return ngx_http_agent_lg_join(r, req);

    case NGX_HTTP_AGENT_LG_STORE:
    case NGX_HTTP_AGENT_LG_STORE_SEARCH:
    case NGX_HTTP_AGENT_LG_STORE_NAMESPACES:
        return ngx_http_agent_lg_store(r, req, body);

    case NGX_HTTP_AGENT_LG_CRONS:
    case NGX_HTTP_AGENT_LG_CRONS_SEARCH:
    case NGX_HTTP_AGENT_LG_CRONS_COUNT:
    case NGX_HTTP_AGENT_LG_CRON:
        return ngx_http_agent_lg_crons(r, req, body);

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
        return ngx_http_agent_lg_run_create(r, req, body);
    }
}


static ngx_int_t
ngx_http_agent_lg_info(ngx_http_request_t *r, ngx_uint_t info)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }


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
        ngx_http_agent_json_bool(j, 1);
        ngx_http_agent_json_key(j, "langsmith");
        ngx_http_agent_json_bool(j, 0);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}
