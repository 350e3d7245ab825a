
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_ops.h"


/*
 * Metrics for Prometheus, in one shared memory zone that every worker
 * writes and agent_metrics reads: a table of series (a metric and up to
 * two label values), each claimed once with a compare-and-set and then
 * only added to atomically.  No worker ever waits on another: a series is
 * found by open addressing, a full table drops the new series (counted).
 */


#define NGX_HTTP_AGENT_METRICS_SIZE    (1024 * 1024)
#define NGX_HTTP_AGENT_METRICS_LABEL   48
#define NGX_HTTP_AGENT_METRICS_BUCKETS 12
#define NGX_HTTP_AGENT_METRICS_PROBES  64


typedef enum {
    NGX_HTTP_AGENT_COUNTER = 0,
    NGX_HTTP_AGENT_DOLLARS,              /* a counter of nanodollars */
    NGX_HTTP_AGENT_GAUGE,
    NGX_HTTP_AGENT_HISTOGRAM
} ngx_http_agent_metric_type_e;


typedef struct {
    const char                    *name;
    const char                    *help;
    ngx_http_agent_metric_type_e   type;
    const char                    *labels[2];
} ngx_http_agent_metric_def_t;


/* a series: state 0 free, 1 being written, 2 ready */
typedef struct {
    ngx_atomic_t                   state;
    ngx_uint_t                     metric;
    uint32_t                       hash;
    u_char                         len[2];
    u_char                         label[2][NGX_HTTP_AGENT_METRICS_LABEL];
    ngx_atomic_t                   value;     /* counter, gauge; count */
    ngx_atomic_t                   sum;       /* histogram: ms */
    ngx_atomic_t                   bucket[NGX_HTTP_AGENT_METRICS_BUCKETS];
} ngx_http_agent_series_t;


typedef struct {
    ngx_atomic_t                   dropped;
    ngx_uint_t                     n;
    ngx_http_agent_series_t        series[1];
} ngx_http_agent_metrics_shm_t;


static ngx_int_t ngx_http_agent_metrics_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_agent_metrics_init_zone(ngx_shm_zone_t *zone,
    void *data);
static ngx_http_agent_series_t *ngx_http_agent_metrics_find(
    ngx_uint_t metric, ngx_str_t *a, ngx_str_t *b);
static size_t ngx_http_agent_metrics_cut(ngx_str_t *v);
static u_char *ngx_http_agent_metrics_labels(u_char *p, u_char *last,
    ngx_http_agent_metric_def_t *def, ngx_http_agent_series_t *s,
    ngx_int_t le);


/* the le label of a histogram's line: a bound in ms, or these */
#define NGX_HTTP_AGENT_METRICS_NO_LE   -1
#define NGX_HTTP_AGENT_METRICS_INF     -2


static ngx_http_agent_metric_def_t  ngx_http_agent_metrics_defs[] = {
    { "agent_turns_total", "Turns (runs) that ended, by graph and outcome",
      NGX_HTTP_AGENT_COUNTER, { "graph", "outcome" } },
    { "agent_turn_duration_seconds", "How long turns took",
      NGX_HTTP_AGENT_HISTOGRAM, { "graph", NULL } },
    { "agent_model_calls_total", "Model calls, by model and status",
      NGX_HTTP_AGENT_COUNTER, { "model", "status" } },
    { "agent_model_time_to_first_token_seconds",
      "Time from a model call to its first token",
      NGX_HTTP_AGENT_HISTOGRAM, { "model", NULL } },
    { "agent_tokens_total", "Tokens, by model and kind (input, output, "
      "cached)", NGX_HTTP_AGENT_COUNTER, { "model", "kind" } },
    { "agent_cost_usd_total", "What model calls cost in US dollars, by "
      "model (of the models with price=)", NGX_HTTP_AGENT_DOLLARS,
      { "model", NULL } },
    { "agent_model_retries_total", "Model calls tried again",
      NGX_HTTP_AGENT_COUNTER, { "model", NULL } },
    { "agent_model_fallbacks_total", "Model calls given to the fallback "
      "model", NGX_HTTP_AGENT_COUNTER, { "model", NULL } },
    { "agent_tool_calls_total", "Tool calls, by tool and outcome",
      NGX_HTTP_AGENT_COUNTER, { "tool", "outcome" } },
    { "agent_open_streams", "Event streams open now",
      NGX_HTTP_AGENT_GAUGE, { NULL, NULL } },
    { "agent_sql_duration_seconds", "How long SQL statements took",
      NGX_HTTP_AGENT_HISTOGRAM, { NULL, NULL } },
    { "agent_store_errors_total", "Errors of the session store",
      NGX_HTTP_AGENT_COUNTER, { NULL, NULL } },
    { "agent_store_checkpoints_total", "SQLite WAL checkpoints, on the "
      "thread pool or on the event loop, passive or restarting the WAL",
      NGX_HTTP_AGENT_COUNTER, { "where", "kind" } },
    { "agent_traces_dropped_total", "Turns whose spans the OTLP collector "
      "did not get (down, slow, or the queue full)",
      NGX_HTTP_AGENT_COUNTER, { NULL, NULL } },
    { "agent_cache_hits_total", "Cache lookups that found an entry, by "
      "kind (node, exact)", NGX_HTTP_AGENT_COUNTER, { "kind", NULL } },
    { "agent_cache_misses_total", "Cache lookups that found none, by kind",
      NGX_HTTP_AGENT_COUNTER, { "kind", NULL } },
    { "agent_lease_renewals_total", "Turns' leases renewed by their "
      "worker's timer: statements sent, leases renewed, leases found lost",
      NGX_HTTP_AGENT_COUNTER, { "kind", NULL } }
};


