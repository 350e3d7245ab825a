
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <ngx_md5.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_ops.h"
#include "ngx_http_agent_util.h"


/*
 * Budgets and rate limits, nginx style: a shared memory zone per
 * agent_limit_zone, a red-black tree of keys (an owner, say) as
 * limit_req keeps, each with the tokens and turns of its current window
 * and the turns it runs now, and the dollars of its window.  A turn is
 * checked before it starts (429 and Retry-After) and released at its
 * end; each model call reserves its max_tokens (or
 * NGX_HTTP_AGENT_LIMIT_ESTIMATE) before it starts, and what they and its
 * input may cost, and is refused while the spent and reserved tokens or
 * dollars cover a budget, then settles what it spent: turns at once
 * overspend a budget by at most one call's reservation.  The zone's mutex
 * is held for a lookup and a few additions, as limit_req's.  Windows are
 * fixed: the period's multiples of the clock.  A key longer than
 * NGX_HTTP_AGENT_LIMIT_KEY is kept as its MD5; a full zone evicts the
 * least recently used keys that run nothing.
 *
 * A run without a client (a cron's tick, a run taken over) has no headers,
 * cookies or arguments: its keys are those of the client's request that
 * made it (the run, or the cron), kept with it in the store
 * (ngx_http_agent_limit_keys), not what its empty request would give.
 */


#define NGX_HTTP_AGENT_LIMIT_KEY       64


typedef struct {
    ngx_http_agent_limit_t        *limit;
    ngx_http_agent_limit_node_t   *node;
    int64_t                        reserved;  /* this turn's, not settled */
    int64_t                        reserved_cost;
} ngx_http_agent_limit_held_t;


static ngx_http_agent_limit_node_t *ngx_http_agent_limit_lookup(
    ngx_http_agent_limit_ctx_t *ctx, ngx_str_t *key, uint32_t hash);
static void ngx_http_agent_limit_windows(ngx_http_agent_limit_t *limit,
    ngx_http_agent_limit_node_t *node);
static void ngx_http_agent_limit_unreserve(ngx_http_agent_limit_held_t *e,
    int64_t n, int64_t cost);
static ngx_int_t ngx_http_agent_limit_refuse(ngx_http_request_t *r,
    ngx_str_t *why, ngx_int_t status, const char *fmt, ...);
static ngx_int_t ngx_http_agent_limit_digest(ngx_pool_t *pool,
    ngx_str_t *key);
static yajl_val ngx_http_agent_limit_kept(ngx_http_request_t *r);
static ngx_int_t ngx_http_agent_limit_key_get(ngx_http_request_t *r,
    ngx_http_agent_limit_zone_t *zone, yajl_val kept, ngx_str_t *key);


/*
 * Before a turn: each limit's key counted in.  NGX_OK: *held has what to
 * charge and release; otherwise the answer (429 with Retry-After) is sent.
 */

