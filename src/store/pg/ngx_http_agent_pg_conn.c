
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include "ngx_http_agent_ops.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"
#include "ngx_http_agent_util.h"


/* a statement with no bit of its own would not build */
typedef char  ngx_http_agent_pg_bits_t[(NGX_HTTP_AGENT_PG_LAST
                                        <= 64 * NGX_HTTP_AGENT_PG_PREPARED)
                                       ? 1 : -1];


#define NGX_HTTP_AGENT_PG_BACKOFF_MIN  100
#define NGX_HTTP_AGENT_PG_BACKOFF_MAX  5000

/*
 * libpq's buffers grow to the largest message a connection carried and
 * never shrink: a connection that sent or read one of more than this is
 * opened again once it is idle, and gives the memory back
 */
#define NGX_HTTP_AGENT_PG_LARGE        (1024 * 1024)


/*
 * The PostgreSQL store's connections: a few libpq connections per worker, each
 * driven by nginx's events on its socket as the curl bridge drives HTTP.
 * A connection runs one statement at a time, prepared on first use, and
 * keeps the rest in order behind it; the calls of one session go to one
 * connection (by the hash of its id), so that its writes keep their order
 * and answers never overtake each other.  A connection that fails fails
 * what it holds with a clear error and comes back with a growing delay; a
 * statement that outlives its deadline (statement_timeout, and a timer
 * here for a server that no longer answers at all) fails the same way.
 */


static void ngx_http_agent_pg_connect(ngx_http_agent_pg_conn_t *pc);
static ngx_int_t ngx_http_agent_pg_watch(ngx_http_agent_pg_conn_t *pc,
    ngx_uint_t write);
static void ngx_http_agent_pg_unwatch(ngx_http_agent_pg_conn_t *pc);
static void ngx_http_agent_pg_event(ngx_event_t *ev);
static void ngx_http_agent_pg_connect_poll(ngx_http_agent_pg_conn_t *pc);
static void ngx_http_agent_pg_io(ngx_http_agent_pg_conn_t *pc,
    ngx_uint_t write);
static void ngx_http_agent_pg_result(ngx_http_agent_pg_conn_t *pc);
static void ngx_http_agent_pg_next(ngx_http_agent_pg_conn_t *pc);
static void ngx_http_agent_pg_renew(ngx_http_agent_pg_conn_t *pc);
static void ngx_http_agent_pg_flush(ngx_event_t *ev);
static void ngx_http_agent_pg_retry(ngx_event_t *ev);
static void ngx_http_agent_pg_timeout(ngx_event_t *ev);
static void ngx_http_agent_pg_notice(void *arg, const char *message);


ngx_http_agent_pg_conn_t  *ngx_http_agent_pg_conns;


ngx_int_t
ngx_http_agent_pg_open(ngx_cycle_t *cycle, ngx_str_t *path,
    void *thread_pool)
{
    ngx_uint_t                 i;
    ngx_http_agent_pg_conn_t  *pc;

    ngx_http_agent_pg_log = cycle->log;

    ngx_http_agent_pg_conns = ngx_pcalloc(cycle->pool,
                                        ngx_http_agent_pg_conf.pool
                                        * sizeof(ngx_http_agent_pg_conn_t));
    if (ngx_http_agent_pg_conns == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < ngx_http_agent_pg_conf.pool; i++) {
        pc = &ngx_http_agent_pg_conns[i];

        pc->index = i;
        ngx_queue_init(&pc->queries);

        pc->retry.handler = ngx_http_agent_pg_retry;
        pc->retry.data = pc;
        pc->retry.log = cycle->log;
        pc->retry.cancelable = 1;

        pc->flush.handler = ngx_http_agent_pg_flush;
        pc->flush.data = pc;
        pc->flush.log = cycle->log;

        pc->timer.handler = ngx_http_agent_pg_timeout;
        pc->timer.data = pc;
        pc->timer.log = cycle->log;
        /* a statement under way holds a worker that shuts down */
        pc->timer.cancelable = 0;

        ngx_http_agent_pg_connect(pc);
    }

    return NGX_OK;
}


