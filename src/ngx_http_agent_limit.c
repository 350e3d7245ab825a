
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <ngx_md5.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_reply.h"
#include "ngx_http_agent_limit.h"


/*
 * Budgets and rate limits, nginx style: a shared memory zone per
 * agent_limit_zone, a red-black tree of keys (an owner, say) as
 * limit_req keeps, each with the tokens and turns of its current window
 * and the turns it runs now.  A turn is checked before it starts (429 and
 * Retry-After) and released at its end; each model call reserves its
 * max_tokens (or NGX_HTTP_AGENT_LIMIT_ESTIMATE) before it starts, and is
 * refused while the spent and reserved tokens cover the budget, then
 * settles what it spent: turns at once overspend a budget by at most one
 * call's tokens.  The zone's mutex is held for a lookup and a few
 * additions, as limit_req's.  Windows are fixed: the period's multiples
 * of the clock.  A key longer than NGX_HTTP_AGENT_LIMIT_KEY is kept as
 * its MD5; a full zone evicts the least recently used keys that run
 * nothing.
 */


#define NGX_HTTP_AGENT_LIMIT_ESTIMATE  1024
#define NGX_HTTP_AGENT_LIMIT_KEY       64


typedef struct {
    u_char                       color;
    u_char                       dummy;
    u_short                      len;
    ngx_queue_t                  queue;
    time_t                       tokens_window;
    time_t                       turns_window;
    int64_t                      tokens;
    int64_t                      reserved;   /* by model calls running */
    ngx_uint_t                   turns;
    ngx_uint_t                   concurrent;
    u_char                       data[1];
} ngx_http_agent_limit_node_t;


typedef struct {
    ngx_rbtree_t                 rbtree;
    ngx_rbtree_node_t            sentinel;
    ngx_queue_t                  queue;      /* least recently used last */
} ngx_http_agent_limit_shctx_t;


typedef struct {
    ngx_http_agent_limit_shctx_t  *sh;
    ngx_slab_pool_t               *shpool;
} ngx_http_agent_limit_ctx_t;


typedef struct {
    ngx_http_agent_limit_t        *limit;
    ngx_http_agent_limit_node_t   *node;
    int64_t                        reserved;  /* this turn's, not settled */
} ngx_http_agent_limit_held_t;


static ngx_int_t ngx_http_agent_limit_init_zone(ngx_shm_zone_t *shm_zone,
    void *data);
static ngx_http_agent_limit_node_t *ngx_http_agent_limit_lookup(
    ngx_http_agent_limit_ctx_t *ctx, ngx_str_t *key, uint32_t hash);
static void ngx_http_agent_limit_windows(ngx_http_agent_limit_t *limit,
    ngx_http_agent_limit_node_t *node);
static void ngx_http_agent_limit_unreserve(ngx_http_agent_limit_held_t *e,
    int64_t n);
static ngx_int_t ngx_http_agent_limit_digest(ngx_pool_t *pool,
    ngx_str_t *key);
static void ngx_http_agent_limit_rbtree_insert_value(ngx_rbtree_node_t *temp,
    ngx_rbtree_node_t *node, ngx_rbtree_node_t *sentinel);


