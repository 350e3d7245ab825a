
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <math.h>
#include <time.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"


/* a score and its row ranked before a kept one */
#define ngx_http_agent_store_near_before(score, row, b)                       \
    ((score) > (b)->score || ((score) == (b)->score && (row) > (b)->n))


/*
 * A search by meaning without a vector index (no pgvector, no sqlite-vec
 * in Debian): the back end reads the items that pass the owner, prefix,
 * filter and expiry tests, the newest first, at most
 * NGX_HTTP_AGENT_STORE_NEAR_SCAN of them and for at most
 * NGX_HTTP_AGENT_STORE_NEAR_TIME ms, and each item's float32 vector is
 * scored here by its cosine similarity with the query's; the best k are
 * kept, sorted, in an array, so memory stays k rows whatever is read.
 * The functions use no nginx event, log or shared state: SQLite calls
 * them on a thread of the pool.
 */


ngx_int_t
ngx_http_agent_store_near_init(ngx_pool_t *pool,
    ngx_http_agent_store_rank_t *rk, ngx_http_agent_item_query_t *q)
{
    size_t  i;
    double  sum;

    ngx_memzero(rk, sizeof(ngx_http_agent_store_rank_t));

    rk->query = (float *) q->vector.data;
    rk->dims = q->vector.len / sizeof(float);
    rk->k = ngx_min(q->offset + q->limit, NGX_HTTP_AGENT_STORE_NEAR_TOP);

    sum = 0;

    for (i = 0; i < rk->dims; i++) {
        sum += (double) rk->query[i] * rk->query[i];
    }

    rk->norm = sqrt(sum);

    rk->best = ngx_palloc(pool, (rk->k + 1)
                                * sizeof(ngx_http_agent_store_near_t));

    return rk->best ? NGX_OK : NGX_ERROR;
}


/* row n's vector scored, kept if among the best k */

void
ngx_http_agent_store_near_add(ngx_http_agent_store_rank_t *rk, int64_t n,
    const void *blob, size_t len)
{
    float        x;
    double       dot, sum, score;
    size_t       i;
    ngx_uint_t   at;
    const u_char *p;

    rk->scanned++;

    /* another model's, or of other dims: not comparable */
    if (len != rk->dims * sizeof(float) || rk->k == 0) {
        return;
    }

    p = blob;
    dot = 0;
    sum = 0;

    for (i = 0; i < rk->dims; i++) {
        /* a blob has no alignment to rely on */
        ngx_memcpy(&x, p + i * sizeof(float), sizeof(float));
        dot += (double) x * rk->query[i];
        sum += (double) x * x;
    }

    score = (sum > 0 && rk->norm > 0) ? dot / (sqrt(sum) * rk->norm) : 0;

    /* among equal scores the newest (the higher row) first */

    if (rk->nbest == rk->k
        && !ngx_http_agent_store_near_before(score, n, &rk->best[rk->k - 1]))
    {
        return;
    }

    at = rk->nbest < rk->k ? rk->nbest++ : rk->k - 1;

    while (at > 0
           && ngx_http_agent_store_near_before(score, n, &rk->best[at - 1]))
    {
        rk->best[at] = rk->best[at - 1];
        at--;
    }

    rk->best[at].n = n;
    rk->best[at].score = score;
}


/* a clock a pool's thread may read: nginx's cached time is the loop's */

ngx_msec_t
ngx_http_agent_store_near_clock(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);

    return (ngx_msec_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