void
ngx_http_agent_pg_close(ngx_cycle_t *cycle)
{
    ngx_uint_t                 i;
    ngx_http_agent_pg_conn_t  *pc;

    if (ngx_http_agent_pg_conns == NULL) {
        return;
    }

    for (i = 0; i < ngx_http_agent_pg_conf.pool; i++) {
        pc = &ngx_http_agent_pg_conns[i];

        if (pc->retry.timer_set) {
            ngx_del_timer(&pc->retry);
        }

        if (pc->timer.timer_set) {
            ngx_del_timer(&pc->timer);
        }

        if (pc->flush.posted) {
            ngx_delete_posted_event(&pc->flush);
        }

        ngx_http_agent_pg_unwatch(pc);

        if (pc->conn) {
            PQfinish(pc->conn);
            pc->conn = NULL;
        }
    }

    ngx_http_agent_pg_conns = NULL;
}


static void
ngx_http_agent_pg_connect(ngx_http_agent_pg_conn_t *pc)
{
    char         timeout[64];
    const char  *keys[6], *values[6];

    if (ngx_exiting || ngx_terminate || ngx_quit) {
        return;
    }

    ngx_http_agent_pg_conninfo(keys, values, timeout, "5");

    pc->conn = PQconnectStartParams(keys, values, 1);

    if (pc->conn == NULL || PQstatus(pc->conn) == CONNECTION_BAD) {
        ngx_http_agent_pg_fail(pc, pc->conn ? PQerrorMessage(pc->conn)
                                            : "out of memory");
        return;
    }

    if (PQsetnonblocking(pc->conn, 1) != 0) {
        ngx_http_agent_pg_fail(pc, PQerrorMessage(pc->conn));
        return;
    }

    (void) PQsetNoticeProcessor(pc->conn, ngx_http_agent_pg_notice, NULL);

    pc->state = NGX_HTTP_AGENT_PG_CONNECTING;
    pc->large = 0;
    ngx_memzero(pc->prepared, sizeof(pc->prepared));

    ngx_http_agent_pg_connect_poll(pc);
}


/* the socket watched for reading always, for writing while libpq asks */

