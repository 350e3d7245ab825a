
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"


static void ngx_http_agent_json_print(void *ctx, const char *s, size_t len);
static ngx_int_t ngx_http_agent_json_link(ngx_http_agent_json_t *j,
    size_t len);
static void ngx_http_agent_json_gen_cleanup(void *data);
static void ngx_http_agent_json_value(ngx_http_agent_json_t *j, yajl_val v,
    ngx_uint_t depth);


ngx_http_agent_json_t *
ngx_http_agent_json_create(ngx_pool_t *pool)
{
    ngx_pool_cleanup_t     *cln;
    ngx_http_agent_json_t  *j;

    j = ngx_pcalloc(pool, sizeof(ngx_http_agent_json_t));
    if (j == NULL) {
        return NULL;
    }

    cln = ngx_pool_cleanup_add(pool, 0);
    if (cln == NULL) {
        return NULL;
    }

    j->pool = pool;
    j->gen = yajl_gen_alloc(NULL);
    if (j->gen == NULL) {
        return NULL;
    }

    cln->handler = ngx_http_agent_json_gen_cleanup;
    cln->data = j;

    yajl_gen_config(j->gen, yajl_gen_print_callback,
                    ngx_http_agent_json_print, j);

    return j;
}


/* a generator with its object opened, as most answers begin */

ngx_http_agent_json_t *
ngx_http_agent_json_create_obj(ngx_pool_t *pool)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(pool);
    if (j != NULL) {
        ngx_http_agent_json_obj(j);
    }

    return j;
}


ngx_int_t
ngx_http_agent_json_reserve(ngx_http_agent_json_t *j, size_t size)
{
    u_char  *p;

    if ((size_t) (j->end - j->pos) >= size) {
        return NGX_OK;
    }

    p = ngx_pnalloc(j->pool, (j->pos - j->start) + size);
    if (p == NULL) {
        j->failed = 1;
        return NGX_ERROR;
    }

    j->end = p + (j->pos - j->start) + size;

    /* a new generator has no buffer yet: memcpy() of NULL is undefined */
    j->pos = j->start ? ngx_cpymem(p, j->start, j->pos - j->start) : p;
    j->start = p;

    return NGX_OK;
}


static void
ngx_http_agent_json_print(void *ctx, const char *s, size_t len)
{
    ngx_http_agent_json_t *j = ctx;

    size_t   size;
    u_char  *p;

    if (j->failed) {
        return;
    }

    if (j->last && (size_t) (j->end - j->pos) < len) {
        if (ngx_http_agent_json_link(j, len) != NGX_OK) {
            j->failed = 1;
            return;
        }
    }

    if ((size_t) (j->end - j->pos) < len) {
        size = ngx_max(2 * (size_t) (j->end - j->start),
                       (size_t) (j->pos - j->start) + len + 256);

        p = ngx_pnalloc(j->pool, size);
        if (p == NULL) {
            j->failed = 1;
            return;
        }

        j->pos = j->start ? ngx_cpymem(p, j->start, j->pos - j->start) : p;
        j->start = p;
        j->end = p + size;
    }

    j->pos = ngx_cpymem(j->pos, s, len);
}


/*
 * An answer that may be large (a page of messages with their images) is
 * printed into a chain: a full buffer is linked and a new one started, so
 * the text is never copied to grow and no pool holds the copies a doubling
 * buffer leaves behind.
 */

ngx_http_agent_json_t *
ngx_http_agent_json_chain(ngx_pool_t *pool)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NULL;
    }

    j->last = &j->out;

    return j;
}


#define NGX_HTTP_AGENT_JSON_CHAIN_BUF  16384


