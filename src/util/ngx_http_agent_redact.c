
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"


/*
 * redact=REGEX of a tools node: what the expressions match in a tool's
 * result is replaced before the model, the stream or the store sees it.
 */


#define NGX_HTTP_AGENT_REDACTED  "[redacted]"


static void ngx_http_agent_redact_value(ngx_http_agent_json_t *j,
    ngx_array_t *re, yajl_val v);


/* the result parsed and written anew, every string redacted */

ngx_int_t
ngx_http_agent_redact(ngx_pool_t *pool, ngx_array_t *re, ngx_str_t *json)
{
    yajl_val                v;
    ngx_http_agent_json_t  *j;

    v = ngx_http_agent_json_parse(pool, json->data, json->len, NULL);
    if (v == NULL) {
        return NGX_ERROR;
    }

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_redact_value(j, re, v);

    return ngx_http_agent_json_done(j, json);
}


static void
ngx_http_agent_redact_value(ngx_http_agent_json_t *j, ngx_array_t *re,
    yajl_val v)
{
    int            captures[3];
    u_char        *d, *buf;
    size_t         i, size;
    ngx_str_t      s, out;
    ngx_int_t      rc;
    ngx_uint_t     k;
    ngx_regex_t  **rx;

    if (YAJL_IS_OBJECT(v)) {
        ngx_http_agent_json_obj(j);

        for (i = 0; i < v->u.object.len; i++) {
            ngx_http_agent_json_cstr(j, v->u.object.keys[i]);
            ngx_http_agent_redact_value(j, re, v->u.object.values[i]);
        }

        ngx_http_agent_json_end(j);
        return;
    }

    if (YAJL_IS_ARRAY(v)) {
        ngx_http_agent_json_arr(j);

        for (i = 0; i < v->u.array.len; i++) {
            ngx_http_agent_redact_value(j, re, v->u.array.values[i]);
        }

        ngx_http_agent_json_arr_end(j);
        return;
    }

    if (!YAJL_IS_STRING(v)) {
        ngx_http_agent_json_val(j, v);
        return;
    }

    out.data = (u_char *) YAJL_GET_STRING(v);
    out.len = ngx_strlen(out.data);

    rx = re->elts;

    for (k = 0; k < re->nelts; k++) {

        /* at most one "[redacted]" per byte matched, or per empty match */
        size = out.len * (sizeof(NGX_HTTP_AGENT_REDACTED) + 1) + 1;

        buf = ngx_pnalloc(j->pool, size);
        if (buf == NULL) {
            j->failed = 1;
            return;
        }

        d = buf;
        s = out;

        while (s.len) {
            rc = ngx_regex_exec(rx[k], &s, captures, 3);

            if (rc < 0 || captures[1] == 0) {
                break;
            }

            d = ngx_cpymem(d, s.data, captures[0]);
            d = ngx_cpymem(d, NGX_HTTP_AGENT_REDACTED,
                           sizeof(NGX_HTTP_AGENT_REDACTED) - 1);

            s.data += captures[1];
            s.len -= captures[1];
        }

        d = ngx_cpymem(d, s.data, s.len);

        out.data = buf;
        out.len = d - buf;
    }

    ngx_http_agent_json_str(j, &out);
}
