
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"
#include "ngx_http_agent_util.h"


/*
 * A statement of the PostgreSQL store: its parameters copied, its answer
 * kept in the caller's call (by slot) or dropped when the caller is gone or
 * wants none.  The connections (pg_conn.c) run it and report its
 * result here; its place in their lines is pg_send.c's.
 */


static ngx_int_t ngx_http_agent_pg_param_fixed(ngx_http_agent_pg_query_t *q,
    ngx_str_t *v);


static ngx_int_t ngx_http_agent_pg_answer_one(ngx_http_agent_pg_query_t *q,
    ngx_int_t rc, PGresult *res);
static void ngx_http_agent_pg_tell(ngx_http_agent_pg_query_t *q,
    ngx_int_t rc);


ngx_log_t           *ngx_http_agent_pg_log;

static ngx_queue_t   ngx_http_agent_pg_held;    /* answered later */


/*
 * the answer to its caller, if it still waits; the query's end.  NGX_DONE:
 * the decoder keeps the query and the result, and answers later.
 */

ngx_int_t
ngx_http_agent_pg_answer(ngx_http_agent_pg_query_t *q, ngx_int_t rc,
    PGresult *res)
{
    ngx_int_t                   first;
    ngx_http_agent_pg_query_t  *also;

    /*
     * a step written with this one has the same answer, after it (steps
     * only: their decoder never keeps the result, see NGX_DONE)
     */
    also = q->also;

    first = ngx_http_agent_pg_answer_one(q, rc, res);

    if (also) {
        (void) ngx_http_agent_pg_answer_one(also, rc, res);
    }

    return first;
}


static ngx_int_t
ngx_http_agent_pg_answer_one(ngx_http_agent_pg_query_t *q, ngx_int_t rc,
    PGresult *res)
{
    ngx_http_agent_store_call_t  *sc;

    sc = q->sc;

    if (sc == NULL) {

        /* a write that wanted no answer: its failure told to its caller */

        if (rc == NGX_OK && res && q->decode) {
            rc = q->decode(q, res, NULL);
        }

        if (rc != NGX_OK && q->report && q->report->failed == 0) {
            q->report->failed = rc;
        }

        if (rc != NGX_OK && q->failed) {
            q->failed(q);
        }

        ngx_destroy_pool(q->pool);
        return rc;
    }

    if (rc == NGX_OK && q->decode) {
        rc = q->decode(q, res,
                       (ngx_http_agent_pg_answer_t *) sc->answers->elts
                       + q->slot);

        if (rc == NGX_AGAIN) {
            /* a second statement follows (ngx_http_agent_pg_follow) */
            ngx_destroy_pool(q->pool);
            return rc;
        }

        if (rc == NGX_DONE) {
            return rc;
        }
    }

    ngx_http_agent_pg_tell(q, rc);

    return rc;
}


/* the answer told, the query's end */

static void
ngx_http_agent_pg_tell(ngx_http_agent_pg_query_t *q, ngx_int_t rc)
{
    ngx_uint_t                    slot;
    ngx_http_agent_store_call_t  *sc;
    ngx_http_agent_pg_answer_t   *a;

    sc = q->sc;
    slot = q->slot;

    /* the query lives in its pool */
    ngx_destroy_pool(q->pool);

    if (sc == NULL) {
        return;
    }

    a = (ngx_http_agent_pg_answer_t *) sc->answers->elts + slot;

    a->rc = rc;
    sc->rc = rc;
    sc->waiting--;

    if (sc->wake) {
        sc->wake(sc);
    }
}


/*
 * A query its decoder answers later (a file written on the thread pool):
 * off its connection, where a cancel still finds it.
 */

void
ngx_http_agent_pg_hold(ngx_http_agent_pg_query_t *q)
{
    if (ngx_http_agent_pg_held.next == NULL) {
        ngx_queue_init(&ngx_http_agent_pg_held);
    }

    ngx_queue_insert_tail(&ngx_http_agent_pg_held, &q->queue);
}


void
ngx_http_agent_pg_answer_later(ngx_http_agent_pg_query_t *q, ngx_int_t rc)
{
    ngx_queue_remove(&q->queue);

    ngx_http_agent_pg_tell(q, rc);
}


/* the caller is gone: what is answered later is answered to no one */

