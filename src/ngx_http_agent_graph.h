
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_GRAPH_H_INCLUDED_
#define _NGX_HTTP_AGENT_GRAPH_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


#define NGX_HTTP_AGENT_END       -1


typedef struct ngx_http_agent_run_s  ngx_http_agent_run_t;


typedef enum {
    NGX_HTTP_AGENT_CHANNEL_MESSAGES = 0,    /* reducer: append */
    NGX_HTTP_AGENT_CHANNEL_COUNTER,         /* reducer: sum */
    NGX_HTTP_AGENT_CHANNEL_VALUE            /* reducer: last value wins */
} ngx_http_agent_channel_e;


/* one chat message, as the provider's wire format has it */
typedef struct {
    int64_t                    seq;
    ngx_str_t                  role;
    ngx_str_t                  content;
    ngx_str_t                  tool_calls;    /* JSON array, or empty */
    ngx_str_t                  tool_call_id;
    ngx_str_t                  name;
    ngx_str_t                  images;        /* JSON array, or empty */
    ngx_str_t                  created_at;
    ngx_str_t                  metadata;      /* JSON object, or empty */
} ngx_http_agent_msg_t;


typedef struct {
    ngx_array_t               *messages;      /* ngx_http_agent_msg_t */
    int64_t                    counter;
    ngx_str_t                  json;          /* empty: null */
} ngx_http_agent_value_t;


typedef struct {
    ngx_str_t                  name;
    ngx_http_agent_channel_e   kind;
} ngx_http_agent_channel_t;


typedef struct {
    ngx_uint_t                 channel;
    ngx_http_agent_value_t     value;
} ngx_http_agent_write_t;


/*
 * a node starts its work and returns NGX_OK when its update is complete,
 * NGX_AGAIN when it will call ngx_http_agent_graph_node_done() later,
 * or NGX_ERROR with run->error set
 */
typedef ngx_int_t (*ngx_http_agent_node_pt)(ngx_http_agent_run_t *run);

/* a conditional edge: the index of the next node or NGX_HTTP_AGENT_END */
typedef ngx_int_t (*ngx_http_agent_route_pt)(ngx_http_agent_run_t *run);


typedef struct {
    ngx_str_t                  name;
    ngx_http_agent_node_pt     handler;
    ngx_int_t                  next;
    ngx_http_agent_route_pt    route;
} ngx_http_agent_node_t;


typedef struct {
    ngx_str_t                  name;
    ngx_http_agent_channel_t  *channels;
    ngx_uint_t                 nchannels;
    ngx_http_agent_node_t     *nodes;
    ngx_uint_t                 nnodes;
    ngx_int_t                  entry;
} ngx_http_agent_graph_t;


/* what the embedder does with a run: persist, stream, finish */
typedef struct {
    ngx_int_t                (*checkpoint)(ngx_http_agent_run_t *run,
                                           ngx_str_t *node, ngx_int_t next);
    void                     (*done)(ngx_http_agent_run_t *run,
                                     ngx_int_t rc);
} ngx_http_agent_run_handlers_t;


struct ngx_http_agent_run_s {
    ngx_pool_t                      *pool;
    ngx_log_t                       *log;
    ngx_http_agent_graph_t          *graph;
    ngx_http_agent_value_t          *state;      /* one per channel */
    ngx_array_t                     *update;     /* ngx_http_agent_write_t */
    ngx_int_t                        current;
    ngx_uint_t                       step;
    ngx_uint_t                       limit;
    ngx_str_t                        error;
    ngx_str_t                        code;

    ngx_http_agent_run_handlers_t   *handlers;
    void                            *ctx;        /* the embedder's */
    void                            *data;       /* the node kinds' */
    void                            *scratch;    /* a reusable JSON
                                                    generator */

    /* aborts the current node's asynchronous work */
    void                           (*cancel)(ngx_http_agent_run_t *run);

    ngx_int_t                        async_rc;
    unsigned                         in_node:1;
    unsigned                         async_done:1;
    unsigned                         finished:1;
};


ngx_http_agent_run_t *ngx_http_agent_graph_run_create(ngx_pool_t *pool,
    ngx_log_t *log, ngx_http_agent_graph_t *graph);
ngx_int_t ngx_http_agent_graph_channel(ngx_http_agent_graph_t *graph,
    const char *name);
ngx_int_t ngx_http_agent_graph_apply(ngx_http_agent_run_t *run,
    ngx_array_t *update);
void ngx_http_agent_graph_start(ngx_http_agent_run_t *run);
void ngx_http_agent_graph_node_done(ngx_http_agent_run_t *run, ngx_int_t rc);
void ngx_http_agent_graph_cancel(ngx_http_agent_run_t *run);
ngx_int_t ngx_http_agent_graph_fail(ngx_http_agent_run_t *run,
    const char *code, const char *fmt, ...);

ngx_array_t *ngx_http_agent_graph_update_create(ngx_pool_t *pool);
ngx_int_t ngx_http_agent_graph_write_message(ngx_http_agent_run_t *run,
    ngx_array_t *update, ngx_uint_t channel, ngx_http_agent_msg_t *msg);
ngx_int_t ngx_http_agent_graph_write_counter(ngx_array_t *update,
    ngx_uint_t channel, int64_t n);
ngx_int_t ngx_http_agent_graph_write_value(ngx_array_t *update,
    ngx_uint_t channel, ngx_str_t *json);
ngx_http_agent_msg_t *ngx_http_agent_graph_last_message(
    ngx_http_agent_run_t *run, ngx_uint_t channel);


#endif /* _NGX_HTTP_AGENT_GRAPH_H_INCLUDED_ */
