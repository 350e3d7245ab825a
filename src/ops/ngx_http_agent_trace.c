
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
 * Traces in OpenTelemetry's GenAI conventions: a turn is a span tree,
 * "invoke_agent {graph}" at its root, a span per node, "chat {model}" per
 * model call, "execute_tool {name}" per tool call; written as OTLP/HTTP
 * JSON when the turn ends, for otlp.c to send.  Message contents are
 * never exported.
 */


static void ngx_http_agent_trace_random(u_char *p, size_t n);
static ngx_int_t ngx_http_agent_trace_hex(u_char *dst, u_char *src,
    size_t n);
static ngx_int_t ngx_http_agent_trace_parent(ngx_http_agent_trace_t *t,
    ngx_str_t *tp);
static ngx_int_t ngx_http_agent_trace_lower_hex(u_char *p, size_t n);
static ngx_uint_t ngx_http_agent_trace_zero(u_char *id, size_t n);
static uint64_t ngx_http_agent_trace_now(void);
static void ngx_http_agent_trace_messages(ngx_http_agent_trace_t *t,
    ngx_http_agent_json_t *j, const char *key, const char *role,
    ngx_str_t *text);
static void ngx_http_agent_trace_started(ngx_http_agent_trace_t *t,
    ngx_http_agent_span_t *s, ngx_msec_t started);
static ngx_http_agent_span_t *ngx_http_agent_trace_span(
    ngx_http_agent_trace_t *t, const char *op, ngx_str_t *name,
    ngx_uint_t kind);
static void ngx_http_agent_trace_attr_str(ngx_http_agent_json_t *j,
    const char *key, ngx_str_t *value);
static void ngx_http_agent_trace_attr_int(ngx_http_agent_json_t *j,
    const char *key, int64_t value);
static void ngx_http_agent_trace_attr_double(ngx_http_agent_json_t *j,
    const char *key, u_char *num, u_char *last);


/*
 * A turn's trace: the trace and parent of an incoming traceparent, or a
 * new trace; NULL when not traced (no agent_otlp, not sampled).
 */

ngx_http_agent_trace_t *
ngx_http_agent_trace_start(ngx_http_request_t *r, ngx_http_agent_otlp_t *otlp,
    ngx_str_t *graph, ngx_str_t *session)
{
    ngx_str_t                tp;
    ngx_uint_t               n, sampled;
    ngx_table_elt_t         *h;
    ngx_http_agent_span_t   *root;
    ngx_http_agent_trace_t  *t;

    if (otlp == NULL) {
        return NULL;
    }

    t = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_trace_t));
    if (t == NULL
        || ngx_array_init(&t->spans, r->pool, 8,
                          sizeof(ngx_http_agent_span_t))
           != NGX_OK)
    {
        return NULL;
    }

    t->pool = r->pool;
    t->otlp = otlp;
    t->node = -1;

    /* traceparent: 00-<32 hex trace id>-<16 hex parent>-<2 hex flags> */

    ngx_str_null(&tp);
    h = ngx_http_agent_header_in(r, "traceparent", &n);

    if (h) {
        tp = h->value;
    }

    sampled = ((ngx_uint_t) ngx_random() % 10000 < otlp->sample);

    /* two traceparents contradict each other: neither is believed */

    if (n == 1 && ngx_http_agent_trace_parent(t, &tp) == NGX_OK) {

        /*
         * the caller's trace goes on; whether it is recorded is ours to
         * say (sample=), a caller's flag decides only where trusted
         */

        if (otlp->trust_parent) {
            sampled = (ngx_hextoi(tp.data + 53, 2) & 1);
        }

    } else {
        ngx_http_agent_trace_random(t->trace_id, 16);
        ngx_memzero(t->parent, 8);
    }

    if (!sampled) {
        return NULL;
    }

    root = ngx_http_agent_trace_span(t, "invoke_agent", graph, 1);
    if (root == NULL) {
        return NULL;
    }

    ngx_memcpy(root->parent, t->parent, 8);

    /* the root's attributes are written at its end */
    t->graph = *graph;
    t->session = *session;

    return t;
}


/* a node's span opens at its start and closes at its end */

