
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include <libpq-fe.h>

#include "ngx_http_agent_store.h"


/*
 * A statement of the PostgreSQL store (pg_query.c): made with its
 * parameters, its answer kept in the caller's call.  It knows no
 * connection: the connections (pg_conn.c) run it and report its
 * result here.
 */
#pragma GCC visibility push(hidden)


/* the most a statement takes: a subgraph's step (CHECKPOINT_WRITE_NS) */
#define NGX_HTTP_AGENT_PG_PARAMS  20


/* an answer kept in the call (ngx_http_agent_store.h): NGX_AGAIN, to come */
typedef ngx_http_agent_store_answer_t  ngx_http_agent_pg_answer_t;


typedef struct ngx_http_agent_pg_query_s  ngx_http_agent_pg_query_t;

/*
 * reads a result into the answer, in the call's pool; returns its rc, or
 * NGX_DONE: the query and the result are the decoder's, which answers
 * later (ngx_http_agent_pg_answer_later)
 */
typedef ngx_int_t (*ngx_http_agent_pg_decode_pt)(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);

/* a write that wanted no answer failed: what to do about it */
typedef void (*ngx_http_agent_pg_failed_pt)(ngx_http_agent_pg_query_t *q);

struct ngx_http_agent_pg_query_s {
    ngx_queue_t                    queue;
    ngx_pool_t                    *pool;      /* its own, until its end */
    ngx_http_agent_store_call_t   *sc;        /* NULL: no answer wanted */
    ngx_http_agent_store_call_t   *report;    /* told if such a write fails */
    ngx_uint_t                     slot;
    ngx_uint_t                     stmt;
    ngx_http_agent_pg_decode_pt    decode;
    ngx_http_agent_pg_failed_pt    failed;
    void                          *data;      /* the decoder's */
    int                            nparams;
    char                          *values[NGX_HTTP_AGENT_PG_PARAMS];
    int                            lengths[NGX_HTTP_AGENT_PG_PARAMS];
    int                            formats[NGX_HTTP_AGENT_PG_PARAMS];
    PGresult                      *res;
    ngx_http_agent_pg_query_t     *also;      /* the next step, written
                                                 in the same statement */
    ngx_uint_t                     tx;        /* its transaction's
                                                 number, 0: none */
    unsigned                       prepared:1;
    unsigned                       binary:1;  /* its results in binary */
    unsigned                       tx_begin:1;
    unsigned                       tx_end:1;  /* COMMIT or ROLLBACK */
};


/* the worker's: the queries' pools, the connections' errors */
extern ngx_log_t                      *ngx_http_agent_pg_log;


ngx_http_agent_pg_query_t *ngx_http_agent_pg_query(
    ngx_http_agent_store_call_t *sc, ngx_uint_t stmt,
    ngx_http_agent_pg_decode_pt decode);
ngx_int_t ngx_http_agent_pg_param(ngx_http_agent_pg_query_t *q,
    ngx_str_t *v);
ngx_int_t ngx_http_agent_pg_param_int(ngx_http_agent_pg_query_t *q,
    int64_t n);
ngx_int_t ngx_http_agent_pg_param_bytes(ngx_http_agent_pg_query_t *q,
    u_char *data, size_t len);
#define ngx_http_agent_pg_answered(sc, op, k1, k2)                            \
    ngx_http_agent_store_answered(sc, ngx_http_agent_store_op(op), k1, k2)
ngx_int_t ngx_http_agent_pg_keep(ngx_http_agent_store_call_t *sc,
    ngx_int_t rc);
ngx_int_t ngx_http_agent_pg_answer(ngx_http_agent_pg_query_t *q,
    ngx_int_t rc, PGresult *res);
void ngx_http_agent_pg_hold(ngx_http_agent_pg_query_t *q);
void ngx_http_agent_pg_answer_later(ngx_http_agent_pg_query_t *q,
    ngx_int_t rc);
void ngx_http_agent_pg_held_cancel(ngx_http_agent_store_call_t *sc);
void ngx_http_agent_pg_pair(ngx_queue_t *queries,
    ngx_http_agent_pg_query_t *q);
