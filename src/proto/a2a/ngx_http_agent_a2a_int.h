
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_A2A_INT_H_INCLUDED_
#define _NGX_HTTP_AGENT_A2A_INT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_module.h"


ngx_int_t ngx_http_agent_a2a_latest(ngx_http_request_t *r, ngx_str_t *task,
    ngx_http_agent_turn_outcome_t *out);
ngx_int_t ngx_http_agent_a2a_link(ngx_pool_t *pool, ngx_str_t *task,
    ngx_str_t *metadata);
void ngx_http_agent_a2a_linked(ngx_pool_t *pool,
    ngx_http_agent_run_row_t *row, ngx_str_t *task);
ngx_int_t ngx_http_agent_a2a_close(ngx_http_request_t *r,
    ngx_http_agent_turn_outcome_t *out, ngx_str_t *task);


/* a task's state, in both revisions' words (a2a_task.c's table) */
typedef enum {
    NGX_HTTP_AGENT_A2A_WORKING = 0,
    NGX_HTTP_AGENT_A2A_COMPLETED,
    NGX_HTTP_AGENT_A2A_INPUT_REQUIRED,
    NGX_HTTP_AGENT_A2A_FAILED,
    NGX_HTTP_AGENT_A2A_SUBMITTED,
    NGX_HTTP_AGENT_A2A_CANCELED
} ngx_http_agent_a2a_state_e;


/* how much history a Task shows (historyLength) */
typedef struct {
    ngx_uint_t                 history_max;
    unsigned                   history:1;   /* a history is shown */
} ngx_http_agent_a2a_hist_t;


/* what a SendMessage tells its turn's format and answer */
typedef struct {
    ngx_http_agent_turn_record_t  record;   /* the task kept */
    ngx_str_t                  id;          /* the JSON-RPC id, as JSON */
    ngx_str_t                  interrupt;   /* the run waits: {"node",
                                               "value"} */
    ngx_http_agent_a2a_hist_t  hist;        /* historyLength */
    ngx_str_t                  task;        /* the task's id, when the run
                                               continues one (a2a_continue.c)
                                               */
    unsigned                   legacy:1;    /* A2A 0.3's names and shapes */
    unsigned                   rest:1;      /* HTTP+JSON: no JSON-RPC
                                               envelope */
    unsigned                   bare:1;      /* the result is the object
                                               itself (GetTask's Task) */
    unsigned                   over:1;
    unsigned                   now:1;       /* returnImmediately: the task
                                               answered as it starts */
    unsigned                   answered:1;
} ngx_http_agent_a2a_out_t;


extern ngx_http_agent_format_t      ngx_http_agent_a2a_format;


const char *ngx_http_agent_a2a_state_name(ngx_uint_t state,
    ngx_uint_t legacy);
void ngx_http_agent_a2a_head(ngx_http_agent_json_t *j,
    ngx_http_agent_a2a_out_t *o);
void ngx_http_agent_a2a_tail(ngx_http_agent_json_t *j,
    ngx_http_agent_a2a_out_t *o);
void ngx_http_agent_a2a_started(ngx_http_agent_turn_t *turn);
ngx_int_t ngx_http_agent_a2a_answer(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev);
void ngx_http_agent_a2a_end(ngx_pool_t *pool, ngx_http_agent_event_t *ev,
    ngx_str_t *interrupt, ngx_http_agent_a2a_state_e *state,
    ngx_str_t *text);
void ngx_http_agent_a2a_task(ngx_http_agent_json_t *j,
    ngx_http_agent_a2a_out_t *o, ngx_str_t *task, ngx_str_t *context,
    ngx_http_agent_a2a_state_e state, ngx_str_t *text, ngx_uint_t artifact);


ngx_int_t ngx_http_agent_a2a_list(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc);
ngx_int_t ngx_http_agent_a2a_history_of(yajl_val v,
    ngx_http_agent_a2a_hist_t *h);
ngx_http_agent_a2a_state_e ngx_http_agent_a2a_state(ngx_pool_t *pool,
    ngx_http_agent_turn_outcome_t *out, ngx_str_t *text);


/*
 * a task's push notification config: its run's kwargs keep all but the
 * token and the credentials, which only its run's secret keeps
 */
typedef struct {
    ngx_str_t                  url;
    ngx_str_t                  id;
    ngx_str_t                  token;
    ngx_str_t                  scheme;
    ngx_str_t                  credentials;
    ngx_uint_t                 legacy;      /* named by 0.3: 0.3's body */
} ngx_http_agent_a2a_push_t;


extern ngx_http_agent_turn_hooks_t  ngx_http_agent_a2a_takeover_hooks;


ngx_int_t ngx_http_agent_a2a_push_read(ngx_http_request_t *r,
    yajl_val params, ngx_uint_t legacy, ngx_str_t *kwargs, ngx_str_t *secret,
    ngx_int_t *code, ngx_str_t *why);
void ngx_http_agent_a2a_push_done(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev);
ngx_int_t ngx_http_agent_a2a_push_answer(ngx_http_request_t *r,
    ngx_http_agent_a2a_out_t *o, ngx_http_agent_turn_outcome_t *out,
    ngx_uint_t list);


ngx_int_t ngx_http_agent_a2a_rest_route(ngx_http_request_t *r,
    ngx_str_t *path);
ngx_int_t ngx_http_agent_a2a_rest_read(ngx_http_request_t *r,
    ngx_str_t *body, ngx_http_agent_jsonrpc_t *rpc);
ngx_uint_t ngx_http_agent_a2a_rest_is(ngx_http_request_t *r);


/* the task methods */
#define NGX_HTTP_AGENT_A2A_GET        0
#define NGX_HTTP_AGENT_A2A_LIST       1
#define NGX_HTTP_AGENT_A2A_CANCEL     2
#define NGX_HTTP_AGENT_A2A_SUBSCRIBE  3
#define NGX_HTTP_AGENT_A2A_PUSH_GET   4
#define NGX_HTTP_AGENT_A2A_PUSH_LIST  5


ngx_int_t ngx_http_agent_a2a_tasks(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc, ngx_uint_t method, ngx_uint_t legacy);


ngx_int_t ngx_http_agent_a2a_route(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx);
ngx_int_t ngx_http_agent_a2a_run(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx, ngx_str_t *body);


#endif /* _NGX_HTTP_AGENT_A2A_INT_H_INCLUDED_ */