void
ngx_http_agent_pg_held_cancel(ngx_http_agent_store_call_t *sc)
{
    ngx_queue_t                *qq;
    ngx_http_agent_pg_query_t  *q;

    if (ngx_http_agent_pg_held.next == NULL) {
        return;
    }

    for (qq = ngx_queue_head(&ngx_http_agent_pg_held);
         qq != ngx_queue_sentinel(&ngx_http_agent_pg_held);
         qq = ngx_queue_next(qq))
    {
        q = ngx_queue_data(qq, ngx_http_agent_pg_query_t, queue);

        if (q->sc == sc) {
            q->sc = NULL;
        }
    }
}


ngx_http_agent_pg_query_t *
ngx_http_agent_pg_query(ngx_http_agent_store_call_t *sc, ngx_uint_t stmt,
    ngx_http_agent_pg_decode_pt decode)
{
    ngx_pool_t                 *pool;
    ngx_http_agent_pg_query_t  *q;

    pool = ngx_create_pool(1024, ngx_http_agent_pg_log);
    if (pool == NULL) {
        return NULL;
    }

    q = ngx_pcalloc(pool, sizeof(ngx_http_agent_pg_query_t));
    if (q == NULL) {
        ngx_destroy_pool(pool);
        return NULL;
    }

    q->pool = pool;
    q->sc = sc;
    q->stmt = stmt;
    q->decode = decode;

    return q;
}


/* a parameter, copied: the caller's memory may be gone when it is sent */

ngx_int_t
ngx_http_agent_pg_param(ngx_http_agent_pg_query_t *q, ngx_str_t *v)
{
    char  *p;

    if (q->nparams == NGX_HTTP_AGENT_PG_PARAMS) {
        return NGX_ERROR;
    }

    if (v == NULL || v->data == NULL) {
        q->values[q->nparams] = NULL;
        q->lengths[q->nparams++] = 0;
        return NGX_OK;
    }

    /*
     * PostgreSQL's text is UTF-8 without NUL, where SQLite took any bytes:
     * what is not (an uploaded name in Latin-1, say) is stored with
     * U+FFFD in its place, as the JSON writer shows it anyway
     */

    if (ngx_http_agent_json_utf8_valid(v->data, v->len)
        && ngx_strlchr(v->data, v->data + v->len, '\0') == NULL)
    {
        p = ngx_pnalloc(q->pool, v->len + 1);
        if (p == NULL) {
            return NGX_ERROR;
        }

        *ngx_cpymem(p, v->data, v->len) = '\0';

        q->values[q->nparams] = p;
        q->lengths[q->nparams++] = v->len;

        return NGX_OK;
    }

    return ngx_http_agent_pg_param_fixed(q, v);
}


static ngx_int_t
ngx_http_agent_pg_param_fixed(ngx_http_agent_pg_query_t *q, ngx_str_t *v)
{
    u_char  *s, *last, *p, *start;
    size_t   n;

    start = ngx_pnalloc(q->pool, v->len * 3 + 1);
    if (start == NULL) {
        return NGX_ERROR;
    }

    s = v->data;
    last = v->data + v->len;
    p = start;

    while (s < last) {
        n = (*s == '\0') ? 0 : ngx_http_agent_json_utf8_char(s, last - s);

        if (n) {
            p = ngx_cpymem(p, s, n);
            s += n;
            continue;
        }

        *p++ = 0xef; *p++ = 0xbf; *p++ = 0xbd;
        s++;
    }

    *p = '\0';

    q->values[q->nparams] = (char *) start;
    q->lengths[q->nparams++] = p - start;

    return NGX_OK;
}


/* bytes as they are (bytea), not text */

