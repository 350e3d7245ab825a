
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http_int.h"
#include "ngx_http_agent_http.h"


/*
 * nginx answers some errors itself, before or while the module reads the
 * request: a body over client_max_body_size (by Content-Length, chunked or
 * HTTP/2, counted as it arrives), a broken chunked body, a body timeout.
 * Its answer is an HTML page; in the module's locations these filters turn
 * it into the contract's {"error": "..."} so every non-streaming answer is
 * JSON.  nginx keeps enforcing the limits, early and without spooling the
 * rest of the body: the module only changes the words.
 */


typedef struct {
    ngx_str_t                  json;
    unsigned                   sent:1;
} ngx_http_agent_filter_ctx_t;


static ngx_int_t ngx_http_agent_filter_header(ngx_http_request_t *r);
static ngx_int_t ngx_http_agent_filter_body(ngx_http_request_t *r,
    ngx_chain_t *in);
static void ngx_http_agent_filter_text(ngx_http_request_t *r,
    ngx_uint_t status, ngx_str_t *text, u_char *buf, size_t size);


static ngx_int_t ngx_http_agent_filter_init(ngx_conf_t *cf);


/* a module of its own: the filters keep their ctx apart from the handler */
static ngx_http_module_t  ngx_http_agent_filter_module_ctx = {
    NULL, ngx_http_agent_filter_init,      /* postconfiguration alone */
    NULL, NULL, NULL, NULL, NULL, NULL
};


ngx_module_t  ngx_http_agent_filter_module =
    NGX_HTTP_AGENT_MODULE(&ngx_http_agent_filter_module_ctx, NULL, NULL);


static ngx_http_output_header_filter_pt  ngx_http_agent_next_header_filter;
static ngx_http_output_body_filter_pt    ngx_http_agent_next_body_filter;

static ngx_str_t  ngx_http_agent_filter_type =
    ngx_string("application/json");
static ngx_str_t  ngx_http_agent_filter_text_type =
    ngx_string("text/plain; charset=utf-8");


static ngx_int_t
ngx_http_agent_filter_init(ngx_conf_t *cf)
{
    ngx_http_agent_next_header_filter = ngx_http_top_header_filter;
    ngx_http_top_header_filter = ngx_http_agent_filter_header;

    ngx_http_agent_next_body_filter = ngx_http_top_body_filter;
    ngx_http_top_body_filter = ngx_http_agent_filter_body;

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_filter_header(ngx_http_request_t *r)
{
    u_char                        buf[256];
    ngx_str_t                     text;
    ngx_uint_t                    detail;
    ngx_http_agent_loc_conf_t    *alcf;
    ngx_http_agent_filter_ctx_t  *fctx;

    if (r != r->main || r->err_status < NGX_HTTP_BAD_REQUEST) {
        return ngx_http_agent_next_header_filter(r);
    }

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    if (alcf == NULL || alcf->proto == NULL
        || r->headers_out.status != r->err_status)
    {
        return ngx_http_agent_next_header_filter(r);
    }

    ngx_http_agent_filter_text(r, r->err_status, &text, buf, sizeof(buf));

    fctx = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_filter_ctx_t));
    if (fctx == NULL) {
        return NGX_ERROR;
    }

    /* the LangGraph API's errors as ours (ngx_http_agent_reply_plain) */

    detail = alcf->proto->flags & NGX_HTTP_AGENT_PROTO_DETAIL;

    if (detail && ngx_http_agent_reply_plain(r)) {
        fctx->json.data = ngx_pstrdup(r->pool, &text);
        if (fctx->json.data == NULL) {
            return NGX_ERROR;
        }

        fctx->json.len = text.len;
        r->headers_out.content_type = ngx_http_agent_filter_text_type;

    } else {
        if (ngx_http_agent_reply_error_json(r->pool, detail, &text,
                                            &fctx->json)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        r->headers_out.content_type = ngx_http_agent_filter_type;
    }

    /* the body filter finds its text here; nginx's page is dropped */
    r->headers_out.content_type_len = r->headers_out.content_type.len;
    r->headers_out.content_type_lowcase = NULL;
    r->headers_out.charset.len = 0;
    r->headers_out.content_length_n = fctx->json.len + 1;

    if (r->headers_out.content_length) {
        r->headers_out.content_length->hash = 0;
        r->headers_out.content_length = NULL;
    }

    ngx_http_set_ctx(r, fctx, ngx_http_agent_filter_module);

    return ngx_http_agent_next_header_filter(r);
}


