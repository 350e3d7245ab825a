
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"


/*
 * What the providers' request writers share: headers, the tools and the
 * images read back from their provider-neutral JSON, the turns of those
 * that take one role at a time.
 */


/* a header line, NUL-terminated for curl, in the call's pool */

ngx_int_t
ngx_http_agent_provider_header(ngx_http_agent_llm_t *llm,
    ngx_array_t *headers, const char *fmt, ...)
{
    u_char     *p, buf[4096];
    va_list     args;
    ngx_str_t  *h;

    va_start(args, fmt);
    p = ngx_vslprintf(buf, buf + sizeof(buf) - 1, fmt, args);
    va_end(args);

    h = ngx_array_push(headers);
    if (h == NULL) {
        ngx_explicit_memzero(buf, p - buf);
        return NGX_ERROR;
    }

    h->len = p - buf;
    h->data = ngx_pnalloc(llm->pool, h->len + 1);

    if (h->data) {
        ngx_memcpy(h->data, buf, h->len);
        h->data[h->len] = '\0';
    }

    /* the key may have been formatted here */
    ngx_explicit_memzero(buf, p - buf);

    return h->data ? NGX_OK : NGX_ERROR;
}


/*
 * The tools of the call, as OpenAI's array of {"type": "function",
 * "function": {"name", "description", "parameters"}}, parsed for the
 * providers that write them their own way; NULL: none.
 */

yajl_val
ngx_http_agent_provider_tools(ngx_http_agent_llm_t *llm)
{
    yajl_val  v;

    if (llm->req->tools == NULL || llm->req->tools->len == 0) {
        return NULL;
    }

    v = ngx_http_agent_json_parse(llm->pool, llm->req->tools->data,
                                  llm->req->tools->len, NULL);

    if (v == NULL || !YAJL_IS_ARRAY(v) || v->u.array.len == 0) {
        return NULL;
    }

    return v;
}


/* the stored images of a message, [{"mime_type", "data"}]; NULL: none */

yajl_val
ngx_http_agent_provider_images(ngx_http_agent_llm_t *llm,
    ngx_http_agent_msg_t *m)
{
    yajl_val  v;

    if (m->images.len == 0) {
        return NULL;
    }

    v = ngx_http_agent_json_parse(llm->pool, m->images.data, m->images.len,
                                  NULL);

    if (v == NULL || !YAJL_IS_ARRAY(v) || v->u.array.len == 0) {
        return NULL;
    }

    return v;
}


/* image i: its mime type and base64 data; NGX_DECLINED: not both */

ngx_int_t
ngx_http_agent_provider_image(yajl_val images, size_t i, ngx_str_t *mime,
    ngx_str_t *data)
{
    yajl_val  img;

    img = images->u.array.values[i];

    if (ngx_http_agent_json_get_str(img, "mime_type", mime) != NGX_OK
        || ngx_http_agent_json_get_str(img, "data", data) != NGX_OK)
    {
        return NGX_DECLINED;
    }

    return NGX_OK;
}


/*
 * Opens tool t as {"name", "description" and the caller's keys; the
 * "parameters" object, or NULL, in *params.  NGX_DECLINED: no name, and
 * nothing written.
 */

ngx_int_t
ngx_http_agent_provider_function(ngx_http_agent_json_t *j, yajl_val t,
    yajl_val *params)
{
    yajl_val   fn;
    ngx_str_t  s;

    fn = ngx_http_agent_json_get(t, "function");

    if (ngx_http_agent_json_get_str(fn, "name", &s) != NGX_OK) {
        return NGX_DECLINED;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, &s);

    if (ngx_http_agent_json_get_str(fn, "description", &s) == NGX_OK) {
        ngx_http_agent_json_key(j, "description");
        ngx_http_agent_json_str(j, &s);
    }

    *params = ngx_http_agent_json_get(fn, "parameters");

    if (*params && !YAJL_IS_OBJECT(*params)) {
        *params = NULL;
    }

    return NGX_OK;
}


/* a message's tool calls, arguments parsed; NULL: none, or j failed */

ngx_array_t *
ngx_http_agent_provider_calls(ngx_http_agent_json_t *j,
    ngx_http_agent_msg_t *m)
{
    ngx_array_t  *calls;

    if (m->tool_calls.len == 0) {
        return NULL;
    }

    if (ngx_http_agent_message_calls(j->pool, &m->tool_calls, &calls, 1)
        != NGX_OK)
    {
        j->failed = 1;
        return NULL;
    }

    return calls;
}


/* v where a provider wants an object, {} when v is none */

