
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#if (NGX_THREADS)
#include <ngx_thread_pool.h>
#endif

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_kinds.h"
#include "ngx_http_agent_ops.h"
#include "ngx_http_agent_chat.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_sql.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_mcp.h"


static void *ngx_http_agent_create_main_conf(ngx_conf_t *cf);
static ngx_int_t ngx_http_agent_preconfiguration(ngx_conf_t *cf);
static char *ngx_http_agent_init_main_conf(ngx_conf_t *cf, void *conf);
static void *ngx_http_agent_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_agent_merge_loc_conf(ngx_conf_t *cf, void *parent,
    void *child);
static ngx_int_t ngx_http_agent_postconfiguration(ngx_conf_t *cf);
static ngx_int_t ngx_http_agent_init_module(ngx_cycle_t *cycle);
static ngx_int_t ngx_http_agent_init_process(ngx_cycle_t *cycle);
static void ngx_http_agent_exit_process(ngx_cycle_t *cycle);


/* a turn's location and MCP calls at once: none would never end */
static ngx_conf_num_bounds_t  ngx_http_agent_tool_concurrency_bounds = {
    ngx_conf_check_num_bounds, 1, 1024
};


static ngx_conf_num_bounds_t  ngx_http_agent_rounds_bounds = {
    ngx_conf_check_num_bounds, 1, 1000
};


