
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_ENGINE_H_INCLUDED_
#define _NGX_HTTP_AGENT_ENGINE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"


/*
 * A graph as data: its channels, nodes, edges and the node kinds, and the
 * fields of a run of it; with the lookups by name on a graph.  What every
 * file of the engine shares: the driver (graph.c) steps over them, the
 * channels' values (graph_state.c) and the conditions (expr.c,
 * expr_eval.c) read them, and none of these calls the driver.
 */


#define NGX_HTTP_AGENT_END       -2

/* a node's run() that stops the run until a human answers (interrupt) */
#define NGX_HTTP_AGENT_INTERRUPT  NGX_DECLINED

/* the channels every graph has, at these indices */
#define NGX_HTTP_AGENT_CH_MESSAGES    0
#define NGX_HTTP_AGENT_CH_INPUT       1
#define NGX_HTTP_AGENT_CH_SESSION_ID  2


typedef struct ngx_http_agent_run_s   ngx_http_agent_run_t;
typedef struct ngx_http_agent_graph_s  ngx_http_agent_graph_t;
typedef struct ngx_http_agent_kind_s  ngx_http_agent_kind_t;
typedef struct ngx_http_agent_expr_s  ngx_http_agent_expr_t;


typedef enum {
    NGX_HTTP_AGENT_REDUCE_MESSAGES = 0,   /* append; same id replaces */
    NGX_HTTP_AGENT_REDUCE_APPEND,         /* arrays concatenated */
    NGX_HTTP_AGENT_REDUCE_SUM,            /* numbers add */
    NGX_HTTP_AGENT_REDUCE_VALUE,          /* the last write wins */
    NGX_HTTP_AGENT_REDUCE_MERGE           /* object keys merged */
} ngx_http_agent_reducer_e;


typedef struct {
    ngx_array_t               *messages;      /* ngx_http_agent_msg_t */
    double                     number;        /* sum */
    ngx_str_t                  json;          /* the others; empty: null */
} ngx_http_agent_value_t;


/* a channel's type=, as JSON Schema names them; 0: not said */
#define NGX_HTTP_AGENT_TYPE_NAMES                                             \
    { NULL, "string", "number", "integer", "boolean", "object", "array" }


typedef struct {
    ngx_str_t                  name;
    ngx_http_agent_reducer_e   reducer;
    ngx_str_t                  dflt;          /* JSON, or empty */
    ngx_uint_t                 turn;          /* scope=turn: reset */
    ngx_uint_t                 type;          /* type=: its schema's */
    ngx_array_t               *choices;       /* enum=A,B: ngx_str_t */
    ngx_flag_t                 config;        /* config=on: a run's
                                                 config.configurable
                                                 writes it */
    unsigned                   output:1;      /* named by "output" */
} ngx_http_agent_channel_t;


typedef struct {
    ngx_uint_t                 channel;
    ngx_http_agent_value_t     value;
} ngx_http_agent_write_t;


typedef struct {
    ngx_int_t                  to;            /* NGX_HTTP_AGENT_END */
    ngx_http_agent_expr_t     *cond;          /* NULL: always */
    ngx_str_t                  to_name;
    ngx_str_t                  text;          /* the if= as written */
} ngx_http_agent_edge_t;


typedef struct {
    ngx_str_t                  name;
    ngx_http_agent_kind_t     *kind;
    void                      *conf;          /* the kind's */
    ngx_array_t                edges;         /* ngx_http_agent_edge_t */
    ngx_int_t                  count;         /* a sum channel, or -1 */
    ngx_str_t                  count_name;
    ngx_uint_t                 index;
    ngx_str_t                  file;
    ngx_uint_t                 line;
    ngx_flag_t                 interrupt_before;
    ngx_flag_t                 interrupt_after;
    ngx_str_t                  interrupt_if_text;
    ngx_http_agent_expr_t     *interrupt_if;  /* the run waits before the
                                                 node when it holds (an
                                                 interrupt() inside it) */
    ngx_str_t                  interrupt_value; /* then: a template */
    ngx_str_t                  interrupt_resume_name;
    ngx_int_t                  interrupt_resume; /* the answer's channel,
                                                    or -1 */
    ngx_str_t                  then_text;
    ngx_array_t               *parts;         /* then=: node indexes run
                                                 in its step, or NULL */
    unsigned                   part:1;        /* only a part of other
                                                 nodes' steps (then=), no
                                                 edges of its own */
    ngx_http_agent_graph_t    *subgraph;      /* the graph its step runs
                                                 (its kind's check says),
                                                 or NULL */
    unsigned                   answers:1;     /* answers the last message's
                                                 tool calls, as its kind's
                                                 calls does (its check
                                                 says) */
    ngx_msec_t                 cache;         /* cache=: its update kept
                                                 that long, 0: not */
    uint32_t                   version;       /* its statement's CRC: a
                                                 reload that changes it
                                                 finds none kept */
} ngx_http_agent_node_t;


