
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm.h"


/*
 * What writes a call's state and calls nothing of the call's other files:
 * its growing buffers, its failure, and the API key kept out of what is
 * quoted of the provider's words.
 */


ngx_int_t
ngx_http_agent_llm_buf_add(ngx_pool_t *pool, ngx_http_agent_llm_buf_t *b,
    u_char *p, size_t len, size_t max)
{
    size_t   cap;
    u_char  *n;

    if (len == 0) {
        /* an empty buffer has no memory yet: no pointer sums on NULL */
        return NGX_OK;
    }

    if (b->len + len > max) {
        return NGX_ERROR;
    }

    if (b->len + len > b->cap) {
        cap = ngx_max(b->cap * 2, b->len + len);
        cap = ngx_max(cap, 64);

        n = ngx_pnalloc(pool, cap);
        if (n == NULL) {
            return NGX_ERROR;
        }

        if (b->len) {
            ngx_memcpy(n, b->data, b->len);
        }

        b->data = n;
        b->cap = cap;
    }

    ngx_memcpy(b->data + b->len, p, len);
    b->len += len;

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_llm_fail(ngx_http_agent_llm_t *llm, const char *fmt, ...)
{
    u_char   *p, buf[512];
    va_list   args;

    if (llm->failed) {
        return NGX_ERROR;
    }

    llm->failed = 1;

    va_start(args, fmt);
    p = ngx_vslprintf(buf, buf + sizeof(buf), fmt, args);
    va_end(args);

    llm->error.data = ngx_pnalloc(llm->pool, p - buf);
    if (llm->error.data) {
        llm->error.len = p - buf;
        ngx_memcpy(llm->error.data, buf, p - buf);
    }

    return NGX_ERROR;
}


/*
 * The provider's own words about a failure, as they may be passed on: the
 * API key masked first, should the provider have quoted it back, so that
 * the cut leaves no part of it either; then only their start, on one line.
 */

void
ngx_http_agent_llm_excerpt(ngx_http_agent_llm_t *llm, ngx_str_t *s)
{
    u_char  *p;

    ngx_http_agent_llm_hide_key(llm, s);

    s->len = ngx_min(s->len, 200);

    for (p = s->data; p < s->data + s->len; p++) {
        if (*p < 0x20) {
            *p = ' ';
        }
    }
}


void
ngx_http_agent_llm_hide_key(ngx_http_agent_llm_t *llm, ngx_str_t *s)
{
    u_char  *p, *last;

    if (llm->key.len < 4 || s->len < llm->key.len) {
        return;
    }

    last = s->data + s->len - llm->key.len;

    for (p = s->data; p <= last; p++) {
        if (ngx_strncmp(p, llm->key.data, llm->key.len) == 0) {
            ngx_memset(p, '*', llm->key.len);
        }
    }
}
