
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_json.h"


/*
 * JSON read: text parsed into yajl's tree (freed with its pool), nesting
 * checked before yajl sees it, values looked up.  json.c writes.
 */


static void ngx_http_agent_json_tree_cleanup(void *data);


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
    char                *errbuf;
    u_char              *text;
    yajl_val             v;
    ngx_pool_cleanup_t  *cln;

    text = ngx_pnalloc(pool, len + 1);
    if (text == NULL) {
        return NULL;
    }

    ngx_memcpy(text, data, len);
    text[len] = '\0';

    if (ngx_strlen(text) != len) {
        if (err) {
            ngx_str_set(err, "a NUL byte in JSON text");
        }
        return NULL;
    }

    if (ngx_http_agent_json_depth(text, len) != NGX_OK) {
        if (err) {
            ngx_str_set(err, "JSON nested deeper than 64 levels");
        }
        return NULL;
    }

    cln = ngx_pool_cleanup_add(pool, 0);
    if (cln == NULL) {
        return NULL;
    }

    /* in the pool, not static: SQL tools parse in nginx's threads too */
    errbuf = ngx_pcalloc(pool, 256);
    if (errbuf == NULL) {
        return NULL;
    }

    v = yajl_tree_parse((char *) text, errbuf, 256);

    if (v == NULL) {
        if (err) {
            /* yajl's message spans lines; keep the first */
            err->data = (u_char *) errbuf;
            err->len = ngx_strlen(errbuf);
            text = (u_char *) ngx_strlchr(err->data, err->data + err->len,
                                          '\n');
            if (text) {
                err->len = text - err->data;
            }
        }
        return NULL;
    }

    cln->handler = ngx_http_agent_json_tree_cleanup;
    cln->data = v;

    return v;
}


static void
ngx_http_agent_json_tree_cleanup(void *data)
{
    yajl_tree_free(data);
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
