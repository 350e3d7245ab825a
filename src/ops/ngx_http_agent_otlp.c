
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_ops.h"
#include "ngx_http_agent_util.h"


/*
 * agent_otlp: the turns' spans (trace.c) sent to an OTLP/HTTP collector in
 * batches on the curl bridge, one request at a time per worker, never
 * waited for; a queue that is full (the collector down or slow) drops a
 * turn's spans and counts them (agent_traces_dropped_total).
 */


#define NGX_HTTP_AGENT_OTLP_BATCH    64      /* turns a request carries */
#define NGX_HTTP_AGENT_OTLP_QUEUE    1024    /* turns waiting, at most */
#define NGX_HTTP_AGENT_OTLP_DELAY    500     /* ms a batch waits to fill */


/* the worker's turns waiting to be sent, and the request under way */
typedef struct {
    ngx_pool_t                *pool;        /* the waiting turns' */
    ngx_array_t               *turns;       /* ngx_str_t: resourceSpans */
    ngx_pool_t                *sending;     /* the request's */
    ngx_uint_t                 in_flight;   /* turns it carries */
    ngx_event_t                timer;
    ngx_http_agent_otlp_t     *otlp;
} ngx_http_agent_otlp_queue_t;


static void ngx_http_agent_otlp_export(ngx_http_agent_trace_t *t);
static char *ngx_http_agent_otlp_url(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
static char *ngx_http_agent_otlp_sample(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
static void ngx_http_agent_otlp_flush(ngx_event_t *ev);
static void ngx_http_agent_otlp_done(void *data, ngx_int_t rc, long status,
    ngx_str_t *err);


static ngx_http_agent_otlp_queue_t  ngx_http_agent_otlp_queue;


static ngx_conf_enum_t  ngx_http_agent_otlp_on[] = {
    { ngx_string("on"), 1 },
    { ngx_null_string, 0 }
};


static ngx_http_agent_param_t  ngx_http_agent_otlp_params[] = {
    { ngx_string("url"), ngx_http_agent_otlp_url, 0, NULL },
    /* as OTEL_EXPORTER_OTLP_HEADERS: name=value,name=value */
    { ngx_string("headers"), ngx_http_agent_params_set_headers,
      offsetof(ngx_http_agent_otlp_t, headers), "=" },
    { ngx_string("content"), ngx_http_agent_params_set_enum,
      offsetof(ngx_http_agent_otlp_t, content), ngx_http_agent_otlp_on },
    { ngx_string("trust_parent"), ngx_http_agent_params_set_flag,
      offsetof(ngx_http_agent_otlp_t, trust_parent), NULL },
    { ngx_string("sample"), ngx_http_agent_otlp_sample, 0, NULL },
    ngx_http_agent_null_param
};


char *
ngx_http_agent_otlp(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_main_conf_t *amcf = conf;

    ngx_str_t              *value;
    ngx_http_agent_otlp_t  *o;

    if (amcf->otlp) {
        return "is duplicate";
    }

    o = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_otlp_t));
    if (o == NULL) {
        return NGX_CONF_ERROR;
    }

    o->export = ngx_http_agent_otlp_export;
    o->sample = 10000;
    value = cf->args->elts;

    if (ngx_http_agent_params_parse(cf, ngx_http_agent_otlp_params,
                                    &value[1], cf->args->nelts - 1, o,
                                    "agent_otlp", NULL)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (o->url.len == 0) {
        return "needs url=";
    }

    amcf->otlp = o;

    return NGX_CONF_OK;
}


/* kept NUL-terminated: curl reads it */

static char *
ngx_http_agent_otlp_url(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    ngx_http_agent_otlp_t *o = conf;

    o->url.len = value->len;
    o->url.data = ngx_pnalloc(cf->pool, value->len + 1);
    if (o->url.data == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_cpystrn(o->url.data, value->data, value->len + 1);

    return NGX_CONF_OK;
}


static char *
ngx_http_agent_otlp_sample(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    ngx_http_agent_otlp_t *o = conf;

    u_char  *d;

    /* a rate from 0 to 1, to four places */
    if (value->len == 1 && value->data[0] == '1') {
        o->sample = 10000;

    } else if (value->len >= 2 && value->len <= 6 && value->data[0] == '0'
               && value->data[1] == '.')
    {
        o->sample = ngx_atoi(value->data + 2, value->len - 2);

        if (o->sample == (ngx_uint_t) NGX_ERROR) {
            return "a rate from 0 to 1";
        }

        for (d = value->data + value->len; d < value->data + 6; d++) {
            o->sample *= 10;
        }

    } else if (value->len == 1 && value->data[0] == '0') {
        o->sample = 0;

    } else {
        return "a rate from 0 to 1";
    }

    return NGX_CONF_OK;
}


/* a turn's spans, queued for the collector */

static void
ngx_http_agent_otlp_export(ngx_http_agent_trace_t *t)
{
    ngx_str_t                     out, *q;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_otlp_queue_t  *oq;

    oq = &ngx_http_agent_otlp_queue;
    oq->otlp = t->otlp;

    if (oq->turns && oq->turns->nelts + oq->in_flight
                     >= NGX_HTTP_AGENT_OTLP_QUEUE)
    {
        /* the collector is down or slow: this turn's spans are dropped */
        ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_TRACES_DROPPED, NULL,
                                   NULL, 1);
        return;
    }

    if (oq->pool == NULL) {
        oq->pool = ngx_create_pool(16384, ngx_cycle->log);
        if (oq->pool == NULL) {
            return;
        }

        oq->turns = ngx_array_create(oq->pool, 16, sizeof(ngx_str_t));
        if (oq->turns == NULL) {
            ngx_destroy_pool(oq->pool);
            oq->pool = NULL;
            return;
        }
    }

    j = ngx_http_agent_json_create(oq->pool);
    if (j == NULL) {
        return;
    }

    if (ngx_http_agent_trace_json(t, j) != NGX_OK
        || ngx_http_agent_json_done(j, &out) != NGX_OK)
    {
        return;
    }

    q = ngx_array_push(oq->turns);
    if (q == NULL) {
        return;
    }

    *q = out;

    if (oq->turns->nelts >= NGX_HTTP_AGENT_OTLP_BATCH) {
        if (oq->timer.timer_set) {
            ngx_del_timer(&oq->timer);
        }

        ngx_http_agent_otlp_flush(&oq->timer);
        return;
    }

    if (!oq->timer.timer_set) {
        oq->timer.handler = ngx_http_agent_otlp_flush;
        oq->timer.log = ngx_cycle->log;
        oq->timer.cancelable = 1;
        ngx_add_timer(&oq->timer, NGX_HTTP_AGENT_OTLP_DELAY);
    }
}


/* the waiting turns to the collector, one request at a time */

static void
ngx_http_agent_otlp_flush(ngx_event_t *ev)
{
    u_char                       *p;
    size_t                        len;
    ngx_str_t                     body, *turn;
    ngx_uint_t                    i;
    ngx_http_agent_curl_t        *curl;
    ngx_http_agent_otlp_queue_t  *oq;

    oq = &ngx_http_agent_otlp_queue;

    if (oq->sending || oq->turns == NULL || oq->turns->nelts == 0) {
        return;
    }

    turn = oq->turns->elts;
    len = sizeof("{\"resourceSpans\":[]}");

    for (i = 0; i < oq->turns->nelts; i++) {
        len += turn[i].len + 1;
    }

    p = ngx_pnalloc(oq->pool, len);
    if (p == NULL) {
        return;
    }

    body.data = p;
    p = ngx_cpymem(p, "{\"resourceSpans\":[", 18);

    for (i = 0; i < oq->turns->nelts; i++) {
        if (i) {
            *p++ = ',';
        }

        p = ngx_cpymem(p, turn[i].data, turn[i].len);
    }

    p = ngx_cpymem(p, "]}", 2);
    body.len = p - body.data;

    /* the waiting turns' pool is the request's now: new turns, a new one */

    oq->sending = oq->pool;
    oq->in_flight = oq->turns->nelts;
    oq->pool = NULL;
    oq->turns = NULL;

    curl = ngx_http_agent_curl_create(oq->sending, ngx_cycle->log);
    if (curl == NULL) {
        goto failed;
    }

    curl->on_done = ngx_http_agent_otlp_done;
    curl->data = oq;

    if (ngx_http_agent_curl_post(curl, &oq->otlp->url, oq->otlp->headers,
                                 &body, 2000, 10000)
        != NGX_OK)
    {
        goto failed;
    }

    return;

failed:

    ngx_http_agent_otlp_done(oq, NGX_ERROR, 0, NULL);
}


static void
ngx_http_agent_otlp_done(void *data, ngx_int_t rc, long status,
    ngx_str_t *err)
{
    ngx_http_agent_otlp_queue_t *oq = data;

    if (rc != NGX_OK || status < 200 || status > 299) {
        ngx_log_error(NGX_LOG_WARN, ngx_cycle->log, 0,
                      "agent: the OTLP collector did not take %ui turns' "
                      "spans (status %l%s%V)", oq->in_flight, status,
                      err ? ": " : "", err ? err : &oq->otlp->url);
        ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_TRACES_DROPPED, NULL,
                                   NULL, oq->in_flight);
    }

    ngx_destroy_pool(oq->sending);
    oq->sending = NULL;
    oq->in_flight = 0;

    /* what came in meanwhile goes next */
    if (oq->turns && oq->turns->nelts && !oq->timer.timer_set) {
        oq->timer.handler = ngx_http_agent_otlp_flush;
        oq->timer.log = ngx_cycle->log;
        oq->timer.cancelable = 1;
        ngx_add_timer(&oq->timer, 1);
    }
}
