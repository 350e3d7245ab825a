
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_KINDS_INT_H_INCLUDED_
#define _NGX_HTTP_AGENT_KINDS_INT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_mcp.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_llm.h"


/* for the files of src/kinds/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


/* the longest tool name providers take, and MCP's */


/* one entry of a node's tools=: a tool of the registry, or an MCP
   server's tools (all of them, or one by name) */
typedef struct {
    ngx_http_agent_tool_t         *tool;
    ngx_http_agent_mcp_t          *mcp;
    ngx_str_t                      name;       /* the server's; empty: all */
} ngx_http_agent_toolset_entry_t;


/* the tools bound to a step: what a model is offered and all that a
   tools node runs */
typedef struct {
    ngx_array_t                   *entries;
} ngx_http_agent_toolset_t;


/* what a call resolved to: the tool, and the name its owner knows */
typedef struct {
    ngx_http_agent_tool_t         *tool;
    ngx_str_t                      name;
    ngx_http_agent_toolset_entry_t  *entry;
} ngx_http_agent_toolset_hit_t;


ngx_uint_t ngx_http_agent_toolset_empty(ngx_http_agent_toolset_t *set);
ngx_uint_t ngx_http_agent_toolset_waits(ngx_http_agent_toolset_t *set);
ngx_int_t ngx_http_agent_toolset_json(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_toolset_t *set, ngx_str_t *out);
ngx_int_t ngx_http_agent_toolset_find(ngx_pool_t *pool,
    ngx_http_agent_toolset_t *set, ngx_str_t *name,
    ngx_http_agent_toolset_hit_t *hit);
ngx_uint_t ngx_http_agent_toolset_holds(ngx_http_agent_toolset_t *set,
    ngx_http_agent_toolset_hit_t *hit);
ngx_int_t ngx_http_agent_toolset_client(ngx_pool_t *pool,
    ngx_http_agent_toolset_t *set, ngx_array_t *client, ngx_str_t **tools);

ngx_int_t ngx_http_agent_toolset_bind(ngx_conf_t *cf,
    ngx_http_agent_toolset_t *set, ngx_str_t *list, ngx_uint_t prompts);

#pragma GCC visibility pop


/* for the files of src/kinds/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


/* an llm node's parameters, read by node_llm_conf.c, used by node_llm.c */
typedef struct {
    ngx_str_t                   prompt_file;
    ngx_str_t                   prompt;
    ngx_str_t                   tools_list;    /* as written */
    ngx_str_t                   tools;         /* JSON array, or empty:
                                                  none, or a server's */
    ngx_http_agent_toolset_t    toolset;       /* what the model is
                                                  offered */
    ngx_str_t                   output_name;
    ngx_int_t                   output;
    ngx_str_t                   model_name;
    ngx_http_agent_model_t     *model;
    ngx_str_t                   event;         /* a custom event */
    ngx_str_t                   summary_name;
    ngx_int_t                   summary;       /* -1: none */
    ngx_int_t                   stream;        /* -1: by output */
    ngx_flag_t                  history;
    ngx_uint_t                  json;          /* format=json */
    ngx_msec_t                  cache_response; /* the exact cache's TTL */
    ngx_flag_t                  cache_shared;  /* ... across owners */
    ngx_int_t                   cache_similar; /* the semantic one's
                                                  least score, in
                                                  thousandths; -1: off */
    ngx_str_t                   scope;         /* its answers':
                                                  "graph/node" */
} ngx_http_agent_node_llm_conf_t;


extern ngx_http_agent_param_t  ngx_http_agent_node_llm_params[];


void *ngx_http_agent_node_llm_create_conf(ngx_conf_t *cf);
ngx_int_t ngx_http_agent_node_llm_check(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);


#pragma GCC visibility pop


/* for the files of src/kinds/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


typedef struct {
    ngx_str_t                     tools;        /* empty: what the llm
                                                   nodes before it offer */
    ngx_http_agent_toolset_t      offered;      /* theirs, or call= */
    ngx_http_agent_toolset_t      own;          /* tools=, or empty */
    ngx_msec_t                    timeout;
    ngx_uint_t                    retries;
    ngx_array_t                  *redact;       /* ngx_regex_t * */
    ngx_str_t                     call;         /* call=TOOL, or empty */
    ngx_str_t                     query_name;
    ngx_int_t                     query;
    ngx_str_t                     output_name;
    ngx_int_t                     output;
    ngx_array_t                  *args;         /* ngx_http_agent_tool_arg_t */
    ngx_str_t                     approve;      /* on, or A,B: a human
                                                   sees the calls first */
    ngx_uint_t                    on_unknown;   /* 1: a call cut by a
                                                   take-over asks a human */
} ngx_http_agent_node_tools_conf_t;