/* the buckets' upper bounds, ms (Prometheus's le in seconds) */
static ngx_int_t  ngx_http_agent_metrics_le[NGX_HTTP_AGENT_METRICS_BUCKETS]
    = { 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000 };


static ngx_shm_zone_t  *ngx_http_agent_metrics_zone;

extern ngx_module_t  ngx_http_agent_module;


/* the zone, for every configuration that has the module's store */

ngx_int_t
ngx_http_agent_metrics_init_conf(ngx_conf_t *cf)
{
    ngx_str_t  name;

    ngx_str_set(&name, "agent_metrics");

    ngx_http_agent_metrics_zone = ngx_shared_memory_add(cf, &name,
                                         NGX_HTTP_AGENT_METRICS_SIZE,
                                         &ngx_http_agent_module);
    if (ngx_http_agent_metrics_zone == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_metrics_zone->init = ngx_http_agent_metrics_init_zone;

    return NGX_OK;
}


/* agent_metrics: this location answers the metrics */

char *
ngx_http_agent_metrics_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_agent_metrics_handler;

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_agent_metrics_init_zone(ngx_shm_zone_t *zone, void *data)
{
    ngx_http_agent_metrics_shm_t  *m;

    if (data) {
        /* a reload: the counters go on */
        zone->data = data;
        return NGX_OK;
    }

    m = (ngx_http_agent_metrics_shm_t *) zone->shm.addr;

    if (zone->shm.exists) {
        zone->data = m;
        return NGX_OK;
    }

    /* the zone is zeroed by the system: every series is free */

    m->n = (zone->shm.size - sizeof(ngx_http_agent_metrics_shm_t))
           / sizeof(ngx_http_agent_series_t);

    zone->data = m;

    return NGX_OK;
}


static ngx_http_agent_series_t *
ngx_http_agent_metrics_find(ngx_uint_t metric, ngx_str_t *a, ngx_str_t *b)
{
    size_t                         la, lb;
    uint32_t                       hash;
    ngx_uint_t                     i, k;
    ngx_http_agent_series_t       *s;
    ngx_http_agent_metrics_shm_t  *m;

    if (ngx_http_agent_metrics_zone == NULL
        || ngx_http_agent_metrics_zone->data == NULL)
    {
        return NULL;
    }

    m = ngx_http_agent_metrics_zone->data;

    la = a ? ngx_http_agent_metrics_cut(a) : 0;
    lb = b ? ngx_http_agent_metrics_cut(b) : 0;

    ngx_crc32_init(hash);
    ngx_crc32_update(&hash, (u_char *) &metric, sizeof(ngx_uint_t));

    if (la) {
        ngx_crc32_update(&hash, a->data, la);
    }

    ngx_crc32_update(&hash, (u_char *) "\0", 1);

    if (lb) {
        ngx_crc32_update(&hash, b->data, lb);
    }

    ngx_crc32_final(hash);

    for (k = 0; k < NGX_HTTP_AGENT_METRICS_PROBES && k < m->n; k++) {
        i = (hash + k) % m->n;
        s = &m->series[i];

        if (s->state == 0 && ngx_atomic_cmp_set(&s->state, 0, 1)) {

            /* ours to write: the key, then ready for everyone */

            s->metric = metric;
            s->hash = hash;
            s->len[0] = (u_char) la;
            s->len[1] = (u_char) lb;

            if (la) {
                ngx_memcpy(s->label[0], a->data, la);
            }

            if (lb) {
                ngx_memcpy(s->label[1], b->data, lb);
            }

            ngx_memory_barrier();
            s->state = 2;

            return s;
        }

        while (s->state == 1) {
            /* another worker writes its key, a few stores long */
            ngx_cpu_pause();
        }

        if (s->hash == hash && s->metric == metric && s->len[0] == la
            && s->len[1] == lb
            && (la == 0 || ngx_memcmp(s->label[0], a->data, la) == 0)
            && (lb == 0 || ngx_memcmp(s->label[1], b->data, lb) == 0))
        {
            return s;
        }
    }

    (void) ngx_atomic_fetch_add(&m->dropped, 1);

    return NULL;
}


void
ngx_http_agent_metrics_add(ngx_uint_t metric, ngx_str_t *a, ngx_str_t *b,
    int64_t n)
{
    ngx_http_agent_series_t  *s;

    s = ngx_http_agent_metrics_find(metric, a, b);

    if (s) {
        (void) ngx_atomic_fetch_add(&s->value, (ngx_atomic_int_t) n);
    }
}


void
ngx_http_agent_metrics_cstr(ngx_uint_t metric, ngx_str_t *a, const char *b,
    int64_t n)
{
    ngx_str_t  label;

    label.data = (u_char *) b;
    label.len = ngx_strlen(b);

    ngx_http_agent_metrics_add(metric, a, &label, n);
}


void
ngx_http_agent_metrics_observe(ngx_uint_t metric, ngx_str_t *a,
    ngx_msec_t ms)
{
    ngx_uint_t                i;
    ngx_http_agent_series_t  *s;

    s = ngx_http_agent_metrics_find(metric, a, NULL);
    if (s == NULL) {
        return;
    }

    for (i = 0; i < NGX_HTTP_AGENT_METRICS_BUCKETS; i++) {
        if (ms <= (ngx_msec_t) ngx_http_agent_metrics_le[i]) {
            (void) ngx_atomic_fetch_add(&s->bucket[i], 1);
            break;
        }
    }

    (void) ngx_atomic_fetch_add(&s->sum, ms);
    (void) ngx_atomic_fetch_add(&s->value, 1);
}


/* agent_metrics: the text exposition format, summed over every worker */

static ngx_int_t
ngx_http_agent_metrics_handler(ngx_http_request_t *r)
{
    u_char                         *p, *last;
    size_t                          size;
    ngx_int_t                       rc;
    ngx_buf_t                      *b;
    ngx_uint_t                      d, i, k, any;
    ngx_atomic_uint_t               cum;
    ngx_chain_t                     out;
    ngx_http_agent_series_t        *s;
    ngx_http_agent_metric_def_t    *def;
    ngx_http_agent_metrics_shm_t   *m;

    if (!(r->method & (NGX_HTTP_GET|NGX_HTTP_HEAD))) {
        return NGX_HTTP_NOT_ALLOWED;
    }

    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ngx_http_agent_metrics_zone == NULL
        || ngx_http_agent_metrics_zone->data == NULL)
    {
        return NGX_HTTP_SERVICE_UNAVAILABLE;
    }

    m = ngx_http_agent_metrics_zone->data;

    /* a bound: every series with every bucket, and the headers */

    size = 4096 + NGX_HTTP_AGENT_M_LAST * 512;

    for (i = 0; i < m->n; i++) {
        if (m->series[i].state == 2) {
            size += (NGX_HTTP_AGENT_METRICS_BUCKETS + 3)
                    * (160 + 4 * NGX_HTTP_AGENT_METRICS_LABEL);
        }
    }

    b = ngx_create_temp_buf(r->pool, size);
    if (b == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    p = b->pos;
    last = b->end;

    for (d = 0; d < NGX_HTTP_AGENT_M_LAST; d++) {
        def = &ngx_http_agent_metrics_defs[d];

        p = ngx_slprintf(p, last, "# HELP %s %s\n# TYPE %s %s\n", def->name,
                         def->help, def->name,
                         def->type == NGX_HTTP_AGENT_GAUGE ? "gauge"
                         : def->type == NGX_HTTP_AGENT_HISTOGRAM
                         ? "histogram" : "counter");
        any = 0;

        for (i = 0; i < m->n; i++) {
            s = &m->series[i];

            if (s->state != 2 || s->metric != d) {
                continue;
            }

            any = 1;

            if (def->type != NGX_HTTP_AGENT_HISTOGRAM) {
                p = ngx_slprintf(p, last, "%s", def->name);
                p = ngx_http_agent_metrics_labels(p, last, def, s,
                                              NGX_HTTP_AGENT_METRICS_NO_LE);

                if (def->type == NGX_HTTP_AGENT_DOLLARS) {
                    p = ngx_slprintf(p, last, " ");
                    p = ngx_http_agent_cost_print(p, last, s->value);
                    p = ngx_slprintf(p, last, "\n");
                    continue;
                }

                p = ngx_slprintf(p, last, " %A\n",
                                 (ngx_atomic_int_t) s->value);
                continue;
            }

            cum = 0;

            for (k = 0; k < NGX_HTTP_AGENT_METRICS_BUCKETS; k++) {
                cum += s->bucket[k];
                p = ngx_slprintf(p, last, "%s_bucket", def->name);
                p = ngx_http_agent_metrics_labels(p, last, def, s,
                                              ngx_http_agent_metrics_le[k]);
                p = ngx_slprintf(p, last, " %uA\n", cum);
            }

            p = ngx_slprintf(p, last, "%s_bucket", def->name);
            p = ngx_http_agent_metrics_labels(p, last, def, s,
                                              NGX_HTTP_AGENT_METRICS_INF);
            p = ngx_slprintf(p, last, " %uA\n", s->value);
            p = ngx_slprintf(p, last, "%s_sum", def->name);
            p = ngx_http_agent_metrics_labels(p, last, def, s,
                                              NGX_HTTP_AGENT_METRICS_NO_LE);
            p = ngx_slprintf(p, last, " %uA.%03uA\n", s->sum / 1000,
                             s->sum % 1000);
            p = ngx_slprintf(p, last, "%s_count", def->name);
            p = ngx_http_agent_metrics_labels(p, last, def, s,
                                              NGX_HTTP_AGENT_METRICS_NO_LE);
            p = ngx_slprintf(p, last, " %uA\n", s->value);
        }

        if (!any && def->labels[0] == NULL
            && def->type != NGX_HTTP_AGENT_HISTOGRAM)
        {
            /* a series without labels is there from the start */
            p = ngx_slprintf(p, last, "%s 0\n", def->name);
        }
    }

    p = ngx_slprintf(p, last, "# HELP agent_metrics_dropped_total Series "
                     "not kept: the metrics zone is full\n"
                     "# TYPE agent_metrics_dropped_total counter\n"
                     "agent_metrics_dropped_total %uA\n", m->dropped);

    b->last = p;
    b->last_buf = (r == r->main);
    b->last_in_chain = 1;

    r->headers_out.status = NGX_HTTP_OK;
    r->headers_out.content_length_n = b->last - b->pos;
    ngx_str_set(&r->headers_out.content_type,
                "text/plain; version=0.0.4; charset=utf-8");
    r->headers_out.content_type_len = r->headers_out.content_type.len;

    rc = ngx_http_send_header(r);

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    out.buf = b;
    out.next = NULL;

    return ngx_http_output_filter(r, &out);
}


/*
 * A label value as much of it as fits, cut between two characters: a
 * Prometheus scrape refuses the whole page for one value that is not
 * UTF-8, so a cut sequence or a byte that is no character ends it there.
 */

static size_t
ngx_http_agent_metrics_cut(ngx_str_t *v)
{
    size_t  len, n;

    len = 0;

    while (len < v->len) {
        n = ngx_http_agent_json_utf8_char(v->data + len, v->len - len);

        if (n == 0 || len + n > NGX_HTTP_AGENT_METRICS_LABEL) {
            break;
        }

        len += n;
    }

    return len;
}


/* {a="...",b="...",le="..."}: le a bound in ms, +Inf, or none */

static u_char *
ngx_http_agent_metrics_labels(u_char *p, u_char *last,
    ngx_http_agent_metric_def_t *def, ngx_http_agent_series_t *s,
    ngx_int_t le)
{
    u_char      c;
    ngx_uint_t  i, k, n;

    n = 0;

    for (i = 0; i < 2; i++) {
        if (def->labels[i] == NULL) {
            continue;
        }

        p = ngx_slprintf(p, last, "%s%s=\"", n++ ? "," : "{",
                         def->labels[i]);

        /* label values escaped as the exposition format says */

        for (k = 0; k < s->len[i] && p + 2 < last; k++) {
            c = s->label[i][k];

            if (c == '\\' || c == '"') {
                *p++ = '\\';
                *p++ = c;

            } else if (c == '\n') {
                *p++ = '\\';
                *p++ = 'n';

            } else {
                *p++ = c;
            }
        }

        p = ngx_slprintf(p, last, "\"");
    }

    if (le == NGX_HTTP_AGENT_METRICS_NO_LE) {
        return n ? ngx_slprintf(p, last, "}") : p;
    }

    if (le == NGX_HTTP_AGENT_METRICS_INF) {
        return ngx_slprintf(p, last, "%sle=\"+Inf\"}", n ? "," : "{");
    }

    /* a bound in ms, written in seconds as Prometheus's clients do */

    p = ngx_slprintf(p, last, "%sle=\"%i", n ? "," : "{", le / 1000);

    for (k = 100, le %= 1000; le && p < last; k /= 10) {
        if (k == 100) {
            *p++ = '.';
        }

        *p++ = (u_char) ('0' + le / k);
        le %= k;
    }

    return ngx_slprintf(p, last, "\"}");
}
