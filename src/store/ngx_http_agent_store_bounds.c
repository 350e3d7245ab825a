
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"


/*
 * The bounds of what the store keeps, on the one road into it: every
 * write of a JSON document (a session's or thread's metadata, a state's
 * channels, a run's metadata and kwargs, a cron, an assistant's version,
 * an item's value) goes through these calls, whichever protocol made it,
 * so that a route added later cannot store what no answer could hold.
 * A document over agent_max_document_size is refused before the back end
 * sees it: the call fails (NGX_ERROR) with its reason in sc->refused,
 * which the reply writer answers as a 422 (ngx_http_agent_reply_error).
 * An item past its owner's agent_store_quota is refused the same way.
 * Every list the store reads stops at NGX_HTTP_AGENT_STORE_LIST_MAX bytes
 * (ngx_http_agent_store_room): with no document larger than a quarter of
 * an answer, the first entry fits too.
 *
 * The two directives are this file's own nginx module's, as upstream's
 * are ngx_http_upstream_module's: the workers take its configuration.
 */


/* agent_cache_max's defaults: the cache's entries, and their bytes */
#define NGX_HTTP_AGENT_STORE_CACHE_ITEMS   10000
#define NGX_HTTP_AGENT_STORE_CACHE_SIZE    (64 * 1024 * 1024)


typedef struct {
    size_t                     document_max;
    ngx_uint_t                 quota_items;   /* 0: none */
    size_t                     quota_size;    /* 0: none */
    ngx_uint_t                 cache_items;   /* agent_cache_max */
    size_t                     cache_size;
} ngx_http_agent_store_conf_t;


static ngx_int_t ngx_http_agent_store_fits(ngx_http_agent_store_call_t *sc,
    const char *what, ngx_str_t *doc);
static ngx_int_t ngx_http_agent_store_fits_state(
    ngx_http_agent_store_call_t *sc, ngx_str_t *channels);
static ngx_int_t ngx_http_agent_store_refuse(ngx_http_agent_store_call_t *sc,
    const char *fmt, ...);

static char *ngx_http_agent_store_document_check(ngx_conf_t *cf, void *post,
    void *data);
