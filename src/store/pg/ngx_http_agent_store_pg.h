
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_STORE_PG_H_INCLUDED_
#define _NGX_HTTP_AGENT_STORE_PG_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include <libpq-fe.h>

#include "ngx_http_agent_store.h"


/*
 * The PostgreSQL back end's own declarations: shared by its files, reached
 * from outside only through its table (ngx_http_agent_store_backend_t),
 * so hidden from the module's exported symbols.
 */
#pragma GCC visibility push(hidden)


/* the statements (ngx_http_agent_store_pg_sql.c), prepared once each */
enum {
    NGX_HTTP_AGENT_PG_SESSION_INSERT = 0,
    NGX_HTTP_AGENT_PG_SESSION_GET,
    NGX_HTTP_AGENT_PG_SESSION_LIST,
    NGX_HTTP_AGENT_PG_SESSION_DELETE,
    NGX_HTTP_AGENT_PG_SESSION_SET_MODEL,
    NGX_HTTP_AGENT_PG_SESSION_SET_DATABASE,
    NGX_HTTP_AGENT_PG_LOCK,
    NGX_HTTP_AGENT_PG_LOCK_STEAL,
    NGX_HTTP_AGENT_PG_UNLOCK,
    NGX_HTTP_AGENT_PG_RENEW,
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
    NGX_HTTP_AGENT_PG_THREAD_BUSY,
    NGX_HTTP_AGENT_PG_OPEN,
    NGX_HTTP_AGENT_PG_CHECKPOINT_PAIR,
    NGX_HTTP_AGENT_PG_BEGIN,
    NGX_HTTP_AGENT_PG_COMMIT,
    NGX_HTTP_AGENT_PG_ROLLBACK,
    NGX_HTTP_AGENT_PG_LAST
};


#define NGX_HTTP_AGENT_PG_PARAMS  18


/* an answer kept in the call (ngx_http_agent_store.h): NGX_AGAIN, to come */
typedef struct {
    ngx_int_t                      rc;
    void                          *value;
} ngx_http_agent_pg_answer_t;


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


#define NGX_HTTP_AGENT_PG_DOWN        0
#define NGX_HTTP_AGENT_PG_CONNECTING  1
#define NGX_HTTP_AGENT_PG_SETUP       2   /* the schema, once a worker */
#define NGX_HTTP_AGENT_PG_READY       3



typedef struct {
    ngx_uint_t                 index;
    ngx_uint_t                 state;
    PGconn                    *conn;
    ngx_connection_t          *c;
    ngx_queue_t                queries;   /* waiting, oldest first */
    ngx_http_agent_pg_query_t *current;
    uint64_t                   prepared;  /* a bit per statement */
    ngx_event_t                retry;
    ngx_event_t                timer;     /* the current statement's */
    ngx_event_t                flush;     /* sends at the pass's end */
    ngx_msec_t                 backoff;
    ngx_uint_t                 failed;    /* the last attempt failed */
    ngx_uint_t                 tx;        /* the transaction open: its
                                             statements only are sent */
} ngx_http_agent_pg_conn_t;


typedef struct {
    ngx_str_t                  url;
    ngx_str_t                  password;
    ngx_uint_t                 pool;
    ngx_msec_t                 timeout;
} ngx_http_agent_pg_conf_t;


extern ngx_http_agent_store_backend_t  ngx_http_agent_store_pg;
extern ngx_http_agent_pg_conf_t        ngx_http_agent_pg_conf;

/* store_pg_conf.c: a connection's parameters (connect_timeout in s) */
void ngx_http_agent_pg_conninfo(const char **keys, const char **values,
    char *timeout, const char *connect);
extern ngx_http_agent_pg_conn_t       *ngx_http_agent_pg_conns;
extern ngx_log_t                      *ngx_http_agent_pg_log;
extern const char                     *ngx_http_agent_pg_schema;
extern const char                     *ngx_http_agent_pg_sql[];


extern ngx_str_t                       ngx_http_agent_pg_resources_dir;


char *ngx_http_agent_pg_conf_read(ngx_conf_t *cf, ngx_str_t *url);
ngx_int_t ngx_http_agent_pg_init(ngx_cycle_t *cycle, ngx_str_t *path,
    ngx_str_t *resources_dir, ngx_uid_t user, ngx_gid_t group);
ngx_int_t ngx_http_agent_pg_open(ngx_cycle_t *cycle, ngx_str_t *path);
void ngx_http_agent_pg_close(ngx_cycle_t *cycle);
void ngx_http_agent_pg_cancel(ngx_http_agent_store_call_t *sc);
ngx_int_t ngx_http_agent_pg_begin(ngx_http_agent_store_call_t *sc);
ngx_int_t ngx_http_agent_pg_commit(ngx_http_agent_store_call_t *sc);
void ngx_http_agent_pg_rollback(ngx_http_agent_store_call_t *sc);
void ngx_http_agent_pg_next(ngx_http_agent_pg_conn_t *pc);
void ngx_http_agent_pg_fail(ngx_http_agent_pg_conn_t *pc, const char *why);
ngx_int_t ngx_http_agent_pg_answer(ngx_http_agent_pg_query_t *q,
    ngx_int_t rc, PGresult *res);
void ngx_http_agent_pg_hold(ngx_http_agent_pg_query_t *q);
void ngx_http_agent_pg_answer_later(ngx_http_agent_pg_query_t *q,
    ngx_int_t rc);

ngx_http_agent_pg_answer_t *ngx_http_agent_pg_answered(
    ngx_http_agent_store_call_t *sc);
