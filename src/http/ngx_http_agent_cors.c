
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_util.h"


/*
 * Cross-origin clients (a chat UI served by its own dev server): a
 * browser's preflight OPTIONS is answered here, before any endpoint could
 * call OPTIONS a method it does not take, and the answers and event
 * streams of an allowed origin name it.  An origin not listed gets no
 * CORS header at all, so the browser keeps the answer from the page; the
 * request itself is served as any other (CORS is not authentication).
 */


#define NGX_HTTP_AGENT_CORS_METHODS  "GET, POST, PUT, PATCH, DELETE"

/* what the endpoints and the LangGraph SDK send */
#define NGX_HTTP_AGENT_CORS_HEADERS                                           \
    "Content-Type, Authorization, Last-Event-ID, X-Api-Key, traceparent, "    \
    "tracestate"

/* what a client reads of an answer: runs, limits */
#define NGX_HTTP_AGENT_CORS_EXPOSE   "Content-Location, Location, Retry-After"

#define NGX_HTTP_AGENT_CORS_MAX_AGE  "7200"


static ngx_int_t ngx_http_agent_cors_origin_valid(ngx_str_t *o);
static ngx_uint_t ngx_http_agent_cors_allows(ngx_http_agent_cors_t *cors,
    ngx_str_t *origin);
static ngx_int_t ngx_http_agent_cors_add(ngx_http_request_t *r,
    const char *key, ngx_str_t *value);


char *
ngx_http_agent_cors(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_loc_conf_t *alcf = conf;

    ngx_str_t              *value, *o;
    ngx_uint_t              i;
    ngx_http_agent_cors_t  *cors;

    if (alcf->cors != NGX_CONF_UNSET_PTR) {
        return "is duplicate";
    }

    value = cf->args->elts;

    if (cf->args->nelts == 2 && ngx_strcmp(value[1].data, "off") == 0) {
        alcf->cors = NULL;
        return NGX_CONF_OK;
    }

    cors = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_cors_t));
    if (cors == NULL) {
        return NGX_CONF_ERROR;
    }

    cors->origins = ngx_array_create(cf->pool, cf->args->nelts,
                                     sizeof(ngx_str_t));
    if (cors->origins == NULL) {
        return NGX_CONF_ERROR;
    }

    for (i = 1; i < cf->args->nelts; i++) {

        if (ngx_strcmp(value[i].data, "credentials=on") == 0) {
            cors->credentials = 1;
            continue;
        }

        if (value[i].len == 1 && value[i].data[0] == '*') {
            cors->any = 1;
            continue;
        }

        if (ngx_http_agent_cors_origin_valid(&value[i]) != NGX_OK) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "agent_cors: \"%V\" is "
                               "not an origin: scheme://host[:port], no "
                               "path, or \"*\"", &value[i]);
            return NGX_CONF_ERROR;
        }

        o = ngx_array_push(cors->origins);
        if (o == NULL) {
            return NGX_CONF_ERROR;
        }

        *o = value[i];
    }

    if (cors->any && cors->credentials) {
        return "takes \"*\" or credentials=on, never both: any origin "
               "would read what the user's cookies open";
    }

    if (!cors->any && cors->origins->nelts == 0) {
        return "needs an origin, \"*\" or off";
    }

    alcf->cors = cors;

    return NGX_CONF_OK;
}


/*
 * NGX_DECLINED: go on (the answer will carry the headers of an allowed
 * origin); otherwise the preflight's answer, sent.
 */