struct ngx_http_agent_graph_s {
    ngx_str_t                  name;
    ngx_array_t                channels;      /* ngx_http_agent_channel_t */
    ngx_array_t                nodes;         /* ngx_http_agent_node_t */
    ngx_int_t                  entry;
    ngx_str_t                  file;
    ngx_uint_t                 line;
    unsigned                   builtin:1;
    unsigned                   outputs:1;     /* an "output" statement:
                                                 a run's output is those
                                                 channels only */
    unsigned                   prompt_missing:1; /* agent_prompts has no
                                                    react_system.md */
};


/*
 * A node kind: its parameters are read at configuration time, its work
 * runs per step.  run() returns NGX_OK when the node's update is complete,
 * NGX_AGAIN when it will call ngx_http_agent_graph_node_done() later, or
 * NGX_ERROR with run->error set.
 */
struct ngx_http_agent_kind_s {
    ngx_str_t                  name;
    void                    *(*create)(ngx_conf_t *cf);
    /* its KEY=VALUE parameters, set in what create() made */
    ngx_http_agent_param_t    *params;
    /* after the graph is read: channels resolved, files loaded */
    ngx_int_t                (*check)(ngx_conf_t *cf,
                                      ngx_http_agent_graph_t *graph,
                                      ngx_http_agent_node_t *node);
    ngx_int_t                (*run)(ngx_http_agent_run_t *run,
                                    ngx_http_agent_node_t *node);
    /* runs the tool calls of the last message: calls left for a node
       of any other kind are closed as not run */
    ngx_uint_t                 calls;
    /* the tools= a node offers its model (the nodes that run the calls
       run only those), or NULL */
    ngx_str_t               *(*offers)(void *conf);
    /* without create(): the size of its conf, zeroed */
    size_t                     conf_size;
};


/*
 * what the embedder does with a run: persist, stream, finish.  A
 * checkpoint may answer later (NGX_AGAIN): the embedder then calls
 * ngx_http_agent_graph_saved() with its result and the run goes on.
 */
typedef struct {
    ngx_int_t                (*checkpoint)(ngx_http_agent_run_t *run,
                                           ngx_str_t *node, ngx_int_t next);
    void                     (*done)(ngx_http_agent_run_t *run,
                                     ngx_int_t rc);
    /* a node starts (start: 1) or ends; NGX_ERROR fails the run */
    ngx_int_t                (*node)(ngx_http_agent_run_t *run,
                                     ngx_http_agent_node_t *node,
                                     ngx_uint_t start);
    /*
     * optional: the run of a subgraph that the run's node runs (at any
     * depth below) starts (node NULL) or one of its nodes ends, its
     * update in its state; for the streams that show subgraphs' steps
     */
    ngx_int_t                (*subgraph)(ngx_http_agent_run_t *run,
                                         ngx_http_agent_run_t *inner,
                                         ngx_http_agent_node_t *node);
    /*
     * optional: a step of such a subgraph saved, in its namespace (node:
     * the one that ran, "__input__" for the state it starts with); one it
     * waits at is the run's own wait's.  NGX_AGAIN: the embedder calls
     * ngx_http_agent_graph_saved(inner, rc) once it is
     */
    ngx_int_t                (*subgraph_checkpoint)(
                                         ngx_http_agent_run_t *run,
                                         ngx_http_agent_run_t *inner,
                                         ngx_str_t *node, ngx_int_t next);
    /*
     * optional: a node with cache= (graph_cache.c) looked up (put 0):
     * NGX_OK, its update kept is in run->update and the node does not
     * run; NGX_DECLINED, it runs; NGX_AGAIN, the embedder answers later
     * (ngx_http_agent_graph_cache_miss, ngx_http_agent_graph_node_done).
     * Put 1: the update the node made, to keep
     */
    ngx_int_t                (*cache)(ngx_http_agent_run_t *run,
                                      ngx_http_agent_node_t *node,
                                      ngx_uint_t put);
} ngx_http_agent_run_handlers_t;


