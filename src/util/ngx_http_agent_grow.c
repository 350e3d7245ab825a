
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"


/*
 * A worker's own buffer (ngx_alloc()) that is appended to for as long as
 * the worker runs, as the kept histories are (store_history.c,
 * llm_prefix.c): room for need more bytes past used, the size doubled so
 * that a history appended to a message at a time is copied a few times,
 * not once a message.  NGX_DECLINED: it would pass max bytes; buf (a
 * pointer to the buffer's pointer) is then as it was.
 */

ngx_int_t
ngx_http_agent_grow(void *buf, size_t used, size_t *size, size_t need,
    size_t max, ngx_log_t *log)
{
    u_char  **b, *p;
    size_t    n;

    b = buf;

    if (*size - used >= need) {
        return NGX_OK;
    }

    if (used + need > max) {
        return NGX_DECLINED;
    }

    n = ngx_max(*size * 2, 4096);

    while (n - used < need) {
        n *= 2;
    }

    n = ngx_min(n, max);

    p = ngx_alloc(n, log);
    if (p == NULL) {
        return NGX_ERROR;
    }

    if (used) {
        ngx_memcpy(p, *b, used);
    }

    if (*b) {
        ngx_free(*b);
    }

    *b = p;
    *size = n;

    return NGX_OK;
}