ngx_int_t
ngx_http_agent_cors_handler(ngx_http_request_t *r,
    ngx_http_agent_cors_t *cors)
{
    ngx_str_t         v;
    ngx_int_t         rc;
    ngx_table_elt_t  *origin;

    if (r != r->main) {
        return NGX_DECLINED;
    }

    origin = ngx_http_agent_header_in(r, "origin", NULL);

    if (!cors->any) {
        /* the answer depends on the Origin: caches must know */
        ngx_str_set(&v, "Origin");

        if (ngx_http_agent_cors_add(r, "Vary", &v) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    if (origin == NULL || !ngx_http_agent_cors_allows(cors, &origin->value)) {
        return NGX_DECLINED;
    }

    if (cors->any) {
        ngx_str_set(&v, "*");

    } else {
        v = origin->value;
    }

    if (ngx_http_agent_cors_add(r, "Access-Control-Allow-Origin", &v)
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (cors->credentials) {
        ngx_str_set(&v, "true");

        if (ngx_http_agent_cors_add(r, "Access-Control-Allow-Credentials",
                                    &v)
            != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    if (r->method != NGX_HTTP_OPTIONS
        || ngx_http_agent_header_in(r, "access-control-request-method",
                                    NULL)
           == NULL)
    {
        ngx_str_set(&v, NGX_HTTP_AGENT_CORS_EXPOSE);

        if (ngx_http_agent_cors_add(r, "Access-Control-Expose-Headers", &v)
            != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        return NGX_DECLINED;
    }

    /* the preflight: what the actual request may be, then no body */

    ngx_str_set(&v, NGX_HTTP_AGENT_CORS_METHODS);

    if (ngx_http_agent_cors_add(r, "Access-Control-Allow-Methods", &v)
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_str_set(&v, NGX_HTTP_AGENT_CORS_HEADERS);

    if (ngx_http_agent_cors_add(r, "Access-Control-Allow-Headers", &v)
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_str_set(&v, NGX_HTTP_AGENT_CORS_MAX_AGE);

    if (ngx_http_agent_cors_add(r, "Access-Control-Max-Age", &v) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_discard_request_body(r) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    r->headers_out.status = NGX_HTTP_NO_CONTENT;
    r->headers_out.content_length_n = 0;
    r->header_only = 1;

    rc = ngx_http_send_header(r);

    return (rc == NGX_ERROR || rc > NGX_OK) ? rc : NGX_OK;
}


/*
 * MCP's transport against DNS rebinding and other sites' pages: an Origin
 * sent is the request's own Host or one agent_cors allows (cors may be
 * NULL); none sent is no browser's page, taken
 */

ngx_uint_t
ngx_http_agent_cors_origin(ngx_http_request_t *r, ngx_http_agent_cors_t *cors)
{
    size_t            len;
    u_char           *p;
    ngx_table_elt_t  *origin, *host;

    origin = ngx_http_agent_header_in(r, "origin", NULL);

    if (origin == NULL) {
        return 1;
    }

    if (cors && ngx_http_agent_cors_allows(cors, &origin->value)) {
        return 1;
    }

    p = origin->value.data;
    len = origin->value.len;

    if (len > 7 && ngx_strncasecmp(p, (u_char *) "http://", 7) == 0) {
        p += 7;
        len -= 7;

    } else if (len > 8 && ngx_strncasecmp(p, (u_char *) "https://", 8) == 0) {
        p += 8;
        len -= 8;

    } else {
        /* "null" (a sandbox, a file) and what no browser writes */
        return 0;
    }

    host = r->headers_in.host;

    return host && host->value.len == len
           && ngx_strncasecmp(host->value.data, p, len) == 0;
}


static ngx_uint_t
ngx_http_agent_cors_allows(ngx_http_agent_cors_t *cors, ngx_str_t *origin)
{
    ngx_str_t   *o;
    ngx_uint_t   i;

    if (cors->any) {
        return 1;
    }

    o = cors->origins->elts;

    for (i = 0; i < cors->origins->nelts; i++) {
        if (o[i].len == origin->len
            && ngx_strncmp(o[i].data, origin->data, o[i].len) == 0)
        {
            return 1;
        }
    }

    return 0;
}


/* scheme://host[:port] as a browser writes an Origin: no path, no user */

static ngx_int_t
ngx_http_agent_cors_origin_valid(ngx_str_t *o)
{
    u_char  *p, *last;

    last = o->data + o->len;

    if (o->len > 7 && ngx_strncmp(o->data, "http://", 7) == 0) {
        p = o->data + 7;

    } else if (o->len > 8 && ngx_strncmp(o->data, "https://", 8) == 0) {
        p = o->data + 8;

    } else {
        return NGX_DECLINED;
    }

    for ( /* void */ ; p < last; p++) {
        if (!(isalnum(*p) || *p == '.' || *p == '-' || *p == ':'
              || *p == '[' || *p == ']'))
        {
            return NGX_DECLINED;
        }
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_cors_add(ngx_http_request_t *r, const char *key,
    ngx_str_t *value)
{
    ngx_table_elt_t  *h;

    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    h->hash = 1;
    h->key.len = ngx_strlen(key);
    h->key.data = (u_char *) key;
    h->value = *value;

    return NGX_OK;
}