ngx_http_agent_pg_query_t *ngx_http_agent_pg_query(
    ngx_http_agent_store_call_t *sc, ngx_uint_t stmt,
    ngx_http_agent_pg_decode_pt decode);
ngx_int_t ngx_http_agent_pg_param(ngx_http_agent_pg_query_t *q,
    ngx_str_t *v);
ngx_int_t ngx_http_agent_pg_param_int(ngx_http_agent_pg_query_t *q,
    int64_t n);
ngx_int_t ngx_http_agent_pg_param_bytes(ngx_http_agent_pg_query_t *q,
    u_char *data, size_t len);
ngx_int_t ngx_http_agent_pg_send(ngx_http_agent_pg_query_t *q,
    ngx_uint_t forget);
ngx_int_t ngx_http_agent_pg_follow(ngx_http_agent_pg_query_t *q,
    ngx_http_agent_pg_query_t *next);
ngx_int_t ngx_http_agent_pg_keep(ngx_http_agent_store_call_t *sc,
    ngx_int_t rc);
ngx_int_t ngx_http_agent_pg_ask(ngx_http_agent_store_call_t *sc,
    ngx_uint_t stmt, ngx_http_agent_pg_decode_pt decode, const char *fmt,
    ...);
ngx_int_t ngx_http_agent_pg_str(ngx_pool_t *pool, PGresult *res, int row,
    int col, ngx_str_t *out);
int64_t ngx_http_agent_pg_int(PGresult *res, int row, int col);
void ngx_http_agent_pg_pair(ngx_http_agent_pg_conn_t *pc,
    ngx_http_agent_pg_query_t *q);
int ngx_http_agent_pg_params(ngx_http_agent_pg_query_t *q, char **values,
    int *lengths, int *formats);
void ngx_http_agent_pg_session_row(ngx_pool_t *pool, PGresult *res, int row,
    int col, ngx_http_agent_session_t *s);

/* a lease asked for: the session, the run, until when */
typedef struct {
    ngx_str_t                  id;
    ngx_str_t                  run_id;
    int64_t                    expires;
} ngx_http_agent_pg_lock_t;


/* the rows of an answer, and whether more are left */
typedef struct {
    ngx_array_t               *rows;
    ngx_uint_t                 more;
} ngx_http_agent_pg_rows_t;


ngx_int_t ngx_http_agent_pg_done(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a);
ngx_int_t ngx_http_agent_pg_changed(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);
ngx_int_t ngx_http_agent_pg_take_over(ngx_http_agent_pg_query_t *q,
    PGresult *res, int owner_col, int host_col, int pid_col,
    ngx_http_agent_pg_lock_t *lk, ngx_http_agent_pg_decode_pt decode);
ngx_int_t ngx_http_agent_pg_rows(ngx_http_agent_pg_answer_t *a,
    ngx_array_t *to);
ngx_int_t ngx_http_agent_pg_new_rows(ngx_http_agent_pg_query_t *q,
    ngx_http_agent_pg_answer_t *a, size_t size, ngx_array_t **rows);

/* the history (ngx_http_agent_store_pg_history.c) */
ngx_int_t ngx_http_agent_pg_messages(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t upto, ngx_int_t images_keep, ngx_array_t *messages);
ngx_int_t ngx_http_agent_pg_messages_page(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t before, ngx_uint_t limit, ngx_uint_t all,
    ngx_uint_t images, ngx_uint_t *more,
    ngx_http_agent_store_message_pt handler, void *data);
ngx_int_t ngx_http_agent_pg_checkpoint_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_http_agent_checkpoint_t *cp);
ngx_int_t ngx_http_agent_pg_checkpoint_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_array_t *checkpoints);
ngx_int_t ngx_http_agent_pg_fork_later(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *from, ngx_array_t *later);
ngx_int_t ngx_http_agent_pg_fork_keep(ngx_http_agent_store_call_t *sc,
    ngx_str_t *checkpoint_id, ngx_str_t *channels);
ngx_int_t ngx_http_agent_pg_fork_cut(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t msg_count);
ngx_int_t ngx_http_agent_pg_checkpoint_write(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_http_agent_checkpoint_t *cp,
    ngx_array_t *added);
ngx_int_t ngx_http_agent_pg_resource_add(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_http_agent_resource_t *res);
ngx_int_t ngx_http_agent_pg_resource_prepare(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_resource_t *res);
ngx_int_t ngx_http_agent_pg_session_open(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *owner, ngx_http_agent_session_t *s,
    ngx_str_t *run_id, ngx_msec_t lease, ngx_int_t images_keep,
    ngx_http_agent_checkpoint_t *cp, ngx_array_t *messages,
    ngx_array_t *resources);
ngx_int_t ngx_http_agent_pg_local_path(ngx_pool_t *pool,
    ngx_http_agent_resource_t *r);
ngx_int_t ngx_http_agent_pg_resource_fetch(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_resource_t *res);
ngx_int_t ngx_http_agent_pg_resource_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_array_t *resources);

/* the runs (ngx_http_agent_store_pg_runs.c) */
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
    ngx_str_t *run_id, ngx_str_t *action);
ngx_int_t ngx_http_agent_pg_run_cancelled(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_str_t *action);
ngx_int_t ngx_http_agent_pg_run_event(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, int64_t seq, ngx_str_t *event, ngx_str_t *json);
ngx_int_t ngx_http_agent_pg_run_events(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, int64_t after, ngx_uint_t limit,
    ngx_http_agent_store_event_pt handler, void *data);
ngx_int_t ngx_http_agent_pg_run_rollback(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id, ngx_str_t *before);
ngx_int_t ngx_http_agent_pg_thread_busy(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_STORE_PG_H_INCLUDED_ */