ngx_int_t
ngx_http_agent_limit_acquire(ngx_http_request_t *r, ngx_array_t *limits,
    ngx_http_agent_limits_t **held, ngx_str_t *why)
{
    time_t                        now, retry;
    uint32_t                      hash;
    yajl_val                      kept;
    ngx_str_t                     key;
    ngx_uint_t                    i;
    const char                   *what;
    ngx_table_elt_t              *h;
    ngx_http_agent_limit_t       *limit;
    ngx_http_agent_limits_t      *hl;
    ngx_http_agent_limit_ctx_t   *ctx;
    ngx_http_agent_limit_node_t  *node;
    ngx_http_agent_limit_held_t  *e;

    *held = NULL;

    if (limits == NULL) {
        return NGX_OK;
    }

    hl = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_limits_t));
    if (hl == NULL
        || ngx_array_init(&hl->held, r->pool, limits->nelts,
                          sizeof(ngx_http_agent_limit_held_t))
           != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    limit = limits->elts;
    now = ngx_time();
    kept = ngx_http_agent_limit_kept(r);

    for (i = 0; i < limits->nelts; i++) {
        if (ngx_http_agent_limit_key_get(r, limit[i].zone, kept, &key)
            != NGX_OK)
        {
            goto failed;
        }

        if (key.len == 0) {
            /* no key, no limit: as limit_req */
            continue;
        }

        ctx = limit[i].zone->shm_zone->data;
        hash = ngx_crc32_short(key.data, key.len);

        ngx_shmtx_lock(&ctx->shpool->mutex);

        node = ngx_http_agent_limit_lookup(ctx, &key, hash);

        if (node == NULL) {
            ngx_shmtx_unlock(&ctx->shpool->mutex);
            ngx_http_agent_limit_release(hl);

            return ngx_http_agent_limit_refuse(r, why,
                                        NGX_HTTP_SERVICE_UNAVAILABLE,
                                        "the limit zone \"%V\" is full",
                                        &limit[i].zone->name);
        }

        ngx_http_agent_limit_windows(&limit[i], node);

        what = NULL;
        retry = 1;

        if (limit[i].concurrent && node->concurrent >= limit[i].concurrent) {
            what = "turns at once";

        } else if (limit[i].turns_period
                   && node->turns >= limit[i].turns)
        {
            what = "turns";
            retry = (node->turns_window + 1) * limit[i].turns_period - now;

        } else if (limit[i].tokens_period
                   && node->tokens + node->reserved >= limit[i].tokens)
        {
            what = "tokens";
            retry = (node->tokens_window + 1) * limit[i].tokens_period - now;

        } else if (limit[i].cost_period
                   && node->cost + node->cost_reserved >= limit[i].cost)
        {
            what = "cost in dollars";
            retry = (node->cost_window + 1) * limit[i].cost_period - now;
        }

        if (what == NULL) {
            node->turns++;
            node->concurrent++;
        }

        ngx_shmtx_unlock(&ctx->shpool->mutex);

        if (what) {
            ngx_http_agent_limit_release(hl);

            h = ngx_list_push(&r->headers_out.headers);
            if (h == NULL) {
                return NGX_HTTP_INTERNAL_SERVER_ERROR;
            }

            h->hash = 1;
            ngx_str_set(&h->key, "Retry-After");
            h->value.data = ngx_pnalloc(r->pool, NGX_TIME_T_LEN);
            if (h->value.data == NULL) {
                return NGX_HTTP_INTERNAL_SERVER_ERROR;
            }

            h->value.len = ngx_sprintf(h->value.data, "%T",
                                       ngx_max(retry, 1))
                           - h->value.data;

            return ngx_http_agent_limit_refuse(r, why,
                                        NGX_HTTP_TOO_MANY_REQUESTS,
                                        "the limit of %s of \"%V\" is "
                                        "reached (agent_limit zone=%V); "
                                        "try again in %T s", what, &key,
                                        &limit[i].zone->name,
                                        ngx_max(retry, 1));
        }

        e = ngx_array_push(&hl->held);
        if (e == NULL) {
            goto failed;
        }

        e->limit = &limit[i];
        e->node = node;
        e->reserved = 0;
        e->reserved_cost = 0;
    }

    *held = hl;

    return NGX_OK;

failed:

    ngx_http_agent_limit_release(hl);

    return NGX_HTTP_INTERNAL_SERVER_ERROR;
}


/*
 * The keys of the location's zones for a run or a cron made now, to keep
 * with it: a JSON object of zone names (a zone once, whatever its
 * limits), or empty without agent_limit.  An empty key is kept as one:
 * the runs of a client's request that had none are not limited either.
 */

ngx_int_t
ngx_http_agent_limit_keys(ngx_http_request_t *r, ngx_array_t *limits,
    ngx_str_t *keys)
{
    yajl_val                 kept;
    ngx_str_t                key;
    ngx_uint_t               i, k;
    ngx_http_agent_json_t   *j;
    ngx_http_agent_limit_t  *limit;

    ngx_str_null(keys);

    if (limits == NULL) {
        return NGX_OK;
    }

    kept = ngx_http_agent_limit_kept(r);

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }


    limit = limits->elts;

    for (i = 0; i < limits->nelts; i++) {

        for (k = 0; k < i && limit[k].zone != limit[i].zone; k++) {
            /* void */
        }

        if (k < i) {
            continue;
        }

        if (ngx_http_agent_limit_key_get(r, limit[i].zone, kept, &key)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        ngx_http_agent_json_str(j, &limit[i].zone->name);
        ngx_http_agent_json_str(j, &key);
    }

    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, keys);
}