char *
ngx_http_agent_limit_zone(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_main_conf_t *amcf = conf;

    ssize_t                            size;
    ngx_str_t                         *value, s;
    ngx_uint_t                         i;
    ngx_http_agent_limit_ctx_t        *ctx;
    ngx_http_agent_limit_zone_t       *z, **zp;
    ngx_http_compile_complex_value_t   ccv;

    value = cf->args->elts;

    z = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_limit_zone_t));
    ctx = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_limit_ctx_t));
    if (z == NULL || ctx == NULL) {
        return NGX_CONF_ERROR;
    }

    z->name = value[1];
    size = 0;

    for (i = 2; i < cf->args->nelts; i++) {

        if (ngx_strncmp(value[i].data, "key=", 4) == 0) {
            s.data = value[i].data + 4;
            s.len = value[i].len - 4;

            ngx_memzero(&ccv, sizeof(ngx_http_compile_complex_value_t));
            ccv.cf = cf;
            ccv.value = &s;
            ccv.complex_value = &z->key;

            if (ngx_http_compile_complex_value(&ccv) != NGX_OK) {
                return NGX_CONF_ERROR;
            }

            continue;
        }

        if (ngx_strncmp(value[i].data, "size=", 5) == 0) {
            s.data = value[i].data + 5;
            s.len = value[i].len - 5;

            size = ngx_parse_size(&s);

            if (size == NGX_ERROR || size < (ssize_t) (8 * ngx_pagesize)) {
                return "has a size below 8 pages";
            }

            continue;
        }

        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "invalid parameter \"%V\"",
                           &value[i]);
        return NGX_CONF_ERROR;
    }

    if (z->key.value.len == 0 || size == 0) {
        return "needs key= and size=";
    }

    if (amcf->limit_zones == NULL) {
        amcf->limit_zones = ngx_array_create(cf->pool, 2, sizeof(void *));
        if (amcf->limit_zones == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    zp = amcf->limit_zones->elts;

    for (i = 0; i < amcf->limit_zones->nelts; i++) {
        if (zp[i]->name.len == z->name.len
            && ngx_strncmp(zp[i]->name.data, z->name.data, z->name.len) == 0)
        {
            return "is duplicate";
        }
    }

    s.len = sizeof("agent_limit_") - 1 + z->name.len;
    s.data = ngx_pnalloc(cf->pool, s.len);
    if (s.data == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_sprintf(s.data, "agent_limit_%V", &z->name);

    z->shm_zone = ngx_shared_memory_add(cf, &s, size, &ngx_http_agent_module);
    if (z->shm_zone == NULL) {
        return NGX_CONF_ERROR;
    }

    z->shm_zone->init = ngx_http_agent_limit_init_zone;
    z->shm_zone->data = ctx;

    zp = ngx_array_push(amcf->limit_zones);
    if (zp == NULL) {
        return NGX_CONF_ERROR;
    }

    *zp = z;

    return NGX_CONF_OK;
}


/*
 * N/PERIOD: a count and a window (s, m, h, d, w as nginx's times); a
 * bare unit is one of it, limit_req's habit: 2/m is 2/1m
 */

static ngx_int_t
ngx_http_agent_limit_rate(ngx_str_t *s, int64_t *n, time_t *period)
{
    u_char     *slash, one[8];
    ngx_str_t   p;

    slash = ngx_strlchr(s->data, s->data + s->len, '/');
    if (slash == NULL) {
        return NGX_ERROR;
    }

    *n = ngx_atoof(s->data, slash - s->data);

    p.data = slash + 1;
    p.len = s->data + s->len - p.data;

    if (p.len && p.len < sizeof(one) && (p.data[0] < '0' || p.data[0] > '9'))
    {
        one[0] = '1';
        ngx_memcpy(one + 1, p.data, p.len);
        p.data = one;
        p.len++;
    }

    *period = ngx_parse_time(&p, 1);

    return (*n < 0 || *period == (time_t) NGX_ERROR || *period == 0)
           ? NGX_ERROR : NGX_OK;
}


char *
ngx_http_agent_limit(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_loc_conf_t *alcf = conf;

    int64_t                        n;
    ngx_str_t                     *value, s;
    ngx_uint_t                     i;
    ngx_http_agent_limit_t        *limit;
    ngx_http_agent_limit_zone_t  **zp;
    ngx_http_agent_main_conf_t    *amcf;

    amcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_agent_module);
    value = cf->args->elts;

    if (alcf->limits == NGX_CONF_UNSET_PTR) {
        alcf->limits = ngx_array_create(cf->pool, 2,
                                        sizeof(ngx_http_agent_limit_t));
        if (alcf->limits == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    limit = ngx_array_push(alcf->limits);
    if (limit == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_memzero(limit, sizeof(ngx_http_agent_limit_t));

    for (i = 1; i < cf->args->nelts; i++) {
        s = value[i];

        if (ngx_strncmp(s.data, "zone=", 5) == 0) {
            s.data += 5;
            s.len -= 5;

            zp = amcf->limit_zones ? amcf->limit_zones->elts : NULL;

            for (n = 0; zp && n < (int64_t) amcf->limit_zones->nelts; n++) {
                if (zp[n]->name.len == s.len
                    && ngx_strncmp(zp[n]->name.data, s.data, s.len) == 0)
                {
                    limit->zone = zp[n];
                }
            }

            if (limit->zone == NULL) {
                ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "unknown zone "
                                   "\"%V\": declare it with "
                                   "agent_limit_zone first", &s);
                return NGX_CONF_ERROR;
            }

            continue;
        }

        if (ngx_strncmp(s.data, "tokens=", 7) == 0) {
            s.data += 7;
            s.len -= 7;

            if (ngx_http_agent_limit_rate(&s, &limit->tokens,
                                          &limit->tokens_period)
                != NGX_OK)
            {
                return "has an invalid tokens=N/PERIOD";
            }

            continue;
        }

        if (ngx_strncmp(s.data, "turns=", 6) == 0) {
            s.data += 6;
            s.len -= 6;

            if (ngx_http_agent_limit_rate(&s, &n, &limit->turns_period)
                != NGX_OK)
            {
                return "has an invalid turns=N/PERIOD";
            }

            limit->turns = (ngx_uint_t) n;
            continue;
        }

        if (ngx_strncmp(s.data, "concurrent=", 11) == 0) {
            n = ngx_atoi(s.data + 11, s.len - 11);

            if (n <= 0) {
                return "has an invalid concurrent=N";
            }

            limit->concurrent = (ngx_uint_t) n;
            continue;
        }

        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "invalid parameter \"%V\"",
                           &value[i]);
        return NGX_CONF_ERROR;
    }

    if (limit->zone == NULL) {
        return "needs zone=";
    }

    if (limit->tokens_period == 0 && limit->turns_period == 0
        && limit->concurrent == 0)
    {
        return "needs tokens=, turns= or concurrent=";
    }

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_agent_limit_init_zone(ngx_shm_zone_t *shm_zone, void *data)
{
    ngx_http_agent_limit_ctx_t  *octx = data;

    size_t                       len;
    ngx_http_agent_limit_ctx_t  *ctx;

    ctx = shm_zone->data;

    if (octx) {
        /* a reload: the budgets go on */
        ctx->sh = octx->sh;
        ctx->shpool = octx->shpool;
        return NGX_OK;
    }

    ctx->shpool = (ngx_slab_pool_t *) shm_zone->shm.addr;

    if (shm_zone->shm.exists) {
        ctx->sh = ctx->shpool->data;
        return NGX_OK;
    }

    ctx->sh = ngx_slab_alloc(ctx->shpool,
                             sizeof(ngx_http_agent_limit_shctx_t));
    if (ctx->sh == NULL) {
        return NGX_ERROR;
    }

    ctx->shpool->data = ctx->sh;

    ngx_rbtree_init(&ctx->sh->rbtree, &ctx->sh->sentinel,
                    ngx_http_agent_limit_rbtree_insert_value);
    ngx_queue_init(&ctx->sh->queue);

    len = sizeof(" in agent_limit_zone \"\"") + shm_zone->shm.name.len;

    ctx->shpool->log_ctx = ngx_slab_alloc(ctx->shpool, len);
    if (ctx->shpool->log_ctx == NULL) {
        return NGX_ERROR;
    }

    ngx_sprintf(ctx->shpool->log_ctx, " in agent_limit_zone \"%V\"%Z",
                &shm_zone->shm.name);

    ctx->shpool->log_nomem = 0;

    return NGX_OK;
}


/*
 * Before a turn: each limit's key counted in.  NGX_OK: *held has what to
 * charge and release; otherwise the answer (429 with Retry-After) is sent.
 */

ngx_int_t
ngx_http_agent_limit_acquire(ngx_http_request_t *r, ngx_array_t *limits,
    ngx_http_agent_limits_t **held)
{
    time_t                        now, retry;
    uint32_t                      hash;
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

    for (i = 0; i < limits->nelts; i++) {
        if (ngx_http_complex_value(r, &limit[i].zone->key, &key) != NGX_OK) {
            goto failed;
        }

        if (key.len == 0) {
            /* no key, no limit: as limit_req */
            continue;
        }

        if (key.len > NGX_HTTP_AGENT_LIMIT_KEY
            && ngx_http_agent_limit_digest(r->pool, &key) != NGX_OK)
        {
            goto failed;
        }

        ctx = limit[i].zone->shm_zone->data;
        hash = ngx_crc32_short(key.data, key.len);

        ngx_shmtx_lock(&ctx->shpool->mutex);

        node = ngx_http_agent_limit_lookup(ctx, &key, hash);

        if (node == NULL) {
            ngx_shmtx_unlock(&ctx->shpool->mutex);
            ngx_http_agent_limit_release(hl);

            return ngx_http_agent_error(r, NGX_HTTP_SERVICE_UNAVAILABLE,
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

            return ngx_http_agent_error(r, NGX_HTTP_TOO_MANY_REQUESTS,
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
    }

    *held = hl;

    return NGX_OK;

failed:

    ngx_http_agent_limit_release(hl);

    return NGX_HTTP_INTERNAL_SERVER_ERROR;
}


/*
 * Before a model call: want tokens reserved in every budget; NGX_DECLINED
 * when a budget is spent, or reserved whole by the calls running now
 */

ngx_int_t
ngx_http_agent_limit_reserve(ngx_http_agent_limits_t *hl, int64_t *want)
{
    ngx_uint_t                    i, k;
    ngx_http_agent_limit_ctx_t   *ctx;
    ngx_http_agent_limit_held_t  *e;

    if (hl == NULL || hl->released) {
        *want = 0;
        return NGX_OK;
    }

    if (*want <= 0) {
        *want = NGX_HTTP_AGENT_LIMIT_ESTIMATE;
    }

    e = hl->held.elts;

    for (i = 0; i < hl->held.nelts; i++) {
        if (e[i].limit->tokens_period == 0) {
            continue;
        }

        ctx = e[i].limit->zone->shm_zone->data;

        ngx_shmtx_lock(&ctx->shpool->mutex);

        ngx_http_agent_limit_windows(e[i].limit, e[i].node);

        if (e[i].node->tokens + e[i].node->reserved >= e[i].limit->tokens) {
            ngx_shmtx_unlock(&ctx->shpool->mutex);

            /* the reservations made above are given back */

            for (k = 0; k < i; k++) {
                if (e[k].limit->tokens_period) {
                    ngx_http_agent_limit_unreserve(&e[k], *want);
                }
            }

            hl->over = 1;

            return NGX_DECLINED;
        }

        e[i].node->reserved += *want;
        e[i].reserved += *want;

        ngx_shmtx_unlock(&ctx->shpool->mutex);
    }

    return NGX_OK;
}


/*
 * A model call's tokens, as it ends, for what it reserved: over marks a
 * budget spent
 */

void
ngx_http_agent_limit_charge(ngx_http_agent_limits_t *hl, int64_t tokens,
    int64_t reserved)
{
    int64_t                       n;
    ngx_uint_t                    i;
    ngx_http_agent_limit_ctx_t   *ctx;
    ngx_http_agent_limit_held_t  *e;

    if (hl == NULL || hl->released) {
        return;
    }

    e = hl->held.elts;

    for (i = 0; i < hl->held.nelts; i++) {
        ctx = e[i].limit->zone->shm_zone->data;

        /* settled at once: no other call sees the tokens neither way */

        n = ngx_min(reserved, e[i].reserved);
        e[i].reserved -= n;

        ngx_shmtx_lock(&ctx->shpool->mutex);

        e[i].node->reserved = ngx_max(e[i].node->reserved - n, 0);

        ngx_http_agent_limit_windows(e[i].limit, e[i].node);
        e[i].node->tokens += tokens;

        if (e[i].limit->tokens_period
            && e[i].node->tokens >= e[i].limit->tokens)
        {
            hl->over = 1;
        }

        ngx_shmtx_unlock(&ctx->shpool->mutex);
    }
}


static void
ngx_http_agent_limit_unreserve(ngx_http_agent_limit_held_t *e, int64_t n)
{
    ngx_http_agent_limit_ctx_t  *ctx;

    n = ngx_min(n, e->reserved);
    e->reserved -= n;

    ctx = e->limit->zone->shm_zone->data;

    ngx_shmtx_lock(&ctx->shpool->mutex);
    e->node->reserved = ngx_max(e->node->reserved - n, 0);
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

        if (e[i].reserved) {
            ngx_http_agent_limit_unreserve(&e[i], e[i].reserved);
        }

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

        if (ln->concurrent || ln->reserved) {
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


static void
ngx_http_agent_limit_rbtree_insert_value(ngx_rbtree_node_t *temp,
    ngx_rbtree_node_t *node, ngx_rbtree_node_t *sentinel)
{
    ngx_rbtree_node_t            **p;
    ngx_http_agent_limit_node_t   *ln, *lnt;

    for ( ;; ) {

        if (node->key < temp->key) {
            p = &temp->left;

        } else if (node->key > temp->key) {
            p = &temp->right;

        } else {
            ln = (ngx_http_agent_limit_node_t *) &node->color;
            lnt = (ngx_http_agent_limit_node_t *) &temp->color;

            p = (ngx_memn2cmp(ln->data, lnt->data, ln->len, lnt->len) < 0)
                ? &temp->left : &temp->right;
        }

        if (*p == sentinel) {
            break;
        }

        temp = *p;
    }

    *p = node;
    node->parent = temp;
    node->left = sentinel;
    node->right = sentinel;
    ngx_rbt_red(node);
}
