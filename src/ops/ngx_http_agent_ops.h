
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_OPS_H_INCLUDED_
#define _NGX_HTTP_AGENT_OPS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"


/* dollars, a point and nine decimals: what cost_print may write */
#define NGX_HTTP_AGENT_COST_LEN  (NGX_INT64_LEN + 10)


/*
 * agent_model price=IN/OUT[/CACHED[/WRITE]]: US dollars a million tokens,
 * kept as micro-dollars a million tokens (picodollars a token)
 */
typedef struct {
    int64_t                    in;
    int64_t                    out;
    int64_t                    cached;      /* input read from a cache */
    int64_t                    write;       /* input written to one */
    ngx_uint_t                 set;
} ngx_http_agent_price_t;


char *ngx_http_agent_cost_price(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf);
int64_t ngx_http_agent_cost_of(ngx_http_agent_price_t *price, int64_t input,
    int64_t output, int64_t cached, int64_t write);
u_char *ngx_http_agent_cost_print(u_char *p, u_char *last, int64_t nano);


/* agent_limit_zone NAME key=VALUE size=SIZE */
typedef struct {
    ngx_str_t                  name;
    ngx_http_complex_value_t   key;
    ngx_shm_zone_t            *shm_zone;
} ngx_http_agent_limit_zone_t;


/* a model call's tokens reserved when no max_tokens says how many */
#define NGX_HTTP_AGENT_LIMIT_ESTIMATE  1024


/*
 * agent_limit zone=NAME [tokens=N/PERIOD] [cost=DOLLARS/PERIOD]
 * [turns=N/PERIOD] [concurrent=N]
 */
typedef struct {
    ngx_http_agent_limit_zone_t  *zone;
    int64_t                       tokens;
    time_t                        tokens_period;
    int64_t                       cost;      /* nanodollars */
    time_t                        cost_period;
    ngx_uint_t                    turns;
    time_t                        turns_period;
    ngx_uint_t                    concurrent;
} ngx_http_agent_limit_t;


/* the limits a turn holds: charged as it spends, released at its end */
typedef struct {
    ngx_array_t                   held;      /* of what acquire found */
    unsigned                      released:1;
    unsigned                      over:1;    /* a budget is spent */
    unsigned                      cost:1;    /* it is one of dollars */
} ngx_http_agent_limits_t;


/* the zone's shared memory: made by limit_conf.c, counted in by limit.c */

typedef struct {
    u_char                       color;
    u_char                       dummy;
    u_short                      len;
    ngx_queue_t                  queue;
    time_t                       tokens_window;
    time_t                       turns_window;
    time_t                       cost_window;
    int64_t                      tokens;
    int64_t                      reserved;   /* by model calls running */
    int64_t                      cost;       /* nanodollars */
    int64_t                      cost_reserved;
    ngx_uint_t                   turns;
    ngx_uint_t                   concurrent;
    u_char                       data[1];
} ngx_http_agent_limit_node_t;


typedef struct {
    ngx_rbtree_t                 rbtree;
    ngx_rbtree_node_t            sentinel;
    ngx_queue_t                  queue;      /* least recently used last */
} ngx_http_agent_limit_shctx_t;


typedef struct {
    ngx_http_agent_limit_shctx_t  *sh;
    ngx_slab_pool_t               *shpool;
} ngx_http_agent_limit_ctx_t;


