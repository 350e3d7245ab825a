
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TURN_H_INCLUDED_
#define _NGX_HTTP_AGENT_TURN_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_stream.h"


ngx_int_t ngx_http_agent_checkpoint_load(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_int_t images_keep);
ngx_int_t ngx_http_agent_checkpoint_open(ngx_http_agent_store_call_t *sc,
    ngx_pool_t *pool, ngx_http_agent_graph_t *graph, ngx_str_t *id,
    ngx_http_agent_checkpoint_t *cp, ngx_http_agent_run_t **runp);
ngx_int_t ngx_http_agent_checkpoint_save(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_t *run, ngx_str_t *id, ngx_http_agent_checkpoint_t *cp,
    ngx_str_t *node, ngx_str_t *next);
ngx_http_agent_run_t *ngx_http_agent_checkpoint_state(ngx_pool_t *pool,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp);


/* for the files of src/turn/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_checkpoint_fork(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_str_t *checkpoint_id, ngx_int_t images_keep);
ngx_int_t ngx_http_agent_checkpoint_read(ngx_pool_t *pool,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp);
ngx_int_t ngx_http_agent_checkpoint_replaced(ngx_pool_t *pool,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp);

#pragma GCC visibility pop


extern ngx_http_module_t  ngx_http_agent_handler_module_ctx;


ngx_int_t ngx_http_agent_handler(ngx_http_request_t *r);
char *ngx_http_agent_handler_proto(ngx_conf_t *cf,
    ngx_http_agent_proto_t *proto, void *conf);


typedef struct ngx_http_agent_turn_s  ngx_http_agent_turn_t;


/*
 * what a protocol adds to its turn: its answer started once the input is
 * checked (ready), its writes in the begin's unit (begin), what follows
 * the graph's start, which may have ended it already (started), each
 * poll of its record (poll), its end, before the record's (done), its
 * one answer when it has no stream (answer), its stream held open after
 * the end event (hold: NGX_DONE, the protocol writes on and ends it)
 */
typedef struct {
    ngx_int_t                     (*ready)(ngx_http_agent_turn_t *turn);
    ngx_int_t                     (*begin)(ngx_http_agent_turn_t *turn);
    void                          (*started)(ngx_http_agent_turn_t *turn);
    void                          (*poll)(ngx_http_agent_turn_t *turn);
    void                          (*done)(ngx_http_agent_turn_t *turn,
                                          ngx_http_agent_event_t *ev);
    ngx_int_t                     (*answer)(ngx_http_agent_turn_t *turn,
                                            ngx_http_agent_event_t *ev);
    ngx_int_t                     (*hold)(ngx_http_agent_turn_t *turn,
                                          ngx_http_agent_sse_t *sse);
} ngx_http_agent_turn_hooks_t;


/*
 * A turn's run in the runs table (turn_record.c), kept where the protocol
 * asks for one: the row (the protocol sets metadata, kwargs and
 * multitask_strategy; the turn the rest), a cancel heard from any worker
 */
typedef struct {
    ngx_http_agent_run_row_t        row;
    ngx_http_agent_turn_t          *turn;
    ngx_event_t                     poll;
    ngx_http_agent_store_call_t     poll_sc;
    ngx_http_agent_store_call_t     end_sc;
    const char                     *status;    /* at its end */
    ngx_str_t                       outcome;   /* ... and how it ended */
    unsigned                        events:1;  /* its events are kept
                                                  (resumable) */
    unsigned                        keep:1;    /* its outcome is kept,
                                                  for a later look
                                                  (turn_record_read) */
    unsigned                        stateless:1; /* its thread goes with
                                                  its end */
    unsigned                        pending:1; /* until its graph starts */
    unsigned                        poll_status:1; /* the poll writes
                                                  "running" */
    unsigned                        cancelled:1;
    unsigned                        rollback:1; /* cancelled, undone */
    unsigned                        finished:1;
    unsigned                        quiet:1;   /* no poll: no cancel from
                                                  elsewhere (our API's) */
    unsigned                        claimed:1; /* taken over from a worker
                                                  that died: its row is
                                                  there (turn_redrive.c) */
} ngx_http_agent_turn_record_t;


/* an event of a kept run, waiting to be saved */
typedef struct {
    int64_t                         seq;
    ngx_str_t                       name;
    ngx_str_t                       json;
} ngx_http_agent_turn_kept_event_t;


