
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_kinds_int.h"


/*
 * "node NAME store op=put|get|search|delete|recall namespace=TEMPLATE
 * [key=TEMPLATE] [value=CHANNEL|NAME:CHANNEL,...] [index=off|PATH,...]
 * [output=CHANNEL] [query=TEMPLATE] [limit=N] [ttl=MINUTES] [from=CHANNEL]
 * [k=N] [min_score=S] [text=CHANNEL]": the LangGraph store from a graph,
 * long-term memory across threads (LangGraph's store.put, get, search in
 * a node).  The items are the session owner's, the same the LangGraph
 * API's /store/items shows.  The namespace is its labels joined by ".",
 * each rendered; a value is a channel's object, or an object of channels'
 * values under names (value=id:user_id is {"id": user_id}): never text
 * made into JSON.  With the location's agent_embeddings a put is embedded
 * as the API's is, and recall finds the k items nearest in meaning to a
 * channel's text (docs/memory.md): the model's call and the store's scan
 * both wake the pass again, as the API's request is woken.
 */


static ngx_int_t ngx_http_agent_node_store_check(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);
static ngx_int_t ngx_http_agent_node_store_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);
static ngx_int_t ngx_http_agent_node_store_pass(
    ngx_http_agent_node_store_ctx_t *ctx);
static ngx_int_t ngx_http_agent_node_store_embed(
    ngx_http_agent_node_store_ctx_t *ctx);
static void ngx_http_agent_node_store_wake(ngx_http_agent_store_call_t *sc);
static void ngx_http_agent_node_store_cancel(ngx_http_agent_run_t *run);
static ngx_int_t ngx_http_agent_node_store_ns(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_str_t *ns);
static ngx_int_t ngx_http_agent_node_store_value(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_str_t *value);


static ngx_conf_enum_t  ngx_http_agent_node_store_ops[] = {
    { ngx_string("put"), NGX_HTTP_AGENT_STORE_PUT },
    { ngx_string("get"), NGX_HTTP_AGENT_STORE_GET },
    { ngx_string("search"), NGX_HTTP_AGENT_STORE_SEARCH },
    { ngx_string("delete"), NGX_HTTP_AGENT_STORE_DELETE },
    { ngx_string("recall"), NGX_HTTP_AGENT_STORE_RECALL },
    { ngx_null_string, 0 }
};


static ngx_http_agent_param_bounds_t  ngx_http_agent_node_store_limits = {
    1, 1000
};

static ngx_http_agent_param_bounds_t  ngx_http_agent_node_store_ttls = {
    1, 525600 * 100
};

static ngx_http_agent_param_bounds_t  ngx_http_agent_node_store_ks = {
    1, 100
};


static ngx_http_agent_param_t  ngx_http_agent_node_store_params[] = {
    { ngx_string("op"), ngx_http_agent_params_set_enum,
      offsetof(ngx_http_agent_node_store_conf_t, op),
      ngx_http_agent_node_store_ops },
    { ngx_string("namespace"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_store_conf_t, ns), NULL },
    { ngx_string("key"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_store_conf_t, key), NULL },
    { ngx_string("value"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_store_conf_t, value), NULL },
    { ngx_string("query"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_store_conf_t, query), NULL },
    { ngx_string("limit"), ngx_http_agent_params_set_num,
      offsetof(ngx_http_agent_node_store_conf_t, limit),
      &ngx_http_agent_node_store_limits },
    { ngx_string("ttl"), ngx_http_agent_params_set_num,
      offsetof(ngx_http_agent_node_store_conf_t, ttl),
      &ngx_http_agent_node_store_ttls },
    { ngx_string("output"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_store_conf_t, output_name),
      &ngx_http_agent_param_optional },
    { ngx_string("index"), ngx_http_agent_params_set_list,
      offsetof(ngx_http_agent_node_store_conf_t, index), NULL },
    { ngx_string("k"), ngx_http_agent_params_set_num,
      offsetof(ngx_http_agent_node_store_conf_t, k),
      &ngx_http_agent_node_store_ks },
    { ngx_string("min_score"), ngx_http_agent_node_store_recall_score,
      offsetof(ngx_http_agent_node_store_conf_t, min_score), NULL },
    { ngx_string("from"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_store_conf_t, from_name),
      &ngx_http_agent_param_optional },
    { ngx_string("text"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_store_conf_t, text_name),
      &ngx_http_agent_param_optional },
    ngx_http_agent_null_param
};


