
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_ops.h"
#include "ngx_http_agent_engine.h"


/*
 * One model call, whichever the provider: the request its provider writes,
 * sent by the curl bridge, the answer read by the stream parser.  When the
 * provider cannot be reached, answers 408, 429 or 5xx, or no token comes,
 * and nothing of the answer has come yet, the call is tried again after a
 * backoff on an nginx timer (Retry-After honoured), then on the model's
 * fallback.  Once a token has come a failure is the call's failure: the
 * client has seen text, so a restart would not be silent.
 */


#define NGX_HTTP_AGENT_LLM_MAX_ERRBODY  4096
#define NGX_HTTP_AGENT_LLM_MAX_DELAY    30000
#define NGX_HTTP_AGENT_LLM_MAX_WAIT     60000
#define NGX_HTTP_AGENT_LLM_MAX_HOPS     8
#define NGX_HTTP_AGENT_LLM_MAX_EMBEDDED (64 * 1024 * 1024)


static ngx_int_t ngx_http_agent_llm_use(ngx_http_agent_llm_t *llm,
    ngx_http_agent_model_t *model);
static ngx_int_t ngx_http_agent_llm_attempt(ngx_http_agent_llm_t *llm);
static ngx_int_t ngx_http_agent_llm_send(ngx_http_agent_llm_t *llm,
    ngx_str_t *url, ngx_array_t *headers, ngx_str_t *body);
static void ngx_http_agent_llm_looked(ngx_http_agent_store_call_t *sc);
static ngx_int_t ngx_http_agent_llm_data(void *data, u_char *p, size_t len);
static void ngx_http_agent_llm_done(void *data, ngx_int_t rc, long status,
    ngx_str_t *err);
static ngx_int_t ngx_http_agent_llm_embedded(ngx_http_agent_llm_t *llm);
static void ngx_http_agent_llm_status(ngx_http_agent_llm_t *llm,
    long status);
static void ngx_http_agent_llm_again(ngx_http_agent_llm_t *llm);
static void ngx_http_agent_llm_failed(ngx_http_agent_llm_t *llm);
static void ngx_http_agent_llm_retry_handler(ngx_event_t *ev);
static void ngx_http_agent_llm_first_handler(ngx_event_t *ev);
static void ngx_http_agent_llm_timers(ngx_http_agent_llm_t *llm);
static void ngx_http_agent_llm_cleanup(void *data);


ngx_http_agent_llm_t *
ngx_http_agent_llm_create(ngx_pool_t *pool, ngx_log_t *log)
{
    ngx_pool_cleanup_t    *cln;
    ngx_http_agent_llm_t  *llm;

    llm = ngx_pcalloc(pool, sizeof(ngx_http_agent_llm_t));
    if (llm == NULL) {
        return NULL;
    }

    cln = ngx_pool_cleanup_add(pool, 0);
    if (cln == NULL) {
        return NULL;
    }

    cln->handler = ngx_http_agent_llm_cleanup;
    cln->data = llm;

    llm->pool = pool;
    llm->log = log;
    llm->block = -1;
    llm->retry_after = -1;

    llm->retry.handler = ngx_http_agent_llm_retry_handler;
    llm->retry.data = llm;
    llm->retry.log = log;
    llm->first.handler = ngx_http_agent_llm_first_handler;
    llm->first.data = llm;
    llm->first.log = log;

    return llm;
}