struct ngx_http_agent_run_s {
    ngx_pool_t                      *pool;
    ngx_log_t                       *log;
    ngx_http_agent_graph_t          *graph;
    ngx_http_agent_value_t          *state;      /* one per channel */
    ngx_str_t                        extra;      /* channels of other
                                                    graphs: kept */
    ngx_uint_t                      *visits;     /* per node, this run */
    ngx_array_t                     *update;     /* ngx_http_agent_write_t */
    ngx_int_t                        current;
    ngx_uint_t                       step;
    ngx_uint_t                       limit;
    ngx_uint_t                       depth;      /* a subgraph's run: its
                                                    parents' number */
    ngx_http_agent_run_t            *parent;     /* ... the run whose
                                                    current node runs it */
    ngx_str_t                        task;       /* ... the embedder's id
                                                    of it, once named */
    ngx_str_t                        saved;      /* ... the embedder's id
                                                    of its last step's
                                                    checkpoint */
    ngx_uint_t                       messages_at_start;
    ngx_str_t                        error;
    ngx_str_t                        code;
    ngx_str_t                        resume;     /* the human's answer:
                                                    a run resumed */
    ngx_str_t                        interrupt;  /* {"node", "value"} */
    u_char                          *waits;      /* per node, asked by the
                                                    run: 1 before, 2 after */

    ngx_http_agent_run_handlers_t   *handlers;
    void                            *ctx;        /* the embedder's */
    void                            *data;       /* the node kinds' */
    void                            *node_data;  /* the current node's */
    void                            *scratch;    /* a reusable JSON
                                                    generator */

    /* aborts the current node's asynchronous work */
    void                           (*cancel)(ngx_http_agent_run_t *run);

    ngx_int_t                        async_rc;
    ngx_uint_t                       part;       /* the step's parts run */
    ngx_uint_t                       applied;    /* its writes in state */

    /* a checkpoint being saved: what follows it */
    ngx_uint_t                       saving;
    ngx_http_agent_node_t           *saving_node;
    ngx_int_t                        saving_next;
    ngx_uint_t                       saving_after;

    unsigned                         resuming:1; /* at the node resumed */
    unsigned                         inside:1;   /* it waits inside its
                                                    node: a subgraph's
                                                    interrupt */
    unsigned                         in_node:1;
    unsigned                         async_done:1;
    unsigned                         finished:1;
    unsigned                         cached:1;   /* the step's update is
                                                    the cache's */
    ngx_str_t                        cache_key;  /* the embedder's, of the
                                                    node looked up */
};


ngx_int_t ngx_http_agent_graph_channel(ngx_http_agent_graph_t *graph,
    ngx_str_t *name);
ngx_int_t ngx_http_agent_graph_node(ngx_http_agent_graph_t *graph,
    ngx_str_t *name);
ngx_int_t ngx_http_agent_graph_step_node(ngx_http_agent_graph_t *graph,
    ngx_str_t *name);
ngx_uint_t ngx_http_agent_graph_has_kind(ngx_http_agent_graph_t *graph,
    const char *kind);


/* for the files of src/engine/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_http_agent_expr_t *ngx_http_agent_expr_parse(ngx_pool_t *pool,
    ngx_http_agent_graph_t *graph, ngx_str_t *text, u_char *err,
    size_t errlen);
/* NGX_OK: it holds, NGX_DECLINED: it does not, NGX_ERROR */
ngx_int_t ngx_http_agent_expr_test(ngx_http_agent_run_t *run,
    ngx_http_agent_expr_t *e);


#pragma GCC visibility pop


/*
 * The driver of a run: the input step, node after node, the edges, the
 * checkpoints, an interrupt, the end.  It sits on the graph's description
 * (graph_desc.c), the channels' values (graph_state.c), the conditions
 * (expr.c) and the messages' calls (message.c); none of them calls it.
 */