void
ngx_http_agent_trace_node(ngx_http_agent_trace_t *t, ngx_str_t *name,
    ngx_uint_t step, ngx_uint_t start)
{
    ngx_http_agent_json_t   *j;
    ngx_http_agent_span_t   *s;

    if (t == NULL) {
        return;
    }

    if (!start) {
        if (t->node >= 0) {
            s = (ngx_http_agent_span_t *) t->spans.elts + t->node;
            s->end = ngx_http_agent_trace_now();
            t->node = -1;
        }

        return;
    }

    s = ngx_http_agent_trace_span(t, NULL, name, 1);
    if (s == NULL) {
        return;
    }

    j = ngx_http_agent_json_create(t->pool);
    if (j == NULL) {
        return;
    }

    ngx_http_agent_json_arr(j);
    ngx_http_agent_trace_attr_str(j, "langgraph.node", name);
    ngx_http_agent_trace_attr_int(j, "langgraph.step", step);
    ngx_http_agent_json_arr_end(j);

    (void) ngx_http_agent_json_done(j, &s->attributes);

    s->end = 0;
    t->node = s - (ngx_http_agent_span_t *) t->spans.elts;
}


/* a model call, when it has ended: "chat {model}", "embeddings {model}" */

void
ngx_http_agent_trace_model(ngx_http_agent_trace_t *t,
    ngx_http_agent_trace_call_t *llm)
{
    u_char                   num[NGX_HTTP_AGENT_COST_LEN];
    ngx_str_t                op, *model;
    ngx_uint_t               ok;
    ngx_http_agent_json_t   *j;
    ngx_http_agent_span_t   *s;

    if (t == NULL || llm->model == NULL) {
        return;
    }

    model = llm->model;
    ok = (llm->error.len == 0);

    s = ngx_http_agent_trace_span(t, llm->operation, model, 3);
    if (s == NULL) {
        return;
    }

    /* it started when the call did: the span is written at its end */
    ngx_http_agent_trace_started(t, s, llm->start);

    j = ngx_http_agent_json_create(t->pool);
    if (j == NULL) {
        return;
    }

    op.data = (u_char *) llm->operation;
    op.len = ngx_strlen(op.data);

    ngx_http_agent_json_arr(j);
    ngx_http_agent_trace_attr_str(j, "gen_ai.operation.name", &op);
    ngx_http_agent_trace_attr_str(j, "gen_ai.provider.name",
                                  llm->provider);
    ngx_http_agent_trace_attr_str(j, "gen_ai.request.model", model);

    if (ok) {
        ngx_http_agent_trace_attr_str(j, "gen_ai.response.model", model);
    }

    ngx_http_agent_trace_attr_int(j, "gen_ai.usage.input_tokens",
                                  llm->input_tokens);
    ngx_http_agent_trace_attr_int(j, "gen_ai.usage.output_tokens",
                                  llm->output_tokens);
    ngx_http_agent_trace_attr_int(j, "gen_ai.usage.cache_read.input_tokens",
                                  llm->cached_tokens);

    if (llm->ttft) {
        ngx_http_agent_trace_attr_double(j,
                               "gen_ai.response.time_to_first_chunk", num,
                               ngx_sprintf(num, "%M.%03M", llm->ttft / 1000,
                                           llm->ttft % 1000));
    }

    if (llm->cost >= 0) {
        /* US dollars, written from the integer: no float's rounding */
        ngx_http_agent_trace_attr_double(j, "gen_ai.usage.cost", num,
                               ngx_http_agent_cost_print(num,
                                           num + sizeof(num), llm->cost));
    }

    if (llm->cache.len) {
        ngx_http_agent_trace_attr_str(j, "agent.cache", &llm->cache);
    }

    if (!ok) {
        ngx_http_agent_trace_attr_str(j, "error.type", &llm->error);
        s->error = llm->error;
    }

    ngx_http_agent_json_arr_end(j);

    (void) ngx_http_agent_json_done(j, &s->attributes);
}


/* a tool call, when it has ended: "execute_tool {name}" */

