
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MODULE_H_INCLUDED_
#define _NGX_HTTP_AGENT_MODULE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_store.h"


typedef struct ngx_http_agent_proto_s  ngx_http_agent_proto_t;

/* a location's graph (engine.h), which the glue only points to */
typedef struct ngx_http_agent_graph_s  ngx_http_agent_graph_t;


typedef struct {
    ngx_str_t                  name;
    ngx_str_t                  path;
} ngx_http_agent_database_t;


/*
 * How a run's steps are saved (agent_durability, a LangGraph run's
 * "durability"): each one waited for; each one behind the run, where the
 * store can (PostgreSQL); only at the run's end and its interrupts
 */
#define NGX_HTTP_AGENT_DURABILITY_SYNC   1
#define NGX_HTTP_AGENT_DURABILITY_ASYNC  2
#define NGX_HTTP_AGENT_DURABILITY_EXIT   3


/*
 * One of our HTTP modules (a protocol's, the filters'): a context, its
 * directives and at most a worker's start; nothing else of a module's
 * life is ours, so that the same twelve lines are not written per module
 */
#define NGX_HTTP_AGENT_MODULE(ctx, commands, init_process)                   \
    { NGX_MODULE_V1, ctx, commands, NGX_HTTP_MODULE, NULL, NULL,             \
      init_process, NULL, NULL, NULL, NULL, NGX_MODULE_V1_PADDING }


/*
 * A location that keeps its runs (a protocol's): its configuration, so
 * that a run its worker lost is driven again there (turn_redrive.c)
 */
typedef struct {
    ngx_str_t                  name;        /* the location's */
    ngx_http_conf_ctx_t       *conf;
} ngx_http_agent_door_t;


typedef struct {
    ngx_str_t                  checkpoint_db;
    ngx_str_t                  resources_dir;
    ngx_str_t                  prompts_dir;
    ngx_array_t               *tool_prompts; /* ngx_keyval_t, or NULL */
    ngx_array_t               *tools;       /* agent_tool:
                                               ngx_http_agent_tool_t * */
    ngx_array_t               *mcps;        /* ngx_http_agent_mcp_t * */
    ngx_array_t                models;      /* ngx_http_agent_model_t */
    ngx_array_t                databases;   /* ngx_http_agent_database_t */
    ngx_array_t                graphs;      /* ngx_http_agent_graph_t * */
    ngx_array_t               *limit_zones; /* agent_limit_zone: * */
    void                      *otlp;        /* agent_otlp, or NULL */

    /* the locations a run taken over may run on: ngx_http_agent_door_t */
    ngx_array_t               *doors;

    /* a thread pool of the agent locations: the store's file work */
    void                      *thread_pool;

    /* locations with and without agent_owner: nginx -t warns of a mix */
    ngx_uint_t                 owned;
    ngx_str_t                  unowned;
} ngx_http_agent_main_conf_t;


/* agent_input CHANNEL VALUE */
typedef struct {
    ngx_str_t                  name;
    ngx_int_t                  channel;
    ngx_http_complex_value_t  *value;
    ngx_str_t                  file;
    ngx_uint_t                 line;
} ngx_http_agent_input_t;


typedef struct {
    ngx_http_agent_proto_t    *proto;       /* what the location serves,
                                               or NULL */
    void                      *proto_conf;  /* its module's location
                                               configuration, or NULL */
    ngx_str_t                  location;    /* where proto was set */
    ngx_uint_t                 max_tool_rounds;
    ngx_uint_t                 recursion_limit;
    ngx_str_t                  use_database;
    ngx_http_agent_database_t *database;
    ngx_msec_t                 heartbeat;
    ngx_msec_t                 llm_connect_timeout;
    ngx_msec_t                 llm_idle_timeout;
    ngx_msec_t                 llm_timeout;
    ngx_msec_t                 sql_timeout;
    ngx_uint_t                 sql_max_rows;
    size_t                     sql_max_bytes;
    ngx_str_t                  thread_pool_name;
    void                      *thread_pool;
    ngx_msec_t                 turn_lease;
    size_t                     run_events_max;  /* a resumable run's kept
                                                   events, in bytes */
    ngx_msec_t                 run_events_keep; /* after the run's end */
    ngx_int_t                  turn_max_tokens;
    ngx_int_t                  turn_max_tool_calls;
    ngx_msec_t                 turn_timeout;
    ngx_array_t               *limits;      /* ngx_http_agent_limit_t */
    size_t                     history_max_size;
    ngx_int_t                  images_keep;
    ngx_array_t               *databases;   /* agent_databases: ngx_str_t */
    ngx_array_t               *models;      /* agent_models: ngx_str_t */
    ngx_uint_t                 sql_concurrency;
    ngx_uint_t                 tool_concurrency;
    ngx_http_complex_value_t  *owner;
    ngx_str_t                  graph_name;
    ngx_str_t                  graph_file;
    ngx_uint_t                 graph_line;
    ngx_http_agent_graph_t    *graph;
    ngx_str_t                  format_name;
    void                      *format;      /* ngx_http_agent_format_t */
    ngx_array_t               *inputs;      /* ngx_http_agent_input_t */

    /* agent_assistants: ngx_str_t names; the LangGraph API's graphs */
    ngx_array_t               *assistants;
    ngx_array_t               *assistant_graphs;
    void                      *cors;        /* ngx_http_agent_cors_t */

    /*
     * a run of this location taken over from a worker that died: its
     * request made again without a client (the protocol's, or NULL: the
     * run ends lost); at most run_attempts times
     */
    ngx_int_t                (*redrive)(ngx_http_request_t *r, void *row);
    ngx_uint_t                 run_attempts;

    /* how a run's steps are saved: NGX_HTTP_AGENT_DURABILITY_* */
    ngx_uint_t                 durability;

    /* agent_webhooks: ngx_http_agent_webhooks_t, or NULL */
    void                      *webhooks;

} ngx_http_agent_loc_conf_t;


