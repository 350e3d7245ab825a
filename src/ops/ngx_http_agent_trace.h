
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TRACE_H_INCLUDED_
#define _NGX_HTTP_AGENT_TRACE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"


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


#endif /* _NGX_HTTP_AGENT_TRACE_H_INCLUDED_ */
