
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_LG_H_INCLUDED_
#define _NGX_HTTP_AGENT_LG_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_http.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_stream.h"


/* a thread made with a history: at most this many supersteps */
#define NGX_HTTP_AGENT_LG_SUPERSTEPS_MAX  100
#define NGX_HTTP_AGENT_LG_SUPERSTEPS_MSGS 1000


typedef enum {
    NGX_HTTP_AGENT_LG_OK = 0,
    NGX_HTTP_AGENT_LG_INFO,
    NGX_HTTP_AGENT_LG_ASSISTANTS,
    NGX_HTTP_AGENT_LG_ASSISTANTS_SEARCH,
    NGX_HTTP_AGENT_LG_ASSISTANTS_COUNT,
    NGX_HTTP_AGENT_LG_ASSISTANT,
    NGX_HTTP_AGENT_LG_ASSISTANT_VERSIONS,
    NGX_HTTP_AGENT_LG_ASSISTANT_LATEST,
    NGX_HTTP_AGENT_LG_ASSISTANT_GRAPH,
    NGX_HTTP_AGENT_LG_ASSISTANT_SCHEMAS,
    NGX_HTTP_AGENT_LG_ASSISTANT_SUBGRAPHS,
    NGX_HTTP_AGENT_LG_THREADS,
    NGX_HTTP_AGENT_LG_THREADS_SEARCH,
    NGX_HTTP_AGENT_LG_THREADS_COUNT,
    NGX_HTTP_AGENT_LG_THREAD,
    NGX_HTTP_AGENT_LG_THREAD_COPY,
    NGX_HTTP_AGENT_LG_STATE,
    NGX_HTTP_AGENT_LG_STATE_AT,
    NGX_HTTP_AGENT_LG_STATE_CHECKPOINT,
    NGX_HTTP_AGENT_LG_HISTORY,
    NGX_HTTP_AGENT_LG_RUNS,
    NGX_HTTP_AGENT_LG_RUNS_STREAM,
    NGX_HTTP_AGENT_LG_RUNS_WAIT,
    NGX_HTTP_AGENT_LG_RUN,
    NGX_HTTP_AGENT_LG_RUN_CANCEL,
    NGX_HTTP_AGENT_LG_RUN_JOIN,
    NGX_HTTP_AGENT_LG_RUN_JOIN_JSON,
    NGX_HTTP_AGENT_LG_STATELESS_STREAM,
    NGX_HTTP_AGENT_LG_STATELESS_WAIT,
    NGX_HTTP_AGENT_LG_STORE,
    NGX_HTTP_AGENT_LG_STORE_SEARCH,
    NGX_HTTP_AGENT_LG_STORE_NAMESPACES,
    NGX_HTTP_AGENT_LG_STATELESS_RUNS,
    NGX_HTTP_AGENT_LG_CRONS,
    NGX_HTTP_AGENT_LG_CRONS_SEARCH,
    NGX_HTTP_AGENT_LG_CRONS_COUNT,
    NGX_HTTP_AGENT_LG_CRON,
    NGX_HTTP_AGENT_LG_THREAD_STORAGE
} ngx_http_agent_lg_route_e;


/* the LangGraph API's own location configuration */
typedef struct {
    ngx_uint_t                 server;      /* agent_langgraph_server:
                                               NGX_HTTP_AGENT_MODE_JS */
} ngx_http_agent_lg_conf_t;


/* what an assistants' search asks for */
typedef struct {
    ngx_str_t                  graph_id;
    ngx_str_t                  name;        /* a part of it, any case */
    yajl_val                   metadata;    /* within the assistant's */
    ngx_uint_t                 system;      /* a graph's own */
} ngx_http_agent_lg_filter_t;


/* a request of the LangGraph API: the route and the ids in its path */
typedef struct {
    ngx_http_agent_lg_route_e  route;
    ngx_str_t                  thread_id;   /* the session it names
                                               (reply_session_scope) */
    ngx_str_t                  asked;       /* the thread's id as the
                                               client gave it */
    ngx_str_t                  id;          /* assistant, run, checkpoint */

    /* a run that waits for the thread's run to end (multitask_strategy) */
    ngx_event_t                queue;
    ngx_msec_t                 deadline;
    ngx_str_t                  body;
    ngx_str_t                  before;      /* the run it waits for */
    void                      *walk;        /* history, search (walk.c) */
    ngx_str_t                  made;        /* an id made for this
                                               request, in each pass */
    ngx_str_t                  made_at;     /* and the time it was */
    ngx_uint_t                 step;        /* supersteps written */
    ngx_uint_t                 step_n0;     /* the store's call slot
                                               where each one's start */
    unsigned                   queued:1;
    unsigned                   rollback:1;
} ngx_http_agent_lg_req_t;