static ngx_int_t
ngx_http_agent_filter_body(ngx_http_request_t *r, ngx_chain_t *in)
{
    ngx_buf_t                    *b;
    ngx_uint_t                    last;
    ngx_chain_t                   out, *cl;
    ngx_http_agent_filter_ctx_t  *fctx;

    fctx = ngx_http_get_module_ctx(r, ngx_http_agent_filter_module);

    if (fctx == NULL || in == NULL) {
        return ngx_http_agent_next_body_filter(r, in);
    }

    last = 0;

    for (cl = in; cl; cl = cl->next) {
        if (cl->buf->last_buf) {
            last = 1;
        }

        /* nginx's page is static or pool memory: mark it as sent */
        cl->buf->pos = cl->buf->last;
    }

    if (fctx->sent) {
        if (!last) {
            return NGX_OK;
        }

        b = ngx_calloc_buf(r->pool);
        if (b == NULL) {
            return NGX_ERROR;
        }

        b->last_buf = 1;

    } else {
        b = ngx_calloc_buf(r->pool);
        if (b == NULL) {
            return NGX_ERROR;
        }

        b->pos = ngx_pnalloc(r->pool, fctx->json.len + 1);
        if (b->pos == NULL) {
            return NGX_ERROR;
        }

        b->last = ngx_cpymem(b->pos, fctx->json.data, fctx->json.len);
        *b->last++ = '\n';
        b->memory = 1;
        b->last_buf = last;
        b->flush = !last;
        fctx->sent = 1;
    }

    out.buf = b;
    out.next = NULL;

    return ngx_http_agent_next_body_filter(r, &out);
}


static void
ngx_http_agent_filter_text(ngx_http_request_t *r, ngx_uint_t status,
    ngx_str_t *text, u_char *buf, size_t size)
{
    u_char                    *p;
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);

    switch (status) {

    case NGX_HTTP_BAD_REQUEST:
        p = ngx_snprintf(buf, size, "the request could not be read: its "
                         "syntax or its body's framing is wrong");
        break;

    case NGX_HTTP_REQUEST_TIME_OUT:
        p = ngx_snprintf(buf, size, "the request body did not arrive in "
                         "time (client_body_timeout)");
        break;

    case NGX_HTTP_LENGTH_REQUIRED:
        p = ngx_snprintf(buf, size, "send the body with Content-Length or "
                         "chunked");
        break;

    case NGX_HTTP_REQUEST_ENTITY_TOO_LARGE:
        p = ngx_snprintf(buf, size, "the request body is larger than %O "
                         "bytes (client_max_body_size)",
                         clcf->client_max_body_size);
        break;

    case NGX_HTTP_REQUEST_URI_TOO_LARGE:
        p = ngx_snprintf(buf, size, "the request line is too long");
        break;

    case NGX_HTTP_REQUEST_HEADER_TOO_LARGE:
        p = ngx_snprintf(buf, size, "the request headers are too large");
        break;

    case NGX_HTTP_INTERNAL_SERVER_ERROR:
        p = ngx_snprintf(buf, size, "internal error: the server's error "
                         "log says why");
        break;

    case NGX_HTTP_SERVICE_UNAVAILABLE:
        p = ngx_snprintf(buf, size, "the service is unavailable, try "
                         "again later");
        break;

    default:
        p = ngx_snprintf(buf, size, "the request failed with status %ui",
                         status);
        break;
    }

    text->data = buf;
    text->len = p - buf;
}
