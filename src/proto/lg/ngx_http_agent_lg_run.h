
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_LG_RUN_H_INCLUDED_
#define _NGX_HTTP_AGENT_LG_RUN_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_store_run.h"


/* for the files of src/proto/lg/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


/* after_seconds: at most a day */
#define NGX_HTTP_AGENT_LG_AFTER_MAX  86400


/* a run of the LangGraph API over a turn (lg_run.c) */
typedef struct {
    ngx_http_agent_turn_t     *turn;
    ngx_http_agent_turn_info_t info;        /* its ids, its store calls */
    ngx_http_agent_turn_record_t  record;   /* its row, its cancel */
    ngx_http_request_t        *request;
    ngx_http_agent_graph_t    *graph;
    ngx_uint_t                 modes;
    ngx_str_t                  go;          /* command.goto */
    ngx_str_t                  location;
    ngx_str_t                  webhook;     /* called at its end */
    ngx_str_t                  metadata;    /* the thread's, to write in
                                               the turn's first unit */
    u_char                    *waits;       /* interrupt_before/after */
    int64_t                    seq;         /* the last event's id */
    ngx_http_agent_turn_kept_t  kept;       /* its events, resumable */
    unsigned                   wait:1;      /* runs/wait */
    unsigned                   resumable:1;
    unsigned                   keep:1;      /* on_disconnect continue */
    unsigned                   gone:1;      /* its client is */
    unsigned                   answers:1;   /* a command, no input */
    unsigned                   background:1;
    unsigned                   finished:1;
    unsigned                   answered:1;  /* a background run's record */
} ngx_http_agent_lg_run_t;


/* lg_run.c */
ngx_int_t ngx_http_agent_lg_run_ready(ngx_http_agent_turn_t *turn);
ngx_int_t ngx_http_agent_lg_run_begin(ngx_http_agent_turn_t *turn);
void ngx_http_agent_lg_run_started(ngx_http_agent_turn_t *turn);
void ngx_http_agent_lg_run_poll(ngx_http_agent_turn_t *turn);
ngx_int_t ngx_http_agent_lg_run_sink(void *data, ngx_str_t *name,
    ngx_str_t *json, ngx_uint_t now);
ngx_int_t ngx_http_agent_lg_run_created(ngx_http_request_t *r,
    ngx_http_agent_lg_run_t *lr);

/* lg_redrive.c */
void ngx_http_agent_lg_redrive_turn(ngx_http_agent_lg_run_t *lr,
    ngx_http_agent_run_row_t *row, ngx_http_agent_turn_in_t *in);

/* lg_request.c */
ngx_int_t ngx_http_agent_lg_run_parse(ngx_http_request_t *r,
    ngx_http_agent_lg_run_t *lr, yajl_val v, ngx_http_agent_turn_in_t *in);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_LG_RUN_H_INCLUDED_ */