/*
 * A resumable run's events, kept as they are sent and saved at each poll
 * of its record and at its end (turn_kept.c): a join, or a GET of a
 * background response's stream, on any worker, replays them
 */
typedef struct {
    ngx_pool_t                     *pool;      /* those not saved yet */
    ngx_array_t                    *events;    /* the events, in pool */
    size_t                          bytes;     /* of all kept */
    unsigned                        full:1;    /* agent_run_events_max_size
                                                  reached */
} ngx_http_agent_turn_kept_t;


/* a client's replay of a kept run's events, then of those that follow */
typedef struct {
    ngx_http_agent_sse_t            sse;
    int64_t                         last;      /* the next event's seq */
    ngx_msec_t                      deadline;  /* past it, a run still
                                                  running is lost */
    ngx_msec_t                      lease;
} ngx_http_agent_turn_kept_replay_t;


/* a run looked up later: its row and how it ended, where that was kept */
typedef struct {
    ngx_pool_t                     *pool;
    ngx_http_agent_run_row_t        row;
    ngx_str_t                       answer;    /* its last AI message */
    ngx_str_t                       code;      /* an error's */
    ngx_str_t                       error;
    ngx_str_t                       interrupt; /* what it waits for, JSON */
    ngx_str_t                       checkpoint_id; /* its last */
    unsigned                        ended:1;   /* its outcome was kept */
} ngx_http_agent_turn_outcome_t;


/* where a run looked up stands (ngx_http_agent_turn_record_state) */
typedef enum {
    NGX_HTTP_AGENT_RUN_PENDING = 0,
    NGX_HTTP_AGENT_RUN_RUNNING,
    NGX_HTTP_AGENT_RUN_SUCCESS,
    NGX_HTTP_AGENT_RUN_ERROR,
    NGX_HTTP_AGENT_RUN_WAITS,          /* ended at an interrupt */
    NGX_HTTP_AGENT_RUN_CANCELLED       /* cancelled, or its client left */
} ngx_http_agent_run_state_e;

#define ngx_http_agent_run_live(state)  ((state) <= NGX_HTTP_AGENT_RUN_RUNNING)


/*
 * a followed run is over: the answer (out NULL: the store failed), or
 * NGX_DONE: another follow of the same request goes on
 */
typedef ngx_int_t (*ngx_http_agent_turn_follow_pt)(ngx_http_request_t *r,
    ngx_http_agent_turn_outcome_t *out, void *data);


/*
 * What a protocol asks of its turn, between ngx_http_agent_turn_create()
 * and ngx_http_agent_turn_begin(): the graph, how its events are written,
 * and the input (messages, values, a resume, a node to go to, a fork).
 * The begin applies every check of the location to it, whichever
 * protocol asks: the owner, agent_input, agent_history_max_size, the
 * limits and caps.
 */
