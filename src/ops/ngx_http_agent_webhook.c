
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#if (NGX_OPENSSL)
#include <openssl/evp.h>
#include <openssl/hmac.h>
#endif

#include "ngx_http_agent_ops.h"
#include "ngx_http_agent_util.h"


/*
 * A run's webhook (the LangGraph API's "webhook"): called once when the
 * run ends, on the curl bridge, with retries and back-off, and only at a
 * URL under a prefix agent_webhooks lists: nothing else is ever contacted.
 * A URL that could leave its prefix (dot segments, encoded or not, a
 * backslash, a prefix without a slash continued by "@host") is refused.
 * Each call is a Standard Webhooks message: webhook-id (the caller's id,
 * the run's: the same on each try and from a worker that takes the run
 * over, so that a receiver drops duplicates) and webhook-timestamp (the
 * try's); with key_env=VAR, webhook-signature: "v1," and the base64 of
 * HMAC-SHA256 of "ID.TIMESTAMP.BODY" under the key in VAR (given to the
 * workers with nginx's "env VAR;"): a receiver refuses a replay of an old
 * delivery by its timestamp, which the signature covers.  A key written
 * "whsec_BASE64" (the convention of Standard Webhooks' libraries) is the
 * bytes it decodes to; any other value is its own bytes.
 */


#define NGX_HTTP_AGENT_WEBHOOK_TRIES     5
#define NGX_HTTP_AGENT_WEBHOOK_BACKOFF   1000    /* doubled each try */
#define NGX_HTTP_AGENT_WEBHOOK_TIMEOUT   10000


typedef struct {
    ngx_pool_t                *pool;
    ngx_str_t                  url;
    ngx_str_t                  id;
    ngx_str_t                  body;       /* with room before it for
                                              "ID.TIMESTAMP.", the
                                              signed content */
    ngx_str_t                  key;        /* empty: not signed */
    ngx_array_t               *headers;    /* ngx_str_t, NUL-terminated */
    ngx_uint_t                 stamped;    /* headers' index of the
                                              timestamp, then signature */
    ngx_uint_t                 tries;
    ngx_event_t                retry;
    ngx_log_t                 *log;
    ngx_http_agent_curl_t     *curl;
} ngx_http_agent_webhook_t;


static char *ngx_http_agent_webhook_key(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
static ngx_int_t ngx_http_agent_webhook_header(ngx_http_agent_webhook_t *wh,
    ngx_str_t *h, const char *name, ngx_str_t *value);
static ngx_int_t ngx_http_agent_webhook_key_read(ngx_http_agent_webhook_t *wh,
    ngx_str_t *key_env);
static ngx_int_t ngx_http_agent_webhook_sign(ngx_http_agent_webhook_t *wh);
static ngx_uint_t ngx_http_agent_webhook_dots(u_char *p, u_char *last);
static void ngx_http_agent_webhook_post(ngx_http_agent_webhook_t *wh);
static void ngx_http_agent_webhook_retry(ngx_event_t *ev);
static void ngx_http_agent_webhook_done(void *data, ngx_int_t rc,
    long status, ngx_str_t *err);


static ngx_http_agent_param_t  ngx_http_agent_webhooks_params[] = {
    { ngx_string("key_env"), ngx_http_agent_webhook_key, 0, NULL },
    ngx_http_agent_null_param
};


/* agent_webhooks URL-PREFIX ... [key_env=VAR] */

char *
ngx_http_agent_webhook_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    char  *p = conf;

    ngx_str_t                   *value, *prefix, name;
    ngx_int_t                    rc;
    ngx_uint_t                   i;
    ngx_http_agent_webhooks_t  **field, *hooks;

    field = (ngx_http_agent_webhooks_t **) (p + cmd->offset);

    if (*field != NGX_CONF_UNSET_PTR) {
        return "is duplicate";
    }

    hooks = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_webhooks_t));
    if (hooks == NULL) {
        return NGX_CONF_ERROR;
    }

    hooks->prefixes = ngx_array_create(cf->pool, 2, sizeof(ngx_str_t));
    if (hooks->prefixes == NULL) {
        return NGX_CONF_ERROR;
    }

    value = cf->args->elts;
    ngx_str_set(&name, "");

    for (i = 1; i < cf->args->nelts; i++) {
        rc = ngx_http_agent_params_word(cf, ngx_http_agent_webhooks_params,
                                        &value[i], hooks, "agent_webhooks",
                                        &name);
        if (rc == NGX_ERROR) {
            return NGX_CONF_ERROR;
        }

        if (rc == NGX_OK) {
            continue;
        }

        if (!((value[i].len > 7
               && ngx_strncasecmp(value[i].data, (u_char *) "http://", 7)
                  == 0)
              || (value[i].len > 8
                  && ngx_strncasecmp(value[i].data, (u_char *) "https://",
                                     8)
                     == 0)))
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "agent_webhooks: "
                               "\"%V\" is not an http:// or https:// URL "
                               "prefix", &value[i]);
            return NGX_CONF_ERROR;
        }

        prefix = ngx_array_push(hooks->prefixes);
        if (prefix == NULL) {
            return NGX_CONF_ERROR;
        }

        *prefix = value[i];
    }

    if (hooks->prefixes->nelts == 0) {
        return "needs at least one URL prefix";
    }

    *field = hooks;

    return NGX_CONF_OK;
}