/* a run without a client: the keys kept with it, or NULL */

static yajl_val
ngx_http_agent_limit_kept(ngx_http_request_t *r)
{
    yajl_val               v;
    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    if (ctx == NULL || !ctx->headless || ctx->limit_keys.len == 0) {
        return NULL;
    }

    v = ngx_http_agent_json_parse(r->pool, ctx->limit_keys.data,
                                  ctx->limit_keys.len, NULL);

    return (v && YAJL_IS_OBJECT(v)) ? v : NULL;
}


/*
 * A zone's key: the one kept, or the request's; a zone with none kept (a
 * run or a cron of an earlier version, a zone added since) is evaluated
 * on the request, as before.  A key too long to keep, or not UTF-8 (kept
 * in JSON), is its MD5.
 */

static ngx_int_t
ngx_http_agent_limit_key_get(ngx_http_request_t *r,
    ngx_http_agent_limit_zone_t *zone, yajl_val kept, ngx_str_t *key)
{
    yajl_val  v;

    /* the zone's name is the configuration's word: NUL-terminated */
    v = kept ? ngx_http_agent_json_get(kept, (char *) zone->name.data)
             : NULL;

    if (v && YAJL_IS_STRING(v)) {
        key->data = (u_char *) YAJL_GET_STRING(v);
        key->len = ngx_strlen(key->data);

    } else if (ngx_http_complex_value(r, &zone->key, key) != NGX_OK) {
        return NGX_ERROR;
    }

    if (key->len > NGX_HTTP_AGENT_LIMIT_KEY
        || !ngx_http_agent_json_utf8_valid(key->data, key->len))
    {
        return ngx_http_agent_limit_digest(r->pool, key);
    }

    return NGX_OK;
}


/*
 * Before a model call: want tokens and cost nanodollars reserved in every
 * budget; NGX_DECLINED when a budget is spent, or reserved whole by the
 * calls running now
 */

ngx_int_t
ngx_http_agent_limit_reserve(ngx_http_agent_limits_t *hl, int64_t *want,
    int64_t *cost)
{
    ngx_uint_t                    i, k, tokens, dollars;
    ngx_http_agent_limit_t       *limit;
    ngx_http_agent_limit_ctx_t   *ctx;
    ngx_http_agent_limit_node_t  *node;
    ngx_http_agent_limit_held_t  *e;

    if (hl == NULL || hl->released) {
        *want = 0;
        *cost = 0;
        return NGX_OK;
    }

    if (*want <= 0) {
        *want = NGX_HTTP_AGENT_LIMIT_ESTIMATE;
    }

    e = hl->held.elts;

    for (i = 0; i < hl->held.nelts; i++) {
        limit = e[i].limit;
        node = e[i].node;

        if (limit->tokens_period == 0 && limit->cost_period == 0) {
            continue;
        }

        ctx = limit->zone->shm_zone->data;

        ngx_shmtx_lock(&ctx->shpool->mutex);

        ngx_http_agent_limit_windows(limit, node);

        tokens = limit->tokens_period
                 && node->tokens + node->reserved >= limit->tokens;
        dollars = limit->cost_period
                  && node->cost + node->cost_reserved >= limit->cost;

        if (tokens || dollars) {
            ngx_shmtx_unlock(&ctx->shpool->mutex);

            /* the reservations made above are given back */

            for (k = 0; k < i; k++) {
                ngx_http_agent_limit_unreserve(&e[k], *want, *cost);
            }

            hl->over = 1;
            hl->cost = !tokens;

            return NGX_DECLINED;
        }

        if (limit->tokens_period) {
            node->reserved += *want;
            e[i].reserved += *want;
        }

        if (limit->cost_period) {
            node->cost_reserved += *cost;
            e[i].reserved_cost += *cost;
        }

        ngx_shmtx_unlock(&ctx->shpool->mutex);
    }

    return NGX_OK;
}


/*
 * A model call's tokens and cost, as it ends, for what it reserved: over
 * marks a budget spent
 */