typedef struct {
    ngx_http_agent_graph_t         *graph;     /* the location's, or an
                                                  assistant's */
    ngx_http_agent_format_t        *format;
    void                           *format_data; /* what the protocol
                                                  tells its format */
    ngx_http_agent_turn_hooks_t    *hooks;
    void                           *data;      /* the hooks' and sink's */
    ngx_http_agent_turn_record_t   *record;    /* the run kept, or NULL */
    ngx_http_agent_stream_sink_pt   sink;      /* NULL: the SSE writer */
    ngx_str_t                       assistant; /* for the stream's events */
    ngx_str_t                       run_id;    /* the protocol's own id of
                                                  the run, for its events
                                                  (the turn's is ours), or
                                                  empty */
    ngx_uint_t                      modes;     /* the stream's modes */
    ngx_http_agent_msg_t           *msgs;      /* the input's messages */
    ngx_uint_t                      nmsgs;
    ngx_str_t                       text;
    yajl_val                        values;    /* other input channels */
    ngx_str_t                       resume;    /* the answer: a resume */
    ngx_str_t                       resume_at; /* the checkpoint it answers
                                                  (AG-UI's interruptId), or
                                                  empty: any */
    ngx_str_t                       fork;      /* a checkpoint to start
                                                  from instead of the
                                                  latest (time travel) */
    ngx_str_t                       go;        /* on a resume: the node
                                                  it continues at */
    ngx_array_t                    *tools;     /* the client's own
                                                  (ngx_keyval_t: name,
                                                  definition), or NULL */
    u_char                         *waits;     /* interrupts asked per
                                                  node, or NULL */
    ngx_uint_t                      recursion; /* fewer steps than
                                                  agent_recursion_limit,
                                                  or 0 */
    ngx_str_t                       metadata;  /* the run's (a JSON object
                                                  of our generator's), kept
                                                  with its checkpoints */
    ngx_uint_t                      durability; /* how its steps are
                                                  saved (0: as the
                                                  location says) */
    ngx_msec_t                      delay;     /* the graph starts this
                                                  long after the begin
                                                  (a pending run), or 0 */
    unsigned                        json:1;    /* one answer, no stream */
    unsigned                        created:1; /* answered or named as it
                                                  starts (a background
                                                  run, a LangGraph
                                                  stream): once its
                                                  begin is stored */
    unsigned                        answers:1; /* refused unless the
                                                  thread waits */
    unsigned                        over:1;    /* an input on a session
                                                  that waits drops the
                                                  wait (LangGraph's),
                                                  not 409 */
    unsigned                        reply:1;   /* ... answers it with its
                                                  text instead (A2A's
                                                  input-required) */
    unsigned                        before:1;  /* a checkpoint of the
                                                  state before the input
                                                  (LangGraph's "input"
                                                  step), next "__start__" */
    unsigned                        again:1;   /* a run taken over whose
                                                  lost worker's kept
                                                  events show its start:
                                                  not sent again */
} ngx_http_agent_turn_in_t;


/* what a protocol reads of its turn (its hooks run with it) */
typedef struct {
    ngx_http_request_t             *request;
    ngx_http_agent_run_t           *run;       /* NULL before it starts */
    ngx_str_t                      *session_id;
    ngx_str_t                      *run_id;
    ngx_str_t                      *started_from; /* the checkpoint */
    ngx_http_agent_store_call_t    *sc;        /* the begin's writes */
    ngx_http_agent_store_call_t    *wsc;       /* writes, no answers */
    ngx_uint_t                      interrupted;
} ngx_http_agent_turn_info_t;


/*
 * A session's state written outside a turn (turn_state.c), under its
 * lease and through the graph's reducers, as a node named as_node would
 */
typedef struct {
    ngx_http_agent_graph_t         *graph;
    ngx_str_t                       id;        /* the session */
    yajl_val                        values;    /* channels, or NULL */
    ngx_http_agent_msg_t           *msgs;      /* values' "messages", as
                                                  the protocol read them */
    ngx_uint_t                      nmsgs;
    ngx_str_t                       as_node;   /* the checkpoint's writer */
    const char                     *after;     /* "... when it has ended" */
    ngx_int_t                     (*write)(ngx_http_agent_store_call_t *sc,
                                           ngx_http_agent_run_t *run,
                                           void *data);
    void                           *data;      /* write()'s */
    ngx_str_t                       checkpoint; /* the one saved */
    ngx_str_t                       ns;        /* write() may set: the
                                                  checkpoint is the one of
                                                  the subgraph that waits
                                                  there, in its namespace,
                                                  its step and next */
    int64_t                         ns_step;
    ngx_str_t                       ns_next;
    unsigned                        node:1;    /* as_node must be a node */
} ngx_http_agent_turn_state_t;


ngx_int_t ngx_http_agent_turn_start(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body, ngx_uint_t resume);
ngx_int_t ngx_http_agent_turn_takeover(ngx_http_request_t *r,
    ngx_http_agent_run_row_t *row, ngx_http_agent_turn_hooks_t *hooks);
ngx_int_t ngx_http_agent_turn_model(ngx_http_request_t *r,
    ngx_http_agent_session_t *s, ngx_str_t *name,
    ngx_http_agent_model_t **mp);
ngx_int_t ngx_http_agent_turn_rpc(ngx_http_request_t *r, ngx_str_t *thread,
    ngx_uint_t create, ngx_http_agent_session_t *s,
    ngx_http_agent_turn_t **turn);
ngx_http_agent_turn_t *ngx_http_agent_turn_create(ngx_http_request_t *r,
    ngx_http_agent_session_t *s, ngx_http_agent_model_t *model);