extern ngx_module_t  ngx_http_agent_module;
extern ngx_conf_enum_t  ngx_http_agent_durabilities[];


/* a request's context (r->ctx of the module): every protocol's */

typedef struct {
    ngx_uint_t                      endpoint;  /* its protocol's */
    ngx_str_t                       id;
    ngx_str_t                      *owner;     /* NULL: no agent_owner */
    ngx_str_t                       owner_value;
    ngx_int_t                       sent_rc;
    void                           *env;       /* the turn's, for the
                                                  $agent_ variables */
    void                           *sse;       /* its stream */
    void                           *api;       /* the LangGraph API's
                                                  request (lg.c) */
    void                           *proto;     /* another protocol's, kept
                                                  across the passes */
    ngx_int_t                     (*error)(ngx_http_request_t *r,
                                           ngx_uint_t *status,
                                           ngx_str_t *msg, ngx_str_t *out);
                                               /* its error bodies (and
                                                  statuses) */

    /* the store's calls: a pass that waits on one runs again on its answer */
    ngx_http_agent_store_call_t     store;
    ngx_str_t                       body;
    ngx_str_t                       lock_id;

    /* an answer held until the lease it was given under is let go */
    ngx_chain_t                    *held;
    off_t                           held_size;
    ngx_uint_t                      held_status;

    unsigned                        sent:1;    /* the answer is written:
                                                  sent_rc is its end */
    uint64_t                        phase;     /* accepted: bench */
    unsigned                        has_body:1;
    unsigned                        waited:1;
    unsigned                        hold:1;
    unsigned                        plain:1;   /* the answer is text */
    unsigned                        public:1;  /* no owner asked (an A2A
                                                  agent's card) */
    unsigned                        held_plain:1;
    unsigned                        headless:1; /* no client: a run
                                                  taken over */
    unsigned                        takeover:1; /* by a turn of no
                                                  protocol */

    /* the run taken over (ngx_http_agent_run_row_t), when headless */
    void                           *redrive;

    /* or the cron whose tick this is (ngx_http_agent_cron_row_t) */
    void                           *cron;

    /*
     * the keys of its agent_limit zones, as the client's request that
     * made the run or the cron had them (a JSON object): counted under
     * them, not under what an empty request has (limit.c)
     */
    ngx_str_t                       limit_keys;
} ngx_http_agent_ctx_t;


/*
 * A protocol: its own module's location directive sets it on the core's
 * location configuration (ngx_http_agent_handler_proto), and the core's
 * handler calls through it, as upstream calls its module's handlers.
 */

/* it runs turns: a model, its graph's prompt and agent_input checked */
#define NGX_HTTP_AGENT_PROTO_TURNS        0x01
/* it runs agent_assistants' graphs too, the location's first */
#define NGX_HTTP_AGENT_PROTO_GRAPHS       0x02
/* a run its worker lost is taken over at its location */
#define NGX_HTTP_AGENT_PROTO_KEEPS        0x04
/* such a run waits out its lease: its client's next message may take it */
#define NGX_HTTP_AGENT_PROTO_LEASED       0x08
/* its errors are {"detail": ...}, as the LangGraph API's */
#define NGX_HTTP_AGENT_PROTO_DETAIL       0x10
/* a DELETE may carry a body (the LangGraph store's) */
#define NGX_HTTP_AGENT_PROTO_DELETE_BODY  0x20
/* its location's crons are ticked (the LangGraph API's) */
#define NGX_HTTP_AGENT_PROTO_CRONS        0x40


struct ngx_http_agent_proto_s {
    ngx_str_t                       name;      /* its directive */
    ngx_uint_t                      flags;     /* NGX_HTTP_AGENT_PROTO_* */

    /* the endpoint from the path and the method: NGX_OK, or an answer */
    ngx_int_t                     (*route)(ngx_http_request_t *r,
                                           ngx_http_agent_ctx_t *ctx);

    /* a pass of the endpoint's code (body NULL: none was read) */
    ngx_int_t                     (*dispatch)(ngx_http_request_t *r,
                                              ngx_http_agent_ctx_t *ctx,
                                              ngx_str_t *body);

    /*
     * a run taken over (row) or a cron's tick (ctx->cron): its request
     * made again, r->uri and ctx->body, then routed; NULL: the run goes
     * on as a turn of no protocol, with the takeover hooks
     */
    ngx_int_t                     (*redrive)(ngx_http_request_t *r,
                                             ngx_http_agent_ctx_t *ctx,
                                             void *row);
    void                           *takeover;  /* ngx_http_agent_turn_
                                                  hooks_t, or NULL */
};


#endif /* _NGX_HTTP_AGENT_MODULE_H_INCLUDED_ */
