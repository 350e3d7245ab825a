
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TURN_H_INCLUDED_
#define _NGX_HTTP_AGENT_TURN_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_json.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_graph.h"
#include "ngx_http_agent_env.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_sse.h"
#include "ngx_http_agent_checkpoint.h"


typedef struct ngx_http_agent_turn_s  ngx_http_agent_turn_t;


/*
 * what an API over the turn adds: a run's record, its end (done: NGX_AGAIN
 * when the end is still being stored, then ngx_http_agent_turn_finish()
 * once it is)
 */
typedef struct {
    ngx_int_t                     (*begin)(ngx_http_agent_turn_t *turn);
    void                          (*started)(ngx_http_agent_turn_t *turn);
    ngx_int_t                     (*done)(ngx_http_agent_turn_t *turn,
                                          ngx_http_agent_event_t *ev);
    ngx_int_t                     (*answer)(ngx_http_agent_turn_t *turn,
                                            ngx_http_agent_event_t *ev);
} ngx_http_agent_turn_hooks_t;


/* a run of a graph bound to one request (turn.c) */
struct ngx_http_agent_turn_s {
    ngx_http_request_t             *request;
    ngx_http_agent_run_t           *run;
    ngx_http_agent_env_t            env;
    ngx_http_agent_stream_t         stream;
    ngx_http_agent_sse_t            sse;
    ngx_str_t                       session_id;
    ngx_str_t                       run_id;
    ngx_str_t                       checkpoint_id;
    ngx_str_t                       started_from; /* the checkpoint */
    ngx_str_t                       fork;      /* a checkpoint to start
                                                  from instead of the
                                                  latest (time travel) */
    ngx_str_t                       text;
    ngx_str_t                       resume;    /* the answer: a resume */
    ngx_http_agent_graph_t         *graph;     /* the location's, or an
                                                  assistant's */
    ngx_http_agent_format_t        *format;
    ngx_http_agent_msg_t           *msgs;      /* the input's messages */
    ngx_uint_t                      nmsgs;
    yajl_val                        values;    /* other input channels */
    ngx_http_agent_turn_hooks_t    *hooks;
    void                           *data;      /* the hooks' */

    /*
     * the session read with the lease, in the same round trip: then
     * checked by this (the model chosen), after the lease, before the run
     */
    ngx_int_t                     (*check)(ngx_http_agent_turn_t *turn);
    ngx_str_t                       model_name; /* asked for */
    int64_t                         step;
    ngx_http_agent_checkpoint_t     saved;     /* tokens saved so far */
    ngx_http_agent_checkpoint_t     cp;        /* the one being saved */
    ngx_http_agent_session_t        session;
    ngx_http_agent_store_call_t     sc;        /* the begin, checkpoints */
    ngx_http_agent_store_call_t     lease_sc;
    ngx_http_agent_store_call_t     wsc;       /* writes, no answers */
    ngx_http_agent_store_call_t     bsc;       /* steps saved behind */
    ngx_http_agent_store_call_t     usc;       /* the unlock at the end */
    ngx_array_t                    *files;     /* read with the lease */
    ngx_event_t                     lease;
    ngx_event_t                     timeout;   /* agent_turn_timeout */
    ngx_msec_t                      lease_ms;
    ngx_queue_t                     queue;     /* the worker's turns */
    ngx_http_agent_event_t          end;       /* the last event */
    ngx_str_t                       end_text;
    ngx_str_t                       end_code;
    ngx_int_t                       done_rc;   /* kept while it unlocks */
    unsigned                        locked:1;
    unsigned                        json:1;    /* one answer, no stream */
    unsigned                        interrupted:1;
    unsigned                        started:1; /* the graph runs */
    unsigned                        input_saved:1;
};


ngx_int_t ngx_http_agent_turn_start(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body, ngx_uint_t resume);
ngx_int_t ngx_http_agent_turn_model(ngx_http_request_t *r,
    ngx_http_agent_session_t *s, ngx_str_t *name,
    ngx_http_agent_model_t **mp);
ngx_http_agent_turn_t *ngx_http_agent_turn_create(ngx_http_request_t *r,
    ngx_http_agent_session_t *s, ngx_http_agent_model_t *model);
ngx_int_t ngx_http_agent_turn_begin(ngx_http_agent_turn_t *turn,
    ngx_http_agent_session_t *s);
void ngx_http_agent_turn_done(ngx_http_agent_run_t *run, ngx_int_t rc);
void ngx_http_agent_turn_finish(ngx_http_agent_turn_t *turn);
ngx_int_t ngx_http_agent_turn_saved(ngx_http_agent_turn_t *turn,
    ngx_int_t rc);
ngx_int_t ngx_http_agent_turn_behind(ngx_http_agent_turn_t *turn);
ngx_int_t ngx_http_agent_turn_sink(void *data, ngx_str_t *name,
    ngx_str_t *json, ngx_uint_t now);

extern ngx_http_agent_run_handlers_t  ngx_http_agent_turn_handlers;
void ngx_http_agent_turn_shutdown(ngx_queue_t *q);
void ngx_http_agent_turn_lease_handler(ngx_event_t *ev);
void ngx_http_agent_turn_lease_wake(ngx_http_agent_store_call_t *sc);
void ngx_http_agent_turn_unlocked(ngx_http_agent_store_call_t *sc);
ngx_int_t ngx_http_agent_turn_lost(ngx_http_agent_run_t *run);
ngx_http_agent_turn_t *ngx_http_agent_turn_find(ngx_str_t *run_id);
ngx_int_t ngx_http_agent_turn_values(ngx_http_agent_turn_t *turn,
    ngx_http_agent_run_t *run, ngx_array_t *update);
ngx_int_t ngx_http_agent_turn_waits(ngx_http_request_t *r,
    ngx_http_agent_turn_t *turn, ngx_http_agent_run_t *run);
ngx_int_t ngx_http_agent_turn_caps(ngx_http_agent_turn_t *turn,
    ngx_http_agent_node_t *node);
void ngx_http_agent_turn_timeout(ngx_event_t *ev);
void ngx_http_agent_turn_services(ngx_http_request_t *r,
    ngx_http_agent_services_t *services);


#endif /* _NGX_HTTP_AGENT_TURN_H_INCLUDED_ */