ngx_http_agent_kind_t  ngx_http_agent_store_kind = {
    ngx_string("store"),
    NULL,
    ngx_http_agent_node_store_params,
    ngx_http_agent_node_store_check,
    ngx_http_agent_node_store_run,
    0,
    NULL,
    sizeof(ngx_http_agent_node_store_conf_t)
};


static ngx_int_t
ngx_http_agent_node_store_check(ngx_conf_t *cf, ngx_http_agent_graph_t *graph,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_store_conf_t *sc = node->conf;

    u_char                             *p, *last, *s, *colon;
    ngx_str_t                           ch, *path;
    ngx_http_agent_node_store_field_t  *f;

    if (sc->ns.len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the store node \"%V\" "
                           "needs namespace=", &node->name);
        return NGX_ERROR;
    }

    if (ngx_http_agent_node_store_recall_check(cf, node) != NGX_OK) {
        return NGX_ERROR;
    }

    if (sc->op == NGX_HTTP_AGENT_STORE_RECALL) {
        return NGX_OK;
    }

    if (sc->limit == 0) {
        sc->limit = 10;
    }

    if (sc->op != NGX_HTTP_AGENT_STORE_SEARCH && sc->key.len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the store node \"%V\" "
                           "needs key=", &node->name);
        return NGX_ERROR;
    }

    if ((sc->op == NGX_HTTP_AGENT_STORE_GET
         || sc->op == NGX_HTTP_AGENT_STORE_SEARCH)
        && sc->output < 0)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the store node \"%V\" "
                           "needs output=CHANNEL to %s", &node->name,
                           sc->op == NGX_HTTP_AGENT_STORE_GET ? "get"
                                                               : "search");
        return NGX_ERROR;
    }

    if (sc->op != NGX_HTTP_AGENT_STORE_PUT) {
        if (sc->index) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the store node \"%V\":"
                               " index= is put's", &node->name);
            return NGX_ERROR;
        }

        return NGX_OK;
    }

    path = sc->index ? sc->index->elts : NULL;

    if (path && sc->index->nelts == 1 && path->len == 3
        && ngx_strncmp(path->data, "off", 3) == 0)
    {
        sc->index_off = 1;
    }

    if (sc->value.len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the store node \"%V\" "
                           "needs value=CHANNEL or value=NAME:CHANNEL,... "
                           "to put", &node->name);
        return NGX_ERROR;
    }

    /* CHANNEL, or NAME:CHANNEL,...: resolved now */

    sc->fields = ngx_array_create(cf->pool, 2,
                                  sizeof(ngx_http_agent_node_store_field_t));
    if (sc->fields == NULL) {
        return NGX_ERROR;
    }

    last = sc->value.data + sc->value.len;

    for (s = sc->value.data, p = s; p <= last; p++) {
        if (p < last && *p != ',') {
            continue;
        }

        f = ngx_array_push(sc->fields);
        if (f == NULL) {
            return NGX_ERROR;
        }

        ngx_str_null(&f->name);
        ch.data = s;
        ch.len = p - s;

        colon = ngx_strlchr(s, p, ':');

        if (colon) {
            f->name.data = s;
            f->name.len = colon - s;
            ch.data = colon + 1;
            ch.len = p - ch.data;
        }

        f->channel = ngx_http_agent_graph_channel(graph, &ch);

        if (f->channel == NGX_ERROR || (colon && f->name.len == 0)
            || (colon == NULL && sc->value.len != ch.len))
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the store node \"%V\": "
                               "value=%V: a channel of the graph, or NAME:"
                               "CHANNEL,... (\"%V\" is none)", &node->name,
                               &sc->value, &ch);
            return NGX_ERROR;
        }

        s = p + 1;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_node_store_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_store_conf_t *sc = node->conf;

    ngx_int_t                         rc;
    ngx_http_agent_env_t             *env;
    ngx_http_agent_node_store_ctx_t  *ctx;

    env = run->data;

    ctx = ngx_pcalloc(run->pool, sizeof(ngx_http_agent_node_store_ctx_t));
    if (ctx == NULL) {
        return NGX_ERROR;
    }

    ctx->run = run;
    ctx->node = node;
    ctx->item.owner = env->owner;

    if (ngx_http_agent_node_store_ns(run, node, &ctx->item.ns) != NGX_OK) {
        return NGX_ERROR;
    }

    if (sc->key.len
        && ngx_http_agent_template_render(run, run->pool, &sc->key,
                                          &ctx->item.key) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (sc->op != NGX_HTTP_AGENT_STORE_SEARCH
        && sc->op != NGX_HTTP_AGENT_STORE_RECALL
        && (ctx->item.key.len == 0 || ctx->item.key.len > 1024))
    {
        return ngx_http_agent_graph_fail(run, "node_failed", "the store node "
                                         "\"%V\": its key is empty or longer "
                                         "than 1024 bytes", &node->name);
    }

    switch (sc->op) {

    case NGX_HTTP_AGENT_STORE_PUT:
        if (ngx_http_agent_node_store_value(run, node, &ctx->item.value)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        if (!sc->index_off) {
            /* found by words, and by meaning where there are embeddings */
            ngx_http_agent_store_item_text(&ctx->item);

            ctx->doc = ngx_http_agent_json_parse(run->pool,
                                                 ctx->item.value.data,
                                                 ctx->item.value.len, NULL);
            if (ctx->doc == NULL) {
                return NGX_ERROR;
            }
        }

        ctx->item.expires = sc->ttl ? ngx_time() + sc->ttl * 60 : 0;

        ctx->item.updated_at.data = ngx_pnalloc(run->pool, 32);
        if (ctx->item.updated_at.data == NULL) {
            return NGX_ERROR;
        }

        ctx->item.updated_at.len =
                        ngx_http_agent_store_now(ctx->item.updated_at.data)
                        - ctx->item.updated_at.data;
        break;

    case NGX_HTTP_AGENT_STORE_SEARCH:
        ctx->q.owner = env->owner;
        ctx->q.prefix = ctx->item.ns;
        ctx->q.limit = sc->limit;
        ctx->q.now = ngx_time();

        if (sc->query.len
            && ngx_http_agent_template_render(run, run->pool, &sc->query,
                                              &ctx->q.query) != NGX_OK)
        {
            return NGX_ERROR;
        }

        ctx->q.query.len = ngx_min(ctx->q.query.len, 1024);
        break;

    case NGX_HTTP_AGENT_STORE_RECALL:
        ctx->q.owner = env->owner;
        ctx->q.prefix = ctx->item.ns;
        ctx->q.limit = sc->k;
        ctx->q.now = ngx_time();

        if (ngx_http_agent_node_store_recall_about(run, ctx) != NGX_OK) {
            return NGX_ERROR;
        }

        break;

    default:
        break;
    }

    ngx_http_agent_store_call_init(&ctx->sc, run->pool, run->log,
                                   ngx_http_agent_node_store_wake, ctx);
    ctx->sc.key = env->session_id;

    rc = ngx_http_agent_node_store_pass(ctx);

    if (rc == NGX_AGAIN) {
        run->node_data = ctx;
        run->cancel = ngx_http_agent_node_store_cancel;
    }

    return rc;
}


/*
 * the store's call, made again from its start when the store or the
 * embeddings model answers
 */

static ngx_int_t
ngx_http_agent_node_store_pass(ngx_http_agent_node_store_ctx_t *ctx)
{
    ngx_http_agent_node_store_conf_t *sc = ctx->node->conf;

    ngx_int_t               rc;
    ngx_str_t               json;
    ngx_array_t            *items;
    ngx_http_agent_run_t   *run;
    ngx_http_agent_item_t   got;

    run = ctx->run;
    ctx->sc.n = 0;
    items = NULL;

    /* the model's vector first: its answer wakes this pass as the store's */
    rc = ngx_http_agent_node_store_embed(ctx);
    if (rc != NGX_OK) {
        return rc;
    }

    switch (sc->op) {

    case NGX_HTTP_AGENT_STORE_PUT:
        rc = ngx_http_agent_store_item_put(&ctx->sc, &ctx->item, ngx_time());
        break;

    case NGX_HTTP_AGENT_STORE_GET:
        rc = ngx_http_agent_store_item_get(&ctx->sc, &ctx->item.owner,
                                           &ctx->item.ns, &ctx->item.key,
                                           ngx_time(), &got);
        break;

    case NGX_HTTP_AGENT_STORE_DELETE:
        rc = ngx_http_agent_store_item_delete(&ctx->sc, &ctx->item.owner,
                                              &ctx->item.ns, &ctx->item.key);
        break;

    default: /* NGX_HTTP_AGENT_STORE_SEARCH, NGX_HTTP_AGENT_STORE_RECALL */
        items = ngx_array_create(run->pool, 4, sizeof(ngx_http_agent_item_t));
        if (items == NULL) {
            return NGX_ERROR;
        }

        rc = NGX_OK;

        if (sc->op == NGX_HTTP_AGENT_STORE_SEARCH || ctx->q.vector.len) {
            rc = ngx_http_agent_store_item_search(&ctx->sc, &ctx->q, items);
        }

        break;
    }

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return ngx_http_agent_graph_fail(run, "node_failed", "the store node "
                                         "\"%V\" could not reach the store",
                                         &ctx->node->name);
    }

    if (sc->op == NGX_HTTP_AGENT_STORE_RECALL) {
        return ngx_http_agent_node_store_recall_write(ctx, items);
    }

    if (sc->output < 0) {
        return NGX_OK;
    }

    /* get: the item's value, or null; search: the items found */

    if (sc->op == NGX_HTTP_AGENT_STORE_GET) {
        if (rc == NGX_OK) {
            json = got.value;

        } else {
            ngx_str_set(&json, "null");
        }

    } else if (sc->op == NGX_HTTP_AGENT_STORE_SEARCH) {
        if (ngx_http_agent_node_store_items(run, items, &json) != NGX_OK) {
            return NGX_ERROR;
        }

    } else if (rc == NGX_OK) {
        ngx_str_set(&json, "true");     /* delete: it was there */

    } else {
        ngx_str_set(&json, "false");
    }

    return ngx_http_agent_graph_write_value(run->update, sc->output, &json);
}


