
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_LG_STATE_H_INCLUDED_
#define _NGX_HTTP_AGENT_LG_STATE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_store.h"


/* for the files of src/proto/lg/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


/* a write to the state of a subgraph that waits (lg_subgraph_write) */
typedef struct {
    ngx_str_t                  node;        /* where it waits */
    yajl_val                   values;      /* an object, or NULL */
    void                      *request;     /* its refusals' */
    ngx_str_t                  ns;          /* its namespace */
    void                      *st;          /* the write's
                                               (ngx_http_agent_turn_state_t) */
    int64_t                    step;        /* out: its step, written */
    ngx_str_t                  next;        /* out: the node it waits at */
} ngx_http_agent_lg_subgraph_t;


/* a thread's id (at most 64) and a number */
#define NGX_HTTP_AGENT_LG_MSG_ID  (64 + 1 + NGX_INT_T_LEN)


void ngx_http_agent_lg_message_id(u_char *buf, ngx_str_t *thread_id,
    ngx_uint_t n, ngx_str_t *id);
void ngx_http_agent_lg_values(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run, ngx_str_t *thread_id, ngx_uint_t output);
void ngx_http_agent_lg_update(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run, ngx_str_t *thread_id, ngx_uint_t output);
void ngx_http_agent_lg_error(ngx_http_agent_json_t *j, ngx_str_t *code,
    ngx_str_t *message);
void ngx_http_agent_lg_interrupts(ngx_http_agent_json_t *j, ngx_str_t *json);
ngx_int_t ngx_http_agent_lg_interrupt_of(ngx_http_agent_run_t *run,
    ngx_str_t *json);
void ngx_http_agent_lg_state_json(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_str_t *thread_id, ngx_uint_t subgraphs);
void ngx_http_agent_lg_checkpoint(ngx_http_agent_json_t *j,
    ngx_str_t *thread_id, ngx_str_t *ns, ngx_str_t *checkpoint_id);
ngx_int_t ngx_http_agent_lg_subgraph_values(ngx_http_agent_run_t *run,
    ngx_http_agent_lg_subgraph_t *sw);
ngx_http_agent_run_t *ngx_http_agent_lg_subgraph_run(
    ngx_http_agent_run_t *run, ngx_str_t *name);
void ngx_http_agent_lg_subgraph_state(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *inner, ngx_http_agent_checkpoint_t *cp,
    ngx_str_t *thread_id, ngx_uint_t subgraphs);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_LG_STATE_H_INCLUDED_ */
