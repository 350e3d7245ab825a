
/*
 * Copyright (C) ngx_http_agent_module authors
 */


/*
 * The few nginx core functions the fuzzed sources call, written for the
 * fuzzers: Debian's nginx-dev has the headers but not the core's sources.
 * A pool allocates each piece with malloc(), so AddressSanitizer sees the
 * exact bounds of every allocation (nginx's own pools would hide small
 * overruns inside their blocks).
 */


#include <ngx_config.h>
#include <ngx_core.h>


ngx_pool_t *
ngx_create_pool(size_t size, ngx_log_t *log)
{
    ngx_pool_t  *p;

    p = calloc(1, sizeof(ngx_pool_t));
    if (p == NULL) {
        return NULL;
    }

    p->log = log;

    return p;
}


void
ngx_destroy_pool(ngx_pool_t *pool)
{
    ngx_pool_large_t    *l, *next;
    ngx_pool_cleanup_t  *c, *cn;

    for (c = pool->cleanup; c; c = cn) {
        cn = c->next;
        if (c->handler) {
            c->handler(c->data);
        }
    }

    for (l = pool->large; l; l = next) {
        next = l->next;
        free(l->alloc);
        free(l);
    }

    free(pool);
}


void
ngx_reset_pool(ngx_pool_t *pool)
{
    ngx_pool_large_t  *l, *next;

    for (l = pool->large; l; l = next) {
        next = l->next;
        free(l->alloc);
        free(l);
    }

    pool->large = NULL;
}


void *
ngx_palloc(ngx_pool_t *pool, size_t size)
{
    void              *p;
    ngx_pool_large_t  *l;

    p = malloc(size ? size : 1);
    l = malloc(sizeof(ngx_pool_large_t));

    if (p == NULL || l == NULL) {
        free(p);
        free(l);
        return NULL;
    }

    l->alloc = p;
    l->next = pool->large;
    pool->large = l;

    return p;
}


void *
ngx_pnalloc(ngx_pool_t *pool, size_t size)
{
    return ngx_palloc(pool, size);
}


void *
ngx_pcalloc(ngx_pool_t *pool, size_t size)
{
    void  *p;

    p = ngx_palloc(pool, size);
    if (p) {
        memset(p, 0, size);
    }

    return p;
}


ngx_chain_t *
ngx_alloc_chain_link(ngx_pool_t *pool)
{
    return ngx_palloc(pool, sizeof(ngx_chain_t));
}


ngx_pool_cleanup_t *
ngx_pool_cleanup_add(ngx_pool_t *p, size_t size)
{
    ngx_pool_cleanup_t  *c;

    c = ngx_palloc(p, sizeof(ngx_pool_cleanup_t));
    if (c == NULL) {
        return NULL;
    }

    c->data = size ? ngx_palloc(p, size) : NULL;
    c->handler = NULL;
    c->next = p->cleanup;
    p->cleanup = c;

    return c;
}


u_char *
ngx_pstrdup(ngx_pool_t *pool, ngx_str_t *src)
{
    u_char  *dst;

    dst = ngx_pnalloc(pool, src->len);
    if (dst && src->len) {
        memcpy(dst, src->data, src->len);
    }

    return dst;
}


ngx_array_t *
ngx_array_create(ngx_pool_t *p, ngx_uint_t n, size_t size)
{
    ngx_array_t  *a;

    a = ngx_palloc(p, sizeof(ngx_array_t));
    if (a == NULL || ngx_array_init(a, p, n, size) != NGX_OK) {
        return NULL;
    }

    return a;
}


void *
ngx_array_push(ngx_array_t *a)
{
    void  *elts;

    if (a->nelts == a->nalloc) {
        elts = ngx_palloc(a->pool, 2 * a->nalloc * a->size + a->size);
        if (elts == NULL) {
            return NULL;
        }

        memcpy(elts, a->elts, a->nelts * a->size);
        a->elts = elts;
        a->nalloc = 2 * a->nalloc + 1;
    }

    return (u_char *) a->elts + a->size * a->nelts++;
}


void *
ngx_array_push_n(ngx_array_t *a, ngx_uint_t n)
{
    void  *elts;

    if (a->nelts + n > a->nalloc) {
        elts = ngx_palloc(a->pool, 2 * (a->nalloc + n) * a->size);
        if (elts == NULL) {
            return NULL;
        }

        memcpy(elts, a->elts, a->nelts * a->size);
        a->elts = elts;
        a->nalloc = 2 * (a->nalloc + n);
    }

    a->nelts += n;

    return (u_char *) a->elts + a->size * (a->nelts - n);
}