static ngx_command_t  ngx_http_agent_commands[] = {

    { ngx_string("agent_checkpoint_db"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_agent_store_conf,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_agent_main_conf_t, checkpoint_db),
      NULL },

    { ngx_string("agent_resources_dir"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_http_agent_params_path,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_agent_main_conf_t, resources_dir),
      NULL },

    { ngx_string("agent_prompts"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_http_agent_params_path,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_agent_main_conf_t, prompts_dir),
      NULL },

    { ngx_string("agent_model"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_2MORE,
      ngx_http_agent_model,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("agent_tool"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_2MORE,
      ngx_http_agent_tool_location,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("agent_mcp"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_2MORE,
      ngx_http_agent_mcp_directive,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("agent_database"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE2,
      ngx_http_agent_database,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("agent_max_tool_rounds"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, max_tool_rounds),
      &ngx_http_agent_rounds_bounds },

    { ngx_string("agent_recursion_limit"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, recursion_limit),
      &ngx_http_agent_rounds_bounds },

    { ngx_string("agent_use_database"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_str_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, use_database),
      NULL },

    { ngx_string("agent_heartbeat"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_msec_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, heartbeat),
      NULL },

    { ngx_string("agent_llm_connect_timeout"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_msec_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, llm_connect_timeout),
      NULL },

    { ngx_string("agent_llm_idle_timeout"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_msec_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, llm_idle_timeout),
      NULL },

    { ngx_string("agent_llm_timeout"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_msec_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, llm_timeout),
      NULL },

    { ngx_string("agent_sql_timeout"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_msec_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, sql_timeout),
      NULL },

    { ngx_string("agent_sql_max_rows"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, sql_max_rows),
      NULL },

    { ngx_string("agent_sql_max_bytes"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_size_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, sql_max_bytes),
      NULL },

    { ngx_string("agent_sql_thread_pool"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_str_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, thread_pool_name),
      NULL },

    { ngx_string("agent_owner"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_set_complex_value_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, owner),
      NULL },

    { ngx_string("agent_limit_zone"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_2MORE,
      ngx_http_agent_limit_zone,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("agent_limit"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_1MORE,
      ngx_http_agent_limit,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("agent_turn_max_tokens"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, turn_max_tokens),
      NULL },

    { ngx_string("agent_turn_max_tool_calls"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, turn_max_tool_calls),
      NULL },

    { ngx_string("agent_turn_timeout"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_msec_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, turn_timeout),
      NULL },

    { ngx_string("agent_turn_lease"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_msec_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, turn_lease),
      NULL },

    { ngx_string("agent_webhooks"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_1MORE,
      ngx_http_agent_webhook_conf,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, webhooks),
      NULL },

    { ngx_string("agent_durability"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_enum_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, durability),
      &ngx_http_agent_durabilities },

    { ngx_string("agent_run_attempts"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, run_attempts),
      NULL },

    { ngx_string("agent_run_events_max_size"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_size_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, run_events_max),
      NULL },

    { ngx_string("agent_run_events_keep"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_msec_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, run_events_keep),
      NULL },

    { ngx_string("agent_history_max_size"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_size_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, history_max_size),
      NULL },

    { ngx_string("agent_images_keep"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, images_keep),
      NULL },

    { ngx_string("agent_databases"),
      NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_1MORE,
      ngx_http_agent_allowed_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, databases),
      NULL },

    { ngx_string("agent_models"),
      NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_1MORE,
      ngx_http_agent_allowed_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, models),
      NULL },

    { ngx_string("agent_tool_concurrency"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, tool_concurrency),
      &ngx_http_agent_tool_concurrency_bounds },

    { ngx_string("agent_sql_concurrency"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, sql_concurrency),
      NULL },

    { ngx_string("agent_graph"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_BLOCK|NGX_CONF_TAKE1,
      ngx_http_agent_conf_graph,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("agent_cors"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_1MORE,
      ngx_http_agent_cors,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("agent_use_graph"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_agent_conf_graph_use,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("agent_assistants"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_1MORE,
      ngx_http_agent_allowed_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_loc_conf_t, assistants),
      NULL },

    { ngx_string("agent_input"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE2,
      ngx_http_agent_variables_input,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("agent_stream"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_agent_conf_graph_stream,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("agent_otlp"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_agent_otlp,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("agent_metrics"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_agent_metrics_conf,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },


      ngx_null_command
};


static ngx_http_module_t  ngx_http_agent_module_ctx = {
    ngx_http_agent_preconfiguration,       /* preconfiguration */
    ngx_http_agent_postconfiguration,      /* postconfiguration */

    ngx_http_agent_create_main_conf,       /* create main configuration */
    ngx_http_agent_init_main_conf,         /* init main configuration */

    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */

    ngx_http_agent_create_loc_conf,        /* create location configuration */
    ngx_http_agent_merge_loc_conf          /* merge location configuration */
};


ngx_module_t  ngx_http_agent_module = {
    NGX_MODULE_V1,
    &ngx_http_agent_module_ctx,            /* module context */
    ngx_http_agent_commands,               /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    ngx_http_agent_init_module,            /* init module */
    ngx_http_agent_init_process,           /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    ngx_http_agent_exit_process,           /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


static void *
ngx_http_agent_create_main_conf(ngx_conf_t *cf)
{
    ngx_http_agent_main_conf_t  *amcf;

    amcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_main_conf_t));
    if (amcf == NULL) {
        return NULL;
    }


    /* before anything opens a database: SQLite's allocator is set once */
    ngx_http_agent_sql_sandbox_init(cf->log);

    if (ngx_array_init(&amcf->models, cf->pool, 2,
                       sizeof(ngx_http_agent_model_t))
        != NGX_OK
        || ngx_array_init(&amcf->graphs, cf->pool, 4,
                          sizeof(ngx_http_agent_graph_t *))
           != NGX_OK
        || ngx_array_init(&amcf->databases, cf->pool, 2,
                          sizeof(ngx_http_agent_database_t))
           != NGX_OK)
    {
        return NULL;
    }

    return amcf;
}


static ngx_int_t
ngx_http_agent_preconfiguration(ngx_conf_t *cf)
{
    /* the node kinds, for the graph language of the agent_graph blocks */
    ngx_http_agent_graph_kinds = ngx_http_agent_kinds;

    return ngx_http_agent_variables_add(cf);
}


static char *
ngx_http_agent_init_main_conf(ngx_conf_t *cf, void *conf)
{
    ngx_http_agent_main_conf_t *amcf = conf;

    /* the built-in react graph, then what every node refers to */

    if (ngx_http_agent_model_check(cf, amcf) != NGX_CONF_OK
        || ngx_http_agent_graph_builtin(cf, &amcf->graphs) != NGX_OK
        || ngx_http_agent_graph_check_kinds(cf, &amcf->graphs,
                                            &amcf->prompts_dir)
           != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    /* the counters every worker adds to, read by agent_metrics */
    if (amcf->checkpoint_db.len
        && ngx_http_agent_metrics_init_conf(cf) != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static void *
ngx_http_agent_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_loc_conf_t));
    if (alcf == NULL) {
        return NULL;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     alcf->proto = NULL;
     *     alcf->use_database = { 0, NULL };
     *     alcf->database = NULL;
     */

    alcf->max_tool_rounds = NGX_CONF_UNSET_UINT;
    alcf->recursion_limit = NGX_CONF_UNSET_UINT;
    alcf->heartbeat = NGX_CONF_UNSET_MSEC;
    alcf->llm_connect_timeout = NGX_CONF_UNSET_MSEC;
    alcf->llm_idle_timeout = NGX_CONF_UNSET_MSEC;
    alcf->llm_timeout = NGX_CONF_UNSET_MSEC;
    alcf->sql_timeout = NGX_CONF_UNSET_MSEC;
    alcf->sql_max_rows = NGX_CONF_UNSET_UINT;
    alcf->sql_max_bytes = NGX_CONF_UNSET_SIZE;
    alcf->turn_lease = NGX_CONF_UNSET_MSEC;
    alcf->run_attempts = NGX_CONF_UNSET_UINT;
    alcf->durability = NGX_CONF_UNSET_UINT;
    alcf->webhooks = NGX_CONF_UNSET_PTR;
    alcf->run_events_max = NGX_CONF_UNSET_SIZE;
    alcf->run_events_keep = NGX_CONF_UNSET_MSEC;
    alcf->turn_max_tokens = NGX_CONF_UNSET;
    alcf->turn_max_tool_calls = NGX_CONF_UNSET;
    alcf->turn_timeout = NGX_CONF_UNSET_MSEC;
    alcf->limits = NGX_CONF_UNSET_PTR;
    alcf->history_max_size = NGX_CONF_UNSET_SIZE;
    alcf->images_keep = NGX_CONF_UNSET;
    alcf->databases = NGX_CONF_UNSET_PTR;
    alcf->models = NGX_CONF_UNSET_PTR;
    alcf->assistants = NGX_CONF_UNSET_PTR;
    alcf->cors = NGX_CONF_UNSET_PTR;
    alcf->sql_concurrency = NGX_CONF_UNSET_UINT;
    alcf->tool_concurrency = NGX_CONF_UNSET_UINT;
    alcf->owner = NGX_CONF_UNSET_PTR;
    alcf->inputs = NGX_CONF_UNSET_PTR;

    return alcf;
}


static char *
ngx_http_agent_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_agent_loc_conf_t *prev = parent;
    ngx_http_agent_loc_conf_t *conf = child;

    ngx_http_agent_main_conf_t  *amcf;

    ngx_conf_merge_uint_value(conf->max_tool_rounds, prev->max_tool_rounds,
                              8);
    ngx_conf_merge_uint_value(conf->recursion_limit, prev->recursion_limit,
                              25);
    ngx_conf_merge_msec_value(conf->heartbeat, prev->heartbeat, 15000);
    ngx_conf_merge_msec_value(conf->llm_connect_timeout,
                              prev->llm_connect_timeout, 10000);
    ngx_conf_merge_msec_value(conf->llm_idle_timeout,
                              prev->llm_idle_timeout, 60000);
    ngx_conf_merge_msec_value(conf->llm_timeout, prev->llm_timeout, 300000);
    ngx_conf_merge_msec_value(conf->sql_timeout, prev->sql_timeout, 5000);
    ngx_conf_merge_uint_value(conf->sql_max_rows, prev->sql_max_rows, 1000);
    ngx_conf_merge_size_value(conf->sql_max_bytes, prev->sql_max_bytes,
                              256 * 1024);
    ngx_conf_merge_str_value(conf->use_database, prev->use_database, "");
    ngx_conf_merge_str_value(conf->thread_pool_name, prev->thread_pool_name,
                             "default");
    ngx_conf_merge_msec_value(conf->turn_lease, prev->turn_lease, 30000);
    ngx_conf_merge_uint_value(conf->run_attempts, prev->run_attempts, 3);
    ngx_conf_merge_uint_value(conf->durability, prev->durability,
                              NGX_HTTP_AGENT_DURABILITY_ASYNC);
    ngx_conf_merge_ptr_value(conf->webhooks, prev->webhooks, NULL);
    ngx_conf_merge_size_value(conf->run_events_max, prev->run_events_max,
                              8 * 1024 * 1024);
    ngx_conf_merge_msec_value(conf->run_events_keep, prev->run_events_keep,
                              600000);
    ngx_conf_merge_value(conf->turn_max_tokens, prev->turn_max_tokens, 0);
    ngx_conf_merge_value(conf->turn_max_tool_calls, prev->turn_max_tool_calls,
                         0);
    ngx_conf_merge_msec_value(conf->turn_timeout, prev->turn_timeout, 0);
    ngx_conf_merge_ptr_value(conf->limits, prev->limits, NULL);
    ngx_conf_merge_size_value(conf->history_max_size, prev->history_max_size,
                              32 * 1024 * 1024);
    ngx_conf_merge_value(conf->images_keep, prev->images_keep, 3);
    ngx_conf_merge_ptr_value(conf->databases, prev->databases, NULL);
    ngx_conf_merge_ptr_value(conf->models, prev->models, NULL);
    ngx_conf_merge_ptr_value(conf->assistants, prev->assistants, NULL);
    ngx_conf_merge_ptr_value(conf->cors, prev->cors, NULL);
    ngx_conf_merge_uint_value(conf->sql_concurrency, prev->sql_concurrency,
                              4);
    ngx_conf_merge_uint_value(conf->tool_concurrency,
                              prev->tool_concurrency, 8);
    ngx_conf_merge_ptr_value(conf->owner, prev->owner, NULL);
    ngx_conf_merge_ptr_value(conf->inputs, prev->inputs, NULL);
    ngx_conf_merge_str_value(conf->format_name, prev->format_name, "typed");

    if (conf->graph_name.len == 0) {
        conf->graph_name = prev->graph_name;
        conf->graph_file = prev->graph_file;
        conf->graph_line = prev->graph_line;
    }

    if (ngx_http_agent_conf_graph_merge(cf, conf) != NGX_CONF_OK) {
        return NGX_CONF_ERROR;
    }

    amcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_agent_module);

    if (conf->proto && conf->owner) {
        amcf->owned = 1;

    } else if (conf->proto && amcf->unowned.len == 0) {
        amcf->unowned = conf->location;
    }

    if (ngx_http_agent_allowed_check(cf, conf) != NGX_CONF_OK) {
        return NGX_CONF_ERROR;
    }

    if (conf->turn_lease < 300) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "agent_turn_lease: at least 300ms");
        return NGX_CONF_ERROR;
    }

#if (NGX_THREADS)
    /* SQL tools and CSV imports run there, off the event loop */
    if (conf->proto
        && !(conf->thread_pool_name.len == 3
             && ngx_strncmp(conf->thread_pool_name.data, "off", 3) == 0))
    {
        conf->thread_pool = ngx_thread_pool_add(cf, &conf->thread_pool_name);
        if (conf->thread_pool == NULL) {
            return NGX_CONF_ERROR;
        }

        amcf->thread_pool = conf->thread_pool;
    }
#endif

    return ngx_http_agent_database_use(cf, conf);
}


/*
 * On one store, a location without agent_owner lists, reads and deletes
 * the sessions of every owner that the other locations keep apart.
 */

static ngx_int_t
ngx_http_agent_postconfiguration(ngx_conf_t *cf)
{
    ngx_http_agent_main_conf_t  *amcf;

    amcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_agent_module);

    if (amcf->owned && amcf->unowned.len) {
        ngx_conf_log_error(NGX_LOG_WARN, cf, 0,
                           "agent_owner: location \"%V\" has none while "
                           "other locations on the same "
                           "agent_checkpoint_db have one: it lists, reads "
                           "and deletes the sessions of every owner",
                           &amcf->unowned);
    }

    /* agent_tool and http nodes: their subrequests' bodies are caught */
    return ngx_http_agent_subrequest_init(cf);
}


static ngx_int_t
ngx_http_agent_init_module(ngx_cycle_t *cycle)
{
    ngx_core_conf_t             *ccf;
    ngx_http_agent_main_conf_t  *amcf;

    amcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_agent_module);
    if (amcf == NULL || amcf->checkpoint_db.len == 0) {
        return NGX_OK;
    }

    ccf = (ngx_core_conf_t *) ngx_get_conf(cycle->conf_ctx, ngx_core_module);

    /* the master creates the files, the workers must be able to use them */

    ngx_http_agent_store_select(&amcf->checkpoint_db);

    return ngx_http_agent_store_init(cycle, &amcf->checkpoint_db,
                                     &amcf->resources_dir,
                                     ccf->user, ccf->group);
}


static ngx_int_t
ngx_http_agent_init_process(ngx_cycle_t *cycle)
{
    ngx_http_agent_main_conf_t  *amcf;

    /* workers only: the cache's manager and loader run no requests */
    amcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_agent_module);
    if (amcf == NULL || amcf->checkpoint_db.len == 0
        || (ngx_process != NGX_PROCESS_WORKER
            && ngx_process != NGX_PROCESS_SINGLE))
    {
        return NGX_OK;
    }

    ngx_http_agent_store_select(&amcf->checkpoint_db);

    if (ngx_http_agent_curl_init_process(cycle) != NGX_OK
        || ngx_http_agent_store_open(cycle, &amcf->checkpoint_db,
                                     amcf->thread_pool)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* runs that lost their worker, taken over by this one */
    ngx_http_agent_turn_redrive_init(cycle, amcf->doors);

    return NGX_OK;
}


static void
ngx_http_agent_exit_process(ngx_cycle_t *cycle)
{
    ngx_http_agent_sql_exit_process(cycle);

    /* none chosen: no agent_checkpoint_db, no store opened */
    if (ngx_http_agent_store) {
        ngx_http_agent_store_close(cycle);
    }

    ngx_http_agent_curl_exit_process(cycle);
}