static char *
ngx_http_agent_webhook_key(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    ngx_http_agent_webhooks_t *hooks = conf;

#if !(NGX_OPENSSL)
    return "needs nginx built with OpenSSL";
#endif

    if (value->len == 0) {
        return "is empty";
    }

    /* NUL-terminated for getenv(): the conf's words are */
    hooks->key_env = *value;

    return NGX_CONF_OK;
}


/*
 * A run's webhook URL, asked for when the run is made: under a listed
 * prefix, and nowhere it could leave it for
 */

ngx_uint_t
ngx_http_agent_webhook_allowed(ngx_http_agent_webhooks_t *hooks,
    ngx_str_t *url)
{
    u_char      c, *p, *last;
    ngx_str_t  *prefix;
    ngx_uint_t  i, query;

    if (hooks == NULL || url->len == 0 || url->len > 2048) {
        return 0;
    }

    p = url->data;
    last = url->data + url->len;
    query = 0;

    for ( /* void */ ; p < last; p++) {
        c = *p;

        if (c <= ' ' || c >= 0x7f || c == '\\' || c == '#') {
            return 0;
        }

        query |= (c == '?');

        if (c == '/' && !query && ngx_http_agent_webhook_dots(p + 1, last)) {
            return 0;
        }
    }

    prefix = hooks->prefixes->elts;

    for (i = 0; i < hooks->prefixes->nelts; i++) {
        if (url->len < prefix[i].len
            || ngx_strncasecmp(url->data, prefix[i].data, prefix[i].len)
               != 0)
        {
            continue;
        }

        /* "http://host:1" is not a prefix of "http://host:1@elsewhere" */

        if (prefix[i].data[prefix[i].len - 1] == '/'
            || url->len == prefix[i].len
            || url->data[prefix[i].len] == '/'
            || url->data[prefix[i].len] == '?')
        {
            return 1;
        }
    }

    return 0;
}


/*
 * a path segment that is a dot segment, "." or "..", each dot plain or
 * encoded (curl would take it out of the path, and the prefix with it);
 * ".well-known" is a segment like any other
 */

static ngx_uint_t
ngx_http_agent_webhook_dots(u_char *p, u_char *last)
{
    ngx_uint_t  dots;

    for (dots = 0; dots < 3; dots++) {
        if (p < last && *p == '.') {
            p++;

        } else if (last - p >= 3 && p[0] == '%' && p[1] == '2'
                   && (p[2] == 'e' || p[2] == 'E'))
        {
            p += 3;

        } else {
            break;
        }
    }

    return (dots == 1 || dots == 2) && (p == last || *p == '/' || *p == '?');
}


/*
 * the body sent, and sent again on a failure, in its own pool; id: the
 * message's, the same for each try and each worker that sends it
 */