void
ngx_http_agent_trace_tool(ngx_http_agent_trace_t *t, ngx_str_t *name,
    ngx_str_t *id, ngx_msec_t started, ngx_uint_t error)
{
    ngx_str_t               op;
    ngx_http_agent_json_t  *j;
    ngx_http_agent_span_t  *s;

    if (t == NULL) {
        return;
    }

    s = ngx_http_agent_trace_span(t, "execute_tool", name, 1);
    if (s == NULL) {
        return;
    }

    if (started) {
        ngx_http_agent_trace_started(t, s, started);
    }

    j = ngx_http_agent_json_create(t->pool);
    if (j == NULL) {
        return;
    }

    ngx_str_set(&op, "execute_tool");

    ngx_http_agent_json_arr(j);
    ngx_http_agent_trace_attr_str(j, "gen_ai.operation.name", &op);
    ngx_http_agent_trace_attr_str(j, "gen_ai.tool.name", name);
    ngx_http_agent_trace_attr_str(j, "gen_ai.tool.call.id", id);

    if (error) {
        ngx_str_set(&op, "tool_error");
        ngx_http_agent_trace_attr_str(j, "error.type", &op);
        s->error = op;
    }

    ngx_http_agent_json_arr_end(j);

    (void) ngx_http_agent_json_done(j, &s->attributes);
}


/* a span that has just ended, under the node open (or the root) */

static ngx_http_agent_span_t *
ngx_http_agent_trace_span(ngx_http_agent_trace_t *t, const char *op,
    ngx_str_t *name, ngx_uint_t kind)
{
    u_char                 *p;
    size_t                  len;
    ngx_http_agent_span_t  *s, *parent;

    s = ngx_array_push(&t->spans);
    if (s == NULL) {
        return NULL;
    }

    ngx_memzero(s, sizeof(ngx_http_agent_span_t));

    ngx_http_agent_trace_random(s->id, 8);
    s->kind = kind;
    s->start = ngx_http_agent_trace_now();
    s->end = s->start;

    if (t->spans.nelts > 1) {
        parent = (ngx_http_agent_span_t *) t->spans.elts
                 + (t->node >= 0 ? t->node : 0);
        ngx_memcpy(s->parent, parent->id, 8);
    }

    /* "{operation} {name}", as the conventions name spans */

    len = (op ? ngx_strlen(op) + 1 : 0) + name->len;

    p = ngx_pnalloc(t->pool, len);
    if (p == NULL) {
        return NULL;
    }

    s->name.data = p;
    s->name.len = (op ? ngx_sprintf(p, "%s %V", op, name)
                      : ngx_sprintf(p, "%V", name)) - p;

    return s;
}


/*
 * The turn's end: the root closed, the spans written as one resourceSpans
 * and queued for the collector
 */

void
ngx_http_agent_trace_end(ngx_http_agent_trace_t *t, ngx_str_t *code,
    ngx_str_t *error, ngx_str_t *input, ngx_str_t *output)
{
    ngx_str_t               op;
    ngx_http_agent_json_t  *j;
    ngx_http_agent_span_t  *root;

    if (t == NULL || t->spans.nelts == 0) {
        return;
    }

    ngx_http_agent_trace_node(t, NULL, 0, 0);

    root = t->spans.elts;
    root->end = ngx_http_agent_trace_now();

    j = ngx_http_agent_json_create(t->pool);
    if (j == NULL) {
        return;
    }

    ngx_str_set(&op, "invoke_agent");

    ngx_http_agent_json_arr(j);
    ngx_http_agent_trace_attr_str(j, "gen_ai.operation.name", &op);
    ngx_http_agent_trace_attr_str(j, "gen_ai.agent.name", &t->graph);
    ngx_http_agent_trace_attr_str(j, "gen_ai.conversation.id", &t->session);

    if (t->otlp->content) {
        /* content=on: the turn's input and answer, as the conventions */
        ngx_http_agent_trace_messages(t, j, "gen_ai.input.messages", "user",
                                      input);
        ngx_http_agent_trace_messages(t, j, "gen_ai.output.messages",
                                      "assistant", output);
    }

    ngx_http_agent_json_arr_end(j);

    if (ngx_http_agent_json_done(j, &root->attributes) != NGX_OK) {
        return;
    }

    if (code && code->len) {
        root->error = error && error->len ? *error : *code;
    }

    /* the exporter agent_otlp set (otlp.c), as nginx's loggers are */
    t->otlp->export(t);
}


/* one resourceSpans of OTLP/HTTP JSON: ids in hex, times in ns */