int ngx_http_agent_pg_params(ngx_http_agent_pg_query_t *q, char **values,
    int *lengths, int *formats);
ngx_uint_t ngx_http_agent_pg_room(PGresult *res, int row, size_t *used);
ngx_int_t ngx_http_agent_pg_str(ngx_pool_t *pool, PGresult *res, int row,
    int col, ngx_str_t *out);
int64_t ngx_http_agent_pg_int(PGresult *res, int row, int col);
ngx_int_t ngx_http_agent_pg_row(ngx_pool_t *pool, PGresult *res, int row,
    int col, ngx_http_agent_store_table_t *t, void *out);


#pragma GCC visibility pop


/*
 * The answers the PostgreSQL store's operations share
 * (pg_answers.c): done, a row changed, a list of rows.
 */
#pragma GCC visibility push(hidden)


/* the rows of an answer, and whether more are left */
typedef struct {
    ngx_array_t               *rows;
    ngx_uint_t                 more;
} ngx_http_agent_pg_rows_t;


ngx_int_t ngx_http_agent_pg_done(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a);
ngx_int_t ngx_http_agent_pg_changed(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);
ngx_int_t ngx_http_agent_pg_read(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a);
ngx_int_t ngx_http_agent_pg_answered_row(ngx_http_agent_pg_answer_t *a,
    void *row);
ngx_int_t ngx_http_agent_pg_answered_rows(ngx_http_agent_pg_answer_t *a,
    ngx_array_t *to);
ngx_int_t ngx_http_agent_pg_new_rows(ngx_http_agent_pg_query_t *q,
    ngx_http_agent_pg_answer_t *a, size_t size, ngx_array_t **rows);


#pragma GCC visibility pop


/* The PostgreSQL store's assistants (pg_assistant.c). */


#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_pg_assistant_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_assistant_row_t *row);
ngx_int_t ngx_http_agent_pg_assistant_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, int64_t version,
    ngx_http_agent_assistant_row_t *row);
ngx_int_t ngx_http_agent_pg_assistant_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *graph_id, ngx_str_t *id, ngx_array_t *rows);
ngx_int_t ngx_http_agent_pg_assistant_latest(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, int64_t version, ngx_str_t *now);
ngx_int_t ngx_http_agent_pg_assistant_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id);

#pragma GCC visibility pop


/*
 * The PostgreSQL store's configuration (pg_conf.c): the URL and its
 * parameters, a connection's parameters, the schema the master sets up.
 */
#pragma GCC visibility push(hidden)


typedef struct {
    ngx_str_t                  url;
    ngx_str_t                  password;
    ngx_uint_t                 pool;
    ngx_msec_t                 timeout;
} ngx_http_agent_pg_conf_t;


extern ngx_http_agent_pg_conf_t        ngx_http_agent_pg_conf;

/* where this host keeps the files of the resources it reads */
extern ngx_str_t                       ngx_http_agent_pg_resources_dir;


char *ngx_http_agent_pg_conf_read(ngx_conf_t *cf, ngx_str_t *url);
ngx_int_t ngx_http_agent_pg_init(ngx_cycle_t *cycle, ngx_str_t *path,
    ngx_str_t *resources_dir, ngx_uid_t user, ngx_gid_t group);

/* a connection's parameters (connect_timeout in s) */
void ngx_http_agent_pg_conninfo(const char **keys, const char **values,
    char *timeout, const char *connect);


#pragma GCC visibility pop


/*
 * The PostgreSQL store's connections (pg_conn.c): libpq driven by
 * nginx's events, a line of statements each, reconnects, deadlines.
 */
#pragma GCC visibility push(hidden)


#define NGX_HTTP_AGENT_PG_DOWN        0
#define NGX_HTTP_AGENT_PG_CONNECTING  1
#define NGX_HTTP_AGENT_PG_SETUP       2   /* the schema, once a worker */
#define NGX_HTTP_AGENT_PG_READY       3

/*
 * room for 256 statements' bits: one uint64_t overflowed its shift when
 * the 65th came (statement 64 read as statement 0: "prepared statement
 * agent0 does not exist")
 */