ngx_int_t
ngx_http_agent_webhook_send(ngx_http_agent_webhooks_t *hooks, ngx_str_t *url,
    ngx_str_t *body, ngx_str_t *header, ngx_str_t *id, ngx_log_t *log)
{
    size_t                     room;
    ngx_str_t                 *h;
    ngx_pool_t                *pool;
    ngx_http_agent_webhook_t  *wh;

    if (!ngx_http_agent_webhook_allowed(hooks, url)) {
        return NGX_DECLINED;
    }

    pool = ngx_create_pool(1024, ngx_cycle->log);
    if (pool == NULL) {
        return NGX_ERROR;
    }

    wh = ngx_pcalloc(pool, sizeof(ngx_http_agent_webhook_t));
    if (wh == NULL) {
        goto failed;
    }

    wh->pool = pool;
    wh->log = ngx_cycle->log;

    /* the signed content is "ID.TIMESTAMP.BODY": one copy, not one a try */
    room = id->len + NGX_TIME_T_LEN + 2;

    wh->url.data = ngx_pnalloc(pool, url->len + 1);
    wh->id.data = ngx_pnalloc(pool, id->len);
    wh->body.data = ngx_pnalloc(pool, room + body->len + 1);
    wh->headers = ngx_array_create(pool, 4, sizeof(ngx_str_t));

    if (wh->url.data == NULL || wh->id.data == NULL || wh->body.data == NULL
        || wh->headers == NULL)
    {
        goto failed;
    }

    wh->url.len = url->len;
    ngx_cpystrn(wh->url.data, url->data, url->len + 1);
    wh->id.len = id->len;
    ngx_memcpy(wh->id.data, id->data, id->len);
    wh->body.data += room;
    wh->body.len = body->len;
    ngx_memcpy(wh->body.data, body->data, body->len);
    wh->body.data[body->len] = '\0';

    /* the caller's header line ("Name: value", checked by it), or none */

    if (header && header->len) {
        h = ngx_array_push(wh->headers);
        if (h == NULL) {
            goto failed;
        }

        h->data = ngx_pnalloc(pool, header->len + 1);
        if (h->data == NULL) {
            goto failed;
        }

        h->len = header->len;
        ngx_cpystrn(h->data, header->data, header->len + 1);
    }

    h = ngx_array_push_n(wh->headers, 3);
    if (h == NULL
        || ngx_http_agent_webhook_header(wh, h, "webhook-id", &wh->id)
           != NGX_OK)
    {
        goto failed;
    }

    wh->stamped = wh->headers->nelts - 2;

    if (hooks->key_env.len) {
        if (ngx_http_agent_webhook_key_read(wh, &hooks->key_env) != NGX_OK) {
            ngx_log_error(NGX_LOG_ERR, log, 0, "agent: the webhook \"%V\" is "
                          "not called: its key is not in %V (add \"env %V;\" "
                          "to nginx.conf; a \"whsec_\" key is base64)", url,
                          &hooks->key_env, &hooks->key_env);
            goto failed;
        }

    } else {
        wh->headers->nelts--;
    }

    wh->retry.handler = ngx_http_agent_webhook_retry;
    wh->retry.data = wh;
    wh->retry.log = wh->log;

    ngx_http_agent_webhook_post(wh);

    return NGX_OK;

failed:

    ngx_destroy_pool(pool);

    return NGX_ERROR;
}


/* "name: value", NUL-terminated for curl */

static ngx_int_t
ngx_http_agent_webhook_header(ngx_http_agent_webhook_t *wh, ngx_str_t *h,
    const char *name, ngx_str_t *value)
{
    u_char  *p;

    p = ngx_pnalloc(wh->pool, ngx_strlen(name) + 2 + value->len + 1);
    if (p == NULL) {
        return NGX_ERROR;
    }

    h->data = p;
    p = ngx_sprintf(p, "%s: %V", name, value);
    *p = '\0';
    h->len = p - h->data;

    return NGX_OK;
}


/* the key in key_env: "whsec_" and base64, or the value's own bytes */