void
ngx_http_agent_limit_charge(ngx_http_agent_limits_t *hl, int64_t tokens,
    int64_t cost, int64_t reserved, int64_t reserved_cost)
{
    int64_t                       n, c;
    ngx_uint_t                    i;
    ngx_http_agent_limit_t       *limit;
    ngx_http_agent_limit_ctx_t   *ctx;
    ngx_http_agent_limit_node_t  *node;
    ngx_http_agent_limit_held_t  *e;

    if (hl == NULL || hl->released) {
        return;
    }

    e = hl->held.elts;

    for (i = 0; i < hl->held.nelts; i++) {
        limit = e[i].limit;
        node = e[i].node;
        ctx = limit->zone->shm_zone->data;

        /* settled at once: no other call sees the tokens neither way */

        n = ngx_min(reserved, e[i].reserved);
        e[i].reserved -= n;
        c = ngx_min(reserved_cost, e[i].reserved_cost);
        e[i].reserved_cost -= c;

        ngx_shmtx_lock(&ctx->shpool->mutex);

        node->reserved = ngx_max(node->reserved - n, 0);
        node->cost_reserved = ngx_max(node->cost_reserved - c, 0);

        ngx_http_agent_limit_windows(limit, node);
        node->tokens += tokens;
        node->cost += cost;

        if (limit->tokens_period && node->tokens >= limit->tokens) {
            hl->over = 1;

        } else if (limit->cost_period && node->cost >= limit->cost) {
            hl->over = 1;
            hl->cost = 1;
        }

        ngx_shmtx_unlock(&ctx->shpool->mutex);
    }
}


static void
ngx_http_agent_limit_unreserve(ngx_http_agent_limit_held_t *e, int64_t n,
    int64_t cost)
{
    ngx_http_agent_limit_ctx_t  *ctx;

    n = ngx_min(n, e->reserved);
    cost = ngx_min(cost, e->reserved_cost);

    if (n == 0 && cost == 0) {
        return;
    }

    e->reserved -= n;
    e->reserved_cost -= cost;

    ctx = e->limit->zone->shm_zone->data;

    ngx_shmtx_lock(&ctx->shpool->mutex);
    e->node->reserved = ngx_max(e->node->reserved - n, 0);
    e->node->cost_reserved = ngx_max(e->node->cost_reserved - cost, 0);
    ngx_shmtx_unlock(&ctx->shpool->mutex);
}


/* a key too long to keep: its MD5, in hex */

static ngx_int_t
ngx_http_agent_limit_digest(ngx_pool_t *pool, ngx_str_t *key)
{
    u_char     *p, digest[16];
    ngx_md5_t   md5;

    ngx_md5_init(&md5);
    ngx_md5_update(&md5, key->data, key->len);
    ngx_md5_final(digest, &md5);

    p = ngx_pnalloc(pool, 1 + 32);
    if (p == NULL) {
        return NGX_ERROR;
    }

    key->data = p;
    *p++ = '#';
    p = ngx_hex_dump(p, digest, 16);
    key->len = p - key->data;

    return NGX_OK;
}


/* the turn's end: its place among the turns at once given back, once */

void
ngx_http_agent_limit_release(ngx_http_agent_limits_t *hl)
{
    ngx_uint_t                    i;
    ngx_http_agent_limit_ctx_t   *ctx;
    ngx_http_agent_limit_held_t  *e;

    if (hl == NULL || hl->released) {
        return;
    }

    hl->released = 1;
    e = hl->held.elts;

    for (i = 0; i < hl->held.nelts; i++) {

        /* a call cut (the client gone, the turn's timeout) settles here */

        ngx_http_agent_limit_unreserve(&e[i], e[i].reserved,
                                       e[i].reserved_cost);

        ctx = e[i].limit->zone->shm_zone->data;

        ngx_shmtx_lock(&ctx->shpool->mutex);

        if (e[i].node->concurrent) {
            e[i].node->concurrent--;
        }

        ngx_shmtx_unlock(&ctx->shpool->mutex);
    }
}


/* the windows a node's counts are of: a new one starts at zero */

