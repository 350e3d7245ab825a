
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_stream.h"


/*
 * The LangGraph API as its own module: agent_langgraph_api serves it at
 * a location, agent_langgraph_server picks whose shapes it streams, and
 * each worker ticks its crons.
 */


static char *ngx_http_agent_lg_module_conf(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static void *ngx_http_agent_lg_module_create_conf(ngx_conf_t *cf);
static char *ngx_http_agent_lg_module_merge_conf(ngx_conf_t *cf,
    void *parent, void *child);
static ngx_int_t ngx_http_agent_lg_module_redrive(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx, void *row);
static ngx_int_t ngx_http_agent_lg_module_init_process(ngx_cycle_t *cycle);


static ngx_http_agent_proto_t  ngx_http_agent_lg_proto = {
    ngx_string("agent_langgraph_api"),
    NGX_HTTP_AGENT_PROTO_TURNS|NGX_HTTP_AGENT_PROTO_GRAPHS
    |NGX_HTTP_AGENT_PROTO_KEEPS|NGX_HTTP_AGENT_PROTO_DETAIL
    |NGX_HTTP_AGENT_PROTO_DELETE_BODY|NGX_HTTP_AGENT_PROTO_CRONS,
    ngx_http_agent_lg_route,
    ngx_http_agent_lg_dispatch,
    ngx_http_agent_lg_module_redrive,
    NULL
};


/*
 * agent_langgraph_server: the Python server (the platform) by default;
 * "js" streams the JS server's shapes where the two differ
 */
static ngx_conf_enum_t  ngx_http_agent_lg_servers[] = {
    { ngx_string("python"), 0 },
    { ngx_string("js"), NGX_HTTP_AGENT_MODE_JS },
    { ngx_null_string, 0 }
};


static ngx_command_t  ngx_http_agent_lg_commands[] = {

    { ngx_string("agent_langgraph_api"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_agent_lg_module_conf,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("agent_langgraph_server"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_enum_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_lg_conf_t, server),
      &ngx_http_agent_lg_servers },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_agent_lg_module_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL,    /* no main, server conf */
    ngx_http_agent_lg_module_create_conf,
    ngx_http_agent_lg_module_merge_conf
};


ngx_module_t  ngx_http_agent_lg_module =
    NGX_HTTP_AGENT_MODULE(&ngx_http_agent_lg_module_ctx,
                          ngx_http_agent_lg_commands,
                          ngx_http_agent_lg_module_init_process);


static char *
ngx_http_agent_lg_module_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_agent_handler;

    return ngx_http_agent_handler_proto(cf, &ngx_http_agent_lg_proto, conf);
}


static void *
ngx_http_agent_lg_module_create_conf(ngx_conf_t *cf)
{
    ngx_http_agent_lg_conf_t  *llcf;

    llcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_lg_conf_t));
    if (llcf == NULL) {
        return NULL;
    }

    llcf->server = NGX_CONF_UNSET_UINT;

    return llcf;
}


static char *
ngx_http_agent_lg_module_merge_conf(ngx_conf_t *cf, void *parent,
    void *child)
{
    ngx_http_agent_lg_conf_t *prev = parent;
    ngx_http_agent_lg_conf_t *conf = child;

    ngx_conf_merge_uint_value(conf->server, prev->server, 0);

    return NGX_CONF_OK;
}


/* a run taken over, or a cron's tick: the request that makes it */

static ngx_int_t
ngx_http_agent_lg_module_redrive(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx, void *row)
{
    if (ctx->cron) {
        return ngx_http_agent_lg_cron_request(r, ctx->cron, &r->uri,
                                              &ctx->body);
    }

    return ngx_http_agent_lg_redrive_request(r, row, &r->uri, &ctx->body);
}


/* after the core's: the store is open, the runs lost taken over */

static ngx_int_t
ngx_http_agent_lg_module_init_process(ngx_cycle_t *cycle)
{
    ngx_http_agent_main_conf_t  *amcf;

    amcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_agent_module);
    if (amcf == NULL || amcf->checkpoint_db.len == 0
        || (ngx_process != NGX_PROCESS_WORKER
            && ngx_process != NGX_PROCESS_SINGLE))
    {
        return NGX_OK;
    }

    ngx_http_agent_lg_cron_init(cycle, amcf->doors);

    return NGX_OK;
}
