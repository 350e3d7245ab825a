
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_ENGINE_INT_H_INCLUDED_
#define _NGX_HTTP_AGENT_ENGINE_INT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine.h"


/* an if= condition as parsed (expr.c) and evaluated (expr_eval.c) */

typedef enum {
    NGX_HTTP_AGENT_OP_OR = 0,
    NGX_HTTP_AGENT_OP_AND,
    NGX_HTTP_AGENT_OP_NOT,
    NGX_HTTP_AGENT_OP_EQ,
    NGX_HTTP_AGENT_OP_NE,
    NGX_HTTP_AGENT_OP_LT,
    NGX_HTTP_AGENT_OP_LE,
    NGX_HTTP_AGENT_OP_GT,
    NGX_HTTP_AGENT_OP_GE,
    NGX_HTTP_AGENT_OP_LITERAL,
    NGX_HTTP_AGENT_OP_CHANNEL,
    NGX_HTTP_AGENT_OP_TOOL_CALLS
} ngx_http_agent_op_e;


typedef enum {
    NGX_HTTP_AGENT_V_NULL = 0,
    NGX_HTTP_AGENT_V_BOOL,
    NGX_HTTP_AGENT_V_NUMBER,
    NGX_HTTP_AGENT_V_STRING,
    NGX_HTTP_AGENT_V_ARRAY,
    NGX_HTTP_AGENT_V_OBJECT
} ngx_http_agent_vtype_e;


typedef struct {
    ngx_http_agent_vtype_e     type;
    double                     number;    /* bool, number; length */
    ngx_str_t                  str;
} ngx_http_agent_v_t;


struct ngx_http_agent_expr_s {
    ngx_http_agent_op_e        op;
    ngx_http_agent_expr_t     *left;
    ngx_http_agent_expr_t     *right;
    ngx_http_agent_v_t         literal;
    ngx_uint_t                 channel;
    ngx_array_t               *path;      /* ngx_str_t, NUL-terminated */
};


char *ngx_http_agent_graph_channel_conf(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph);


/* for the files of src/engine/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_graph_parts_conf(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph);
ngx_int_t ngx_http_agent_graph_parts_led(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node);
ngx_int_t ngx_http_agent_graph_parts_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_int_t rc);
ngx_int_t ngx_http_agent_graph_parts_apply(ngx_http_agent_run_t *run);


#pragma GCC visibility pop


/* for the files of src/engine/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_graph_wait_breakpoint(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_http_agent_node_t *after);
ngx_int_t ngx_http_agent_graph_wait_before(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);
ngx_int_t ngx_http_agent_graph_wait_answer(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_ENGINE_INT_H_INCLUDED_ */