#define NGX_HTTP_AGENT_PG_PREPARED    4


typedef struct {
    ngx_uint_t                 index;
    ngx_uint_t                 state;
    PGconn                    *conn;
    ngx_connection_t          *c;
    ngx_queue_t                queries;   /* waiting, oldest first */
    ngx_http_agent_pg_query_t *current;
    uint64_t                   prepared[NGX_HTTP_AGENT_PG_PREPARED];
                                          /* a bit per statement */
    ngx_event_t                retry;
    ngx_event_t                timer;     /* the current statement's */
    ngx_event_t                flush;     /* sends at the pass's end */
    ngx_msec_t                 backoff;
    ngx_uint_t                 failed;    /* the last attempt failed */
    ngx_uint_t                 tx;        /* the transaction open: its
                                             statements only are sent */
    ngx_uint_t                 large;     /* carried a large message:
                                             renewed once idle */
} ngx_http_agent_pg_conn_t;


extern ngx_http_agent_pg_conn_t       *ngx_http_agent_pg_conns;


ngx_int_t ngx_http_agent_pg_open(ngx_cycle_t *cycle, ngx_str_t *path,
    void *thread_pool);
void ngx_http_agent_pg_close(ngx_cycle_t *cycle);
void ngx_http_agent_pg_fail(ngx_http_agent_pg_conn_t *pc, const char *why);


#pragma GCC visibility pop


/* PostgreSQL's crons (pg_cron.c) */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_pg_cron_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_cron_row_t *row);
ngx_int_t ngx_http_agent_pg_cron_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, ngx_http_agent_cron_row_t *row);
ngx_int_t ngx_http_agent_pg_cron_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_array_t *rows);
ngx_int_t ngx_http_agent_pg_cron_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id);
ngx_int_t ngx_http_agent_pg_cron_due(ngx_http_agent_store_call_t *sc,
    int64_t now, ngx_array_t *rows);
ngx_int_t ngx_http_agent_pg_cron_claim(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t was, int64_t next);


#pragma GCC visibility pop


/*
 * The PostgreSQL store's files (pg_files.c): a resource's bytes in
 * the store, their copy on each host that reads them.
 */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_pg_resource_add(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_http_agent_resource_t *res);
ngx_int_t ngx_http_agent_pg_resource_prepare(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_resource_t *res);
ngx_int_t ngx_http_agent_pg_local_path(ngx_pool_t *pool,
    ngx_http_agent_resource_t *r);
ngx_int_t ngx_http_agent_pg_resource_fetch(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_resource_t *res);
ngx_int_t ngx_http_agent_pg_resource_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_array_t *resources);


#pragma GCC visibility pop


/*
 * The PostgreSQL store's history (pg_history.c): messages,
 * checkpoints, forks.
 */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_pg_messages(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t upto, ngx_int_t images_keep, ngx_array_t *messages);
ngx_int_t ngx_http_agent_pg_messages_page(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t before, ngx_uint_t limit, ngx_uint_t all,
    ngx_uint_t images, ngx_uint_t *more,
    ngx_http_agent_store_message_pt handler, void *data);
ngx_int_t ngx_http_agent_pg_checkpoint_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_http_agent_checkpoint_t *cp);
ngx_int_t ngx_http_agent_pg_checkpoint_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *ns, ngx_array_t *checkpoints);
ngx_int_t ngx_http_agent_pg_fork_later(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *from, ngx_array_t *later);
ngx_int_t ngx_http_agent_pg_fork_keep(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_str_t *channels);
ngx_int_t ngx_http_agent_pg_fork_cut(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t msg_count);
ngx_int_t ngx_http_agent_pg_checkpoint_write(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_http_agent_checkpoint_t *cp,
    ngx_array_t *added);


#pragma GCC visibility pop


/* The PostgreSQL store's items of the LangGraph store (pg_items.c). */


#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_pg_item_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_t *item, int64_t now, ngx_uint_t quota_items,
    size_t quota_size);