static ngx_int_t
ngx_http_agent_webhook_key_read(ngx_http_agent_webhook_t *wh,
    ngx_str_t *key_env)
{
    u_char     *key;
    ngx_str_t   src;

    key = (u_char *) getenv((char *) key_env->data);

    if (key == NULL || *key == '\0') {
        return NGX_ERROR;
    }

    src.data = key;
    src.len = ngx_strlen(key);

    if (src.len <= 6 || ngx_strncmp(key, "whsec_", 6) != 0) {
        wh->key = src;
        return NGX_OK;
    }

    src.data += 6;
    src.len -= 6;

    wh->key.data = ngx_pnalloc(wh->pool, ngx_base64_decoded_length(src.len));
    if (wh->key.data == NULL) {
        return NGX_ERROR;
    }

    if (ngx_decode_base64(&wh->key, &src) != NGX_OK || wh->key.len == 0) {
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * a try's webhook-timestamp and, with a key, its webhook-signature:
 * "v1," and the base64 of HMAC-SHA256 of "ID.TIMESTAMP.BODY"
 */

static ngx_int_t
ngx_http_agent_webhook_sign(ngx_http_agent_webhook_t *wh)
{
    u_char         ts[NGX_TIME_T_LEN];
    ngx_str_t     *h, v;
#if (NGX_OPENSSL)
    u_char        *p, md[EVP_MAX_MD_SIZE];
    u_char         sig[sizeof("v1,") + 4 * (EVP_MAX_MD_SIZE + 2) / 3];
    ngx_str_t      s, m;
    unsigned int   len;
#endif

    h = wh->headers->elts;
    h += wh->stamped;

    v.data = ts;
    v.len = ngx_sprintf(ts, "%T", ngx_time()) - ts;

    if (ngx_http_agent_webhook_header(wh, &h[0], "webhook-timestamp", &v)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (wh->key.len == 0) {
        return NGX_OK;
    }

#if (NGX_OPENSSL)

    /* written just before the body, where send() left room for it */
    p = wh->body.data - (wh->id.len + v.len + 2);
    ngx_sprintf(p, "%V.%V.", &wh->id, &v);

    if (HMAC(EVP_sha256(), wh->key.data, (int) wh->key.len, p,
             wh->body.data + wh->body.len - p, md, &len)
        == NULL)
    {
        return NGX_ERROR;
    }

    m.data = md;
    m.len = len;
    s.data = ngx_cpymem(sig, "v1,", 3);
    ngx_encode_base64(&s, &m);
    s.len += 3;
    s.data = sig;

    return ngx_http_agent_webhook_header(wh, &h[1], "webhook-signature", &s);

#else

    return NGX_ERROR;

#endif
}


static void
ngx_http_agent_webhook_post(ngx_http_agent_webhook_t *wh)
{
    wh->tries++;

    /* each try stamped and signed anew: a verifier takes only recent ones */
    if (ngx_http_agent_webhook_sign(wh) != NGX_OK) {
        ngx_http_agent_webhook_done(wh, NGX_ERROR, 0, NULL);
        return;
    }

    wh->curl = ngx_http_agent_curl_create(wh->pool, wh->log);

    if (wh->curl) {
        wh->curl->on_done = ngx_http_agent_webhook_done;
        wh->curl->data = wh;

        if (ngx_http_agent_curl_post(wh->curl, &wh->url, wh->headers,
                                     &wh->body, 5000,
                                     NGX_HTTP_AGENT_WEBHOOK_TIMEOUT)
            == NGX_OK)
        {
            return;
        }
    }

    ngx_http_agent_webhook_done(wh, NGX_ERROR, 0, NULL);
}


static void
ngx_http_agent_webhook_done(void *data, ngx_int_t rc, long status,
    ngx_str_t *err)
{
    ngx_http_agent_webhook_t *wh = data;

    ngx_msec_t  delay;

    if (rc == NGX_OK && status >= 200 && status <= 299) {
        ngx_log_error(NGX_LOG_INFO, wh->log, 0, "agent: webhook \"%V\" "
                      "called (try %ui)", &wh->url, wh->tries);
        ngx_destroy_pool(wh->pool);
        return;
    }

    if (wh->tries >= NGX_HTTP_AGENT_WEBHOOK_TRIES || ngx_exiting
        || ngx_terminate)
    {
        ngx_log_error(NGX_LOG_ERR, wh->log, 0, "agent: webhook \"%V\" not "
                      "taken after %ui tries (status %l%s%V)", &wh->url,
                      wh->tries, status, err ? ": " : "",
                      err ? err : &wh->url);
        ngx_destroy_pool(wh->pool);
        return;
    }

    delay = NGX_HTTP_AGENT_WEBHOOK_BACKOFF << (wh->tries - 1);

    ngx_log_error(NGX_LOG_WARN, wh->log, 0, "agent: webhook \"%V\" not "
                  "taken (status %l), tried again in %Mms", &wh->url, status,
                  delay);

    ngx_add_timer(&wh->retry, delay);
}


static void
ngx_http_agent_webhook_retry(ngx_event_t *ev)
{
    ngx_http_agent_webhook_t *wh = ev->data;

    /* the last try's handle goes with a new one's */
    if (wh->curl) {
        ngx_http_agent_curl_cancel(wh->curl);
    }

    ngx_http_agent_webhook_post(wh);
}
