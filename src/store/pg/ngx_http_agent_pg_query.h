
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_QUERY_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_QUERY_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

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
ngx_int_t ngx_http_agent_pg_answered_rows(ngx_http_agent_pg_answer_t *a,
    ngx_array_t *rows);
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


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_QUERY_H_INCLUDED_ */