ngx_int_t ngx_http_agent_pg_item_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *ns, ngx_str_t *key, int64_t now,
    ngx_http_agent_item_t *item);
ngx_int_t ngx_http_agent_pg_item_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *ns, ngx_str_t *key);
ngx_int_t ngx_http_agent_pg_item_search(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q, ngx_array_t *items);
ngx_int_t ngx_http_agent_pg_item_namespaces(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q, ngx_array_t *namespaces);

#pragma GCC visibility pop


/* the items searched by meaning, page by page (pg_near.c) */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_pg_near(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q);

#pragma GCC visibility pop


/*
 * A turn's open of a session on PostgreSQL (pg_open.c): the lease
 * and the state the turn starts from, in one round trip.
 */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_pg_session_open(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *owner, ngx_http_agent_session_t *s,
    ngx_str_t *run_id, ngx_msec_t lease, ngx_int_t images_keep,
    ngx_http_agent_checkpoint_t *cp, ngx_array_t *messages,
    ngx_array_t *resources);


#pragma GCC visibility pop


/* agent_checkpoint_keep and a thread's storage (pg_prune.c) */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_pg_checkpoint_prune(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_uint_t keep, ngx_msec_t age);
ngx_int_t ngx_http_agent_pg_thread_storage(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_http_agent_storage_t *st);


#pragma GCC visibility pop


/* PostgreSQL's lost runs and their claim (pg_redrive.c) */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_pg_run_lost(ngx_http_agent_store_call_t *sc,
    ngx_array_t *lost);
ngx_int_t ngx_http_agent_pg_run_orphans(ngx_http_agent_store_call_t *sc,
    ngx_array_t *orphans);
ngx_int_t ngx_http_agent_pg_run_claim(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_lost_t *lost, ngx_msec_t hold,
    ngx_http_agent_run_row_t *row);


#pragma GCC visibility pop


/*
 * The PostgreSQL store's runs and their events (pg_run.c).
 */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_pg_run_insert(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_row_t *row, ngx_uint_t events);
ngx_int_t ngx_http_agent_pg_run_status(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, const char *status);
ngx_int_t ngx_http_agent_pg_run_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id, ngx_http_agent_run_row_t *row);
ngx_int_t ngx_http_agent_pg_run_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *status, ngx_int_t limit,
    ngx_int_t offset, ngx_array_t *rows);
ngx_int_t ngx_http_agent_pg_run_cancel(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_str_t *action, ngx_uint_t now);
ngx_int_t ngx_http_agent_pg_run_cancelled(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_str_t *action);
ngx_int_t ngx_http_agent_pg_run_event(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, int64_t seq, ngx_str_t *event, ngx_str_t *json);
ngx_int_t ngx_http_agent_pg_run_events(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, int64_t after, ngx_uint_t limit,
    ngx_http_agent_store_event_pt handler, void *data);
ngx_int_t ngx_http_agent_pg_run_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id);
ngx_int_t ngx_http_agent_pg_run_rollback(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id, ngx_str_t *before);
ngx_int_t ngx_http_agent_pg_thread_busy(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id);


#pragma GCC visibility pop


#pragma GCC visibility push(hidden)


extern const char  *ngx_http_agent_pg_schema;


#pragma GCC visibility pop


/*
 * A statement sent (pg_send.c): on its call's connection, in line
 * behind the others.
 */
#pragma GCC visibility push(hidden)


/* NGX_AGAIN: the caller is woken with the answer */
ngx_int_t ngx_http_agent_pg_send(ngx_http_agent_pg_query_t *q,
    ngx_uint_t forget);
ngx_int_t ngx_http_agent_pg_ask(ngx_http_agent_store_call_t *sc,
    ngx_uint_t stmt, ngx_http_agent_pg_decode_pt decode, const char *fmt,
    ...);
ngx_int_t ngx_http_agent_pg_follow(ngx_http_agent_pg_query_t *q,
    ngx_http_agent_pg_query_t *next);


#pragma GCC visibility pop


/*
 * The PostgreSQL store's sessions and their lease (pg_session.c).
 */
#pragma GCC visibility push(hidden)



