
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"


/*
 * agent_checkpoint_keep N | TIME | off: how many of a thread's checkpoints
 * outlive the run that wrote them.  A run's end asks the store to let go
 * of those past the last N, or older than TIME; the thread's latest, what
 * came after it (a subgraph that waits inside its step) and those a
 * pending or running run started from are never let go.  An interrupt
 * always waits on the thread's latest checkpoint, so it is kept too.  A
 * pass lets go of NGX_HTTP_AGENT_STORE_PRUNE_PASS rows at most: the next
 * run's end goes on where it stopped (SQLite: on the thread pool, the
 * next pass at once).  Messages are rows of their own, the latest state's
 * (docs/performance.md): only checkpoints are let go.
 *
 * The directive is this file's own nginx module's, as the store's bounds
 * are ngx_http_agent_store_module's: a location's runs take its value.
 */


typedef struct {
    ngx_uint_t                 count;        /* 0: not by count */
    ngx_msec_t                 age;          /* 0: not by age */
    ngx_str_t                  said;         /* a 404's words on it */
} ngx_http_agent_store_keep_conf_t;


static char *ngx_http_agent_store_keep(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static void *ngx_http_agent_store_keep_create_conf(ngx_conf_t *cf);
static char *ngx_http_agent_store_keep_merge_conf(ngx_conf_t *cf,
    void *parent, void *child);


static ngx_command_t  ngx_http_agent_store_keep_commands[] = {

    { ngx_string("agent_checkpoint_keep"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_agent_store_keep,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_agent_store_keep_module_ctx = {
    NULL,                                  /* preconfiguration */
    NULL,                                  /* postconfiguration */

    NULL,                                  /* create main configuration */
    NULL,                                  /* init main configuration */

    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */

    ngx_http_agent_store_keep_create_conf, /* create location configuration */
    ngx_http_agent_store_keep_merge_conf   /* merge location configuration */
};


ngx_module_t  ngx_http_agent_store_keep_module = {
    NGX_MODULE_V1,
    &ngx_http_agent_store_keep_module_ctx, /* module context */
    ngx_http_agent_store_keep_commands,    /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    NULL,                                  /* init module */
    NULL,                                  /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    NULL,                                  /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


/*
 * A run's end: its thread's checkpoints past the location's bound let go
 * through sc, a call that wants no answer (the turn's writes).  run_id is
 * the run that ends, whose row may still say "running": the checkpoint
 * it started from is not kept for it.
 */

void
ngx_http_agent_store_keep_prune(ngx_http_request_t *r,
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_str_t *run_id)
{
    ngx_http_agent_store_keep_conf_t  *kcf;

    kcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_store_keep_module);

    if (kcf->count == 0 && kcf->age == 0) {
        return;
    }

    if (ngx_http_agent_store->checkpoint_prune(sc, id, run_id, kcf->count,
                                               kcf->age)
        != NGX_OK)
    {
        /* the next run's end tries again */
        ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                      "agent: the old checkpoints of \"%V\" could not be "
                      "let go", id);
    }
}


/*
 * A checkpoint asked for by id that is not there: the words a 404 adds
 * where this location lets old ones go
 */

ngx_str_t *
ngx_http_agent_store_keep_said(ngx_http_request_t *r)
{
    ngx_http_agent_store_keep_conf_t  *kcf;

    kcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_store_keep_module);

    return &kcf->said;
}


ngx_int_t
ngx_http_agent_store_storage(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_http_agent_storage_t *st)
{
    return ngx_http_agent_store->thread_storage(sc, id, st);
}


static char *
ngx_http_agent_store_keep(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_store_keep_conf_t *kcf = conf;

    u_char     *p;
    ngx_int_t   n;
    ngx_str_t  *value;

    if (kcf->count != NGX_CONF_UNSET_UINT) {
        return "is duplicate";
    }

    value = cf->args->elts;

    kcf->count = 0;
    kcf->age = 0;

    if (value[1].len == 3 && ngx_strncmp(value[1].data, "off", 3) == 0) {
        return NGX_CONF_OK;
    }

    n = ngx_atoi(value[1].data, value[1].len);

    if (n != NGX_ERROR) {
        if (n == 0) {
            return "must keep 1 checkpoint at least";
        }

        kcf->count = n;

    } else {
        kcf->age = ngx_parse_time(&value[1], 0);

        if (kcf->age == (ngx_msec_t) NGX_ERROR || kcf->age == 0) {
            return "takes a count, a time (\"30m\", \"7d\") or \"off\"";
        }
    }

    /* the words of a 404 for a checkpoint let go */

    p = ngx_pnalloc(cf->pool, 128 + value[1].len);
    if (p == NULL) {
        return NGX_CONF_ERROR;
    }

    kcf->said.data = p;
    kcf->said.len = ngx_sprintf(p, kcf->count
                                   ? " (it may have been let go: "
                                     "agent_checkpoint_keep keeps a "
                                     "thread's last %V checkpoints)"
                                   : " (it may have been let go: "
                                     "agent_checkpoint_keep keeps the "
                                     "checkpoints younger than %V)",
                                &value[1])
                    - p;

    return NGX_CONF_OK;
}


static void *
ngx_http_agent_store_keep_create_conf(ngx_conf_t *cf)
{
    ngx_http_agent_store_keep_conf_t  *kcf;

    kcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_store_keep_conf_t));
    if (kcf == NULL) {
        return NULL;
    }

    kcf->count = NGX_CONF_UNSET_UINT;

    return kcf;
}


static char *
ngx_http_agent_store_keep_merge_conf(ngx_conf_t *cf, void *parent,
    void *child)
{
    ngx_http_agent_store_keep_conf_t *prev = parent;
    ngx_http_agent_store_keep_conf_t *conf = child;

    if (conf->count == NGX_CONF_UNSET_UINT) {
        if (prev->count == NGX_CONF_UNSET_UINT) {
            conf->count = 0;

        } else {
            *conf = *prev;
        }
    }

    return NGX_CONF_OK;
}
