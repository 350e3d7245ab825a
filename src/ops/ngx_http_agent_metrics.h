
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_METRICS_H_INCLUDED_
#define _NGX_HTTP_AGENT_METRICS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


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


#endif /* _NGX_HTTP_AGENT_METRICS_H_INCLUDED_ */