typedef struct {
    ngx_str_t                     tool;
    ngx_str_t                     arg;
    ngx_str_t                     channel_name;
    ngx_int_t                     channel;
} ngx_http_agent_tool_arg_t;


extern ngx_http_agent_param_t  ngx_http_agent_node_tools_params[];


ngx_int_t ngx_http_agent_node_tools_check(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);


#pragma GCC visibility pop


/* for the files of src/kinds/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_node_tools_args(ngx_http_agent_run_t *run,
    ngx_http_agent_node_tools_conf_t *tc, ngx_http_agent_tool_call_t *c);
ngx_int_t ngx_http_agent_node_tools_own(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_array_t **calls);
ngx_int_t ngx_http_agent_node_tools_kept(ngx_http_agent_run_t *run,
    ngx_http_agent_tool_call_t *c);
ngx_int_t ngx_http_agent_node_tools_claim(ngx_http_agent_run_t *run,
    ngx_uint_t index, ngx_http_agent_tool_call_t *c);
ngx_int_t ngx_http_agent_node_tools_client(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_array_t *calls);
ngx_int_t ngx_http_agent_node_tools_write(ngx_http_agent_run_t *run,
    ngx_http_agent_node_tools_conf_t *tc, ngx_http_agent_tool_call_t *calls,
    ngx_uint_t n);


#pragma GCC visibility pop


/* the store node (node_store.c) and its recall by meaning (this file's) */

#define NGX_HTTP_AGENT_STORE_PUT     0
#define NGX_HTTP_AGENT_STORE_GET     1
#define NGX_HTTP_AGENT_STORE_SEARCH  2
#define NGX_HTTP_AGENT_STORE_DELETE  3
#define NGX_HTTP_AGENT_STORE_RECALL  4

/* what of a message recall embeds, at most: a query, not a document */
#define NGX_HTTP_AGENT_STORE_RECALL_MAX  8192


typedef struct {
    ngx_str_t                  name;        /* empty: the channel's own */
    ngx_int_t                  channel;
} ngx_http_agent_node_store_field_t;


typedef struct {
    ngx_uint_t                 op;
    ngx_str_t                  ns;
    ngx_str_t                  key;
    ngx_str_t                  value;
    ngx_array_t               *fields;      /* the value's, resolved */
    ngx_str_t                  query;
    ngx_int_t                  limit;
    ngx_int_t                  ttl;         /* minutes, 0: none */
    ngx_str_t                  output_name;
    ngx_int_t                  output;
    ngx_array_t               *index;       /* put: ngx_str_t paths */
    ngx_uint_t                 index_off;
    ngx_int_t                  k;           /* recall: 0, 5 */
    ngx_int_t                  min_score;   /* recall: in thousandths */
    ngx_str_t                  from_name;
    ngx_int_t                  from;        /* recall: -1, input */
    ngx_str_t                  text_name;
    ngx_int_t                  text;        /* recall: a text block */
} ngx_http_agent_node_store_conf_t;


typedef struct {
    ngx_http_agent_run_t         *run;
    ngx_http_agent_node_t        *node;
    ngx_http_agent_store_call_t   sc;
    ngx_http_agent_item_t         item;
    ngx_http_agent_item_query_t   q;
    yajl_val                      doc;       /* put: what is embedded */
    ngx_str_t                     about;     /* recall: what is embedded */
    ngx_uint_t                    cancelled; /* the model may still wake */
} ngx_http_agent_node_store_ctx_t;


/* for the files of src/kinds/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_node_store_recall_check(ngx_conf_t *cf,
    ngx_http_agent_node_t *node);
char *ngx_http_agent_node_store_recall_score(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
ngx_int_t ngx_http_agent_node_store_recall_about(ngx_http_agent_run_t *run,
    ngx_http_agent_node_store_ctx_t *ctx);
ngx_int_t ngx_http_agent_node_store_usage(ngx_http_agent_run_t *run);
ngx_int_t ngx_http_agent_node_store_recall_write(
    ngx_http_agent_node_store_ctx_t *ctx, ngx_array_t *items);
ngx_int_t ngx_http_agent_node_store_items(ngx_http_agent_run_t *run,
    ngx_array_t *items, ngx_str_t *json);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_KINDS_INT_H_INCLUDED_ */
