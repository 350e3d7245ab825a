
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TURN_INT_H_INCLUDED_
#define _NGX_HTTP_AGENT_TURN_INT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"


/* for the files of src/turn/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_images(ngx_http_request_t *r, yajl_val images,
    ngx_str_t *out);


#pragma GCC visibility pop


/* for the files of src/turn/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_uint_t ngx_http_agent_turn_json_wanted(ngx_http_request_t *r);
ngx_int_t ngx_http_agent_turn_json_send(ngx_http_request_t *r,
    ngx_http_agent_run_t *run, ngx_http_agent_event_t *ev,
    ngx_str_t *session_id, ngx_str_t *run_id);


#pragma GCC visibility pop


/* for the files of src/turn/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


void ngx_http_agent_turn_list_add(ngx_queue_t *q);
void ngx_http_agent_turn_list_remove(ngx_queue_t *q);
ngx_queue_t *ngx_http_agent_turn_list_first(void);


#pragma GCC visibility pop


/* for the files of src/turn/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


/*
 * The turn's own fields: for the files of src/turn/ only.  A protocol
 * sees ngx_http_agent_turn_in_t and ngx_http_agent_turn_info_t (turn.h).
 */

/* a run of a graph bound to one request (turn.c) */
struct ngx_http_agent_turn_s {
    ngx_http_agent_turn_in_t        in;        /* the protocol's ask */
    ngx_http_request_t             *request;
    ngx_http_agent_run_t           *run;

    /*
     * its one end (turn_end.c): what is below it, its run's record,
     * reports through this, as upstream's u->finalize_request
     */
    void                          (*finalize)(ngx_http_agent_turn_t *turn,
                                              ngx_int_t rc);
    ngx_http_agent_env_t            env;
    ngx_http_agent_stream_t         stream;
    ngx_http_agent_sse_t            sse;
    ngx_str_t                       session_id;
    ngx_str_t                       run_id;
    ngx_str_t                       checkpoint_id;
    ngx_str_t                       started_from; /* the checkpoint */
    ngx_str_t                       waiting;   /* ... the wait of its
                                                  subgraph merged in: its
                                                  namespace's latest */

    /*
     * the session read with the lease, in the same round trip: then
     * checked by this (the model chosen), after the lease, before the run
     */
    ngx_int_t                     (*check)(ngx_http_agent_turn_t *turn);
    ngx_str_t                       model_name; /* asked for */
    int64_t                         step;
    ngx_http_agent_checkpoint_t     saved;     /* tokens saved so far */
    ngx_http_agent_checkpoint_t     cp;        /* the one being saved */
    ngx_http_agent_checkpoint_t     before;    /* the stream's first
                                                  checkpoint: the one
                                                  before the input
                                                  (turn_before), or the
                                                  one a run resumes */
    ngx_http_agent_session_t        session;
    ngx_http_agent_store_call_t     sc;        /* the begin, checkpoints */
    ngx_http_agent_store_call_t     wsc;       /* writes, no answers */
    ngx_http_agent_store_call_t     bsc;       /* steps saved behind */
    ngx_http_agent_store_call_t     usc;       /* the unlock at the end */
    ngx_http_agent_store_call_t     nsc;       /* subgraphs' steps */
    ngx_http_agent_checkpoint_t     ns_cp;     /* ... the one being saved */
    ngx_http_agent_run_t           *ns_run;    /* ... whose it is */
    ngx_http_agent_run_t           *inside;    /* the subgraph run of the
                                                  node running (its wait
                                                  is saved in its
                                                  namespace) */
    ngx_array_t                    *files;     /* read with the lease */
    ngx_queue_t                     lease;     /* the worker's leases */
    ngx_http_agent_store_lease_t   *lease_asked; /* its row of a tick */
    ngx_msec_t                      lease_due; /* its next renewal */
    ngx_event_t                     timeout;   /* agent_turn_timeout */
    ngx_event_t                     delay;     /* in.delay: pending */
    ngx_msec_t                      lease_ms;
    ngx_msec_t                      renewed;   /* when the lease was last
                                                  known to be its own */
    ngx_queue_t                     queue;     /* the worker's turns */
    ngx_http_agent_event_t          end;       /* the last event */
    ngx_str_t                       end_text;
    ngx_str_t                       end_code;
    ngx_int_t                       done_rc;   /* kept while it unlocks */
    uint64_t                        phase;     /* its run's end: bench */
    ngx_uint_t                      durability;
    int64_t                         skip_from; /* the message count the
                                                  steps not saved began
                                                  at (exit) */
    unsigned                        locked:1;
    unsigned                        interrupted:1;
    unsigned                        started:1; /* the graph runs */
    unsigned                        input_saved:1;
    unsigned                        input_step:1; /* saved in the begin */
    unsigned                        cp_pending:1; /* its event follows the
                                                     step's end */
    unsigned                        skipping:1; /* steps not saved yet */
    unsigned                        ns_input:1; /* ns_cp: the input's
                                                   first of two */
    unsigned                        stale:1;   /* the store refused a
                                                  write: its lease is
                                                  another's */
    unsigned                        fenced:1;  /* ... and its part of the
                                                  run ends unseen */
};