ngx_int_t ngx_http_agent_turn_begin(ngx_http_agent_turn_t *turn,
    ngx_http_agent_session_t *s);
ngx_http_agent_turn_in_t *ngx_http_agent_turn_in(ngx_http_agent_turn_t *turn);
ngx_http_agent_graph_t *ngx_http_agent_turn_graph(ngx_http_request_t *r,
    ngx_str_t *name);
void ngx_http_agent_turn_id(ngx_http_agent_turn_t *turn, u_char *id);
ngx_int_t ngx_http_agent_turn_asks(ngx_pool_t *pool, ngx_str_t *interrupt,
    ngx_str_t *text);
void ngx_http_agent_turn_info(ngx_http_agent_turn_t *turn,
    ngx_http_agent_turn_info_t *info);
ngx_int_t ngx_http_agent_turn_background(ngx_http_agent_turn_t *turn,
    ngx_uint_t answered);
void ngx_http_agent_turn_background_answer(ngx_http_agent_turn_t *turn,
    ngx_http_agent_json_t *j);
ngx_int_t ngx_http_agent_turn_kept_add(ngx_http_agent_turn_kept_t *k,
    ngx_http_request_t *r, ngx_str_t *run_id, int64_t seq, ngx_str_t *name,
    ngx_str_t *json);
ngx_int_t ngx_http_agent_turn_kept_save(ngx_http_agent_turn_kept_t *k,
    ngx_http_agent_store_call_t *sc, ngx_str_t *run_id);
ngx_int_t ngx_http_agent_turn_kept_follow(
    ngx_http_agent_turn_kept_replay_t *rp, ngx_http_request_t *r,
    int64_t last, ngx_uint_t stream);
ngx_int_t ngx_http_agent_turn_kept_replay(
    ngx_http_agent_turn_kept_replay_t *rp, ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id);
void ngx_http_agent_turn_record_stop(ngx_http_agent_turn_t *turn,
    ngx_uint_t rollback);
ngx_int_t ngx_http_agent_turn_record_cancel(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_uint_t rollback);
ngx_int_t ngx_http_agent_turn_record_read(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_http_agent_turn_outcome_t *out);
ngx_int_t ngx_http_agent_turn_record_ended(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_http_agent_turn_outcome_t *out);
ngx_http_agent_run_state_e ngx_http_agent_turn_record_state(
    ngx_http_agent_turn_outcome_t *out);
ngx_int_t ngx_http_agent_turn_follow(ngx_http_request_t *r, ngx_str_t *run_id,
    ngx_http_agent_turn_follow_pt handler, void *data);
ngx_int_t ngx_http_agent_turn_follow_made(ngx_http_request_t *r,
    ngx_str_t *run_id, ngx_msec_t wait, ngx_http_agent_turn_follow_pt handler,
    void *data);
ngx_uint_t ngx_http_agent_turn_pending(ngx_http_agent_turn_t *turn);
ngx_int_t ngx_http_agent_turn_images(ngx_http_request_t *r, yajl_val images,
    ngx_str_t *out);
ngx_uint_t ngx_http_agent_turn_running(ngx_http_agent_turn_t *turn);
void ngx_http_agent_turn_keep(ngx_http_agent_turn_t *turn);
ngx_int_t ngx_http_agent_turn_send(ngx_http_agent_turn_t *turn,
    ngx_uint_t id, ngx_str_t *name, ngx_str_t *json, ngx_uint_t now);
ngx_int_t ngx_http_agent_turn_state_update(ngx_http_request_t *r,
    ngx_http_agent_turn_state_t *st);

extern ngx_http_agent_run_handlers_t  ngx_http_agent_turn_handlers;
ngx_http_agent_turn_t *ngx_http_agent_turn_find(ngx_str_t *run_id);


void ngx_http_agent_turn_redrive_init(ngx_cycle_t *cycle, ngx_array_t *doors);
ngx_http_agent_door_t *ngx_http_agent_turn_redrive_door(
    ngx_array_t *doors, ngx_str_t *name);


ngx_int_t ngx_http_agent_variables_add(ngx_conf_t *cf);


char *ngx_http_agent_variables_input(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);


/* for the files of src/turn/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_variables_inputs(ngx_http_request_t *r,
    ngx_http_agent_run_t *run, ngx_array_t *update);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_TURN_H_INCLUDED_ */