ngx_http_agent_run_t *ngx_http_agent_graph_run_create(ngx_pool_t *pool,
    ngx_log_t *log, ngx_http_agent_graph_t *graph);
ngx_int_t ngx_http_agent_graph_input(ngx_http_agent_run_t *run,
    ngx_array_t *update);
void ngx_http_agent_graph_start(ngx_http_agent_run_t *run);
void ngx_http_agent_graph_begin(ngx_http_agent_run_t *run);
ngx_int_t ngx_http_agent_graph_route(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);
void ngx_http_agent_graph_node_done(ngx_http_agent_run_t *run, ngx_int_t rc);
void ngx_http_agent_graph_saved(ngx_http_agent_run_t *run, ngx_int_t rc);
void ngx_http_agent_graph_cancel(ngx_http_agent_run_t *run);
ngx_int_t ngx_http_agent_graph_fail(ngx_http_agent_run_t *run,
    const char *code, const char *fmt, ...);


char *ngx_http_agent_graph_block(ngx_conf_t *cf, ngx_array_t *graphs);
ngx_int_t ngx_http_agent_graph_builtin(ngx_conf_t *cf, ngx_array_t *graphs);
ngx_int_t ngx_http_agent_graph_check_kinds(ngx_conf_t *cf,
    ngx_array_t *graphs, ngx_str_t *dir);
ngx_int_t ngx_http_agent_graph_conf_offers(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node,
    ngx_array_t *lists);
ngx_http_agent_graph_t *ngx_http_agent_graph_find(ngx_array_t *graphs,
    ngx_str_t *name);
/* a declared graph, for the kinds' check() (a node that runs one) */
ngx_http_agent_graph_t *ngx_http_agent_graph_conf_graph(ngx_str_t *name);
/* a node's parameter naming a channel, or a list of them (graph_refs.c) */
ngx_int_t ngx_http_agent_graph_conf_channel(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node,
    const char *param, ngx_str_t *name, ngx_int_t *channel,
    ngx_uint_t messages);
ngx_int_t ngx_http_agent_graph_conf_channels(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node,
    const char *param, ngx_str_t *list, ngx_array_t *channels,
    ngx_uint_t messages);


/* the node kinds the graph language knows: set by the glue */
extern ngx_http_agent_kind_t  **ngx_http_agent_graph_kinds;


/* for the files of src/engine/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

char *ngx_http_agent_graph_parse(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph);

#pragma GCC visibility pop


/*
 * The values of a run's channels and the writes of a step, apart from the
 * engine that steps: the conditions of edges (expr_eval.c) read them, the
 * engine (graph.c) applies them, neither calls the other for it.
 */

ngx_int_t ngx_http_agent_graph_apply(ngx_http_agent_run_t *run,
    ngx_array_t *update);
ngx_array_t *ngx_http_agent_graph_update_create(ngx_pool_t *pool);
ngx_int_t ngx_http_agent_graph_write_message(ngx_http_agent_run_t *run,
    ngx_array_t *update, ngx_uint_t channel, ngx_http_agent_msg_t *msg);
ngx_int_t ngx_http_agent_graph_write_number(ngx_array_t *update,
    ngx_uint_t channel, double n);
ngx_int_t ngx_http_agent_graph_write_value(ngx_array_t *update,
    ngx_uint_t channel, ngx_str_t *json);
ngx_http_agent_msg_t *ngx_http_agent_graph_last_message(
    ngx_http_agent_run_t *run, ngx_uint_t channel);
ngx_int_t ngx_http_agent_graph_value(ngx_http_agent_run_t *run,
    ngx_uint_t channel, ngx_str_t *json);


ngx_int_t ngx_http_agent_mermaid(ngx_pool_t *pool,
    ngx_http_agent_graph_t *graph, ngx_str_t *out);


/* one tool call of an AI message */
typedef struct {
    ngx_str_t                  id;
    ngx_str_t                  name;
    yajl_val                   args;        /* parsed, or NULL */
    ngx_str_t                  arguments;   /* as JSON text, or the raw
                                               text that did not parse */
    ngx_str_t                  answer;      /* a human's result instead
                                               of a run (JSON), or empty */
} ngx_http_agent_call_t;


/* message_json()'s full: as a checkpoint keeps it, its metadata too */
#define NGX_HTTP_AGENT_MESSAGE_KEPT  2