static ngx_int_t
ngx_http_agent_json_link(ngx_http_agent_json_t *j, size_t len)
{
    u_char       *p;
    size_t        size;
    ngx_buf_t    *b;
    ngx_chain_t  *cl;

    if (j->pos != j->start) {
        b = ngx_calloc_buf(j->pool);
        cl = ngx_alloc_chain_link(j->pool);
        if (b == NULL || cl == NULL) {
            return NGX_ERROR;
        }

        b->pos = j->start;
        b->last = j->pos;
        b->memory = 1;
        cl->buf = b;
        cl->next = NULL;

        *j->last = cl;
        j->last = &cl->next;
        j->size += j->pos - j->start;
    }

    if (len == 0) {
        j->start = NULL;
        j->pos = NULL;
        j->end = NULL;
        return NGX_OK;
    }

    size = ngx_max(len, NGX_HTTP_AGENT_JSON_CHAIN_BUF);

    p = ngx_pnalloc(j->pool, size);
    if (p == NULL) {
        return NGX_ERROR;
    }

    j->start = p;
    j->pos = p;
    j->end = p + size;

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_json_chain_done(ngx_http_agent_json_t *j, ngx_chain_t **out,
    off_t *size)
{
    if (j->failed || ngx_http_agent_json_link(j, 0) != NGX_OK) {
        return NGX_ERROR;
    }

    *out = j->out;
    *size = j->size;

    j->failed = 1;

    yajl_gen_free(j->gen);
    j->gen = NULL;

    return NGX_OK;
}


static void
ngx_http_agent_json_gen_cleanup(void *data)
{
    ngx_http_agent_json_t *j = data;

    if (j->gen) {
        yajl_gen_free(j->gen);
        j->gen = NULL;
    }
}


void
ngx_http_agent_json_str(ngx_http_agent_json_t *j, ngx_str_t *s)
{
    if (s == NULL || s->data == NULL) {
        ngx_http_agent_json_bytes(j, (u_char *) "", 0);
        return;
    }

    ngx_http_agent_json_bytes(j, s->data, s->len);
}


void
ngx_http_agent_json_cstr(ngx_http_agent_json_t *j, const char *s)
{
    ngx_http_agent_json_bytes(j, (u_char *) s, ngx_strlen(s));
}


/*
 * Text from SQL cells, CSV files, upload names and providers may hold any
 * bytes; yajl copies them as they are.  Invalid UTF-8 becomes U+FFFD, so
 * no answer, event, stored value or provider request is ever invalid.
 */

void
ngx_http_agent_json_bytes(ngx_http_agent_json_t *j, u_char *s, size_t len)
{
    u_char  *p, *q, *last, *fixed;
    size_t   n;

    if (ngx_http_agent_json_utf8_valid(s, len)) {
        ngx_http_agent_json_ok(j, yajl_gen_string(j->gen, s, len));
        return;
    }

    /* at most 3 bytes of U+FFFD for each byte */
    fixed = ngx_pnalloc(j->pool, len * 3);
    if (fixed == NULL) {
        j->failed = 1;
        return;
    }

    p = s;
    q = fixed;
    last = s + len;

    while (p < last) {
        n = ngx_http_agent_json_utf8_char(p, last - p);

        if (n) {
            q = ngx_cpymem(q, p, n);
            p += n;
            continue;
        }

        *q++ = 0xef; *q++ = 0xbf; *q++ = 0xbd;
        p++;
    }

    ngx_http_agent_json_ok(j, yajl_gen_string(j->gen, fixed, q - fixed));
}


void
ngx_http_agent_json_int(ngx_http_agent_json_t *j, int64_t n)
{
    ngx_http_agent_json_ok(j, yajl_gen_integer(j->gen, (long long) n));
}


void
ngx_http_agent_json_double(ngx_http_agent_json_t *j, double n)
{
    if (n != n || n > 1e300 || n < -1e300) {
        ngx_http_agent_json_null(j);
        return;
    }

    ngx_http_agent_json_ok(j, yajl_gen_double(j->gen, n));
}


/* a number: integers as integers, others as yajl prints doubles */

void
ngx_http_agent_json_num(ngx_http_agent_json_t *j, double n)
{
    /* the range first: casting a larger double is undefined */
    if (n < 9e15 && n > -9e15 && n == (double) (int64_t) n) {
        ngx_http_agent_json_int(j, (int64_t) n);
        return;
    }

    ngx_http_agent_json_double(j, n);
}


u_char *
ngx_http_agent_json_number_text(u_char *p, double n)
{
    /* the range first: casting a larger double is undefined */
    if (n < 9e15 && n > -9e15 && n == (double) (int64_t) n) {
        return ngx_sprintf(p, "%L", (int64_t) n);
    }

    if (n != n || n > 1e300 || n < -1e300) {
        return ngx_cpymem(p, "null", 4);
    }

    return p + snprintf((char *) p, 32, "%.17g", n);
}


double
ngx_http_agent_json_number(ngx_str_t *text)
{
    u_char  buf[64];

    if (text->len == 0 || text->len >= sizeof(buf)) {
        return 0;
    }

    ngx_memcpy(buf, text->data, text->len);
    buf[text->len] = '\0';

    return strtod((char *) buf, NULL);
}


/*
 * yajl has no call to insert ready JSON; yajl_gen_number() copies its text
 * verbatim with the right separators, so it serves for stored JSON values:
 * only ever JSON this module's generator wrote, never text from outside
 */

void
ngx_http_agent_json_raw(ngx_http_agent_json_t *j, ngx_str_t *json)
{
    if (json == NULL || json->len == 0) {
        ngx_http_agent_json_null(j);
        return;
    }

    ngx_http_agent_json_ok(j, yajl_gen_number(j->gen,
                                              (const char *) json->data,
                                              json->len));
}


/*
 * A value sent from elsewhere, between the text before and after it (a
 * long conversation's kept messages, sent by reference: curl_post_parts):
 * its separator is written and its place in the text returned, and what
 * follows is written as after a value.  Not for a chained text.
 */

size_t
ngx_http_agent_json_gap(ngx_http_agent_json_t *j)
{
    ngx_http_agent_json_ok(j, yajl_gen_number(j->gen, "", 0));

    return j->pos - j->start;
}


/* {"error": err}: a tool's or a query's failure, as the model reads it */

ngx_int_t
ngx_http_agent_json_error(ngx_pool_t *pool, ngx_str_t *err,
    ngx_str_t *result)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create_obj(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_key(j, "error");
    ngx_http_agent_json_str(j, err);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, result);
}