static void
ngx_http_agent_limit_windows(ngx_http_agent_limit_t *limit,
    ngx_http_agent_limit_node_t *node)
{
    time_t  now, w;

    now = ngx_time();

    if (limit->tokens_period) {
        w = now / limit->tokens_period;

        if (w != node->tokens_window) {
            node->tokens_window = w;
            node->tokens = 0;
        }
    }

    if (limit->cost_period) {
        w = now / limit->cost_period;

        if (w != node->cost_window) {
            node->cost_window = w;
            node->cost = 0;
        }
    }

    if (limit->turns_period) {
        w = now / limit->turns_period;

        if (w != node->turns_window) {
            node->turns_window = w;
            node->turns = 0;
        }
    }
}


/* under the zone's mutex: the key's node, made if new (old ones evicted) */

static ngx_http_agent_limit_node_t *
ngx_http_agent_limit_lookup(ngx_http_agent_limit_ctx_t *ctx, ngx_str_t *key,
    uint32_t hash)
{
    size_t                        size;
    ngx_int_t                     rc;
    ngx_uint_t                    n;
    ngx_queue_t                  *q, *prev;
    ngx_rbtree_node_t            *node, *sentinel;
    ngx_http_agent_limit_node_t  *ln;

    node = ctx->sh->rbtree.root;
    sentinel = ctx->sh->rbtree.sentinel;

    while (node != sentinel) {

        if (hash != node->key) {
            node = (hash < node->key) ? node->left : node->right;
            continue;
        }

        ln = (ngx_http_agent_limit_node_t *) &node->color;

        rc = ngx_memn2cmp(key->data, ln->data, key->len, (size_t) ln->len);

        if (rc == 0) {
            ngx_queue_remove(&ln->queue);
            ngx_queue_insert_head(&ctx->sh->queue, &ln->queue);
            return ln;
        }

        node = (rc < 0) ? node->left : node->right;
    }

    size = offsetof(ngx_rbtree_node_t, color)
           + offsetof(ngx_http_agent_limit_node_t, data) + key->len;

    node = ngx_slab_alloc_locked(ctx->shpool, size);

    q = ngx_queue_last(&ctx->sh->queue);

    for (n = 0; node == NULL && n < 64; n++) {

        /*
         * full: the least recently used keys that run nothing go; a key
         * that runs a turn is passed over, not a wall for every new key
         */

        if (q == ngx_queue_sentinel(&ctx->sh->queue)) {
            break;
        }

        ln = ngx_queue_data(q, ngx_http_agent_limit_node_t, queue);
        prev = ngx_queue_prev(q);

        if (ln->concurrent || ln->reserved || ln->cost_reserved) {
            q = prev;
            continue;
        }

        ngx_queue_remove(q);
        q = prev;
        node = (ngx_rbtree_node_t *)
                   ((u_char *) ln - offsetof(ngx_rbtree_node_t, color));
        ngx_rbtree_delete(&ctx->sh->rbtree, node);
        ngx_slab_free_locked(ctx->shpool, node);

        node = ngx_slab_alloc_locked(ctx->shpool, size);
    }

    if (node == NULL) {
        return NULL;
    }

    node->key = hash;

    ln = (ngx_http_agent_limit_node_t *) &node->color;
    ngx_memzero(&ln->queue, offsetof(ngx_http_agent_limit_node_t, data)
                            - offsetof(ngx_http_agent_limit_node_t, queue));
    ln->len = (u_short) key->len;
    ngx_memcpy(ln->data, key->data, key->len);

    ngx_rbtree_insert(&ctx->sh->rbtree, node);
    ngx_queue_insert_head(&ctx->sh->queue, &ln->queue);

    return ln;
}


/* a refusal: the caller answers with its status and this sentence */

static ngx_int_t
ngx_http_agent_limit_refuse(ngx_http_request_t *r, ngx_str_t *why,
    ngx_int_t status, const char *fmt, ...)
{
    u_char                *p;
    va_list                args;
    ngx_http_agent_ctx_t  *ctx;

    why->data = ngx_pnalloc(r->pool, NGX_MAX_ERROR_STR);
    if (why->data == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    va_start(args, fmt);
    p = ngx_vslprintf(why->data, why->data + NGX_MAX_ERROR_STR, fmt, args);
    va_end(args);

    why->len = p - why->data;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    if (ctx && ctx->headless) {
        /* no client to tell (a cron's tick, a take-over): the log is */
        ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                      "agent: a run without a client is refused: %V", why);
    }

    return status;
}