ngx_int_t
ngx_http_agent_trace_json(ngx_http_agent_trace_t *t, ngx_http_agent_json_t *j)
{
    u_char                  hex[32], num[NGX_INT64_LEN];
    ngx_uint_t              i;
    ngx_http_agent_span_t  *s;

    static u_char  zero[8];

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "resource");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "attributes");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "key");
    ngx_http_agent_json_cstr(j, "service.name");
    ngx_http_agent_json_key(j, "value");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "stringValue");
    ngx_http_agent_json_cstr(j, "nginx");
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    ngx_http_agent_json_key(j, "scopeSpans");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "scope");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_cstr(j, "ngx_http_agent_module");
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "spans");
    ngx_http_agent_json_arr(j);

    s = t->spans.elts;

    for (i = 0; i < t->spans.nelts; i++) {
        if (s[i].end == 0) {
            s[i].end = ngx_http_agent_trace_now();
        }

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "traceId");
        ngx_http_agent_json_bytes(j, hex, ngx_hex_dump(hex, t->trace_id, 16)
                                          - hex);
        ngx_http_agent_json_key(j, "spanId");
        ngx_http_agent_json_bytes(j, hex, ngx_hex_dump(hex, s[i].id, 8)
                                          - hex);

        if (ngx_memcmp(s[i].parent, zero, 8) != 0) {
            ngx_http_agent_json_key(j, "parentSpanId");
            ngx_http_agent_json_bytes(j, hex,
                                      ngx_hex_dump(hex, s[i].parent, 8)
                                      - hex);
        }

        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &s[i].name);
        ngx_http_agent_json_key(j, "kind");
        ngx_http_agent_json_int(j, s[i].kind);
        ngx_http_agent_json_key(j, "startTimeUnixNano");
        ngx_http_agent_json_bytes(j, num, ngx_sprintf(num, "%uL", s[i].start)
                                          - num);
        ngx_http_agent_json_key(j, "endTimeUnixNano");
        ngx_http_agent_json_bytes(j, num, ngx_sprintf(num, "%uL", s[i].end)
                                          - num);
        ngx_http_agent_json_key(j, "attributes");

        if (s[i].attributes.len) {
            ngx_http_agent_json_raw(j, &s[i].attributes);

        } else {
            ngx_http_agent_json_arr(j);
            ngx_http_agent_json_arr_end(j);
        }

        ngx_http_agent_json_key(j, "status");
        ngx_http_agent_json_obj(j);

        if (s[i].error.len) {
            ngx_http_agent_json_key(j, "code");
            ngx_http_agent_json_int(j, 2);
            ngx_http_agent_json_key(j, "message");
            ngx_http_agent_json_str(j, &s[i].error);

        } else {
            ngx_http_agent_json_key(j, "code");
            ngx_http_agent_json_int(j, 1);
        }

        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    return j->failed ? NGX_ERROR : NGX_OK;
}


void
ngx_http_agent_trace_id(ngx_http_agent_trace_t *t, u_char *buf)
{
    ngx_hex_dump(buf, t->trace_id, 16);
}


static void
ngx_http_agent_trace_attr_str(ngx_http_agent_json_t *j, const char *key,
    ngx_str_t *value)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "key");
    ngx_http_agent_json_cstr(j, key);
    ngx_http_agent_json_key(j, "value");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "stringValue");
    ngx_http_agent_json_str(j, value);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);
}


static void
ngx_http_agent_trace_attr_int(ngx_http_agent_json_t *j, const char *key,
    int64_t value)
{
    u_char  num[NGX_INT64_LEN];

    /* OTLP JSON: a 64-bit integer is a string */

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "key");
    ngx_http_agent_json_cstr(j, key);
    ngx_http_agent_json_key(j, "value");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "intValue");
    ngx_http_agent_json_bytes(j, num, ngx_sprintf(num, "%L", value) - num);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);
}


/* a number's decimal text, as OTLP JSON's doubleValue */

static void
ngx_http_agent_trace_attr_double(ngx_http_agent_json_t *j, const char *key,
    u_char *num, u_char *last)
{
    ngx_str_t  text;

    text.data = num;
    text.len = last - num;

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "key");
    ngx_http_agent_json_cstr(j, key);
    ngx_http_agent_json_key(j, "value");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "doubleValue");
    ngx_http_agent_json_raw(j, &text);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);
}


static void
ngx_http_agent_trace_random(u_char *p, size_t n)
{
    size_t    i;
    uint32_t  r;

    r = 0;

    for (i = 0; i < n; i++) {
        if (i % 4 == 0) {
            r = (uint32_t) ngx_random();
        }

        p[i] = (u_char) (r >> (8 * (i % 4)));
    }

    /* an all-zero id is invalid */
    p[0] |= 1;
}