/* a stored JSON object, or {} where none was stored */

void
ngx_http_agent_json_raw_obj(ngx_http_agent_json_t *j, ngx_str_t *json)
{
    if (json->len) {
        ngx_http_agent_json_raw(j, json);
        return;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_end(j);
}


void
ngx_http_agent_json_val(ngx_http_agent_json_t *j, yajl_val v)
{
    ngx_http_agent_json_value(j, v, 0);
}


static void
ngx_http_agent_json_value(ngx_http_agent_json_t *j, yajl_val v,
    ngx_uint_t depth)
{
    size_t  i;

    if (depth > NGX_HTTP_AGENT_JSON_MAX_DEPTH) {
        j->failed = 1;
        return;
    }

    if (v == NULL) {
        ngx_http_agent_json_null(j);
        return;
    }

    switch (v->type) {

    case yajl_t_string:
        ngx_http_agent_json_cstr(j, v->u.string);
        break;

    case yajl_t_number:
        ngx_http_agent_json_ok(j, yajl_gen_number(j->gen, v->u.number.r,
                                                  ngx_strlen(v->u.number.r)));
        break;

    case yajl_t_object:
        ngx_http_agent_json_obj(j);
        for (i = 0; i < v->u.object.len; i++) {
            ngx_http_agent_json_cstr(j, v->u.object.keys[i]);
            ngx_http_agent_json_value(j, v->u.object.values[i], depth + 1);
        }
        ngx_http_agent_json_end(j);
        break;

    case yajl_t_array:
        ngx_http_agent_json_arr(j);
        for (i = 0; i < v->u.array.len; i++) {
            ngx_http_agent_json_value(j, v->u.array.values[i], depth + 1);
        }
        ngx_http_agent_json_arr_end(j);
        break;

    case yajl_t_true:
        ngx_http_agent_json_bool(j, 1);
        break;

    case yajl_t_false:
        ngx_http_agent_json_bool(j, 0);
        break;

    default:
        ngx_http_agent_json_null(j);
    }
}


/*
 * A peer's text (an MCP server's error, a provider's answer) for the error
 * log: a CR or LF in it would start a line of its own that reads like one
 * of nginx's, so every control byte becomes \xNN.  The text itself when
 * it has none; a pool copy otherwise.
 */

ngx_str_t *
ngx_http_agent_json_log_str(ngx_pool_t *pool, ngx_str_t *s)
{
    u_char           *p, *q, *last;
    ngx_str_t        *out;
    ngx_uint_t        n;
    static ngx_str_t  failed = ngx_string("(a text that could not be "
                                          "copied for the log)");

    n = 0;
    last = s->data + s->len;

    for (p = s->data; p < last; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            n++;
        }
    }

    if (n == 0) {
        return s;
    }

    out = ngx_palloc(pool, sizeof(ngx_str_t));
    if (out == NULL) {
        return &failed;
    }

    out->data = ngx_pnalloc(pool, s->len + 3 * n);
    if (out->data == NULL) {
        return &failed;
    }

    q = out->data;

    for (p = s->data; p < last; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            q = ngx_sprintf(q, "\\x%02xd", *p);

        } else {
            *q++ = *p;
        }
    }

    out->len = q - out->data;

    return out;
}


