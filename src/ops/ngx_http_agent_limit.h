
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_LIMIT_H_INCLUDED_
#define _NGX_HTTP_AGENT_LIMIT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


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


#endif /* _NGX_HTTP_AGENT_LIMIT_H_INCLUDED_ */