/* a lease asked for: the session, the run, until when */
typedef struct {
    ngx_str_t                  id;
    ngx_str_t                  run_id;
    int64_t                    expires;
    int64_t                    gen;      /* the turn's (fencing) */
} ngx_http_agent_pg_lock_t;


ngx_int_t ngx_http_agent_pg_take_over(ngx_http_agent_pg_query_t *q,
    PGresult *res, int owner_col, int host_col, int pid_col,
    ngx_http_agent_pg_lock_t *lk, ngx_http_agent_pg_decode_pt decode);

/* for the table */
ngx_int_t ngx_http_agent_pg_session_create(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *title, ngx_str_t *metadata, ngx_str_t *owner,
    ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_pg_session_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_pg_session_count(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_session_query_t *q, int64_t *count);
ngx_int_t ngx_http_agent_pg_session_list(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_session_query_t *q, ngx_array_t *sessions);
ngx_int_t ngx_http_agent_pg_session_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id);
ngx_int_t ngx_http_agent_pg_session_set(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_uint_t field, ngx_str_t *value);
ngx_int_t ngx_http_agent_pg_session_copy(ngx_http_agent_store_call_t *sc,
    ngx_str_t *from, ngx_str_t *to, ngx_str_t *now);
ngx_int_t ngx_http_agent_pg_lock(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_msec_t lease);
ngx_int_t ngx_http_agent_pg_lock_renew(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_msec_t lease);
ngx_int_t ngx_http_agent_pg_leases_renew(ngx_http_agent_store_call_t *sc,
    ngx_array_t *leases);
ngx_int_t ngx_http_agent_pg_unlock(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id);


#pragma GCC visibility pop


/*
 * The PostgreSQL store's schema and statements (pg_sql.c), at the
 * bottom of the back end: they call nothing of it.  Hidden, as all of the
 * back end's declarations: it is reached from outside only through its
 * table (ngx_http_agent_pg.c).
 */
#pragma GCC visibility push(hidden)


