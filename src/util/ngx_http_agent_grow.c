
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"


static size_t ngx_http_agent_grow_size(size_t used, size_t size,
    size_t need, size_t max);


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

    n = ngx_http_agent_grow_size(used, *size, need, max);
    if (n == 0) {
        return NGX_DECLINED;
    }

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


/* the new size, doubled, or 0: it would pass max */

static size_t
ngx_http_agent_grow_size(size_t used, size_t size, size_t need, size_t max)
{
    size_t  n;

    if (used + need > max) {
        return 0;
    }

    n = ngx_max(size * 2, 4096);

    while (n - used < need) {
        n *= 2;
    }

    return ngx_min(n, max);
}


/*
 * The same buffer, shared: a turn may read its text by reference while
 * the worker goes on appending to it (store_history.c hands the kept
 * rows out so, llm_prefix.c its text to the request body).  A count of
 * its readers sits before the text: the worker's own reference is one,
 * each pin (grow_pin()) one more, released with the pool it was taken
 * for.  The bytes before used never change while another reads them: an
 * append that needs room moves the text to a new buffer and leaves the
 * old one to its last reader, and a rewrite from the start of a buffer
 * read by another takes a new one (grow_reset()).
 */

typedef struct {
    ngx_uint_t  refs;
    ngx_uint_t  pad;      /* the text on a 16-byte boundary, as malloc's */
} ngx_http_agent_grow_shared_t;


#define ngx_http_agent_grow_header(p)                                        \
    ((ngx_http_agent_grow_shared_t *) (p) - 1)


ngx_int_t
ngx_http_agent_grow_shared(u_char **buf, size_t used, size_t *size,
    size_t need, size_t max, ngx_log_t *log)
{
    size_t                         n;
    ngx_http_agent_grow_shared_t  *s;

    if (*buf && *size - used >= need) {
        return NGX_OK;
    }

    n = ngx_http_agent_grow_size(used, *size, need, max);
    if (n == 0) {
        return NGX_DECLINED;
    }

    s = ngx_alloc(sizeof(ngx_http_agent_grow_shared_t) + n, log);
    if (s == NULL) {
        return NGX_ERROR;
    }

    s->refs = 1;

    if (used) {
        ngx_memcpy(s + 1, *buf, used);
    }

    ngx_http_agent_grow_release(*buf);

    *buf = (u_char *) (s + 1);
    *size = n;

    return NGX_OK;
}


/* the text is to be written again from its start */

void
ngx_http_agent_grow_reset(u_char **buf, size_t *size)
{
    if (*buf && ngx_http_agent_grow_header(*buf)->refs > 1) {
        ngx_http_agent_grow_release(*buf);
        *buf = NULL;
        *size = 0;
    }
}


/* the text stays, as it is up to where it is read, until pool goes */

ngx_int_t
ngx_http_agent_grow_pin(ngx_pool_t *pool, u_char *buf)
{
    ngx_pool_cleanup_t  *cln;

    cln = ngx_pool_cleanup_add(pool, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    cln->handler = ngx_http_agent_grow_release;
    cln->data = buf;

    ngx_http_agent_grow_ref(buf);

    return NGX_OK;
}


/* the text stays until released (grow_release()) */

void
ngx_http_agent_grow_ref(u_char *buf)
{
    ngx_http_agent_grow_header(buf)->refs++;
}


/* a reader, or the worker, lets the text go: the last one frees it */

void
ngx_http_agent_grow_release(void *buf)
{
    ngx_http_agent_grow_shared_t  *s;

    if (buf == NULL) {
        return;
    }

    s = ngx_http_agent_grow_header(buf);

    if (--s->refs == 0) {
        ngx_free(s);
    }
}