static uint64_t
ngx_http_agent_trace_now(void)
{
    ngx_time_t  *tp;

    tp = ngx_timeofday();

    return ((uint64_t) tp->sec * 1000 + tp->msec) * 1000000;
}


/* n bytes from 2n hex digits */

static ngx_int_t
ngx_http_agent_trace_hex(u_char *dst, u_char *src, size_t n)
{
    size_t     i;
    ngx_int_t  b;

    for (i = 0; i < n; i++) {
        b = ngx_hextoi(src + 2 * i, 2);

        if (b == NGX_ERROR) {
            return NGX_ERROR;
        }

        dst[i] = (u_char) b;
    }

    return NGX_OK;
}


/*
 * A traceparent as W3C Trace Context reads it: version 00 is exactly
 * "00-" 32 hex "-" 16 hex "-" 2 hex, all lowercase, neither id all zeros;
 * a later version (not ff) is read by its first 55 characters, and what
 * follows them must start with "-".  Anything else is no parent at all.
 */

static ngx_int_t
ngx_http_agent_trace_parent(ngx_http_agent_trace_t *t, ngx_str_t *tp)
{
    u_char  *p;

    p = tp->data;

    if (tp->len < 55
        || ngx_http_agent_trace_lower_hex(p, 2) != NGX_OK
        || (p[0] == 'f' && p[1] == 'f')
        || (p[0] == '0' && p[1] == '0' && tp->len != 55)
        || (tp->len > 55 && p[55] != '-')
        || p[2] != '-' || p[35] != '-' || p[52] != '-'
        || ngx_http_agent_trace_lower_hex(p + 3, 32) != NGX_OK
        || ngx_http_agent_trace_lower_hex(p + 36, 16) != NGX_OK
        || ngx_http_agent_trace_lower_hex(p + 53, 2) != NGX_OK
        || ngx_http_agent_trace_hex(t->trace_id, p + 3, 16) != NGX_OK
        || ngx_http_agent_trace_hex(t->parent, p + 36, 8) != NGX_OK
        || ngx_http_agent_trace_zero(t->trace_id, 16)
        || ngx_http_agent_trace_zero(t->parent, 8))
    {
        return NGX_DECLINED;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_trace_lower_hex(u_char *p, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
        {
            return NGX_DECLINED;
        }
    }

    return NGX_OK;
}


static ngx_uint_t
ngx_http_agent_trace_zero(u_char *id, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (id[i]) {
            return 0;
        }
    }

    return 1;
}


/*
 * A span written at its end started that long ago: the event loop's clock
 * and the wall clock differ by a millisecond's rounding, so not before
 * the root
 */

static void
ngx_http_agent_trace_started(ngx_http_agent_trace_t *t,
    ngx_http_agent_span_t *s, ngx_msec_t started)
{
    ngx_http_agent_span_t  *root;

    root = t->spans.elts;

    s->start = s->end - (uint64_t) (ngx_current_msec - started) * 1000000;

    if (s->start < root->start) {
        s->start = root->start;
    }
}


/* [{"role", "parts": [{"type": "text", "content"}]}], as a string */

static void
ngx_http_agent_trace_messages(ngx_http_agent_trace_t *t,
    ngx_http_agent_json_t *j, const char *key, const char *role,
    ngx_str_t *text)
{
    ngx_str_t               out;
    ngx_http_agent_json_t  *m;

    if (text == NULL || text->len == 0) {
        return;
    }

    m = ngx_http_agent_json_create(t->pool);
    if (m == NULL) {
        return;
    }

    ngx_http_agent_json_arr(m);
    ngx_http_agent_json_obj(m);
    ngx_http_agent_json_key(m, "role");
    ngx_http_agent_json_cstr(m, role);
    ngx_http_agent_json_key(m, "parts");
    ngx_http_agent_json_arr(m);
    ngx_http_agent_json_obj(m);
    ngx_http_agent_json_key(m, "type");
    ngx_http_agent_json_cstr(m, "text");
    ngx_http_agent_json_key(m, "content");
    ngx_http_agent_json_str(m, text);
    ngx_http_agent_json_end(m);
    ngx_http_agent_json_arr_end(m);
    ngx_http_agent_json_end(m);
    ngx_http_agent_json_arr_end(m);

    if (ngx_http_agent_json_done(m, &out) == NGX_OK) {
        ngx_http_agent_trace_attr_str(j, key, &out);
    }
}