static char *ngx_http_agent_store_quota(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_agent_store_bounds_set(ngx_conf_t *cf,
    ngx_uint_t *items, size_t *bytes);
static void *ngx_http_agent_store_create_conf(ngx_conf_t *cf);
static char *ngx_http_agent_store_init_conf(ngx_conf_t *cf, void *conf);
static ngx_int_t ngx_http_agent_store_init_process(ngx_cycle_t *cycle);


/* the worker's, from its configuration */
static ngx_http_agent_store_conf_t  ngx_http_agent_store_bounds = {
    1024 * 1024, 0, 0, NGX_HTTP_AGENT_STORE_CACHE_ITEMS,
    NGX_HTTP_AGENT_STORE_CACHE_SIZE
};


static ngx_conf_post_t  ngx_http_agent_store_document_post = {
    ngx_http_agent_store_document_check
};


static ngx_command_t  ngx_http_agent_store_commands[] = {

    { ngx_string("agent_max_document_size"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_size_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_agent_store_conf_t, document_max),
      &ngx_http_agent_store_document_post },

    { ngx_string("agent_store_quota"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_agent_store_quota,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("agent_cache_max"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_agent_store_quota,
      NGX_HTTP_MAIN_CONF_OFFSET,
      1,
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_agent_store_module_ctx = {
    NULL,                                  /* preconfiguration */
    NULL,                                  /* postconfiguration */

    ngx_http_agent_store_create_conf,      /* create main configuration */
    ngx_http_agent_store_init_conf,        /* init main configuration */

    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */

    NULL,                                  /* create location configuration */
    NULL                                   /* merge location configuration */
};


ngx_module_t  ngx_http_agent_store_module = {
    NGX_MODULE_V1,
    &ngx_http_agent_store_module_ctx,      /* module context */
    ngx_http_agent_store_commands,         /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    NULL,                                  /* init module */
    ngx_http_agent_store_init_process,     /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    NULL,                                  /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


static ngx_int_t
ngx_http_agent_store_fits(ngx_http_agent_store_call_t *sc, const char *what,
    ngx_str_t *doc)
{
    if (doc == NULL || doc->len <= ngx_http_agent_store_bounds.document_max) {
        return NGX_OK;
    }

    return ngx_http_agent_store_refuse(sc, "\"%s\" is %uz bytes, over the "
                               "%uz of agent_max_document_size", what,
                               doc->len,
                               ngx_http_agent_store_bounds.document_max);
}


/*
 * A state's channels hold what a turn made of its input too (the user's
 * message, which agent_history_max_size bounds): they may be as large as
 * an answer, no larger
 */

static ngx_int_t
ngx_http_agent_store_fits_state(ngx_http_agent_store_call_t *sc,
    ngx_str_t *channels)
{
    if (channels->len <= NGX_HTTP_AGENT_STORE_ANSWER_MAX) {
        return NGX_OK;
    }

    return ngx_http_agent_store_refuse(sc, "\"values\" is %uz bytes, over "
                               "the %uz of an answer", channels->len,
                               (size_t) NGX_HTTP_AGENT_STORE_ANSWER_MAX);
}


/*
 * NGX_ERROR, and why in sc->refused (or where sc->refusal points): what
 * the reply writer answers
 */

static ngx_int_t
ngx_http_agent_store_refuse(ngx_http_agent_store_call_t *sc,
    const char *fmt, ...)
{
    u_char     *p;
    va_list     args;
    ngx_str_t  *why;

    why = sc->refusal ? sc->refusal : &sc->refused;

    p = ngx_pnalloc(sc->pool, NGX_HTTP_AGENT_STORE_REFUSED_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    va_start(args, fmt);
    why->len = ngx_vslprintf(p, p + NGX_HTTP_AGENT_STORE_REFUSED_LEN, fmt,
                             args)
               - p;
    va_end(args);

    why->data = p;

    ngx_log_error(NGX_LOG_INFO, sc->log, 0, "agent: a write refused: %V",
                  why);

    return NGX_ERROR;
}


ngx_int_t
ngx_http_agent_store_session_create(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *title, ngx_str_t *metadata, ngx_str_t *owner,
    ngx_http_agent_session_t *s)
{
    if (ngx_http_agent_store_fits(sc, "metadata", metadata) != NGX_OK
        || ngx_http_agent_store_fits(sc, "title", title) != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_store->session_create(sc, id, title, metadata,
                                                owner, s);
}


ngx_int_t
ngx_http_agent_store_session_set(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_uint_t field, ngx_str_t *value)
{
    if (ngx_http_agent_store_fits(sc, "metadata", value) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_agent_store->session_set(sc, id, field, value);
}


ngx_int_t
ngx_http_agent_store_checkpoint_write(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_http_agent_checkpoint_t *cp,
    ngx_array_t *added)
{
    if (ngx_http_agent_store_fits_state(sc, &cp->channels) != NGX_OK
        || ngx_http_agent_store_fits(sc, "metadata", &cp->metadata)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_store->checkpoint_write(sc, session_id, cp, added);
}


ngx_int_t
ngx_http_agent_store_fork_keep(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_str_t *channels)
{
    if (ngx_http_agent_store_fits_state(sc, channels) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_agent_store->fork_keep(sc, id, checkpoint_id, channels);
}


ngx_int_t
ngx_http_agent_store_run_insert(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_row_t *row, ngx_uint_t events)
{
    if (ngx_http_agent_store_fits(sc, "metadata", &row->metadata) != NGX_OK
        || ngx_http_agent_store_fits(sc, "kwargs", &row->kwargs) != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_store->run_insert(sc, row, events);
}


ngx_int_t
ngx_http_agent_store_cron_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_cron_row_t *row)
{
    if (ngx_http_agent_store_fits(sc, "cron", &row->doc) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_agent_store->cron_put(sc, row);
}


ngx_int_t
ngx_http_agent_store_assistant_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_assistant_row_t *row)
{
    if (ngx_http_agent_store_fits(sc, "assistant", &row->doc) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_agent_store->assistant_put(sc, row);
}


ngx_int_t
ngx_http_agent_store_item_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_t *item, int64_t now)
{
    ngx_int_t  rc;

    if (ngx_http_agent_store_fits(sc, "value", &item->value) != NGX_OK
        || ngx_http_agent_store_fits(sc, "index", &item->text) != NGX_OK)
    {
        return NGX_ERROR;
    }

    rc = ngx_http_agent_store->item_put(sc, item, now,
                                        ngx_http_agent_store_bounds.quota_items,
                                        ngx_http_agent_store_bounds.quota_size);

    if (rc == NGX_BUSY) {
        return ngx_http_agent_store_refuse(sc, "the owner's store is full: "
                                   "agent_store_quota items=%ui size=%uz",
                                   ngx_http_agent_store_bounds.quota_items,
                                   ngx_http_agent_store_bounds.quota_size);
    }

    return rc;
}


/*
 * The cache of nodes' updates and model answers (turn_cache.c,
 * llm_cache.c): an entry
 * larger than a document or than the whole cache is not kept, and a put
 * makes room for itself in agent_cache_max, the oldest going first
 */

ngx_int_t
ngx_http_agent_store_cache_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *key, ngx_str_t *value)
{
    return ngx_http_agent_store->cache_get(sc, key, ngx_http_agent_store_ms(),
                                           value);
}


ngx_int_t
ngx_http_agent_store_cache_put(ngx_http_agent_store_call_t *sc,
    ngx_str_t *key, ngx_str_t *value, ngx_msec_t ttl)
{
    int64_t  now;

    if (value->len > ngx_http_agent_store_bounds.document_max
        || value->len > ngx_http_agent_store_bounds.cache_size)
    {
        return NGX_DECLINED;
    }

    now = ngx_http_agent_store_ms();

    return ngx_http_agent_store->cache_put(sc, key, value, now,
                                       now + (int64_t) ttl,
                                       ngx_http_agent_store_bounds.cache_items,
                                       ngx_http_agent_store_bounds.cache_size);
}


/* agent_max_document_size: four documents of an entry fit an answer */

static char *
ngx_http_agent_store_document_check(ngx_conf_t *cf, void *post, void *data)
{
    size_t  *size = data;

    if (*size > NGX_HTTP_AGENT_STORE_DOCUMENT_MAX) {
        return "must be at most 2m, a quarter of an answer";
    }

    return NGX_CONF_OK;
}


/*
 * agent_store_quota items=N size=SIZE: an owner's items of the store;
 * agent_cache_max items=N size=SIZE (cmd->offset 1): the whole cache's
 */

static char *
ngx_http_agent_store_quota(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_store_conf_t *scf = conf;

    if (cmd->offset) {
        if (scf->cache_items != NGX_CONF_UNSET_UINT) {
            return "is duplicate";
        }

        return ngx_http_agent_store_bounds_set(cf, &scf->cache_items,
                                               &scf->cache_size);
    }

    if (scf->quota_items != NGX_CONF_UNSET_UINT) {
        return "is duplicate";
    }

    return ngx_http_agent_store_bounds_set(cf, &scf->quota_items,
                                           &scf->quota_size);
}


static char *
ngx_http_agent_store_bounds_set(ngx_conf_t *cf, ngx_uint_t *items,
    size_t *bytes)
{
    ssize_t      size;
    ngx_int_t    n;
    ngx_str_t   *value, v;
    ngx_uint_t   i;

    *items = 0;
    value = cf->args->elts;

    for (i = 1; i < cf->args->nelts; i++) {

        if (ngx_strncmp(value[i].data, "items=", 6) == 0) {
            n = ngx_atoi(value[i].data + 6, value[i].len - 6);
            if (n <= 0) {
                goto invalid;
            }

            *items = n;
            continue;
        }

        if (ngx_strncmp(value[i].data, "size=", 5) == 0) {
            v.data = value[i].data + 5;
            v.len = value[i].len - 5;

            size = ngx_parse_size(&v);
            if (size <= 0) {
                goto invalid;
            }

            *bytes = size;
            continue;
        }

        goto invalid;
    }

    if (*items == 0 && *bytes == 0) {
        return "needs items= or size=";
    }

    return NGX_CONF_OK;

invalid:

    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                       "invalid parameter \"%V\"", &value[i]);

    return NGX_CONF_ERROR;
}


static void *
ngx_http_agent_store_create_conf(ngx_conf_t *cf)
{
    ngx_http_agent_store_conf_t  *scf;

    scf = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_store_conf_t));
    if (scf == NULL) {
        return NULL;
    }

    scf->document_max = NGX_CONF_UNSET_SIZE;
    scf->quota_items = NGX_CONF_UNSET_UINT;
    scf->cache_items = NGX_CONF_UNSET_UINT;

    return scf;
}


static char *
ngx_http_agent_store_init_conf(ngx_conf_t *cf, void *conf)
{
    ngx_http_agent_store_conf_t *scf = conf;

    ngx_conf_init_size_value(scf->document_max, 1024 * 1024);
    ngx_conf_init_uint_value(scf->quota_items, 0);

    if (scf->cache_items == NGX_CONF_UNSET_UINT) {
        scf->cache_items = NGX_HTTP_AGENT_STORE_CACHE_ITEMS;
        scf->cache_size = NGX_HTTP_AGENT_STORE_CACHE_SIZE;
    }

    /* one bound alone: the other as large as it may be */
    if (scf->cache_items == 0) {
        scf->cache_items = NGX_MAX_INT32_VALUE;
    }

    if (scf->cache_size == 0) {
        scf->cache_size = NGX_MAX_SIZE_T_VALUE / 2;
    }

    return NGX_CONF_OK;
}


/* the configuration's bounds are the worker's (no store in the master) */

static ngx_int_t
ngx_http_agent_store_init_process(ngx_cycle_t *cycle)
{
    ngx_http_agent_store_conf_t  *scf;

    scf = ngx_http_cycle_get_module_main_conf(cycle,
                                              ngx_http_agent_store_module);
    if (scf) {
        ngx_http_agent_store_bounds = *scf;
    }

    return NGX_OK;
}