ngx_int_t
ngx_memn2cmp(u_char *s1, u_char *s2, size_t n1, size_t n2)
{
    int  m;

    m = memcmp(s1, s2, n1 < n2 ? n1 : n2);

    if (m || n1 == n2) {
        return m;
    }

    return n1 < n2 ? -1 : 1;
}


void
ngx_log_error_core(ngx_uint_t level, ngx_log_t *log, ngx_err_t err,
    const char *fmt, ...)
{
}


void
ngx_conf_log_error(ngx_uint_t level, ngx_conf_t *cf, ngx_err_t err,
    const char *fmt, ...)
{
}


ssize_t
ngx_read_file(ngx_file_t *file, u_char *buf, size_t size, off_t offset)
{
    return NGX_ERROR;
}


ngx_int_t
ngx_atoi(u_char *line, size_t n)
{
    ngx_int_t  value;

    if (n == 0) {
        return NGX_ERROR;
    }

    for (value = 0; n--; line++) {
        if (*line < '0' || *line > '9') {
            return NGX_ERROR;
        }

        if (value >= NGX_MAX_INT_T_VALUE / 10
            && (value > NGX_MAX_INT_T_VALUE / 10
                || *line - '0' > NGX_MAX_INT_T_VALUE % 10))
        {
            return NGX_ERROR;
        }

        value = value * 10 + (*line - '0');
    }

    return value;
}


u_char *
ngx_hex_dump(u_char *dst, u_char *src, size_t len)
{
    static u_char  hex[] = "0123456789abcdef";

    while (len--) {
        *dst++ = hex[*src >> 4];
        *dst++ = hex[*src++ & 0xf];
    }

    return dst;
}


u_char *
ngx_cpystrn(u_char *dst, u_char *src, size_t n)
{
    if (n == 0) {
        return dst;
    }

    while (--n) {
        *dst = *src;

        if (*dst == '\0') {
            return dst;
        }

        dst++;
        src++;
    }

    *dst = '\0';

    return dst;
}


ngx_int_t
ngx_strncasecmp(u_char *s1, u_char *s2, size_t n)
{
    ngx_uint_t  c1, c2;

    while (n) {
        c1 = (ngx_uint_t) *s1++;
        c2 = (ngx_uint_t) *s2++;

        c1 = (c1 >= 'A' && c1 <= 'Z') ? (c1 | 0x20) : c1;
        c2 = (c2 >= 'A' && c2 <= 'Z') ? (c2 | 0x20) : c2;

        if (c1 == c2) {
            if (c1) {
                n--;
                continue;
            }

            return 0;
        }

        return c1 - c2;
    }

    return 0;
}


u_char *
ngx_strlcasestrn(u_char *s1, u_char *last, u_char *s2, size_t n)
{
    u_char  *p;

    /* n is the needle's length minus one, as in nginx */
    for (p = s1; p + n < last; p++) {
        if (ngx_strncasecmp(p, s2, n + 1) == 0) {
            return p;
        }
    }

    return NULL;
}


/*
 * nginx's format: %V ngx_str_t *, %s, %*s, %d, %i, %ui, %l, %O, %M, %z,
 * %uz, %P, %c, %Z, %N, %%, with widths and '0'; enough for the messages
 * and statements the fuzzed sources print.
 */

