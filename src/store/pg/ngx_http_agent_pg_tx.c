/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"


static ngx_int_t ngx_http_agent_pg_tx_end(ngx_http_agent_store_call_t *sc,
    ngx_uint_t stmt);
static ngx_int_t ngx_http_agent_pg_committed(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);


static ngx_uint_t   ngx_http_agent_pg_tx_last;


/*
 * A unit of writes (ngx_http_agent_turn_prepare, a run's kept events): a
 * transaction on the call's connection.  A call keeps its connection, and
 * a connection runs one statement at a time, in order: BEGIN, the call's
 * statements, COMMIT are queued there, and from BEGIN's sending to
 * COMMIT's (or ROLLBACK's) the connection sends the statements of that
 * transaction only, those of other calls waiting in line behind them
 * (ngx_http_agent_pg_next).  Nothing blocks: the statements are queued and
 * sent as ever, their answers wake the caller as ever.  A statement that
 * fails aborts the transaction, and PostgreSQL answers its COMMIT with a
 * ROLLBACK: that failure is the call's, as a write's that wants no answer
 * (sc->failed).  The connection lost, the server undoes it.
 */

ngx_int_t
ngx_http_agent_pg_begin(ngx_http_agent_store_call_t *sc)
{
    ngx_int_t                    rc;
    ngx_http_agent_pg_answer_t  *a;
    ngx_http_agent_pg_query_t   *q;

    a = ngx_http_agent_pg_answered(sc, begin, NULL, NULL);

    if (a) {
        return a->rc;
    }

    if (sc->tx) {
        return ngx_http_agent_pg_keep(sc, NGX_OK);
    }

    q = ngx_http_agent_pg_query(sc, NGX_HTTP_AGENT_PG_BEGIN, NULL);
    if (q == NULL) {
        return NGX_ERROR;
    }

    if (++ngx_http_agent_pg_tx_last == 0) {
        ngx_http_agent_pg_tx_last = 1;
    }

    sc->tx = ngx_http_agent_pg_tx_last;
    q->tx_begin = 1;

    /* sent without an answer, kept as answered: not sent again by a pass */
    rc = ngx_http_agent_pg_send(q, 1);

    if (rc != NGX_OK) {
        sc->tx = 0;
    }

    return rc;
}


ngx_int_t
ngx_http_agent_pg_commit(ngx_http_agent_store_call_t *sc)
{
    return ngx_http_agent_pg_tx_end(sc, NGX_HTTP_AGENT_PG_COMMIT);
}


void
ngx_http_agent_pg_rollback(ngx_http_agent_store_call_t *sc)
{
    (void) ngx_http_agent_pg_tx_end(sc, NGX_HTTP_AGENT_PG_ROLLBACK);
}


/*
 * COMMIT or ROLLBACK, last in the transaction's line: no answer kept, but
 * for a COMMIT whose caller asks its writes stored (sc->stored): it tells
 * a client of them, whose next request may come through another
 * connection, which sees them only once the COMMIT is answered
 */

static ngx_int_t
ngx_http_agent_pg_tx_end(ngx_http_agent_store_call_t *sc, ngx_uint_t stmt)
{
    ngx_int_t                    rc;
    ngx_uint_t                   wait;
    ngx_http_agent_pg_conn_t    *pc;
    ngx_http_agent_pg_query_t   *q;
    ngx_http_agent_pg_answer_t  *a;

    wait = (stmt == NGX_HTTP_AGENT_PG_COMMIT && sc->stored && sc->wake);

    if (wait) {
        a = ngx_http_agent_pg_answered(sc, commit, NULL, NULL);

        if (a) {
            return a->rc;
        }
    }

    pc = sc->conn;

    if (sc->tx == 0 || pc == NULL) {
        return NGX_OK;
    }

    rc = NGX_OK;
    a = NULL;

    if (wait) {
        a = ngx_http_agent_store_answer_add(sc);

        if (a == NULL) {
            /* no room for its answer: undone, the caller's error */
            stmt = NGX_HTTP_AGENT_PG_ROLLBACK;
            rc = NGX_ERROR;
        }
    }

    q = ngx_http_agent_pg_query(sc, stmt,
                                stmt == NGX_HTTP_AGENT_PG_COMMIT
                                ? ngx_http_agent_pg_committed : NULL);
    if (q == NULL) {
        /* the connection's end undoes it: it is not given back */
        ngx_http_agent_pg_fail(pc, "no memory for the transaction's end");
        sc->tx = 0;

        if (a) {
            a->rc = NGX_ERROR;
        }

        return NGX_ERROR;
    }

    q->tx = sc->tx;
    q->tx_end = 1;

    if (a) {
        q->slot = sc->answers->nelts - 1;

    } else {
        q->sc = NULL;
        q->report = sc;
    }

    sc->tx = 0;

    if (pc->state == NGX_HTTP_AGENT_PG_DOWN) {
        ngx_destroy_pool(q->pool);

        if (a) {
            a->rc = NGX_ERROR;
        }

        return NGX_ERROR;
    }

    ngx_queue_insert_tail(&pc->queries, &q->queue);

    if (pc->current == NULL && !pc->flush.posted) {
        ngx_post_event(&pc->flush, &ngx_posted_events);
    }

    if (a) {
        sc->waiting++;
        return NGX_AGAIN;
    }

    return rc;
}


/* a COMMIT of a transaction a failed statement aborted is a ROLLBACK */

static ngx_int_t
ngx_http_agent_pg_committed(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    if (ngx_strcmp(PQcmdStatus(res), "COMMIT") != 0) {
        ngx_log_error(NGX_LOG_ERR, ngx_http_agent_pg_log, 0,
                      "agent: PostgreSQL rolled a unit of writes back");
        return NGX_ERROR;
    }

    return NGX_OK;
}
