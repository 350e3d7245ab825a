
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_pg.h"


/*
 * A search of the items by meaning on PostgreSQL, without pgvector: the
 * server reads the vectors of the items that pass the owner, prefix,
 * filter and expiry tests a page at a time, the newest first (the index
 * items_vectors, each page a range from where the last one stopped, about
 * 4 MB of vectors), and the worker scores each page as it comes
 * (store_near.c), a page's work at a time on the event loop; the bounds
 * are the same as on SQLite.  The best are then read whole by their keys,
 * and answered in their order.
 */


/* a page: about this many bytes of vectors, at most so many rows */
#define NGX_HTTP_AGENT_PG_NEAR_BYTES  (4 * 1024 * 1024)
#define NGX_HTTP_AGENT_PG_NEAR_ROWS   10000


typedef struct {
    ngx_http_agent_item_query_t    q;         /* the call's, in its pool */
    ngx_http_agent_store_rank_t    rank;
    int64_t                        before;    /* the next page's end */
    int64_t                        page;      /* its rows */
    ngx_msec_t                     start;
} ngx_http_agent_pg_near_t;


static ngx_int_t ngx_http_agent_pg_near_ask(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_pg_near_t *nr, ngx_http_agent_pg_query_t **out);
static ngx_int_t ngx_http_agent_pg_near_page(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);
static ngx_int_t ngx_http_agent_pg_near_best(ngx_http_agent_pg_query_t *q,
    ngx_http_agent_pg_near_t *nr);
static ngx_int_t ngx_http_agent_pg_near_rows(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);
static int64_t ngx_http_agent_pg_near_int(PGresult *res, int row, int col);


static ngx_str_t  ngx_http_agent_pg_near_null = ngx_null_string;


