
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_CONN_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_CONN_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include <libpq-fe.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg_query.h"


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


#endif /* _NGX_HTTP_AGENT_PG_CONN_H_INCLUDED_ */