ngx_int_t ngx_http_agent_message_calls(ngx_pool_t *pool, ngx_str_t *json,
    ngx_array_t **calls, ngx_uint_t parse);
void ngx_http_agent_message_call_json(ngx_http_agent_json_t *j,
    ngx_str_t *id, ngx_str_t *name, ngx_str_t *arguments);
void ngx_http_agent_message_lc(ngx_http_agent_json_t *j, ngx_pool_t *pool,
    ngx_http_agent_msg_t *m, ngx_str_t *id);
ngx_uint_t ngx_http_agent_message_document(ngx_str_t *mime);
ngx_int_t ngx_http_agent_message_pair(ngx_pool_t *pool, ngx_array_t *in,
    ngx_uint_t from, ngx_array_t **out);
void ngx_http_agent_message_json(ngx_http_agent_json_t *j,
    ngx_str_t *session_id, ngx_http_agent_msg_t *m, ngx_uint_t full);


/* for the files of src/engine/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_message_unanswered(ngx_pool_t *pool,
    ngx_http_agent_msg_t *m, ngx_str_t *why, ngx_array_t *out);

#pragma GCC visibility pop


#define NGX_HTTP_AGENT_PROMPT_SYSTEM  "react_system.md"


typedef struct {
    ngx_str_t                  name;
    ngx_str_t                  value;
} ngx_http_agent_prompt_var_t;


ngx_int_t ngx_http_agent_prompt_load(ngx_conf_t *cf, ngx_str_t *dir,
    ngx_str_t *file, ngx_str_t *out);


/* for the files of src/engine/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_prompt_builtin(ngx_conf_t *cf, ngx_str_t *dir,
    ngx_str_t *file, ngx_str_t *out);
ngx_int_t ngx_http_agent_prompt_render(ngx_pool_t *pool, ngx_str_t *tpl,
    ngx_http_agent_prompt_var_t *vars, ngx_uint_t n, ngx_str_t *out);

#pragma GCC visibility pop


void ngx_http_agent_state_channels(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run, ngx_uint_t all);
ngx_int_t ngx_http_agent_state_set(ngx_http_agent_run_t *run,
    const char *name, ngx_str_t *json);
void ngx_http_agent_state_update(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run);
ngx_int_t ngx_http_agent_state_interrupt(ngx_http_agent_run_t *run,
    ngx_str_t *node);
ngx_int_t ngx_http_agent_state_interrupt_graph(ngx_http_agent_run_t *run,
    ngx_str_t *graph);
void ngx_http_agent_state_values(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run);
void ngx_http_agent_state_json(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run);
ngx_int_t ngx_http_agent_state_messages(ngx_pool_t *pool, yajl_val v,
    ngx_array_t *messages);
ngx_int_t ngx_http_agent_state_read(ngx_pool_t *pool,
    ngx_http_agent_run_t *run, ngx_uint_t ch, yajl_val c);
ngx_int_t ngx_http_agent_state_subgraph(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_http_agent_run_t *inner);
ngx_int_t ngx_http_agent_state_subgraph_keep(ngx_http_agent_run_t *outer,
    ngx_str_t *node, ngx_http_agent_run_t *inner);
ngx_int_t ngx_http_agent_state_subgraph_json(ngx_pool_t *pool,
    ngx_str_t *node, ngx_http_agent_run_t *inner, ngx_int_t next,
    ngx_str_t *json);


ngx_int_t ngx_http_agent_template_render(ngx_http_agent_run_t *run,
    ngx_pool_t *pool, ngx_str_t *tpl, ngx_str_t *out);


/* for the files of src/engine/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


#pragma GCC visibility pop


/*
 * A node's cache= (graph_cache.c): the driver runs a node through these,
 * the embedder answers a lookup that ends later with cache_miss() (the
 * node runs) and then, or on a hit, ngx_http_agent_graph_node_done()
 */

ngx_int_t ngx_http_agent_graph_cache_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);
ngx_int_t ngx_http_agent_graph_cache_miss(ngx_http_agent_run_t *run);
void ngx_http_agent_graph_cache_keep(ngx_http_agent_run_t *run,
    ngx_int_t rc);


#endif /* _NGX_HTTP_AGENT_ENGINE_H_INCLUDED_ */
