
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_NODE_STORE_RECALL_H_INCLUDED_
#define _NGX_HTTP_AGENT_NODE_STORE_RECALL_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_params.h"
#include "ngx_http_agent_graph_desc.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_json.h"


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
ngx_int_t ngx_http_agent_node_store_recall_write(
    ngx_http_agent_node_store_ctx_t *ctx, ngx_array_t *items);
ngx_int_t ngx_http_agent_node_store_items(ngx_http_agent_run_t *run,
    ngx_array_t *items, ngx_str_t *json);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_NODE_STORE_RECALL_H_INCLUDED_ */
