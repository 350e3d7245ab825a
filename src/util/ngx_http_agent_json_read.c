
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <yajl/yajl_parse.h>

#include "ngx_http_agent_util.h"


/*
 * JSON read: text parsed into yajl's tree, made in a pool, its nesting
 * bounded as it is parsed; values looked up.  json.c writes.
 */


typedef struct {
    ngx_pool_t                *pool;
    yajl_val                  *vals;    /* the open ones' values, in order */
    const char               **keys;    /* and their keys, in an object */
    size_t                     n;
    size_t                     size;
    const char                *key;     /* the next value's */
    yajl_val                   open[NGX_HTTP_AGENT_JSON_MAX_DEPTH + 1];
    size_t                     from[NGX_HTTP_AGENT_JSON_MAX_DEPTH + 1];
    ngx_uint_t                 depth;
    ngx_uint_t                 deep;
    yajl_val                   root;
} ngx_http_agent_json_tree_t;


/*
 * NGX_OK when no array or object nests deeper than the limit.  One pass
 * over the text, outside strings; yajl's comments count too, which only
 * makes the check stricter.
 */

ngx_int_t
ngx_http_agent_json_depth(u_char *p, size_t len)
{
    return ngx_http_agent_json_scan(p, p + len, 0) == NULL ? NGX_DECLINED
                                                            : NGX_OK;
}


/*
 * Brackets counted outside strings.  whole: to the end of the text, NULL
 * when it nests deeper than the limit; else the end of the array or object
 * at p, NULL when it does not end there.
 */

u_char *
ngx_http_agent_json_scan(u_char *p, u_char *last, ngx_uint_t value)
{
    ngx_uint_t  depth, in_string;

    depth = 0;
    in_string = 0;

    for ( /* void */ ; p < last; p++) {

        if (in_string) {
            if (*p == '\\') {
                p++;

            } else if (*p == '"') {
                in_string = 0;
            }

            continue;
        }

        switch (*p) {

        case '"':
            in_string = 1;
            break;

        case '[':
        case '{':
            if (++depth > NGX_HTTP_AGENT_JSON_MAX_DEPTH) {
                return NULL;
            }
            break;

        case ']':
        case '}':
            if (depth) {
                depth--;
            }

            if (value && depth == 0) {
                return p + 1;
            }

            break;
        }
    }

    return value ? NULL : last;
}


yajl_val
ngx_http_agent_json_parse(ngx_pool_t *pool, u_char *data, size_t len,
    ngx_str_t *err)
{
    if (ngx_strlchr(data, data + len, '\0') != NULL) {
        if (err) {
            ngx_str_set(err, "a NUL byte in JSON text");
        }
        return NULL;
    }

    return ngx_http_agent_json_tree(pool, data, len, err);
}


/*
 * yajl's tree, built from its parser's callbacks in the pool: yajl's own
 * tree_parse makes a malloc() and a free() per value and key, a fifth of
 * a turn's instructions when every event of a model's stream is parsed.
 * The values of the open arrays and objects wait on one stack, and each
 * gets its own exactly when it ends.  As yajl_tree_parse: comments
 * allowed, numbers with their text and what they are valid as.  The
 * parser's own state (its lexer's and decoder's buffers, 2 KiB here) is
 * malloc()ed and goes with it: in the pool it stayed as long as the tree,
 * 6 KiB of an open chat stream's request pool.
 */

static int
ngx_http_agent_json_tree_add(ngx_http_agent_json_tree_t *t, yajl_val v)
{
    size_t        n;
    yajl_val     *vals;
    const char  **keys;

    if (t->depth == 0) {
        t->root = v;
        return 1;
    }

    if (t->n == t->size) {
        n = t->size * 2;

        vals = ngx_palloc(t->pool, n * sizeof(yajl_val));
        keys = ngx_palloc(t->pool, n * sizeof(char *));
        if (vals == NULL || keys == NULL) {
            return 0;
        }

        ngx_memcpy(vals, t->vals, t->n * sizeof(yajl_val));
        ngx_memcpy(keys, t->keys, t->n * sizeof(char *));

        t->vals = vals;
        t->keys = keys;
        t->size = n;
    }

    t->vals[t->n] = v;
    t->keys[t->n] = t->key;
    t->key = NULL;
    t->n++;

    return 1;
}


static yajl_val
ngx_http_agent_json_tree_value(ngx_http_agent_json_tree_t *t, yajl_type type)
{
    yajl_val  v;

    v = ngx_pcalloc(t->pool, sizeof(struct yajl_val_s));
    if (v == NULL) {
        return NULL;
    }

    v->type = type;

    return (ngx_http_agent_json_tree_add(t, v) ? v : NULL);
}


static char *
ngx_http_agent_json_tree_str(ngx_http_agent_json_tree_t *t,
    const unsigned char *s, size_t len)
{
    u_char  *p;

    p = ngx_pnalloc(t->pool, len + 1);
    if (p == NULL) {
        return NULL;
    }

    ngx_memcpy(p, s, len);
    p[len] = '\0';

    return (char *) p;
}