/*
 * the model's vectors: a put's value as a document (index= off: none; no
 * agent_embeddings: found by words only), recall's text as a query
 */

static ngx_int_t
ngx_http_agent_node_store_embed(ngx_http_agent_node_store_ctx_t *ctx)
{
    ngx_http_agent_node_store_conf_t *sc = ctx->node->conf;

    ngx_int_t              rc;
    ngx_str_t              err, *fields;
    ngx_uint_t             n;
    ngx_http_agent_env_t  *env;

    env = ctx->run->data;

    /* the turn pays for them, as for its model calls */
    if (ngx_http_agent_node_store_usage(ctx->run) != NGX_OK) {
        return NGX_ERROR;
    }

    if (sc->op == NGX_HTTP_AGENT_STORE_PUT && ctx->doc
        && env->services.index)
    {
        fields = sc->index ? sc->index->elts : NULL;
        n = sc->index ? sc->index->nelts : 0;

        rc = env->services.index(env->services.data, &ctx->sc, ctx->doc,
                                 fields, n, &ctx->item.vector, &err);

    } else if (sc->op == NGX_HTTP_AGENT_STORE_RECALL && ctx->about.len) {
        rc = env->services.embed ? env->services.embed(env->services.data,
                                                       &ctx->sc, &ctx->about,
                                                       &ctx->q.vector, &err)
                                 : NGX_DECLINED;

        if (rc == NGX_DECLINED) {
            return ngx_http_agent_graph_fail(ctx->run, "node_failed", "the "
                                             "store node \"%V\" recalls by "
                                             "meaning: its location needs "
                                             "agent_embeddings",
                                             &ctx->node->name);
        }

    } else {
        return NGX_OK;
    }

    if (rc == NGX_ERROR) {
        return ngx_http_agent_graph_fail(ctx->run, "node_failed", "the store "
                                         "node \"%V\": the embeddings model "
                                         "failed: %V", &ctx->node->name,
                                         &err);
    }

    return rc == NGX_DECLINED ? NGX_OK : rc;
}


