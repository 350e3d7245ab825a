
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_ops.h"
#include "ngx_http_agent_util.h"


/*
 * agent_limit_zone and agent_limit, read at configuration, and the zone's
 * shared memory made (limit.c counts in it).
 */


typedef struct {
    ngx_http_agent_limit_zone_t  *zone;
    size_t                        size;
} ngx_http_agent_limit_zone_args_t;


static char *ngx_http_agent_limit_rate(ngx_conf_t *cf,
    ngx_http_agent_param_t *param, ngx_str_t *value, void *conf);
static char *ngx_http_agent_limit_zone_name(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
static char *ngx_http_agent_limit_key(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
static ngx_uint_t ngx_http_agent_limit_key_optional(ngx_str_t *value);
static ngx_int_t ngx_http_agent_limit_init_zone(ngx_shm_zone_t *shm_zone,
    void *data);
static void ngx_http_agent_limit_rbtree_insert_value(ngx_rbtree_node_t *temp,
    ngx_rbtree_node_t *node, ngx_rbtree_node_t *sentinel);


static ngx_http_agent_param_t  ngx_http_agent_limit_zone_params[] = {
    { ngx_string("key"), ngx_http_agent_limit_key, 0, NULL },
    { ngx_string("size"), ngx_http_agent_params_set_size,
      offsetof(ngx_http_agent_limit_zone_args_t, size), NULL },
    ngx_http_agent_null_param
};


static ngx_http_agent_param_bounds_t  ngx_http_agent_limit_one = {
    1, NGX_MAX_INT_T_VALUE
};


static ngx_http_agent_param_t  ngx_http_agent_limit_params[] = {
    { ngx_string("zone"), ngx_http_agent_limit_zone_name, 0, NULL },
    { ngx_string("tokens"), ngx_http_agent_limit_rate,
      offsetof(ngx_http_agent_limit_t, tokens), NULL },
    { ngx_string("turns"), ngx_http_agent_limit_rate,
      offsetof(ngx_http_agent_limit_t, turns), NULL },
    { ngx_string("cost"), ngx_http_agent_limit_rate,
      offsetof(ngx_http_agent_limit_t, cost), NULL },
    { ngx_string("concurrent"), ngx_http_agent_params_set_num,
      offsetof(ngx_http_agent_limit_t, concurrent),
      &ngx_http_agent_limit_one },
    ngx_http_agent_null_param
};


char *
ngx_http_agent_limit_zone(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_main_conf_t *amcf = conf;

    ssize_t                            size;
    ngx_str_t                         *value, s;
    ngx_uint_t                         i;
    ngx_http_agent_limit_ctx_t        *ctx;
    ngx_http_agent_limit_zone_t       *z, **zp;
    ngx_http_agent_limit_zone_args_t   args;

    value = cf->args->elts;

    z = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_limit_zone_t));
    ctx = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_limit_ctx_t));
    if (z == NULL || ctx == NULL) {
        return NGX_CONF_ERROR;
    }

    z->name = value[1];

    args.zone = z;
    args.size = 0;

    if (ngx_http_agent_params_parse(cf, ngx_http_agent_limit_zone_params,
                                    &value[2], cf->args->nelts - 2, &args,
                                    "agent_limit_zone", &z->name)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    size = args.size;

    if (size && size < (ssize_t) (8 * ngx_pagesize)) {
        return "has a size below 8 pages";
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
 * tokens=N/PERIOD, turns=N/PERIOD, cost=DOLLARS/PERIOD: a count (or
 * dollars, to the nanodollar) and a window (s, m, h, d, w as nginx's
 * times); a bare unit is one of it, limit_req's habit: 2/m is 2/1m
 */

static char *
ngx_http_agent_limit_rate(ngx_conf_t *cf, ngx_http_agent_param_t *param,
    ngx_str_t *value, void *conf)
{
    ngx_http_agent_limit_t *limit = conf;

    u_char     *slash, one[8];
    time_t      period;
    int64_t     n;
    ngx_str_t   p;

    slash = ngx_strlchr(value->data, value->data + value->len, '/');
    if (slash == NULL) {
        return "N/PERIOD";
    }

    if (param->offset == offsetof(ngx_http_agent_limit_t, cost)) {
        n = ngx_atofp(value->data, slash - value->data, 9);

    } else {
        n = ngx_atoof(value->data, slash - value->data);
    }

    p.data = slash + 1;
    p.len = value->data + value->len - p.data;

    if (p.len && p.len < sizeof(one) && (p.data[0] < '0' || p.data[0] > '9'))
    {
        one[0] = '1';
        ngx_memcpy(one + 1, p.data, p.len);
        p.data = one;
        p.len++;
    }

    period = ngx_parse_time(&p, 1);

    if (n < 0 || period == (time_t) NGX_ERROR || period == 0) {
        return "N/PERIOD";
    }

    if (param->offset == offsetof(ngx_http_agent_limit_t, tokens)) {
        limit->tokens = n;
        limit->tokens_period = period;

    } else if (param->offset == offsetof(ngx_http_agent_limit_t, cost)) {
        limit->cost = n;
        limit->cost_period = period;

    } else {
        limit->turns = (ngx_uint_t) n;
        limit->turns_period = period;
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_agent_limit_zone_name(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    ngx_http_agent_limit_t *limit = conf;

    ngx_uint_t                     n;
    ngx_http_agent_main_conf_t    *amcf;
    ngx_http_agent_limit_zone_t  **zp;

    amcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_agent_module);
    zp = amcf->limit_zones ? amcf->limit_zones->elts : NULL;

    for (n = 0; zp && n < amcf->limit_zones->nelts; n++) {
        if (zp[n]->name.len == value->len
            && ngx_strncmp(zp[n]->name.data, value->data, value->len) == 0)
        {
            limit->zone = zp[n];
            return NGX_CONF_OK;
        }
    }

    return "unknown zone: declare it with agent_limit_zone first";
}


static char *
ngx_http_agent_limit_key(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    ngx_http_agent_limit_zone_args_t *args = conf;

    ngx_http_compile_complex_value_t  ccv;

    ngx_memzero(&ccv, sizeof(ngx_http_compile_complex_value_t));
    ccv.cf = cf;
    ccv.value = value;
    ccv.complex_value = &args->zone->key;

    if (ngx_http_compile_complex_value(&ccv) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    if (ngx_http_agent_limit_key_optional(value)) {
        ngx_conf_log_error(NGX_LOG_WARN, cf, 0,
                           "agent_limit_zone \"%V\": key \"%V\" can be "
                           "empty; requests without it are not limited",
                           &args->zone->name, value);
    }

    return NGX_CONF_OK;
}


/*
 * Whether a key is made of what a client may leave out and nothing else:
 * headers, cookies and arguments only ($http_*, $cookie_*, $arg_*), no
 * text of its own.  Such a key is empty for a client without them, and
 * that client is not limited (as limit_req).  Other variables are taken
 * as always set: the rule stays one that a reader can check by eye.
 */

static ngx_uint_t
ngx_http_agent_limit_key_optional(ngx_str_t *value)
{
    u_char      *p, *last, *name;
    ngx_uint_t   i, brace, found;

    static ngx_str_t  optional[] = {
        ngx_string("http_"), ngx_string("cookie_"), ngx_string("arg_")
    };

    p = value->data;
    last = p + value->len;

    while (p < last) {
        if (*p++ != '$') {
            return 0;
        }

        brace = (p < last && *p == '{');
        p += brace;
        name = p;

        while (p < last && (*p == '_' || (*p >= '0' && *p <= '9')
                            || ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z')))
        {
            p++;
        }

        if (brace) {
            if (p == last || *p != '}') {
                return 0;
            }

            p++;
        }

        found = 0;

        for (i = 0; i < sizeof(optional) / sizeof(optional[0]); i++) {
            if ((size_t) (p - brace - name) > optional[i].len
                && ngx_strncasecmp(name, optional[i].data, optional[i].len)
                   == 0)
            {
                found = 1;
                break;
            }
        }

        if (!found) {
            return 0;
        }
    }

    return 1;
}


char *
ngx_http_agent_limit(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_loc_conf_t *alcf = conf;

    ngx_str_t               *value;
    ngx_http_agent_limit_t  *limit;

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

    if (ngx_http_agent_params_parse(cf, ngx_http_agent_limit_params,
                                    &value[1], cf->args->nelts - 1, limit,
                                    "agent_limit", NULL)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (limit->zone == NULL) {
        return "needs zone=";
    }

    if (limit->tokens_period == 0 && limit->turns_period == 0
        && limit->cost_period == 0 && limit->concurrent == 0)
    {
        return "needs tokens=, cost=, turns= or concurrent=";
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