u_char *
ngx_vslprintf(u_char *buf, u_char *last, const char *fmt, va_list args)
{
    u_char      *p, tmp[64];
    size_t       len, slen, width;
    int64_t      i64;
    uint64_t     u64;
    ngx_str_t   *v;
    ngx_uint_t   sign, star, zero;

    while (*fmt && buf < last) {

        if (*fmt != '%') {
            *buf++ = *fmt++;
            continue;
        }

        fmt++;
        sign = 1;
        star = 0;
        zero = 0;
        width = 0;
        slen = (size_t) -1;

        if (*fmt == '0') {
            zero = 1;
        }

        while (*fmt >= '0' && *fmt <= '9') {
            width = width * 10 + (*fmt++ - '0');
        }

        for ( ;; ) {
            if (*fmt == 'u') {
                sign = 0;
                fmt++;

            } else if (*fmt == '*') {
                star = 1;
                fmt++;

            } else if (*fmt == 'x' || *fmt == 'X') {
                sign = 0;
                fmt++;

            } else {
                break;
            }
        }

        if (star) {
            slen = va_arg(args, size_t);
        }

        switch (*fmt) {

        case 'V':
            v = va_arg(args, ngx_str_t *);
            len = ngx_min((size_t) (last - buf), v->len);
            buf = ngx_cpymem(buf, v->data, len);
            fmt++;
            continue;

        case 's':
            p = va_arg(args, u_char *);
            if (star) {
                len = ngx_min((size_t) (last - buf), slen);
                buf = ngx_cpymem(buf, p, len);
            } else {
                while (*p && buf < last) {
                    *buf++ = *p++;
                }
            }
            fmt++;
            continue;

        case 'c':
            *buf++ = (u_char) va_arg(args, int);
            fmt++;
            continue;

        case 'Z':
            *buf++ = '\0';
            fmt++;
            continue;

        case 'N':
            *buf++ = '\n';
            fmt++;
            continue;

        case '%':
            *buf++ = '%';
            fmt++;
            continue;

        case 'd':
            i64 = sign ? (int64_t) va_arg(args, int)
                       : (int64_t) va_arg(args, u_int);
            break;

        case 'i':
            i64 = sign ? (int64_t) va_arg(args, ngx_int_t)
                       : (int64_t) va_arg(args, ngx_uint_t);
            break;

        case 'l':
            i64 = sign ? (int64_t) va_arg(args, long)
                       : (int64_t) va_arg(args, u_long);
            break;

        case 'O':
            i64 = (int64_t) va_arg(args, off_t);
            break;

        case 'M':
            i64 = (int64_t) va_arg(args, ngx_msec_t);
            sign = 0;
            break;

        case 'z':
            i64 = sign ? (int64_t) va_arg(args, ssize_t)
                       : (int64_t) va_arg(args, size_t);
            break;

        case 'P':
            i64 = (int64_t) va_arg(args, ngx_pid_t);
            break;

        default:
            *buf++ = (u_char) *fmt++;
            continue;
        }

        fmt++;

        if (sign && i64 < 0) {
            *buf++ = '-';
            u64 = (uint64_t) -i64;

        } else {
            u64 = (uint64_t) i64;
        }

        p = tmp + sizeof(tmp);

        do {
            *--p = (u_char) (u64 % 10 + '0');
        } while (u64 /= 10);

        len = tmp + sizeof(tmp) - p;

        while (width > len && buf < last) {
            *buf++ = zero ? '0' : ' ';
            width--;
        }

        len = ngx_min((size_t) (last - buf), len);
        buf = ngx_cpymem(buf, p, len);
    }

    return buf;
}


u_char * ngx_cdecl
ngx_sprintf(u_char *buf, const char *fmt, ...)
{
    u_char   *p;
    va_list   args;

    va_start(args, fmt);
    p = ngx_vslprintf(buf, (void *) -1, fmt, args);
    va_end(args);

    return p;
}


u_char * ngx_cdecl
ngx_snprintf(u_char *buf, size_t max, const char *fmt, ...)
{
    u_char   *p;
    va_list   args;

    va_start(args, fmt);
    p = ngx_vslprintf(buf, buf + max, fmt, args);
    va_end(args);

    return p;
}


/* the curl bridge is never reached: the fuzzers feed the parser */

void *
ngx_http_agent_curl_create(void *pool, void *log)
{
    return NULL;
}


ngx_int_t
ngx_http_agent_curl_post(void *curl)
{
    return NGX_ERROR;
}


void
ngx_http_agent_curl_cancel(void *curl)
{
}


/* the few globals and helpers of the core the parsers touch */

static ngx_time_t           ngx_fuzz_time;
volatile ngx_time_t        *ngx_cached_time = &ngx_fuzz_time;


void
ngx_explicit_memzero(void *buf, size_t n)
{
    ngx_memzero(buf, n);
}


static ngx_log_t             ngx_fuzz_cycle_log;
static ngx_cycle_t           ngx_fuzz_cycle = { .log = &ngx_fuzz_cycle_log };
volatile ngx_cycle_t        *ngx_cycle = &ngx_fuzz_cycle;


void *
ngx_alloc(size_t size, ngx_log_t *log)
{
    return malloc(size);
}