void
ngx_http_agent_provider_object(ngx_http_agent_json_t *j, yajl_val v)
{
    if (v && YAJL_IS_OBJECT(v)) {
        ngx_http_agent_json_val(j, v);
        return;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_end(j);
}


/*
 * The messages as the turns of providers that take one role at a time and
 * no empty message (Anthropic, Gemini): an array of {"role": "user" or
 * ai, key: [parts]}, tool results in the user's turn, messages of one role
 * in a row merged; part() writes the parts of message i.
 */

void
ngx_http_agent_provider_turns(ngx_http_agent_llm_t *llm,
    ngx_http_agent_json_t *j, const char *key, ngx_str_t *ai,
    ngx_http_agent_provider_part_pt part)
{
    ngx_str_t              *role, *prev;
    ngx_uint_t              i;
    ngx_http_agent_msg_t   *m;

    static ngx_str_t  user = ngx_string("user");

    m = llm->req->messages->elts;
    prev = NULL;

    ngx_http_agent_json_arr(j);

    for (i = 0; i < llm->req->messages->nelts; i++) {
        if (m[i].content.len == 0 && m[i].images.len == 0
            && m[i].tool_calls.len == 0 && m[i].tool_call_id.len == 0)
        {
            /* an empty part is refused: an empty message says nothing */
            continue;
        }

        role = (m[i].role.len == 9
                && ngx_strncmp(m[i].role.data, "assistant", 9) == 0)
               ? ai : &user;

        if (role != prev) {
            if (prev) {
                ngx_http_agent_json_arr_end(j);
                ngx_http_agent_json_end(j);
            }

            ngx_http_agent_json_obj(j);
            ngx_http_agent_json_key(j, "role");
            ngx_http_agent_json_str(j, role);
            ngx_http_agent_json_cstr(j, key);      /* a key */
            ngx_http_agent_json_arr(j);

            prev = role;
        }

        part(llm, j, &m[i], i);
    }

    if (prev) {
        ngx_http_agent_json_arr_end(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
}


/*
 * an integer field of a usage object; 0 when missing, and at most what one
 * call can count, so that sums of them stay far from overflowing
 */

int64_t
ngx_http_agent_provider_int(yajl_val v, const char *name)
{
    yajl_val  n;

    n = ngx_http_agent_json_get(v, name);

    if (n == NULL || !YAJL_IS_INTEGER(n) || YAJL_GET_INTEGER(n) < 0) {
        return 0;
    }

    if (YAJL_GET_INTEGER(n) > NGX_MAX_INT32_VALUE) {
        return NGX_MAX_INT32_VALUE;
    }

    return YAJL_GET_INTEGER(n);
}


/*
 * An embeddings answer's vectors: list holds one object per input, its
 * key an array of numbers, all of one length (the dims asked, if any),
 * kept as float32 in llm->req->vectors
 */

ngx_int_t
ngx_http_agent_provider_vectors(ngx_http_agent_llm_t *llm, yajl_val list,
    const char *key)
{
    float                     *f;
    size_t                     i, k, n, dims;
    yajl_val                   a, x;
    ngx_http_agent_llm_req_t  *req;

    req = llm->req;
    n = req->inputs->nelts;

    if (list == NULL || !YAJL_IS_ARRAY(list) || list->u.array.len != n) {
        return ngx_http_agent_llm_fail(llm, "the model's embeddings are not "
                                       "one vector per text");
    }

    dims = 0;
    f = NULL;

    for (i = 0; i < n; i++) {
        a = ngx_http_agent_json_get(list->u.array.values[i], key);

        if (a == NULL || !YAJL_IS_ARRAY(a) || a->u.array.len == 0
            || a->u.array.len > NGX_HTTP_AGENT_LLM_MAX_DIMS
            || (dims && a->u.array.len != dims))
        {
            return ngx_http_agent_llm_fail(llm, "the model's embeddings are "
                                           "not vectors of one length");
        }

        if (f == NULL) {
            dims = a->u.array.len;

            if (req->dims && dims != req->dims) {
                return ngx_http_agent_llm_fail(llm, "the model answered "
                                               "vectors of %uz dimensions, "
                                               "not %ui", dims, req->dims);
            }

            f = ngx_palloc(llm->pool, n * dims * sizeof(float));
            if (f == NULL) {
                return ngx_http_agent_llm_fail(llm, "out of memory");
            }

            req->vectors = f;
            req->dims = dims;
        }

        for (k = 0; k < dims; k++) {
            x = a->u.array.values[k];

            if (!YAJL_IS_NUMBER(x)) {
                return ngx_http_agent_llm_fail(llm, "the model's embeddings "
                                               "hold what is not a number");
            }

            *f++ = (float) YAJL_GET_DOUBLE(x);
        }
    }

    return NGX_OK;
}