ngx_int_t ngx_http_agent_turn_files(ngx_http_agent_turn_t *turn,
    ngx_array_t *resources);
ngx_int_t ngx_http_agent_turn_ask(ngx_http_agent_turn_t *turn,
    ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_turn_history(ngx_http_agent_turn_t *turn,
    ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_turn_resume(ngx_http_agent_turn_t *turn);

ngx_int_t ngx_http_agent_turn_behind(ngx_http_agent_turn_t *turn);
ngx_int_t ngx_http_agent_turn_checkpoint(ngx_http_agent_run_t *run,
    ngx_str_t *node, ngx_int_t next);
ngx_int_t ngx_http_agent_turn_checkpoint_event(ngx_http_agent_turn_t *turn,
    ngx_http_agent_checkpoint_t *cp);
void ngx_http_agent_turn_checkpoint_pending(ngx_http_agent_turn_t *turn);
ngx_int_t ngx_http_agent_turn_caps(ngx_http_agent_turn_t *turn,
    ngx_http_agent_node_t *node);
void ngx_http_agent_turn_finalize(ngx_http_agent_turn_t *turn, ngx_int_t rc);
void ngx_http_agent_turn_lease_hold(ngx_http_agent_turn_t *turn);
void ngx_http_agent_turn_lease_drop(ngx_http_agent_turn_t *turn);
ngx_int_t ngx_http_agent_turn_lost(ngx_http_agent_run_t *run);
ngx_int_t ngx_http_agent_turn_current(ngx_http_agent_turn_t *turn);
void ngx_http_agent_turn_generation(ngx_http_agent_turn_t *turn);
void ngx_http_agent_turn_fenced_end(ngx_http_agent_turn_t *turn);
ngx_int_t ngx_http_agent_turn_saved(ngx_http_agent_turn_t *turn,
    ngx_int_t rc);
void ngx_http_agent_turn_services(ngx_http_request_t *r,
    ngx_http_agent_services_t *services);
ngx_int_t ngx_http_agent_turn_sink(void *data, ngx_str_t *name,
    ngx_str_t *json, ngx_uint_t now);
void ngx_http_agent_turn_timeout(ngx_event_t *ev);
void ngx_http_agent_turn_unlocked(ngx_http_agent_store_call_t *sc);
void ngx_http_agent_turn_subgraph_saved(ngx_http_agent_store_call_t *sc);
ngx_int_t ngx_http_agent_turn_values(ngx_http_agent_turn_t *turn,
    ngx_http_agent_run_t *run, ngx_array_t *update);
ngx_int_t ngx_http_agent_turn_before(ngx_http_agent_turn_t *turn,
    ngx_http_agent_run_t *run);
ngx_int_t ngx_http_agent_turn_waits(ngx_http_request_t *r,
    ngx_http_agent_turn_t *turn, ngx_http_agent_run_t *run, ngx_str_t *next);
void ngx_http_agent_turn_watch(ngx_http_agent_turn_t *turn);

ngx_int_t ngx_http_agent_turn_cache(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_uint_t put);
ngx_int_t ngx_http_agent_turn_subgraph(ngx_http_agent_run_t *run,
    ngx_http_agent_run_t *inner, ngx_http_agent_node_t *node);
ngx_int_t ngx_http_agent_turn_subgraph_checkpoint(ngx_http_agent_run_t *run,
    ngx_http_agent_run_t *inner, ngx_str_t *node, ngx_int_t next);
ngx_int_t ngx_http_agent_turn_subgraph_wait(ngx_http_agent_turn_t *turn,
    ngx_http_agent_run_t *run, ngx_str_t **node, ngx_str_t **next);

ngx_int_t ngx_http_agent_turn_record_begin(ngx_http_agent_turn_t *turn);
void ngx_http_agent_turn_record_start(ngx_http_agent_turn_t *turn);
ngx_int_t ngx_http_agent_turn_record_end(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev);
void ngx_http_agent_turn_record_cleanup(ngx_http_agent_turn_t *turn);


#pragma GCC visibility pop


void ngx_http_agent_turn_writes_keep(ngx_http_agent_run_t *run,
    ngx_uint_t index, ngx_str_t *id, ngx_str_t *result);
ngx_int_t ngx_http_agent_turn_writes_kept(ngx_http_agent_run_t *run,
    ngx_str_t *id, ngx_str_t *result);
ngx_int_t ngx_http_agent_turn_writes_claim(ngx_http_agent_run_t *run,
    ngx_uint_t index, ngx_str_t *id);
ngx_int_t ngx_http_agent_turn_key(ngx_http_agent_run_t *run, ngx_str_t *id,
    ngx_str_t *key);
ngx_int_t ngx_http_agent_turn_writes_read(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_row_t *row);


#endif /* _NGX_HTTP_AGENT_TURN_INT_H_INCLUDED_ */