/* the length of one valid UTF-8 character at p, 0 when invalid */

size_t
ngx_http_agent_json_utf8_char(u_char *p, size_t len)
{
    uint32_t  c;

    if (p[0] < 0x80) {
        return 1;
    }

    if (p[0] >= 0xc2 && p[0] <= 0xdf) {
        return (len >= 2 && (p[1] & 0xc0) == 0x80) ? 2 : 0;
    }

    if (p[0] >= 0xe0 && p[0] <= 0xef) {
        if (len < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80) {
            return 0;
        }

        c = ((p[0] & 0x0f) << 12) | ((p[1] & 0x3f) << 6) | (p[2] & 0x3f);

        /* overlong forms and UTF-16 surrogates */
        return (c < 0x800 || (c >= 0xd800 && c <= 0xdfff)) ? 0 : 3;
    }

    if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        if (len < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80
            || (p[3] & 0xc0) != 0x80)
        {
            return 0;
        }

        c = ((p[0] & 0x07) << 18) | ((p[1] & 0x3f) << 12)
            | ((p[2] & 0x3f) << 6) | (p[3] & 0x3f);

        return (c < 0x10000 || c > 0x10ffff) ? 0 : 4;
    }

    return 0;
}


ngx_uint_t
ngx_http_agent_json_utf8_valid(u_char *p, size_t len)
{
    size_t     n;
    u_char    *last;
    uint64_t   word;

    last = p + len;

    while (p < last) {

        /* ASCII runs are the common case: eight bytes at a time */
        while (last - p >= 8) {
            ngx_memcpy(&word, p, 8);

            if (word & 0x8080808080808080ULL) {
                break;
            }

            p += 8;
        }

        if (p == last) {
            break;
        }

        if (*p < 0x80) {
            p++;
            continue;
        }

        n = ngx_http_agent_json_utf8_char(p, last - p);
        if (n == 0) {
            return 0;
        }

        p += n;
    }

    return 1;
}


ngx_int_t
ngx_http_agent_json_done(ngx_http_agent_json_t *j, ngx_str_t *out)
{
    if (j->failed) {
        return NGX_ERROR;
    }

    out->data = j->start;
    out->len = j->pos - j->start;

    if (out->data == NULL) {
        ngx_str_set(out, "null");
    }

    /*
     * the buffer is the caller's now; the generator goes at once rather
     * than with the pool, as a turn makes several and streams for long
     */

    j->start = NULL;
    j->pos = NULL;
    j->end = NULL;
    j->failed = 1;

    yajl_gen_free(j->gen);
    j->gen = NULL;

    return NGX_OK;
}


/*
 * The text stays in the generator's buffer, which the next text overwrites:
 * for what is consumed at once (an event, a bound statement parameter), so
 * a stream of tokens does not grow the pool.
 */

ngx_int_t
ngx_http_agent_json_scratch(ngx_http_agent_json_t *j, ngx_str_t *out)
{
    if (j->failed) {
        return NGX_ERROR;
    }

    out->data = j->start;
    out->len = j->pos - j->start;

    j->pos = j->start;
    yajl_gen_reset(j->gen, NULL);

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_json_encode(ngx_pool_t *pool, yajl_val v, ngx_str_t *out)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_val(j, v);

    return ngx_http_agent_json_done(j, out);
}


ngx_int_t
ngx_http_agent_json_quote(ngx_pool_t *pool, ngx_str_t *s, ngx_str_t *out)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_str(j, s);

    return ngx_http_agent_json_done(j, out);
}