static int
ngx_http_agent_json_tree_null(void *ctx)
{
    return ngx_http_agent_json_tree_value(ctx, yajl_t_null) != NULL;
}


static int
ngx_http_agent_json_tree_bool(void *ctx, int b)
{
    return ngx_http_agent_json_tree_value(ctx, b ? yajl_t_true : yajl_t_false)
           != NULL;
}


static int
ngx_http_agent_json_tree_number(void *ctx, const char *s, size_t len)
{
    ngx_http_agent_json_tree_t *t = ctx;

    char      *end;
    yajl_val   v;

    v = ngx_http_agent_json_tree_value(t, yajl_t_number);
    if (v == NULL) {
        return 0;
    }

    v->u.number.r = ngx_http_agent_json_tree_str(t, (u_char *) s, len);
    if (v->u.number.r == NULL) {
        return 0;
    }

    errno = 0;
    v->u.number.i = strtoll(v->u.number.r, &end, 10);

    if (errno == 0 && *end == '\0') {
        v->u.number.flags |= YAJL_NUMBER_INT_VALID;
    }

    errno = 0;
    v->u.number.d = strtod(v->u.number.r, &end);

    if (errno == 0 && *end == '\0') {
        v->u.number.flags |= YAJL_NUMBER_DOUBLE_VALID;
    }

    return 1;
}


static int
ngx_http_agent_json_tree_string(void *ctx, const unsigned char *s,
    size_t len)
{
    ngx_http_agent_json_tree_t *t = ctx;

    yajl_val  v;

    v = ngx_http_agent_json_tree_value(t, yajl_t_string);
    if (v == NULL) {
        return 0;
    }

    v->u.string = ngx_http_agent_json_tree_str(t, s, len);

    return v->u.string != NULL;
}


static int
ngx_http_agent_json_tree_key(void *ctx, const unsigned char *s, size_t len)
{
    ngx_http_agent_json_tree_t *t = ctx;

    t->key = ngx_http_agent_json_tree_str(t, s, len);

    return t->key != NULL;
}


static int
ngx_http_agent_json_tree_open(ngx_http_agent_json_tree_t *t, yajl_type type)
{
    yajl_val  v;

    if (t->depth == NGX_HTTP_AGENT_JSON_MAX_DEPTH) {
        t->deep = 1;
        return 0;
    }

    v = ngx_http_agent_json_tree_value(t, type);
    if (v == NULL) {
        return 0;
    }

    t->depth++;
    t->open[t->depth] = v;
    t->from[t->depth] = t->n;

    return 1;
}


static int
ngx_http_agent_json_tree_start_map(void *ctx)
{
    return ngx_http_agent_json_tree_open(ctx, yajl_t_object);
}


static int
ngx_http_agent_json_tree_start_array(void *ctx)
{
    return ngx_http_agent_json_tree_open(ctx, yajl_t_array);
}


/* the values an array or object holds, theirs now: off the stack */

static int
ngx_http_agent_json_tree_close(void *ctx)
{
    ngx_http_agent_json_tree_t *t = ctx;

    size_t     n;
    yajl_val   v, *values;

    v = t->open[t->depth];
    n = t->n - t->from[t->depth];

    values = ngx_palloc(t->pool, (n ? n : 1) * sizeof(yajl_val));
    if (values == NULL) {
        return 0;
    }

    ngx_memcpy(values, &t->vals[t->from[t->depth]], n * sizeof(yajl_val));

    if (v->type == yajl_t_object) {
        v->u.object.keys = ngx_palloc(t->pool, (n ? n : 1) * sizeof(char *));
        if (v->u.object.keys == NULL) {
            return 0;
        }

        ngx_memcpy(v->u.object.keys, &t->keys[t->from[t->depth]],
                   n * sizeof(char *));
        v->u.object.values = values;
        v->u.object.len = n;

    } else {
        v->u.array.values = values;
        v->u.array.len = n;
    }

    t->n = t->from[t->depth];
    t->depth--;

    return 1;
}


static yajl_callbacks  ngx_http_agent_json_tree_callbacks = {
    ngx_http_agent_json_tree_null,
    ngx_http_agent_json_tree_bool,
    NULL,
    NULL,
    ngx_http_agent_json_tree_number,
    ngx_http_agent_json_tree_string,
    ngx_http_agent_json_tree_start_map,
    ngx_http_agent_json_tree_key,
    ngx_http_agent_json_tree_close,
    ngx_http_agent_json_tree_start_array,
    ngx_http_agent_json_tree_close
};


/*
 * The tree of len bytes of JSON text (no NUL needed), in the pool; NULL
 * with *err (when err is given) saying why: its first line, as yajl
 * words it, or the nesting past NGX_HTTP_AGENT_JSON_MAX_DEPTH
 */