ngx_int_t
ngx_http_agent_pg_param_bytes(ngx_http_agent_pg_query_t *q, u_char *data,
    size_t len)
{
    u_char  *p;

    if (q->nparams == NGX_HTTP_AGENT_PG_PARAMS) {
        return NGX_ERROR;
    }

    p = ngx_pnalloc(q->pool, len + 1);
    if (p == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(p, data, len);

    q->values[q->nparams] = (char *) p;
    q->lengths[q->nparams] = len;
    q->formats[q->nparams++] = 1;

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_pg_param_int(ngx_http_agent_pg_query_t *q, int64_t n)
{
    u_char     buf[NGX_INT64_LEN + 2];
    ngx_str_t  v;

    v.data = buf;
    v.len = ngx_sprintf(buf, "%L", n) - buf;

    return ngx_http_agent_pg_param(q, &v);
}


/* an answer known without the server's, kept as the call's next */

ngx_int_t
ngx_http_agent_pg_keep(ngx_http_agent_store_call_t *sc, ngx_int_t rc)
{
    ngx_http_agent_pg_answer_t  *a;

    if (sc->wake == NULL) {
        return rc;
    }

    a = ngx_http_agent_store_answer_add(sc);
    if (a == NULL) {
        return NGX_ERROR;
    }

    a->rc = rc;

    return rc;
}


/*
 * Two steps of one run next in line (the steps of one pass of the event
 * loop, or those asked for while the connection was busy) are written in
 * one statement: one transaction and one round trip instead of two.
 */

void
ngx_http_agent_pg_pair(ngx_queue_t *queries, ngx_http_agent_pg_query_t *q)
{
    ngx_uint_t                  i;
    ngx_queue_t                *qq;
    ngx_http_agent_pg_query_t  *next;

    if (q->stmt != NGX_HTTP_AGENT_PG_CHECKPOINT_WRITE
        || ngx_queue_empty(queries))
    {
        return;
    }

    qq = ngx_queue_head(queries);
    next = ngx_queue_data(qq, ngx_http_agent_pg_query_t, queue);

    if (next->stmt != NGX_HTTP_AGENT_PG_CHECKPOINT_WRITE
        || next->tx != q->tx)
    {
        return;
    }

    /* the same session and run: the first two parameters */

    for (i = 0; i < 2; i++) {
        if (q->values[i] == NULL || next->values[i] == NULL
            || q->lengths[i] != next->lengths[i]
            || ngx_memcmp(q->values[i], next->values[i], q->lengths[i]) != 0)
        {
            return;
        }
    }

    ngx_queue_remove(qq);

    q->also = next;
    q->stmt = NGX_HTTP_AGENT_PG_CHECKPOINT_PAIR;
}


/* a statement's parameters, a pair's both (see CHECKPOINT_PAIR) */

int
ngx_http_agent_pg_params(ngx_http_agent_pg_query_t *q, char **values,
    int *lengths, int *formats)
{
    int                         n;
    ngx_http_agent_pg_query_t  *next;

    n = q->nparams;

    ngx_memcpy(values, q->values, n * sizeof(char *));
    ngx_memcpy(lengths, q->lengths, n * sizeof(int));
    ngx_memcpy(formats, q->formats, n * sizeof(int));

    next = q->also;

    if (next) {
        ngx_memcpy(values + n, next->values + 2,
                   (next->nparams - 2) * sizeof(char *));
        ngx_memcpy(lengths + n, next->lengths + 2,
                   (next->nparams - 2) * sizeof(int));
        ngx_memcpy(formats + n, next->formats + 2,
                   (next->nparams - 2) * sizeof(int));

        n += next->nparams - 2;
    }

    return n;
}


/* a list's row within the answer budget (ngx_http_agent_store_room) */

ngx_uint_t
ngx_http_agent_pg_room(PGresult *res, int row, size_t *used)
{
    int     i;
    size_t  size;

    size = 0;

    for (i = 0; i < PQnfields(res); i++) {
        size += PQgetlength(res, row, i);
    }

    return ngx_http_agent_store_room(used, size);
}


ngx_int_t
ngx_http_agent_pg_str(ngx_pool_t *pool, PGresult *res, int row, int col,
    ngx_str_t *out)
{
    size_t  len;

    if (PQgetisnull(res, row, col)) {
        ngx_str_null(out);
        return NGX_OK;
    }

    len = PQgetlength(res, row, col);

    out->data = ngx_pnalloc(pool, len + 1);
    if (out->data == NULL) {
        out->len = 0;
        return NGX_ERROR;
    }

    *ngx_cpymem(out->data, PQgetvalue(res, row, col), len) = '\0';
    out->len = len;

    return NGX_OK;
}


int64_t
ngx_http_agent_pg_int(PGresult *res, int row, int col)
{
    if (PQgetisnull(res, row, col)) {
        return 0;
    }

    return strtoll(PQgetvalue(res, row, col), NULL, 10);
}


/* a row read through its table (store_rows.c), from column col on */

ngx_int_t
ngx_http_agent_pg_row(ngx_pool_t *pool, PGresult *res, int row, int col,
    ngx_http_agent_store_table_t *t, void *out)
{
    int        i, n;
    ngx_str_t  cells[NGX_HTTP_AGENT_STORE_COLS];

    n = ngx_min(PQnfields(res) - col, NGX_HTTP_AGENT_STORE_COLS);

    for (i = 0; i < n; i++) {
        if (PQgetisnull(res, row, col + i)) {
            ngx_str_null(&cells[i]);
            continue;
        }

        cells[i].data = (u_char *) PQgetvalue(res, row, col + i);
        cells[i].len = PQgetlength(res, row, col + i);
    }

    return ngx_http_agent_store_row(pool, t, out, cells, n);
}