ngx_int_t ngx_http_agent_lg_route(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx);
ngx_int_t ngx_http_agent_lg_dispatch(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx, ngx_str_t *body);
ngx_int_t ngx_http_agent_lg_redrive_request(ngx_http_request_t *r,
    ngx_http_agent_run_row_t *row, ngx_str_t *uri, ngx_str_t *body);
void ngx_http_agent_lg_cron_init(ngx_cycle_t *cycle, ngx_array_t *doors);
ngx_int_t ngx_http_agent_lg_cron_request(ngx_http_request_t *r,
    ngx_http_agent_cron_row_t *row, ngx_str_t *uri, ngx_str_t *body);

/* the rest: for the files of src/proto/lg/ only, hidden from the module's
 * exports */
#pragma GCC visibility push(hidden)

/* a cron's row and its document, parsed */
typedef struct {
    ngx_http_agent_cron_row_t  *row;
    yajl_val                    doc;
} ngx_http_agent_lg_cron_t;

/* lg_crons.c */
ngx_int_t ngx_http_agent_lg_crons(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body);

/* lg_cron_search.c */
ngx_int_t ngx_http_agent_lg_cron_search(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, yajl_val v);
void ngx_http_agent_lg_cron_search_json(ngx_http_agent_json_t *j,
    ngx_http_agent_lg_cron_t *c, ngx_uint_t select);

/* lg_supersteps.c */
ngx_int_t ngx_http_agent_lg_supersteps(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, yajl_val v, ngx_http_agent_session_t *s,
    ngx_uint_t check, ngx_http_agent_graph_t **made);

/* lg_assistant.c */
ngx_int_t ngx_http_agent_lg_assistant_get(ngx_http_request_t *r,
    ngx_str_t *id);
ngx_int_t ngx_http_agent_lg_assistant_graph(ngx_http_request_t *r,
    ngx_str_t *id);

/* lg_schemas.c */
ngx_int_t ngx_http_agent_lg_assistant_schemas(ngx_http_request_t *r,
    ngx_str_t *id, ngx_uint_t subgraphs);
ngx_int_t ngx_http_agent_lg_assistant_search(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, yajl_val v);
ngx_http_agent_graph_t *ngx_http_agent_lg_assistant(ngx_http_request_t *r,
    ngx_str_t *id);
void ngx_http_agent_lg_assistant_id(ngx_str_t *graph, u_char *buf);
ngx_int_t ngx_http_agent_lg_assistant_scope(ngx_http_request_t *r,
    ngx_str_t *id, ngx_http_agent_assistant_row_t *row);
ngx_int_t ngx_http_agent_lg_assistant_find(ngx_http_request_t *r,
    ngx_str_t *id, ngx_http_agent_graph_t **graph,
    ngx_http_agent_assistant_row_t *row);
ngx_int_t ngx_http_agent_lg_assistant_found(ngx_http_request_t *r,
    ngx_str_t *id, ngx_http_agent_graph_t **graph,
    ngx_http_agent_assistant_row_t *row);
ngx_int_t ngx_http_agent_lg_assistant_send(ngx_http_request_t *r,
    ngx_http_agent_assistant_row_t *row);
void ngx_http_agent_lg_page(yajl_val v, ngx_http_agent_lg_filter_t *f,
    ngx_int_t *limit, ngx_int_t *offset);
ngx_uint_t ngx_http_agent_lg_assistant_match(ngx_http_agent_lg_filter_t *f,
    ngx_str_t *graph_id, ngx_str_t *name, yajl_val metadata);
void ngx_http_agent_lg_assistant_field(ngx_http_agent_json_t *j, yajl_val x,
    ngx_uint_t n, ngx_http_agent_assistant_row_t *row);
void ngx_http_agent_lg_assistant_row_json(ngx_pool_t *pool,
    ngx_http_agent_json_t *j, ngx_http_agent_assistant_row_t *row,
    ngx_uint_t updated);