yajl_val
ngx_http_agent_json_tree(ngx_pool_t *pool, u_char *data, size_t len,
    ngx_str_t *err)
{
    u_char                      *msg, *p;
    yajl_val                     vals[64];
    yajl_handle                  h;
    yajl_status                  st;
    const char                  *keys[64];
    ngx_http_agent_json_tree_t   t;

    ngx_memzero(&t, sizeof(ngx_http_agent_json_tree_t));
    t.pool = pool;
    t.vals = vals;
    t.keys = keys;
    t.size = 64;

    h = yajl_alloc(&ngx_http_agent_json_tree_callbacks, NULL, &t);
    if (h == NULL) {
        if (err) {
            ngx_str_set(err, "out of memory");
        }
        return NULL;
    }

    (void) yajl_config(h, yajl_allow_comments, 1);

    st = yajl_parse(h, data, len);

    if (st == yajl_status_ok) {
        st = yajl_complete_parse(h);
    }

    if (st == yajl_status_ok && t.root) {
        yajl_free(h);
        return t.root;
    }

    if (err) {
        if (t.deep) {
            ngx_str_set(err, "JSON nested deeper than 64 levels");

        } else {
            msg = yajl_get_error(h, 0, data, len);

            p = (u_char *) ngx_strchr(msg, '\n');
            err->len = p ? (size_t) (p - msg) : ngx_strlen(msg);
            err->data = ngx_pnalloc(pool, err->len);

            if (err->data == NULL) {
                err->len = 0;

            } else {
                ngx_memcpy(err->data, msg, err->len);
            }

            yajl_free_error(h, msg);
        }
    }

    yajl_free(h);

    return NULL;
}


yajl_val
ngx_http_agent_json_get(yajl_val obj, const char *key)
{
    size_t  i;

    if (obj == NULL || !YAJL_IS_OBJECT(obj)) {
        return NULL;
    }

    for (i = 0; i < obj->u.object.len; i++) {
        if (ngx_strcmp(obj->u.object.keys[i], key) == 0) {
            return obj->u.object.values[i];
        }
    }

    return NULL;
}


/* NGX_OK, NGX_DECLINED when absent or null, NGX_ERROR when not a string */

ngx_int_t
ngx_http_agent_json_get_str(yajl_val obj, const char *key, ngx_str_t *out)
{
    yajl_val  v;

    v = ngx_http_agent_json_get(obj, key);

    if (v == NULL || YAJL_IS_NULL(v)) {
        return NGX_DECLINED;
    }

    if (!YAJL_IS_STRING(v)) {
        return NGX_ERROR;
    }

    out->data = (u_char *) v->u.string;
    out->len = ngx_strlen(v->u.string);

    return NGX_OK;
}


/*
 * A value within another, as PostgreSQL's jsonb @> for objects: objects
 * by their keys, arrays element for element, the rest equal
 */

ngx_uint_t
ngx_http_agent_json_contains(yajl_val have, yajl_val want)
{
    size_t  i;

    if (have == NULL || have->type != want->type) {
        return 0;
    }

    switch (want->type) {

    case yajl_t_object:
        for (i = 0; i < want->u.object.len; i++) {
            if (!ngx_http_agent_json_contains(
                     ngx_http_agent_json_get(have, want->u.object.keys[i]),
                     want->u.object.values[i]))
            {
                return 0;
            }
        }

        return 1;

    case yajl_t_string:
        return ngx_strcmp(have->u.string, want->u.string) == 0;

    case yajl_t_number:
        return YAJL_GET_DOUBLE(have) == YAJL_GET_DOUBLE(want);

    case yajl_t_array:
        if (have->u.array.len != want->u.array.len) {
            return 0;
        }

        for (i = 0; i < want->u.array.len; i++) {
            if (!ngx_http_agent_json_contains(have->u.array.values[i],
                                            want->u.array.values[i]))
            {
                return 0;
            }
        }

        return 1;

    default:
        /* true, false, null: the same type */
        return 1;
    }
}


/*
 * An object of old's keys that add does not name, then add's: a metadata
 * update (old may be NULL or not an object)
 */

void
ngx_http_agent_json_merge(ngx_http_agent_json_t *j, yajl_val old,
    yajl_val add)
{
    size_t  i;

    ngx_http_agent_json_obj(j);

    for (i = 0; old && YAJL_IS_OBJECT(old) && i < old->u.object.len; i++) {
        if (ngx_http_agent_json_get(add, old->u.object.keys[i]) == NULL) {
            ngx_http_agent_json_cstr(j, old->u.object.keys[i]);
            ngx_http_agent_json_val(j, old->u.object.values[i]);
        }
    }

    for (i = 0; add && YAJL_IS_OBJECT(add) && i < add->u.object.len; i++) {
        ngx_http_agent_json_cstr(j, add->u.object.keys[i]);
        ngx_http_agent_json_val(j, add->u.object.values[i]);
    }

    ngx_http_agent_json_end(j);
}