char *ngx_http_agent_limit_zone(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
char *ngx_http_agent_limit(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
ngx_int_t ngx_http_agent_limit_acquire(ngx_http_request_t *r,
    ngx_array_t *limits, ngx_http_agent_limits_t **held, ngx_str_t *why);
ngx_int_t ngx_http_agent_limit_keys(ngx_http_request_t *r,
    ngx_array_t *limits, ngx_str_t *keys);
ngx_int_t ngx_http_agent_limit_reserve(ngx_http_agent_limits_t *held,
    int64_t *want, int64_t *cost);
void ngx_http_agent_limit_charge(ngx_http_agent_limits_t *held,
    int64_t tokens, int64_t cost, int64_t reserved, int64_t reserved_cost);
void ngx_http_agent_limit_release(ngx_http_agent_limits_t *held);


/* what is counted: the order of ngx_http_agent_metrics_defs in metrics.c */
typedef enum {
    NGX_HTTP_AGENT_M_TURNS = 0,          /* graph, outcome */
    NGX_HTTP_AGENT_M_TURN_SECONDS,       /* graph: histogram */
    NGX_HTTP_AGENT_M_MODEL_CALLS,        /* model, status */
    NGX_HTTP_AGENT_M_TTFT_SECONDS,       /* model: histogram */
    NGX_HTTP_AGENT_M_TOKENS,             /* model, kind */
    NGX_HTTP_AGENT_M_COST,               /* model: nanodollars */
    NGX_HTTP_AGENT_M_RETRIES,            /* model */
    NGX_HTTP_AGENT_M_FALLBACKS,          /* model */
    NGX_HTTP_AGENT_M_TOOL_CALLS,         /* tool, outcome */
    NGX_HTTP_AGENT_M_OPEN_STREAMS,       /* gauge */
    NGX_HTTP_AGENT_M_SQL_SECONDS,        /* histogram */
    NGX_HTTP_AGENT_M_STORE_ERRORS,
    NGX_HTTP_AGENT_M_STORE_CHECKPOINTS,  /* where, kind */
    NGX_HTTP_AGENT_M_TRACES_DROPPED,
    NGX_HTTP_AGENT_M_CACHE_HITS,         /* kind */
    NGX_HTTP_AGENT_M_CACHE_MISSES,       /* kind */
    NGX_HTTP_AGENT_M_LEASES,             /* kind */
    NGX_HTTP_AGENT_M_LAST
} ngx_http_agent_metric_e;


ngx_int_t ngx_http_agent_metrics_init_conf(ngx_conf_t *cf);
char *ngx_http_agent_metrics_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
void ngx_http_agent_metrics_add(ngx_uint_t metric, ngx_str_t *a,
    ngx_str_t *b, int64_t n);
void ngx_http_agent_metrics_observe(ngx_uint_t metric, ngx_str_t *a,
    ngx_msec_t ms);
void ngx_http_agent_metrics_cstr(ngx_uint_t metric, ngx_str_t *a,
    const char *b, int64_t n);


/*
 * where a turn's time goes (ngx_http_agent_phase.c): a phase's start is
 * taken with ngx_http_agent_phase_now(), 0 when no bench asks
 */
typedef enum {
    NGX_HTTP_AGENT_PHASE_PARSE = 0,      /* a request's body parsed */
    NGX_HTTP_AGENT_PHASE_BEGIN,          /* a turn begun: its session read */
    NGX_HTTP_AGENT_PHASE_REQUEST,        /* a model request's JSON built */
    NGX_HTTP_AGENT_PHASE_CURL,           /* a model request handed to curl */
    NGX_HTTP_AGENT_PHASE_ANSWER,         /* a chunk of a model's answer read */
    NGX_HTTP_AGENT_PHASE_SQL,            /* SQL's thread hand-off and back */
    NGX_HTTP_AGENT_PHASE_READ,           /* a store statement that reads */
    NGX_HTTP_AGENT_PHASE_WRITE,          /* a store statement that writes */
    NGX_HTTP_AGENT_PHASE_EVENT,          /* an event encoded and queued */
    NGX_HTTP_AGENT_PHASE_END,            /* a turn's end and its answer's */
    NGX_HTTP_AGENT_PHASES
} ngx_http_agent_phase_e;

#define ngx_http_agent_phase_now()                                            \
    (ngx_http_agent_phase_on ? ngx_http_agent_phase_clock() : 0)

extern ngx_uint_t  ngx_http_agent_phase_on;

uint64_t ngx_http_agent_phase_clock(void);
void ngx_http_agent_phase_add(ngx_uint_t phase, uint64_t start);
void ngx_http_agent_phase_put(ngx_uint_t phase, uint64_t ns);


/* for the files of src/ops/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


#pragma GCC visibility pop


typedef struct ngx_http_agent_trace_s  ngx_http_agent_trace_t;


/* agent_otlp url=URL [headers=...] [sample=RATE] [trust_parent=on] */
typedef struct {
    void                     (*export)(ngx_http_agent_trace_t *t);
    ngx_str_t                  url;
    ngx_array_t               *headers;     /* ngx_str_t "Name: value" */
    ngx_uint_t                 sample;      /* of 10000 */
    ngx_flag_t                 content;     /* content=on: the turn's
                                               input and answer too */
    ngx_flag_t                 trust_parent; /* trust_parent=on: a
                                               caller's sampled flag
                                               decides, not sample= */
} ngx_http_agent_otlp_t;


typedef struct {
    u_char                     id[8];
    u_char                     parent[8];
    ngx_str_t                  name;
    uint64_t                   start;       /* Unix ns */
    uint64_t                   end;
    ngx_str_t                  attributes;  /* OTLP KeyValue list */
    ngx_str_t                  error;       /* status message, or empty */
    ngx_uint_t                 kind;        /* 1 internal, 3 client */
} ngx_http_agent_span_t;


/* a turn's trace: its spans, the root first */
struct ngx_http_agent_trace_s {
    u_char                     trace_id[16];
    u_char                     parent[8];   /* a traceparent's, or zero */
    ngx_array_t                spans;       /* ngx_http_agent_span_t */
    ngx_pool_t                *pool;
    ngx_int_t                  node;        /* the node span open, or -1 */
    ngx_str_t                  graph;
    ngx_str_t                  session;
    ngx_http_agent_otlp_t     *otlp;
};


/* a model call as its span records it */
typedef struct {
    const char                     *operation; /* "chat", "embeddings" */
    ngx_str_t                      *provider;
    ngx_str_t                      *model;     /* NULL: no model */
    ngx_msec_t                      start;
    ngx_msec_t                      ttft;
    int64_t                         input_tokens;
    int64_t                         output_tokens;
    int64_t                         cached_tokens;
    int64_t                         cost;      /* nanodollars; -1: the
                                                  model has no price */
    ngx_str_t                       error;     /* empty: it answered */
    ngx_str_t                       cache;     /* "hit", "similar", "miss",
                                                  or empty: not looked
                                                  up */
} ngx_http_agent_trace_call_t;


char *ngx_http_agent_otlp(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
ngx_http_agent_trace_t *ngx_http_agent_trace_start(ngx_http_request_t *r,
    ngx_http_agent_otlp_t *otlp, ngx_str_t *graph, ngx_str_t *session);
void ngx_http_agent_trace_node(ngx_http_agent_trace_t *t, ngx_str_t *name,
    ngx_uint_t step, ngx_uint_t start);
void ngx_http_agent_trace_model(ngx_http_agent_trace_t *t,
    ngx_http_agent_trace_call_t *call);
void ngx_http_agent_trace_tool(ngx_http_agent_trace_t *t, ngx_str_t *name,
    ngx_str_t *id, ngx_msec_t started, ngx_uint_t error);
void ngx_http_agent_trace_end(ngx_http_agent_trace_t *t, ngx_str_t *code,
    ngx_str_t *error, ngx_str_t *input, ngx_str_t *output);
void ngx_http_agent_trace_id(ngx_http_agent_trace_t *t, u_char *buf);

/* otlp.c */


/* for the files of src/ops/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_trace_json(ngx_http_agent_trace_t *t,
    ngx_http_agent_json_t *j);

#pragma GCC visibility pop


/* agent_webhooks URL-PREFIX ... [key_env=VAR] */
typedef struct {
    ngx_array_t               *prefixes;    /* ngx_str_t */
    ngx_str_t                  key_env;     /* NUL-terminated, or empty */
} ngx_http_agent_webhooks_t;


char *ngx_http_agent_webhook_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
ngx_uint_t ngx_http_agent_webhook_allowed(ngx_http_agent_webhooks_t *hooks,
    ngx_str_t *url);
ngx_int_t ngx_http_agent_webhook_send(ngx_http_agent_webhooks_t *hooks,
    ngx_str_t *url, ngx_str_t *body, ngx_str_t *header, ngx_str_t *id,
    ngx_log_t *log);


#endif /* _NGX_HTTP_AGENT_OPS_H_INCLUDED_ */
