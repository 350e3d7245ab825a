
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_limit.h"


/*
 * agent_limit_zone and agent_limit, read at configuration, and the zone's
 * shared memory made (limit.c counts in it).
 */


static ngx_int_t ngx_http_agent_limit_rate(ngx_str_t *s, int64_t *n,
    time_t *period);
static ngx_int_t ngx_http_agent_limit_init_zone(ngx_shm_zone_t *shm_zone,
    void *data);
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