static ngx_int_t
ngx_http_agent_pg_watch(ngx_http_agent_pg_conn_t *pc, ngx_uint_t write)
{
    int                s;
    ngx_connection_t  *c;

    s = PQsocket(pc->conn);

    if (s < 0) {
        return NGX_ERROR;
    }

    /* libpq may try another address on another socket */
    if (pc->c && pc->c->fd != s) {
        ngx_http_agent_pg_unwatch(pc);
    }

    c = pc->c;

    if (c == NULL) {
        c = ngx_get_connection(s, ngx_http_agent_pg_log);
        if (c == NULL) {
            return NGX_ERROR;
        }

        c->data = pc;
        c->read->handler = ngx_http_agent_pg_event;
        c->write->handler = ngx_http_agent_pg_event;
        c->read->log = ngx_http_agent_pg_log;
        c->write->log = ngx_http_agent_pg_log;

        pc->c = c;
    }

    if (!c->read->active
        && ngx_add_event(c->read, NGX_READ_EVENT, NGX_LEVEL_EVENT) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (write && !c->write->active) {
        if (ngx_add_event(c->write, NGX_WRITE_EVENT, NGX_LEVEL_EVENT)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

    } else if (!write && c->write->active) {
        ngx_del_event(c->write, NGX_WRITE_EVENT, 0);
    }

    return NGX_OK;
}


/* nginx stops watching; the socket is libpq's to close */

static void
ngx_http_agent_pg_unwatch(ngx_http_agent_pg_conn_t *pc)
{
    ngx_connection_t  *c;

    c = pc->c;

    if (c == NULL) {
        return;
    }

    /* libpq closes a socket it drops (a failed connect, the server gone) */
    ngx_http_agent_curl_unwatch(c, pc->conn == NULL
                                   || PQsocket(pc->conn) != (int) c->fd);

    pc->c = NULL;
}


static void
ngx_http_agent_pg_event(ngx_event_t *ev)
{
    ngx_connection_t          *c;
    ngx_http_agent_pg_conn_t  *pc;

    c = ev->data;
    pc = c->data;

    if (pc->state == NGX_HTTP_AGENT_PG_CONNECTING) {
        ngx_http_agent_pg_connect_poll(pc);
        return;
    }

    ngx_http_agent_pg_io(pc, ev->write);
}


static void
ngx_http_agent_pg_connect_poll(ngx_http_agent_pg_conn_t *pc)
{
    PostgresPollingStatusType  st;

    st = PQconnectPoll(pc->conn);

    switch (st) {

    case PGRES_POLLING_READING:
    case PGRES_POLLING_WRITING:
        if (ngx_http_agent_pg_watch(pc, st == PGRES_POLLING_WRITING)
            != NGX_OK)
        {
            ngx_http_agent_pg_fail(pc, "the socket cannot be watched");
        }

        return;

    case PGRES_POLLING_OK:
        break;

    default: /* PGRES_POLLING_FAILED */
        ngx_http_agent_pg_fail(pc, PQerrorMessage(pc->conn));
        return;
    }

    if (ngx_http_agent_pg_watch(pc, 0) != NGX_OK) {
        ngx_http_agent_pg_fail(pc, "the socket cannot be watched");
        return;
    }

    if (pc->failed) {
        ngx_log_error(NGX_LOG_NOTICE, ngx_http_agent_pg_log, 0,
                      "agent: PostgreSQL connection %ui is back",
                      pc->index);
    }

    pc->failed = 0;
    pc->backoff = 0;

    /* the schema first (it does nothing when it is there already) */

    if (!PQsendQuery(pc->conn, ngx_http_agent_pg_schema)) {
        ngx_http_agent_pg_fail(pc, PQerrorMessage(pc->conn));
        return;
    }

    pc->state = NGX_HTTP_AGENT_PG_SETUP;
    ngx_add_timer(&pc->timer, ngx_http_agent_pg_conf.timeout + 30000);

    ngx_http_agent_pg_io(pc, 1);
}


static void
ngx_http_agent_pg_io(ngx_http_agent_pg_conn_t *pc, ngx_uint_t write)
{
    int        rc;
    PGresult  *res;

    rc = PQflush(pc->conn);

    if (rc == -1) {
        ngx_http_agent_pg_fail(pc, PQerrorMessage(pc->conn));
        return;
    }

    if (ngx_http_agent_pg_watch(pc, rc == 1) != NGX_OK) {
        ngx_http_agent_pg_fail(pc, "the socket cannot be watched");
        return;
    }

    if (!PQconsumeInput(pc->conn)) {
        ngx_http_agent_pg_fail(pc, PQerrorMessage(pc->conn));
        return;
    }

    while (!PQisBusy(pc->conn)) {
        res = PQgetResult(pc->conn);

        if (res == NULL) {

            /* the statement's results are all in */

            ngx_http_agent_pg_result(pc);

            if (pc->large && pc->current == NULL && pc->tx == 0
                && pc->state == NGX_HTTP_AGENT_PG_READY)
            {
                ngx_http_agent_pg_renew(pc);
                return;
            }

            if (pc->conn == NULL || pc->current != NULL
                || pc->state != NGX_HTTP_AGENT_PG_READY)
            {
                return;
            }

            ngx_http_agent_pg_next(pc);

            if (pc->current == NULL) {
                return;
            }

            continue;
        }

        if (pc->state == NGX_HTTP_AGENT_PG_SETUP) {
            if (PQresultStatus(res) == PGRES_FATAL_ERROR) {
                ngx_log_error(NGX_LOG_ERR, ngx_http_agent_pg_log, 0,
                              "agent: the PostgreSQL schema could not be "
                              "set up: %s", PQresultErrorMessage(res));
                PQclear(res);
                ngx_http_agent_pg_fail(pc, "schema");
                return;
            }

            PQclear(res);
            continue;
        }

        if (pc->current == NULL || pc->current->res) {
            /* nothing asked for it, or a second one: not ours to read */
            PQclear(res);
            continue;
        }

        pc->current->res = res;
    }
}


/* a statement's end: prepared, answered, or the schema set up */

static void
ngx_http_agent_pg_result(ngx_http_agent_pg_conn_t *pc)
{
    PGresult                   *res;
    ExecStatusType              st;
    ngx_http_agent_pg_query_t  *q;

    if (pc->timer.timer_set) {
        ngx_del_timer(&pc->timer);
    }

    if (pc->state == NGX_HTTP_AGENT_PG_SETUP) {
        pc->state = NGX_HTTP_AGENT_PG_READY;
        return;
    }

    q = pc->current;

    if (q == NULL) {
        return;
    }

    res = q->res;
    q->res = NULL;

    st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;

    if (res && PQresultMemorySize(res) > NGX_HTTP_AGENT_PG_LARGE) {
        pc->large = 1;
    }

    if (!q->prepared) {

        /* the statement is prepared on this connection: now run it */

        if (st != PGRES_COMMAND_OK) {
            pc->current = NULL;
            ngx_log_error(NGX_LOG_ERR, ngx_http_agent_pg_log, 0,
                          "agent: PostgreSQL could not prepare statement "
                          "%ui: %s", q->stmt,
                          res ? PQresultErrorMessage(res) : "no result");
            PQclear(res);
            ngx_http_agent_pg_answer(q, NGX_ERROR, NULL);
            return;
        }

        PQclear(res);

        pc->prepared[q->stmt / 64] |= (uint64_t) 1 << (q->stmt % 64);
        q->prepared = 1;

        /* sent at once, and the statement's results come after these */
        ngx_http_agent_pg_next(pc);
        return;
    }

    pc->current = NULL;

    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
        ngx_log_error(NGX_LOG_ERR, ngx_http_agent_pg_log, 0,
                      "agent: PostgreSQL statement %ui failed: %s", q->stmt,
                      res ? PQresultErrorMessage(res) : "no result");
        ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_STORE_ERRORS, NULL, NULL,
                                   1);
        PQclear(res);
        ngx_http_agent_pg_answer(q, NGX_ERROR, NULL);
        return;
    }

    if (ngx_http_agent_pg_answer(q, NGX_OK, res) != NGX_DONE) {
        PQclear(res);
    }
}


