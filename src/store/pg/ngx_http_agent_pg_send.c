
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"


/*
 * A statement sent: on its call's connection (its session's, so that the
 * session's statements keep their order), in line behind the others, sent
 * at the end of the event loop's pass (pg_conn.c).
 */


static ngx_http_agent_pg_conn_t *ngx_http_agent_pg_pick(
    ngx_http_agent_store_call_t *sc);


static ngx_uint_t  ngx_http_agent_pg_next_conn;


/* the connection of a call: its session's, or the next */

static ngx_http_agent_pg_conn_t *
ngx_http_agent_pg_pick(ngx_http_agent_store_call_t *sc)
{
    ngx_uint_t  n;

    if (sc->conn) {
        return sc->conn;
    }

    n = ngx_http_agent_pg_conf.pool;

    if (sc->key.len) {
        sc->conn = &ngx_http_agent_pg_conns[ngx_hash_key(sc->key.data,
                                                         sc->key.len)
                                            % n];

    } else {
        sc->conn = &ngx_http_agent_pg_conns[ngx_http_agent_pg_next_conn++
                                            % n];
    }

    return sc->conn;
}


/*
 * NGX_AGAIN: the caller is woken with the answer; NGX_OK: a write that
 * wants none is on its way; NGX_ERROR: no connection to send it on.
 */

ngx_int_t
ngx_http_agent_pg_send(ngx_http_agent_pg_query_t *q, ngx_uint_t forget)
{
    ngx_http_agent_store_call_t  *sc;
    ngx_http_agent_pg_conn_t     *pc;
    ngx_http_agent_pg_answer_t   *a;

    sc = q->sc;
    pc = ngx_http_agent_pg_pick(sc);
    a = NULL;

    /* a statement of the call's transaction: sent on its connection in it */
    q->tx = sc->tx;

    if (forget || sc->wake == NULL) {
        q->sc = NULL;
        q->report = sc;

        /* kept as answered: a pass that runs again does not send it twice */
        if (ngx_http_agent_pg_keep(sc, NGX_OK) == NGX_ERROR) {
            ngx_destroy_pool(q->pool);
            return NGX_ERROR;
        }

    } else {
        a = ngx_http_agent_store_answer_add(sc);
        if (a == NULL) {
            ngx_destroy_pool(q->pool);
            return NGX_ERROR;
        }

        q->slot = sc->answers->nelts - 1;
    }

    if (pc->state == NGX_HTTP_AGENT_PG_DOWN) {

        /* waiting for the server to come back: a clear error now */

        ngx_log_error(NGX_LOG_ERR, ngx_http_agent_pg_log, 0,
                      "agent: PostgreSQL is not reachable, statement %ui "
                      "not sent", q->stmt);

        if (q->sc && a) {
            a->rc = NGX_ERROR;
        }

        ngx_destroy_pool(q->pool);

        return NGX_ERROR;
    }

    if (q->sc) {
        sc->waiting++;
    }

    ngx_queue_insert_tail(&pc->queries, &q->queue);

    /* sent at the end of this pass of the event loop: see pg_flush() */
    if (pc->current == NULL && !pc->flush.posted) {
        ngx_post_event(&pc->flush, &ngx_posted_events);
    }

    return q->sc ? NGX_AGAIN : NGX_OK;
}


/*
 * A statement with its parameters: "s" an ngx_str_t * (NULL: SQL's NULL),
 * "n" the same with an empty string NULL too, "i" an int64_t; a first "!"
 * for a write that wants no answer.
 */

ngx_int_t
ngx_http_agent_pg_ask(ngx_http_agent_store_call_t *sc, ngx_uint_t stmt,
    ngx_http_agent_pg_decode_pt decode, const char *fmt, ...)
{
    va_list                     args;
    ngx_int_t                   rc;
    ngx_str_t                  *s;
    ngx_uint_t                  forget;
    ngx_http_agent_pg_query_t  *q;

    q = ngx_http_agent_pg_query(sc, stmt, decode);
    if (q == NULL) {
        return NGX_ERROR;
    }

    forget = (*fmt == '!');
    fmt += forget;
    rc = NGX_OK;

    va_start(args, fmt);

    for ( /* void */ ; *fmt && rc == NGX_OK; fmt++) {
        if (*fmt == 'i') {
            rc = ngx_http_agent_pg_param_int(q, va_arg(args, int64_t));
            continue;
        }

        s = va_arg(args, ngx_str_t *);

        rc = ngx_http_agent_pg_param(q, (*fmt == 'n' && s && s->len == 0)
                                        ? NULL : s);
    }

    va_end(args);

    if (rc != NGX_OK) {
        ngx_destroy_pool(q->pool);
        return NGX_ERROR;
    }

    return ngx_http_agent_pg_send(q, forget);
}


/* a second statement for the same answer (a lease taken over, say) */

ngx_int_t
ngx_http_agent_pg_follow(ngx_http_agent_pg_query_t *q,
    ngx_http_agent_pg_query_t *next)
{
    ngx_http_agent_pg_conn_t  *pc;

    pc = q->sc->conn;

    next->sc = q->sc;
    next->slot = q->slot;
    next->tx = q->tx;

    /* first in line: nothing of the session runs between the two */
    ngx_queue_insert_head(&pc->queries, &next->queue);

    return NGX_AGAIN;
}