ngx_int_t
ngx_http_agent_llm_call(ngx_http_agent_llm_t *llm,
    ngx_http_agent_model_t *model, ngx_http_agent_llm_req_t *req)
{
    ngx_array_t  *paired;

    paired = req->messages;
    llm->req = req;
    llm->prefix_messages = NULL;

    /*
     * every tool call answered, every result with its call: or a 400; the
     * history the session's last request sent is checked already
     */
    if (req->inputs == NULL
        && ngx_http_agent_message_pair(llm->pool, req->messages,
                                       ngx_http_agent_llm_prefix_paired(llm),
                                       &paired)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (paired != req->messages) {
        ngx_log_error(NGX_LOG_INFO, llm->log, 0, "agent: tool calls left "
                      "open in the history closed for the provider");
        req->messages = paired;
        req->history = ngx_min(req->history, paired->nelts);
    }

    llm->req = req;
    llm->start = ngx_current_msec;
    ngx_str_null(&llm->cache_key);
    llm->cache_text = NULL;
    llm->cache_hit = 0;
    llm->cache_similar = 0;
    llm->similar = NULL;
    llm->ttft = 0;
    llm->hops = 0;

    if (ngx_http_agent_llm_use(llm, model) != NGX_OK) {
        ngx_log_error(NGX_LOG_ERR, llm->log, 0, "agent: %V",
                      ngx_http_agent_json_log_str(llm->pool, &llm->error));
        return NGX_ERROR;
    }

    return NGX_OK;
}


void
ngx_http_agent_llm_cancel(ngx_http_agent_llm_t *llm)
{
    ngx_http_agent_llm_timers(llm);

    if (llm->curl && llm->curl->easy && llm->model) {
        /* stopped while the provider answers: no token paid after this */
        ngx_http_agent_metrics_cstr(NGX_HTTP_AGENT_M_MODEL_CALLS,
                                    &llm->model->name, "cancelled", 1);
    }

    if (llm->curl) {
        ngx_http_agent_curl_cancel(llm->curl);
    }
}


/* the model's API key from its key_env; NGX_DECLINED: not set */

ngx_int_t
ngx_http_agent_llm_key(ngx_http_agent_model_t *model, ngx_str_t *key)
{
    u_char  *p;

    ngx_str_null(key);

    if (model->key_env.len == 0) {
        return NGX_OK;
    }

    p = (u_char *) getenv((char *) model->key_env.data);

    if (p == NULL || *p == '\0') {
        return NGX_DECLINED;
    }

    key->data = p;
    key->len = ngx_strlen(p);

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_llm_use(ngx_http_agent_llm_t *llm,
    ngx_http_agent_model_t *model)
{
    llm->model = model;
    llm->provider = model->provider;
    llm->attempt = 0;

    if (ngx_http_agent_llm_key(model, &llm->key) != NGX_OK) {
        ngx_http_agent_llm_reset(llm);
        return ngx_http_agent_llm_fail(llm, "the model \"%V\" has no API "
                                       "key: set %V and add \"env %V;\" "
                                       "to nginx.conf", &model->name,
                                       &model->key_env, &model->key_env);
    }

    return ngx_http_agent_llm_attempt(llm);
}


static ngx_int_t
ngx_http_agent_llm_attempt(ngx_http_agent_llm_t *llm)
{
    uint64_t                 t;
    ngx_str_t                url, body, *h;
    ngx_int_t                rc;
    ngx_uint_t               i;
    ngx_pool_t              *pool;
    ngx_array_t             *headers;
    ngx_http_agent_model_t  *m;

    m = llm->model;

    ngx_http_agent_llm_reset(llm);

    if (llm->req->inputs && llm->provider->embed == NULL) {
        llm->retryable = 1;
        return ngx_http_agent_llm_fail(llm, "the model \"%V\" has no "
                                       "embeddings", &m->name);
    }

    /*
     * the request (the body, what was parsed to write it, the headers) is
     * made in a pool of the attempt, freed once the provider has it all
     * and answers: an open stream does not keep the conversation it sent
     */

    if (llm->request) {
        ngx_destroy_pool(llm->request);
    }

    llm->request = ngx_create_pool(4096, llm->log);
    if (llm->request == NULL) {
        return ngx_http_agent_llm_fail(llm, "out of memory");
    }

    pool = llm->pool;
    llm->pool = llm->request;

    headers = ngx_array_create(llm->pool, 8, sizeof(ngx_str_t));
    llm->body_kept.len = 0;

    t = ngx_http_agent_phase_now();

    if (headers == NULL) {
        rc = NGX_ERROR;

    } else if (llm->req->inputs) {
        rc = llm->provider->embed(llm, &url, headers, &body);

    } else {
        rc = llm->provider->request(llm, &url, headers, &body);
    }

    ngx_http_agent_phase_add(NGX_HTTP_AGENT_PHASE_REQUEST, t);

    h = m->headers ? m->headers->elts : NULL;

    for (i = 0; rc == NGX_OK && m->headers && i < m->headers->nelts; i++) {
        rc = ngx_http_agent_provider_header(llm, headers, "%V", &h[i]);
    }

    llm->pool = pool;

    if (rc != NGX_OK) {
        return ngx_http_agent_llm_fail(llm, "the request to the model "
                                       "\"%V\" could not be built",
                                       &m->name);
    }

    /* the same request's answer kept: replayed, or looked up later */

    if (llm->req->cache && llm->req->inputs == NULL && llm->attempt == 0
        && llm->hops == 0)
    {
        llm->cache_url = url;
        llm->cache_headers = headers;
        llm->cache_body = body;

        rc = ngx_http_agent_llm_cache_look(llm, ngx_http_agent_llm_looked);

        if (rc != NGX_DECLINED) {
            return rc;
        }
    }

    return ngx_http_agent_llm_send(llm, &url, headers, &body);
}


/* the cache answered later: a miss is sent as the attempt would have */

static void
ngx_http_agent_llm_looked(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_llm_t *llm = sc->data;

    ngx_int_t  rc;

    sc->n = 0;

    rc = ngx_http_agent_llm_cache_pass(llm);

    if (rc == NGX_DECLINED) {
        rc = ngx_http_agent_llm_send(llm, &llm->cache_url,
                                     llm->cache_headers, &llm->cache_body);
    }

    if (rc != NGX_OK) {
        ngx_http_agent_llm_failed(llm);
    }
}


/* the request to the provider, its answer read as it comes */

static ngx_int_t
ngx_http_agent_llm_send(ngx_http_agent_llm_t *llm, ngx_str_t *url,
    ngx_array_t *headers, ngx_str_t *body)
{
    uint64_t                 t;
    ngx_str_t               *h, parts[3];
    ngx_int_t                rc;
    ngx_uint_t               i, n;
    ngx_msec_t               connect, timeout;
    ngx_http_agent_model_t  *m;

    m = llm->model;

    /* the kept text where it is, between the body's two halves */

    parts[0] = *body;
    n = 1;

    if (llm->body_kept.len) {
        parts[0].len = llm->body_at;
        parts[1] = llm->body_kept;
        parts[2].data = body->data + llm->body_at;
        parts[2].len = body->len - llm->body_at;
        n = 3;
    }

    if (llm->curl == NULL) {
        llm->curl = ngx_http_agent_curl_create(llm->pool, llm->log);
        if (llm->curl == NULL) {
            return ngx_http_agent_llm_fail(llm, "out of memory");
        }
    }

    llm->curl->on_data = ngx_http_agent_llm_data;
    llm->curl->on_done = ngx_http_agent_llm_done;
    llm->curl->data = llm;
    llm->curl->idle_timeout = m->idle_timeout != NGX_CONF_UNSET_MSEC
                              ? m->idle_timeout : llm->req->idle_timeout;

    connect = m->connect_timeout != NGX_CONF_UNSET_MSEC
              ? m->connect_timeout : llm->req->connect_timeout;
    timeout = m->timeout != NGX_CONF_UNSET_MSEC
              ? m->timeout : llm->req->timeout;

    t = ngx_http_agent_phase_now();

    rc = ngx_http_agent_curl_post_parts(llm->curl, url, headers, parts, n,
                                        connect, timeout);

    ngx_http_agent_phase_add(NGX_HTTP_AGENT_PHASE_CURL, t);

    /* curl has copied the headers: the key is not left in the pool */

    h = headers->elts;

    for (i = 0; i < headers->nelts; i++) {
        ngx_explicit_memzero(h[i].data, h[i].len);
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_llm_fail(llm, "the request to the model "
                                       "\"%V\" could not be started",
                                       &m->name);
    }

    if (m->first_token_timeout && llm->ttft == 0) {
        ngx_add_timer(&llm->first, m->first_token_timeout);
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_llm_data(void *data, u_char *p, size_t len)
{
    ngx_http_agent_llm_t *llm = data;

    uint64_t   t;
    ngx_int_t  rc;

    if (llm->status == 0) {
        curl_easy_getinfo(llm->curl->easy, CURLINFO_RESPONSE_CODE,
                          &llm->status);
    }

    if (llm->status != 200) {
        /* keep the start of an error body to quote it */
        if (llm->errbody.len < NGX_HTTP_AGENT_LLM_MAX_ERRBODY) {
            len = ngx_min(len,
                          NGX_HTTP_AGENT_LLM_MAX_ERRBODY - llm->errbody.len);
            return ngx_http_agent_llm_buf_add(llm->pool, &llm->errbody, p,
                                              len, (size_t) -1);
        }

        return NGX_OK;
    }

    if (llm->request && ngx_http_agent_curl_sent(llm->curl)) {
        ngx_destroy_pool(llm->request);
        llm->request = NULL;
    }

    if (llm->req->inputs) {
        /* one JSON document, not a stream: read when it has all come */
        if (llm->first.timer_set) {
            ngx_del_timer(&llm->first);
        }

        return ngx_http_agent_llm_buf_add(llm->pool, &llm->content, p, len,
                                          NGX_HTTP_AGENT_LLM_MAX_EMBEDDED);
    }

    t = ngx_http_agent_phase_now();

    rc = ngx_http_agent_llm_parse(llm, p, len);

    ngx_http_agent_phase_add(NGX_HTTP_AGENT_PHASE_ANSWER, t);

    if (llm->answered && llm->ttft == 0) {
        llm->ttft = ngx_max(ngx_current_msec - llm->start, 1);

        if (llm->first.timer_set) {
            ngx_del_timer(&llm->first);
        }
    }

    return rc;
}


static void
ngx_http_agent_llm_done(void *data, ngx_int_t rc, long status,
    ngx_str_t *err)
{
    ngx_http_agent_llm_t *llm = data;

    if (llm->first.timer_set) {
        ngx_del_timer(&llm->first);
    }

    if (llm->failed) {
        if (llm->error.len == 0) {
            /* the consumer stopped the stream: the client went away */
            ngx_http_agent_metrics_cstr(NGX_HTTP_AGENT_M_MODEL_CALLS,
                                        &llm->model->name, "cancelled", 1);
            llm->on_done(llm->data, NGX_ERROR);
            return;
        }

        /*
         * the provider's stream was not what its protocol says, or it
         * reported an error in it, which may be tried again
         */
        ngx_http_agent_llm_again(llm);
        return;
    }

    llm->retry_after = llm->curl->retry_after;

    if (rc != NGX_OK) {
        ngx_http_agent_llm_fail(llm, "the model provider failed: %V", err);
        llm->retryable = !llm->answered;
        ngx_http_agent_llm_again(llm);
        return;
    }

    if (status != 200) {
        ngx_http_agent_llm_status(llm, status);
        ngx_http_agent_llm_again(llm);
        return;
    }

    if (llm->req->inputs) {
        if (ngx_http_agent_llm_embedded(llm) != NGX_OK) {
            /* nothing reached the client yet: tried again as a whole */
            llm->retryable = 1;
            ngx_http_agent_llm_again(llm);
            return;
        }

    } else if (ngx_http_agent_llm_end(llm) != NGX_OK) {
        llm->retryable = !llm->answered;
        ngx_http_agent_llm_again(llm);
        return;

    } else if (llm->cache_key.len && llm->hops == 0) {
        ngx_http_agent_llm_cache_put(llm);
    }

    ngx_http_agent_metrics_cstr(NGX_HTTP_AGENT_M_MODEL_CALLS,
                                &llm->model->name, "ok", 1);

    llm->on_done(llm->data, NGX_OK);
}


/* an embeddings answer: its vectors, and the tokens counted */

static ngx_int_t
ngx_http_agent_llm_embedded(ngx_http_agent_llm_t *llm)
{
    yajl_val  v;

    v = ngx_http_agent_json_parse(llm->pool, llm->content.data,
                                  llm->content.len, NULL);
    if (v == NULL || !YAJL_IS_OBJECT(v)) {
        return ngx_http_agent_llm_fail(llm, "the model's embeddings are not "
                                       "a JSON object");
    }

    return llm->provider->embedded(llm, v);
}


/* a status other than 200: the provider's own words, if it gave JSON */

static void
ngx_http_agent_llm_status(ngx_http_agent_llm_t *llm, long status)
{
    yajl_val    v, e;
    ngx_str_t   msg;

    ngx_str_null(&msg);

    if (llm->errbody.len) {
        v = ngx_http_agent_json_parse(llm->pool, llm->errbody.data,
                                      llm->errbody.len, NULL);
        e = ngx_http_agent_json_get(v, "error");

        /*
         * only a message the provider put in its JSON error, and only its
         * start: an HTML page or any other body is not passed on
         */
        if (ngx_http_agent_json_get_str(e, "message", &msg) != NGX_OK
            && ngx_http_agent_json_get_str(v, "error", &msg) != NGX_OK)
        {
            ngx_str_null(&msg);
        }

        ngx_http_agent_llm_excerpt(llm, &msg);
    }

    ngx_http_agent_llm_fail(llm, "the model provider answered %l%s%V",
                            status, msg.len ? ": " : "", &msg);

    llm->retryable = (status == 408 || status == 429 || status >= 500);
}


/* after a failure: again, or the fallback, or the call has failed */

static void
ngx_http_agent_llm_again(ngx_http_agent_llm_t *llm)
{
    ngx_msec_t               delay;
    ngx_http_agent_model_t  *m, *next;

    m = llm->model;

    ngx_http_agent_llm_hide_key(llm, &llm->error);

    if (!llm->retryable) {
        ngx_http_agent_llm_failed(llm);
        return;
    }

    if (llm->attempt < m->retries) {

        /* exponential, with jitter: half of it fixed, half random */

        delay = m->backoff << ngx_min(llm->attempt, 16);
        delay = ngx_min(delay, NGX_HTTP_AGENT_LLM_MAX_DELAY);
        delay = delay / 2 + (delay ? (ngx_msec_t) ngx_random() % (delay / 2
                                                                  + 1)
                                   : 0);

        if (llm->retry_after >= 0) {
            if (llm->retry_after * 1000 > NGX_HTTP_AGENT_LLM_MAX_WAIT) {
                /* longer than a turn should wait: the fallback, if any */
                goto fallback;
            }

            delay = ngx_max(delay, (ngx_msec_t) llm->retry_after * 1000);
        }

        llm->attempt++;

        ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_RETRIES, &m->name, NULL,
                                   1);

        ngx_log_error(NGX_LOG_WARN, llm->log, 0,
                      "agent: model \"%V\": %V; try %ui of %ui in %M ms",
                      &m->name,
                      ngx_http_agent_json_log_str(llm->pool, &llm->error),
                      llm->attempt + 1,
                      m->retries + 1, delay);

        ngx_add_timer(&llm->retry, delay);
        return;
    }

fallback:

    next = m->fallback;

    if (next == NULL || llm->hops >= NGX_HTTP_AGENT_LLM_MAX_HOPS) {
        ngx_http_agent_llm_failed(llm);
        return;
    }

    llm->hops++;

    ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_FALLBACKS, &m->name, NULL, 1);

    ngx_log_error(NGX_LOG_WARN, llm->log, 0,
                  "agent: model \"%V\": %V; falling back to \"%V\"",
                  &m->name,
                  ngx_http_agent_json_log_str(llm->pool, &llm->error),
                  &next->name);

    if (ngx_http_agent_llm_use(llm, next) != NGX_OK) {
        ngx_http_agent_llm_failed(llm);
    }
}


/* the call has failed: the reason is logged and handed on */

static void
ngx_http_agent_llm_failed(ngx_http_agent_llm_t *llm)
{
    ngx_http_agent_llm_hide_key(llm, &llm->error);

    ngx_log_error(NGX_LOG_ERR, llm->log, 0, "agent: %V",
                  ngx_http_agent_json_log_str(llm->pool, &llm->error));

    if (llm->model) {
        ngx_http_agent_metrics_cstr(NGX_HTTP_AGENT_M_MODEL_CALLS,
                                    &llm->model->name, "error", 1);
    }

    llm->on_done(llm->data, NGX_ERROR);
}


static void
ngx_http_agent_llm_retry_handler(ngx_event_t *ev)
{
    ngx_http_agent_llm_t *llm = ev->data;

    if (ngx_http_agent_llm_attempt(llm) != NGX_OK) {
        ngx_http_agent_llm_failed(llm);
    }
}


static void
ngx_http_agent_llm_first_handler(ngx_event_t *ev)
{
    ngx_http_agent_llm_t *llm = ev->data;

    if (llm->answered) {
        return;
    }

    ngx_http_agent_curl_cancel(llm->curl);

    ngx_http_agent_llm_fail(llm, "no answer from the model \"%V\" within "
                            "its first token timeout", &llm->model->name);
    llm->retryable = 1;

    ngx_http_agent_llm_again(llm);
}


static void
ngx_http_agent_llm_timers(ngx_http_agent_llm_t *llm)
{
    if (llm->retry.timer_set) {
        ngx_del_timer(&llm->retry);
    }

    if (llm->first.timer_set) {
        ngx_del_timer(&llm->first);
    }

    ngx_http_agent_llm_cache_cancel(llm);
}


static void
ngx_http_agent_llm_cleanup(void *data)
{
    ngx_http_agent_llm_t *llm = data;

    ngx_http_agent_llm_timers(llm);

    /* the transfer's cleanup, added after this one, has run: curl is done */
    if (llm->request) {
        ngx_destroy_pool(llm->request);
    }
}