/* the next statement of the connection, if it is idle and one waits */

static void
ngx_http_agent_pg_next(ngx_http_agent_pg_conn_t *pc)
{
    int                         i, n;
    int                         lengths[2 * NGX_HTTP_AGENT_PG_PARAMS];
    int                         formats[2 * NGX_HTTP_AGENT_PG_PARAMS];
    char                        name[16];
    char                       *values[2 * NGX_HTTP_AGENT_PG_PARAMS];
    size_t                      size;
    ngx_queue_t                *qq;
    ngx_http_agent_pg_query_t  *q;

    if (pc->state != NGX_HTTP_AGENT_PG_READY) {
        return;
    }

    q = pc->current;

    if (q == NULL) {

        /*
         * a transaction open: its statements only, in order, the others
         * wait behind its COMMIT (ngx_http_agent_pg_begin)
         */

        for (qq = ngx_queue_head(&pc->queries);
             qq != ngx_queue_sentinel(&pc->queries);
             qq = ngx_queue_next(qq))
        {
            q = ngx_queue_data(qq, ngx_http_agent_pg_query_t, queue);

            if (pc->tx == 0 || q->tx == pc->tx) {
                break;
            }
        }

        if (qq == ngx_queue_sentinel(&pc->queries)) {
            return;
        }

        ngx_queue_remove(qq);

        if (q->tx_begin) {
            pc->tx = q->tx;

        } else if (q->tx_end) {
            pc->tx = 0;
        }

        ngx_http_agent_pg_pair(&pc->queries, q);
        q->prepared = (pc->prepared[q->stmt / 64] >> (q->stmt % 64)) & 1;
        pc->current = q;
    }

    ngx_sprintf((u_char *) name, "agent%ui%Z", q->stmt);

    if (!q->prepared) {
        if (!PQsendPrepare(pc->conn, name, ngx_http_agent_pg_sql[q->stmt], 0,
                           NULL))
        {
            ngx_http_agent_pg_fail(pc, PQerrorMessage(pc->conn));
            return;
        }

    } else {
        n = ngx_http_agent_pg_params(q, values, lengths, formats);

        for (i = 0, size = 0; i < n; i++) {
            size += lengths[i];
        }

        if (size > NGX_HTTP_AGENT_PG_LARGE) {
            pc->large = 1;
        }

        if (!PQsendQueryPrepared(pc->conn, name, n,
                                 (const char * const *) values, lengths,
                                 formats, q->binary))
        {
            ngx_http_agent_pg_fail(pc, PQerrorMessage(pc->conn));
            return;
        }
    }

    /* a server that no longer answers: past statement_timeout, a margin */
    ngx_add_timer(&pc->timer, ngx_http_agent_pg_conf.timeout + 1000);

    if (PQflush(pc->conn) == 1
        && ngx_http_agent_pg_watch(pc, 1) != NGX_OK)
    {
        ngx_http_agent_pg_fail(pc, "the socket cannot be watched");
    }
}