ngx_int_t
ngx_http_agent_pg_near(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q)
{
    ngx_http_agent_pg_query_t  *pq;
    ngx_http_agent_pg_near_t   *nr;

    nr = ngx_pcalloc(sc->pool, sizeof(ngx_http_agent_pg_near_t));
    if (nr == NULL) {
        return NGX_ERROR;
    }

    /* the caller's strings live in the request's pool, as sc's does */
    nr->q = *q;
    nr->before = INT64_MAX;
    nr->start = ngx_current_msec;
    nr->page = NGX_HTTP_AGENT_PG_NEAR_BYTES / ngx_max(q->vector.len, 1);
    nr->page = ngx_min(nr->page, NGX_HTTP_AGENT_PG_NEAR_ROWS);

    if (ngx_http_agent_store_near_init(sc->pool, &nr->rank, &nr->q)
        != NGX_OK
        || ngx_http_agent_pg_near_ask(sc, nr, &pq) != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_pg_send(pq, 0);
}


static ngx_int_t
ngx_http_agent_pg_near_ask(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_pg_near_t *nr, ngx_http_agent_pg_query_t **out)
{
    ngx_str_t                  *prefix, *filter;
    ngx_http_agent_pg_query_t  *q;

    q = ngx_http_agent_pg_query(sc, NGX_HTTP_AGENT_PG_ITEM_NEAR,
                                ngx_http_agent_pg_near_page);
    if (q == NULL) {
        return NGX_ERROR;
    }

    prefix = nr->q.prefix.len ? &nr->q.prefix : &ngx_http_agent_pg_near_null;
    filter = nr->q.filter.len ? &nr->q.filter : &ngx_http_agent_pg_near_null;

    if (ngx_http_agent_pg_param(q, &nr->q.owner) != NGX_OK
        || ngx_http_agent_pg_param(q, prefix) != NGX_OK
        || ngx_http_agent_pg_param_int(q, nr->q.now) != NGX_OK
        || ngx_http_agent_pg_param(q, filter) != NGX_OK
        || ngx_http_agent_pg_param_int(q, nr->before) != NGX_OK
        || ngx_http_agent_pg_param_int(q, nr->page) != NGX_OK)
    {
        ngx_destroy_pool(q->pool);
        return NGX_ERROR;
    }

    /* the vectors' bytes as they are, the row numbers as 8 bytes */
    q->binary = 1;
    q->data = nr;
    *out = q;

    return NGX_OK;
}


/* a page scored; the next one asked, or the best read whole */

static ngx_int_t
ngx_http_agent_pg_near_page(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    ngx_http_agent_pg_near_t *nr = q->data;

    int                         i, rows;
    ngx_array_t                *items;
    ngx_http_agent_pg_query_t  *next;

    rows = PQntuples(res);

    for (i = 0; i < rows; i++) {
        nr->before = ngx_http_agent_pg_near_int(res, i, 0);

        ngx_http_agent_store_near_add(&nr->rank, nr->before,
                                      PQgetvalue(res, i, 1),
                                      PQgetlength(res, i, 1));
    }

    if (rows == nr->page
        && nr->rank.scanned < NGX_HTTP_AGENT_STORE_NEAR_SCAN
        && ngx_current_msec - nr->start < NGX_HTTP_AGENT_STORE_NEAR_TIME)
    {
        if (ngx_http_agent_pg_near_ask(q->sc, nr, &next) != NGX_OK) {
            return NGX_ERROR;
        }

        return ngx_http_agent_pg_follow(q, next);
    }

    if (rows == nr->page) {
        ngx_log_error(NGX_LOG_WARN, q->sc->log, 0, "agent: a search by "
                      "meaning stopped after %ui items",
                      nr->rank.scanned);
    }

    if (nr->rank.nbest <= nr->q.offset) {
        return ngx_http_agent_pg_new_rows(q, a, sizeof(ngx_http_agent_item_t),
                                          &items);
    }

    return ngx_http_agent_pg_near_best(q, nr);
}


static ngx_int_t
ngx_http_agent_pg_near_best(ngx_http_agent_pg_query_t *q,
    ngx_http_agent_pg_near_t *nr)
{
    u_char                     *p;
    ngx_str_t                   keys;
    ngx_uint_t                  i;
    ngx_http_agent_pg_query_t  *next;

    next = ngx_http_agent_pg_query(q->sc, NGX_HTTP_AGENT_PG_ITEM_ROWS,
                                   ngx_http_agent_pg_near_rows);
    if (next == NULL) {
        return NGX_ERROR;
    }

    /* an array of bigints, "{1,2,3}" */

    p = ngx_pnalloc(next->pool, 2 + nr->rank.nbest * (NGX_INT64_LEN + 1));
    if (p == NULL) {
        ngx_destroy_pool(next->pool);
        return NGX_ERROR;
    }

    keys.data = p;
    *p++ = '{';

    for (i = nr->q.offset; i < nr->rank.nbest; i++) {
        p = ngx_sprintf(p, "%s%L", i > nr->q.offset ? "," : "",
                        nr->rank.best[i].n);
    }

    *p++ = '}';
    keys.len = p - keys.data;

    /* the owner's: found by the index of the pages */
    if (ngx_http_agent_pg_param(next, &keys) != NGX_OK
        || ngx_http_agent_pg_param(next, &nr->q.owner) != NGX_OK)
    {
        ngx_destroy_pool(next->pool);
        return NGX_ERROR;
    }

    next->data = nr;

    return ngx_http_agent_pg_follow(q, next);
}


/* the rows in the order of their scores, each with its own */

static ngx_int_t
ngx_http_agent_pg_near_rows(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    ngx_http_agent_pg_near_t *nr = q->data;

    int                     row, rows;
    int64_t                 n;
    ngx_uint_t              i;
    ngx_pool_t             *pool;
    ngx_array_t            *items;
    ngx_http_agent_item_t  *item;

    pool = q->sc->pool;
    rows = PQntuples(res);

    if (ngx_http_agent_pg_new_rows(q, a, sizeof(ngx_http_agent_item_t), &items)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    for (i = nr->q.offset; i < nr->rank.nbest; i++) {

        /* a few rows: found by a look at each */
        for (row = 0; row < rows; row++) {
            n = ngx_http_agent_pg_int(res, row, 7);
            if (n == nr->rank.best[i].n) {
                break;
            }
        }

        if (row == rows) {
            /* deleted since its page: left out */
            continue;
        }

        item = ngx_array_push(items);

        if (item == NULL
            || ngx_http_agent_pg_row(pool, res, row, 0,
                                     &ngx_http_agent_store_item_cols, item)
               != NGX_OK)
        {
            return NGX_ERROR;
        }

        item->score = nr->rank.best[i].score;
    }

    return NGX_OK;
}


/* a bigint of a binary result: 8 bytes, the network's order */

static int64_t
ngx_http_agent_pg_near_int(PGresult *res, int row, int col)
{
    u_char    *p;
    uint64_t   n;
    int        i;

    p = (u_char *) PQgetvalue(res, row, col);
    n = 0;

    for (i = 0; i < 8 && i < PQgetlength(res, row, col); i++) {
        n = (n << 8) | p[i];
    }

    return (int64_t) n;
}