/* lg_messages.c */
ngx_int_t ngx_http_agent_lg_messages(ngx_http_request_t *r,
    ngx_str_t *thread_id, yajl_val msgs, const char *what,
    ngx_http_agent_msg_t **out, ngx_uint_t *n);

/* lg_storage.c */
ngx_int_t ngx_http_agent_lg_storage(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req);

/* lg_store.c */
ngx_int_t ngx_http_agent_lg_store(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body);

/* lg_index.c */
ngx_int_t ngx_http_agent_lg_index_put(ngx_http_request_t *r, yajl_val value,
    yajl_val index, ngx_str_t *vector);
ngx_int_t ngx_http_agent_lg_index_query(ngx_http_request_t *r,
    ngx_str_t *query, ngx_str_t *vector);

/* lg_assistants.c */
ngx_int_t ngx_http_agent_lg_assistants(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body);

/* lg.c */
ngx_int_t ngx_http_agent_lg_now(ngx_http_request_t *r, ngx_str_t *now);
ngx_int_t ngx_http_agent_lg_made(ngx_http_request_t *r, ngx_str_t *id);
void ngx_http_agent_lg_run_json(ngx_http_agent_json_t *j,
    ngx_http_agent_run_row_t *row);
void ngx_http_agent_lg_run_fields(ngx_http_agent_json_t *j,
    ngx_http_agent_run_row_t *row);

/* lg_thread.c */
ngx_int_t ngx_http_agent_lg_thread_names(ngx_http_request_t *r,
    ngx_http_agent_session_t *s, ngx_str_t *graph_id,
    ngx_str_t *assistant_id, ngx_str_t *later);
ngx_int_t ngx_http_agent_lg_thread_create(ngx_http_request_t *r,
    ngx_str_t *id, yajl_val metadata, ngx_http_agent_session_t *s);

/* lg_thread.c */
ngx_int_t ngx_http_agent_lg_thread_json(ngx_http_request_t *r,
    ngx_http_agent_json_t *j, ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_lg_thread(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body);
ngx_int_t ngx_http_agent_lg_state(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body);
ngx_http_agent_graph_t *ngx_http_agent_lg_thread_graph(ngx_http_request_t *r,
    ngx_str_t *thread_id);
ngx_int_t ngx_http_agent_lg_history_list(ngx_http_request_t *r,
    ngx_str_t *thread_id, ngx_str_t *ns, ngx_array_t *list, ngx_uint_t n);
ngx_int_t ngx_http_agent_lg_history_read(ngx_http_request_t *r,
    ngx_int_t rc);

/* lg_update.c */
ngx_int_t ngx_http_agent_lg_update_state(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body);

/* lg_walk.c */
ngx_int_t ngx_http_agent_lg_threads_count(ngx_http_request_t *r,
    ngx_str_t *body);
ngx_int_t ngx_http_agent_lg_threads(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body);
ngx_int_t ngx_http_agent_lg_history(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body);

/* lg_ns.c */
ngx_int_t ngx_http_agent_lg_ns_state(ngx_http_request_t *r, ngx_pool_t *pool,
    ngx_http_agent_graph_t *graph, ngx_str_t *thread_id,
    ngx_http_agent_json_t *j, ngx_http_agent_checkpoint_t *c);

/* lg_run_create.c */
ngx_int_t ngx_http_agent_lg_run_create(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body);

/* lg_multitask.c */
ngx_int_t ngx_http_agent_lg_run_queue(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body, yajl_val v);

/* lg_runs.c */
ngx_int_t ngx_http_agent_lg_runs(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body);

/* lg_runs.c */
ngx_int_t ngx_http_agent_lg_join(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req);


#pragma GCC visibility pop


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
ngx_int_t ngx_http_agent_lg_webhook(ngx_http_request_t *r, yajl_val v,
    ngx_str_t *url);


#pragma GCC visibility pop


/* for the files of src/proto/lg/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


void ngx_http_agent_lg_run_done(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev);
ngx_int_t ngx_http_agent_lg_run_answer(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev);


#pragma GCC visibility pop


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


/* for the files of src/proto/lg/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_lg_send_as(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, const char *mode, ngx_str_t *ns,
    ngx_uint_t now);
ngx_int_t ngx_http_agent_lg_task(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j);
ngx_int_t ngx_http_agent_lg_checkpoint_event(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j);
ngx_int_t ngx_http_agent_lg_subgraph_event(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_LG_H_INCLUDED_ */