static void
ngx_http_agent_node_store_wake(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_node_store_ctx_t *ctx = sc->data;

    ngx_int_t              rc;
    ngx_http_agent_run_t  *run;

    run = ctx->run;

    if (ctx->cancelled) {
        /* the embeddings model answered a run that stopped */
        return;
    }

    rc = ngx_http_agent_node_store_pass(ctx);

    if (rc == NGX_AGAIN) {
        return;
    }

    run->cancel = NULL;
    ngx_http_agent_graph_node_done(run, rc);
}


/* the run stops: the store's answer, when it comes, is dropped */

static void
ngx_http_agent_node_store_cancel(ngx_http_agent_run_t *run)
{
    ngx_http_agent_node_store_ctx_t *ctx = run->node_data;

    ctx->cancelled = 1;
    ngx_http_agent_store_cancel(&ctx->sc);
}


/* "a.{{user}}": each label rendered, none empty */

static ngx_int_t
ngx_http_agent_node_store_ns(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_str_t *ns)
{
    ngx_http_agent_node_store_conf_t *sc = node->conf;

    u_char  *p, *last;

    if (ngx_http_agent_template_render(run, run->pool, &sc->ns, ns)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    last = ns->data + ns->len;

    for (p = ns->data; p < last; p++) {
        if (*p == '.' && (p == ns->data || p + 1 == last || p[1] == '.')) {
            break;
        }
    }

    if (ns->len == 0 || ns->len > 1024 || p < last) {
        return ngx_http_agent_graph_fail(run, "node_failed", "the store node "
                                         "\"%V\": the namespace \"%V\" has "
                                         "an empty label", &node->name, ns);
    }

    return NGX_OK;
}


/* a channel's object, or {NAME: a channel's value, ...} */

static ngx_int_t
ngx_http_agent_node_store_value(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_str_t *value)
{
    ngx_http_agent_node_store_conf_t *sc = node->conf;

    yajl_val                            v;
    ngx_str_t                           json;
    ngx_uint_t                          i;
    ngx_http_agent_json_t              *j;
    ngx_http_agent_node_store_field_t  *f;

    f = sc->fields->elts;

    if (f[0].name.len == 0) {
        if (ngx_http_agent_graph_value(run, f[0].channel, &json) != NGX_OK) {
            return NGX_ERROR;
        }

        v = ngx_http_agent_json_parse(run->pool, json.data, json.len, NULL);

        if (v == NULL || !YAJL_IS_OBJECT(v)) {
            return ngx_http_agent_graph_fail(run, "node_failed", "the store "
                                             "node \"%V\": value=%V holds "
                                             "no JSON object", &node->name,
                                             &sc->value);
        }

        *value = json;
        return NGX_OK;
    }

    j = ngx_http_agent_json_create_obj(run->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }


    for (i = 0; i < sc->fields->nelts; i++) {
        if (ngx_http_agent_graph_value(run, f[i].channel, &json) != NGX_OK) {
            return NGX_ERROR;
        }

        ngx_http_agent_json_str(j, &f[i].name);
        ngx_http_agent_json_raw(j, &json);
    }

    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, value);
}