/* a connection closed and opened again; what waits is sent once it is */

static void
ngx_http_agent_pg_renew(ngx_http_agent_pg_conn_t *pc)
{
    ngx_log_debug1(NGX_LOG_DEBUG_EVENT, ngx_http_agent_pg_log, 0,
                   "agent: PostgreSQL connection %ui renewed", pc->index);

    if (pc->timer.timer_set) {
        ngx_del_timer(&pc->timer);
    }

    ngx_http_agent_pg_unwatch(pc);

    PQfinish(pc->conn);
    pc->conn = NULL;

    pc->state = NGX_HTTP_AGENT_PG_DOWN;

    ngx_http_agent_pg_connect(pc);
}


void
ngx_http_agent_pg_fail(ngx_http_agent_pg_conn_t *pc, const char *why)
{
    ngx_queue_t                *qq;
    ngx_http_agent_pg_query_t  *q;

    if (!pc->failed) {
        ngx_log_error(NGX_LOG_ERR, ngx_http_agent_pg_log, 0,
                      "agent: PostgreSQL connection %ui failed: %s",
                      pc->index, why);
    }

    pc->failed = 1;

    if (pc->timer.timer_set) {
        ngx_del_timer(&pc->timer);
    }

    ngx_http_agent_pg_unwatch(pc);

    if (pc->conn) {
        PQfinish(pc->conn);
        pc->conn = NULL;
    }

    pc->state = NGX_HTTP_AGENT_PG_DOWN;

    /* the server undoes a transaction open on it */
    pc->tx = 0;

    /* what it held fails now, with an error its callers can give */

    q = pc->current;
    pc->current = NULL;

    if (q) {
        if (q->res) {
            PQclear(q->res);
            q->res = NULL;
        }

        ngx_http_agent_pg_answer(q, NGX_ERROR, NULL);
    }

    while (!ngx_queue_empty(&pc->queries)) {
        qq = ngx_queue_head(&pc->queries);
        ngx_queue_remove(qq);

        q = ngx_queue_data(qq, ngx_http_agent_pg_query_t, queue);
        ngx_http_agent_pg_answer(q, NGX_ERROR, NULL);
    }

    if (ngx_exiting || ngx_terminate || ngx_quit) {
        return;
    }

    pc->backoff = pc->backoff ? ngx_min(pc->backoff * 2,
                                        NGX_HTTP_AGENT_PG_BACKOFF_MAX)
                              : NGX_HTTP_AGENT_PG_BACKOFF_MIN;

    if (!pc->retry.timer_set) {
        ngx_add_timer(&pc->retry, pc->backoff);
    }
}


/*
 * The statements asked for while a pass of the event loop runs are sent at
 * its end: what else the pass starts (a model's request) goes first, and
 * the steps of one pass are written as one statement (ngx_http_agent_pg_next)
 */

static void
ngx_http_agent_pg_flush(ngx_event_t *ev)
{
    ngx_http_agent_pg_conn_t *pc = ev->data;

    if (pc->current == NULL) {
        ngx_http_agent_pg_next(pc);
    }
}


static void
ngx_http_agent_pg_retry(ngx_event_t *ev)
{
    ngx_http_agent_pg_conn_t *pc = ev->data;

    if (pc->state == NGX_HTTP_AGENT_PG_DOWN) {
        ngx_http_agent_pg_connect(pc);
    }
}


static void
ngx_http_agent_pg_timeout(ngx_event_t *ev)
{
    ngx_http_agent_pg_conn_t *pc = ev->data;

    ngx_http_agent_pg_fail(pc, "the server did not answer in time");
}


/*
 * The server's notices (a word of an item too long to be indexed): in the
 * error log, their first line; libpq's own default writes them on stderr,
 * which is the error log's file, unframed.
 */

static void
ngx_http_agent_pg_notice(void *arg, const char *message)
{
    u_char  *p, *nl, *last;

    p = (u_char *) message;
    last = p + ngx_strlen(p);
    nl = ngx_strlchr(p, last, '\n');

    if (nl) {
        last = nl;
    }

    ngx_log_error(NGX_LOG_INFO, ngx_cycle->log, 0,
                  "agent: PostgreSQL says: %*s", (size_t) (last - p), p);
}