/* the statements (ngx_http_agent_pg_sql.c), prepared once each */
enum {
    NGX_HTTP_AGENT_PG_SESSION_INSERT = 0,
    NGX_HTTP_AGENT_PG_SESSION_GET,
    NGX_HTTP_AGENT_PG_SESSION_LIST,
    NGX_HTTP_AGENT_PG_SESSION_COUNT,
    NGX_HTTP_AGENT_PG_SESSION_DELETE,
    NGX_HTTP_AGENT_PG_SESSION_SET_MODEL,
    NGX_HTTP_AGENT_PG_SESSION_SET_DATABASE,
    NGX_HTTP_AGENT_PG_SESSION_SET_METADATA,
    NGX_HTTP_AGENT_PG_LOCK,
    NGX_HTTP_AGENT_PG_LOCK_STEAL,
    NGX_HTTP_AGENT_PG_UNLOCK,
    NGX_HTTP_AGENT_PG_RENEW,
    NGX_HTTP_AGENT_PG_LEASES_RENEW,
    NGX_HTTP_AGENT_PG_MESSAGES,
    NGX_HTTP_AGENT_PG_MESSAGES_PAGE,
    NGX_HTTP_AGENT_PG_CHECKPOINT_GET,
    NGX_HTTP_AGENT_PG_CHECKPOINT_LIST,
    NGX_HTTP_AGENT_PG_CHECKPOINT_WRITE,
    NGX_HTTP_AGENT_PG_FORK_LATER,
    NGX_HTTP_AGENT_PG_FORK_KEEP,
    NGX_HTTP_AGENT_PG_FORK_CUT,
    NGX_HTTP_AGENT_PG_RESOURCE_INSERT,
    NGX_HTTP_AGENT_PG_RESOURCE_LIST,
    NGX_HTTP_AGENT_PG_BLOB_GET,
    NGX_HTTP_AGENT_PG_RUN_INSERT,
    NGX_HTTP_AGENT_PG_RUN_STATUS,
    NGX_HTTP_AGENT_PG_RUN_GET,
    NGX_HTTP_AGENT_PG_RUN_LIST,
    NGX_HTTP_AGENT_PG_RUN_CANCEL,
    NGX_HTTP_AGENT_PG_RUN_CANCELLED,
    NGX_HTTP_AGENT_PG_RUN_EVENT,
    NGX_HTTP_AGENT_PG_RUN_EVENTS,
    NGX_HTTP_AGENT_PG_RUN_ROLLBACK,
    NGX_HTTP_AGENT_PG_RUN_DELETE,
    NGX_HTTP_AGENT_PG_THREAD_BUSY,
    NGX_HTTP_AGENT_PG_RUN_LOST,
    NGX_HTTP_AGENT_PG_RUN_HELD,
    NGX_HTTP_AGENT_PG_RUN_ORPHANS,
    NGX_HTTP_AGENT_PG_RUN_CLAIM,
    NGX_HTTP_AGENT_PG_OPEN,
    NGX_HTTP_AGENT_PG_CHECKPOINT_PAIR,
    NGX_HTTP_AGENT_PG_ASSISTANT_CREATE,
    NGX_HTTP_AGENT_PG_ASSISTANT_BUMP,
    NGX_HTTP_AGENT_PG_ASSISTANT_GET,
    NGX_HTTP_AGENT_PG_ASSISTANT_LIST,
    NGX_HTTP_AGENT_PG_ASSISTANT_LATEST,
    NGX_HTTP_AGENT_PG_ASSISTANT_DELETE,
    NGX_HTTP_AGENT_PG_ITEM_PUT,
    NGX_HTTP_AGENT_PG_ITEM_GET,
    NGX_HTTP_AGENT_PG_ITEM_DELETE,
    NGX_HTTP_AGENT_PG_ITEM_SEARCH,
    NGX_HTTP_AGENT_PG_ITEM_QUERY,
    NGX_HTTP_AGENT_PG_ITEM_NAMESPACES,
    NGX_HTTP_AGENT_PG_ITEM_NEAR,
    NGX_HTTP_AGENT_PG_ITEM_ROWS,
    NGX_HTTP_AGENT_PG_SESSION_COPY,
    NGX_HTTP_AGENT_PG_CRON_PUT,
    NGX_HTTP_AGENT_PG_CRON_GET,
    NGX_HTTP_AGENT_PG_CRON_LIST,
    NGX_HTTP_AGENT_PG_CRON_DELETE,
    NGX_HTTP_AGENT_PG_CRON_DUE,
    NGX_HTTP_AGENT_PG_CRON_CLAIM,
    NGX_HTTP_AGENT_PG_CHECKPOINT_WRITE_NS,
    NGX_HTTP_AGENT_PG_CHECKPOINT_PRUNE,
    NGX_HTTP_AGENT_PG_THREAD_STORAGE,
    NGX_HTTP_AGENT_PG_CACHE_GET,
    NGX_HTTP_AGENT_PG_CACHE_PUT,
    NGX_HTTP_AGENT_PG_BEGIN,
    NGX_HTTP_AGENT_PG_COMMIT,
    NGX_HTTP_AGENT_PG_ROLLBACK,
    NGX_HTTP_AGENT_PG_LAST
};


extern const char                     *ngx_http_agent_pg_sql[];


#pragma GCC visibility pop


/*
 * A unit of writes on PostgreSQL (pg_tx.c): a transaction on the
 * call's connection.
 */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_pg_begin(ngx_http_agent_store_call_t *sc);
ngx_int_t ngx_http_agent_pg_commit(ngx_http_agent_store_call_t *sc);
void ngx_http_agent_pg_rollback(ngx_http_agent_store_call_t *sc);


#pragma GCC visibility pop


/* The PostgreSQL store's cache entries (pg_cache.c). */

#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_pg_cache_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *key, int64_t now, ngx_str_t *value);
ngx_int_t ngx_http_agent_pg_cache_put(ngx_http_agent_store_call_t *sc,
    ngx_str_t *key, ngx_str_t *value, int64_t now, int64_t expires,
    ngx_uint_t items, size_t size);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_H_INCLUDED_ */
