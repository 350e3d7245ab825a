
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_expr.h"
#include "ngx_http_agent_json.h"


/*
 * The conditions of edges: "if=EXPR" is compiled once, when nginx reads
 * its configuration (a bad one fails "nginx -t"), and tested against the
 * run's channels after each step.
 *
 *     or      := and ("||" and)*
 *     and     := unary ("&&" unary)*
 *     unary   := "!" unary | compare
 *     compare := operand (("==" | "!=" | "<" | "<=" | ">" | ">=") operand)?
 *     operand := "(" or ")" | NUMBER | 'STRING' | true | false | null
 *              | tool_calls | CHANNEL ("." FIELD)*
 */


#define NGX_HTTP_AGENT_EXPR_MAX_DEPTH   32
#define NGX_HTTP_AGENT_EXPR_MAX_DIGITS  30


typedef enum {
    NGX_HTTP_AGENT_OP_OR = 0,
    NGX_HTTP_AGENT_OP_AND,
    NGX_HTTP_AGENT_OP_NOT,
    NGX_HTTP_AGENT_OP_EQ,
    NGX_HTTP_AGENT_OP_NE,
    NGX_HTTP_AGENT_OP_LT,
    NGX_HTTP_AGENT_OP_LE,
    NGX_HTTP_AGENT_OP_GT,
    NGX_HTTP_AGENT_OP_GE,
    NGX_HTTP_AGENT_OP_LITERAL,
    NGX_HTTP_AGENT_OP_CHANNEL,
    NGX_HTTP_AGENT_OP_TOOL_CALLS
} ngx_http_agent_op_e;


typedef enum {
    NGX_HTTP_AGENT_V_NULL = 0,
    NGX_HTTP_AGENT_V_BOOL,
    NGX_HTTP_AGENT_V_NUMBER,
    NGX_HTTP_AGENT_V_STRING,
    NGX_HTTP_AGENT_V_ARRAY,
    NGX_HTTP_AGENT_V_OBJECT
} ngx_http_agent_vtype_e;


typedef struct {
    ngx_http_agent_vtype_e     type;
    double                     number;    /* bool, number; length */
    ngx_str_t                  str;
} ngx_http_agent_v_t;


struct ngx_http_agent_expr_s {
    ngx_http_agent_op_e        op;
    ngx_http_agent_expr_t     *left;
    ngx_http_agent_expr_t     *right;
    ngx_http_agent_v_t         literal;
    ngx_uint_t                 channel;
    ngx_array_t               *path;      /* ngx_str_t, NUL-terminated */
};


typedef struct {
    ngx_pool_t                *pool;
    ngx_http_agent_graph_t    *graph;
    u_char                    *p;
    u_char                    *last;
    u_char                    *err;
    size_t                     errlen;
    ngx_uint_t                 depth;
    ngx_uint_t                 failed;
} ngx_http_agent_parser_t;


static ngx_http_agent_expr_t *ngx_http_agent_expr_or(
    ngx_http_agent_parser_t *ps);
static ngx_http_agent_expr_t *ngx_http_agent_expr_and(
    ngx_http_agent_parser_t *ps);
static ngx_http_agent_expr_t *ngx_http_agent_expr_unary(
    ngx_http_agent_parser_t *ps);
static ngx_http_agent_expr_t *ngx_http_agent_expr_compare(
    ngx_http_agent_parser_t *ps);
static ngx_http_agent_expr_t *ngx_http_agent_expr_operand(
    ngx_http_agent_parser_t *ps);
static ngx_http_agent_expr_t *ngx_http_agent_expr_number(
    ngx_http_agent_parser_t *ps, ngx_http_agent_expr_t *e, ngx_str_t *text);
static ngx_http_agent_expr_t *ngx_http_agent_expr_node(
    ngx_http_agent_parser_t *ps, ngx_http_agent_op_e op);
static ngx_uint_t ngx_http_agent_expr_skip(ngx_http_agent_parser_t *ps,
    const char *token);
static void *ngx_http_agent_expr_error(ngx_http_agent_parser_t *ps,
    const char *fmt, ...);
static ngx_int_t ngx_http_agent_expr_eval(ngx_http_agent_run_t *run,
    ngx_http_agent_expr_t *e, ngx_http_agent_v_t *v);
static ngx_int_t ngx_http_agent_expr_channel(ngx_http_agent_run_t *run,
    ngx_http_agent_expr_t *e, ngx_http_agent_v_t *v);
static void ngx_http_agent_expr_json(yajl_val j, ngx_http_agent_v_t *v);
static ngx_uint_t ngx_http_agent_expr_truth(ngx_http_agent_v_t *v);
static ngx_uint_t ngx_http_agent_expr_compare_values(ngx_http_agent_op_e op,
    ngx_http_agent_v_t *a, ngx_http_agent_v_t *b);


ngx_http_agent_expr_t *
ngx_http_agent_expr_parse(ngx_pool_t *pool, ngx_http_agent_graph_t *graph,
    ngx_str_t *text, u_char *err, size_t errlen)
{
    ngx_http_agent_expr_t    *e;
    ngx_http_agent_parser_t   ps;

    ngx_memzero(&ps, sizeof(ngx_http_agent_parser_t));
    ps.pool = pool;
    ps.graph = graph;
    ps.p = text->data;
    ps.last = text->data + text->len;
    ps.err = err;
    ps.errlen = errlen;

    e = ngx_http_agent_expr_or(&ps);

    if (e == NULL) {
        return NULL;
    }

    ngx_http_agent_expr_skip(&ps, "");

    if (ps.p < ps.last) {
        return ngx_http_agent_expr_error(&ps, "unexpected \"%*s\"",
                                         (size_t) (ps.last - ps.p), ps.p);
    }

    return e;
}


static ngx_http_agent_expr_t *
ngx_http_agent_expr_or(ngx_http_agent_parser_t *ps)
{
    ngx_http_agent_expr_t  *e, *n;

    if (++ps->depth > NGX_HTTP_AGENT_EXPR_MAX_DEPTH) {
        return ngx_http_agent_expr_error(ps, "nested too deeply");
    }

    e = ngx_http_agent_expr_and(ps);

    while (e && ngx_http_agent_expr_skip(ps, "||")) {
        n = ngx_http_agent_expr_node(ps, NGX_HTTP_AGENT_OP_OR);
        if (n == NULL) {
            return NULL;
        }

        n->left = e;
        n->right = ngx_http_agent_expr_and(ps);
        e = n->right ? n : NULL;
    }

    ps->depth--;

    return e;
}


static ngx_http_agent_expr_t *
ngx_http_agent_expr_and(ngx_http_agent_parser_t *ps)
{
    ngx_http_agent_expr_t  *e, *n;

    e = ngx_http_agent_expr_unary(ps);

    while (e && ngx_http_agent_expr_skip(ps, "&&")) {
        n = ngx_http_agent_expr_node(ps, NGX_HTTP_AGENT_OP_AND);
        if (n == NULL) {
            return NULL;
        }

        n->left = e;
        n->right = ngx_http_agent_expr_unary(ps);
        e = n->right ? n : NULL;
    }

    return e;
}


static ngx_http_agent_expr_t *
ngx_http_agent_expr_unary(ngx_http_agent_parser_t *ps)
{
    ngx_http_agent_expr_t  *n;

    ngx_http_agent_expr_skip(ps, "");

    if (ps->p < ps->last && *ps->p == '!'
        && !(ps->p + 1 < ps->last && ps->p[1] == '='))
    {
        ps->p++;

        if (++ps->depth > NGX_HTTP_AGENT_EXPR_MAX_DEPTH) {
            return ngx_http_agent_expr_error(ps, "nested too deeply");
        }

        n = ngx_http_agent_expr_node(ps, NGX_HTTP_AGENT_OP_NOT);
        if (n == NULL) {
            return NULL;
        }

        n->left = ngx_http_agent_expr_unary(ps);
        ps->depth--;

        return n->left ? n : NULL;
    }

    return ngx_http_agent_expr_compare(ps);
}


static ngx_http_agent_expr_t *
ngx_http_agent_expr_compare(ngx_http_agent_parser_t *ps)
{
    ngx_uint_t              i;
    ngx_http_agent_expr_t  *e, *n;

    static struct {
        const char            *token;
        ngx_http_agent_op_e    op;
    } ops[] = {
        { "==", NGX_HTTP_AGENT_OP_EQ },
        { "!=", NGX_HTTP_AGENT_OP_NE },
        { "<=", NGX_HTTP_AGENT_OP_LE },
        { ">=", NGX_HTTP_AGENT_OP_GE },
        { "<", NGX_HTTP_AGENT_OP_LT },
        { ">", NGX_HTTP_AGENT_OP_GT }
    };

    e = ngx_http_agent_expr_operand(ps);
    if (e == NULL) {
        return NULL;
    }

    for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        if (!ngx_http_agent_expr_skip(ps, ops[i].token)) {
            continue;
        }

        n = ngx_http_agent_expr_node(ps, ops[i].op);
        if (n == NULL) {
            return NULL;
        }

        n->left = e;
        n->right = ngx_http_agent_expr_operand(ps);

        return n->right ? n : NULL;
    }

    return e;
}


static ngx_http_agent_expr_t *
ngx_http_agent_expr_operand(ngx_http_agent_parser_t *ps)
{
    u_char                 *s, q;
    ngx_int_t               ch;
    ngx_str_t               name, *seg;
    ngx_http_agent_expr_t  *e;

    ngx_http_agent_expr_skip(ps, "");

    if (ps->p >= ps->last) {
        return ngx_http_agent_expr_error(ps, "a value is missing at the end");
    }

    if (*ps->p == '(') {
        ps->p++;

        e = ngx_http_agent_expr_or(ps);
        if (e == NULL) {
            return NULL;
        }

        if (!ngx_http_agent_expr_skip(ps, ")")) {
            return ngx_http_agent_expr_error(ps, "\")\" is missing");
        }

        return e;
    }

    e = ngx_http_agent_expr_node(ps, NGX_HTTP_AGENT_OP_LITERAL);
    if (e == NULL) {
        return NULL;
    }

    if (*ps->p == '\'' || *ps->p == '"') {
        q = *ps->p++;
        s = ps->p;

        while (ps->p < ps->last && *ps->p != q) {
            ps->p++;
        }

        if (ps->p >= ps->last) {
            return ngx_http_agent_expr_error(ps, "a string is not closed");
        }

        e->literal.type = NGX_HTTP_AGENT_V_STRING;
        e->literal.str.data = s;
        e->literal.str.len = ps->p - s;
        ps->p++;

        return e;
    }

    if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) {
        s = ps->p++;

        /* the whole word, so that "1.2.3", "1e" or "12abc" is refused */

        while (ps->p < ps->last
               && (isalnum(*ps->p) || *ps->p == '_' || *ps->p == '.'))
        {
            ps->p++;
        }

        name.data = s;
        name.len = ps->p - s;

        if (name.len == 1 && *s == '-') {
            return ngx_http_agent_expr_error(ps, "\"-\" is not a number");
        }

        return ngx_http_agent_expr_number(ps, e, &name);
    }

    s = ps->p;

    while (ps->p < ps->last
           && (isalnum(*ps->p) || *ps->p == '_' || *ps->p == '.'))
    {
        ps->p++;
    }

    if (ps->p == s) {
        return ngx_http_agent_expr_error(ps, "unexpected \"%*s\"",
                                         (size_t) (ps->last - s), s);
    }

    name.data = s;
    name.len = ps->p - s;

#define ngx_http_agent_word(w)                                                \
    (name.len == sizeof(w) - 1 && ngx_strncmp(name.data, w, name.len) == 0)

    if (ngx_http_agent_word("true") || ngx_http_agent_word("false")) {
        e->literal.type = NGX_HTTP_AGENT_V_BOOL;
        e->literal.number = (name.data[0] == 't');
        return e;
    }

    if (ngx_http_agent_word("null")) {
        return e;
    }

    if (ngx_http_agent_word("tool_calls")) {
        e->op = NGX_HTTP_AGENT_OP_TOOL_CALLS;
        return e;
    }

#undef ngx_http_agent_word

    /* a channel, then the fields inside its value */

    e->op = NGX_HTTP_AGENT_OP_CHANNEL;

    s = ngx_strlchr(name.data, name.data + name.len, '.');

    if (s) {
        e->path = ngx_array_create(ps->pool, 2, sizeof(ngx_str_t));
        if (e->path == NULL) {
            return NULL;
        }

        while (s) {
            u_char  *next, *end;

            next = s + 1;
            end = ngx_strlchr(next, name.data + name.len, '.');
            if (end == NULL) {
                end = name.data + name.len;
            }

            if (end == next) {
                return ngx_http_agent_expr_error(ps, "an empty field in "
                                                 "\"%V\"", &name);
            }

            seg = ngx_array_push(e->path);
            if (seg == NULL) {
                return NULL;
            }

            seg->len = end - next;
            seg->data = ngx_pnalloc(ps->pool, seg->len + 1);
            if (seg->data == NULL) {
                return NULL;
            }

            ngx_memcpy(seg->data, next, seg->len);
            seg->data[seg->len] = '\0';

            s = (end < name.data + name.len) ? end : NULL;
        }

        name.len = ngx_strlchr(name.data, name.data + name.len, '.')
                   - name.data;
    }

    ch = ngx_http_agent_graph_channel(ps->graph, &name);

    if (ch == NGX_ERROR) {
        return ngx_http_agent_expr_error(ps, "unknown channel \"%V\"", &name);
    }

    e->channel = ch;

    return e;
}


/*
 * NUMBER := "-"? DIGITS ("." DIGITS)?, at most 30 digits: without an
 * exponent it stays far below the range of a double, and a longer literal
 * would be read as 0 (ngx_http_agent_json_number() takes 63 bytes)
 */

static ngx_http_agent_expr_t *
ngx_http_agent_expr_number(ngx_http_agent_parser_t *ps,
    ngx_http_agent_expr_t *e, ngx_str_t *text)
{
    u_char      *p, *last, *start;
    ngx_uint_t   digits;

    p = text->data;
    last = text->data + text->len;

    if (*p == '-') {
        p++;
    }

    start = p;

    while (p < last && *p >= '0' && *p <= '9') {
        p++;
    }

    digits = p - start;

    if (digits && p < last && *p == '.') {
        start = ++p;

        while (p < last && *p >= '0' && *p <= '9') {
            p++;
        }

        digits = (p == start) ? 0 : digits + (p - start);
    }

    if (digits == 0 || p != last) {
        return ngx_http_agent_expr_error(ps, "the number \"%V\" is "
                                         "malformed: write it as 12, -3 or "
                                         "1.5, without an exponent", text);
    }

    if (digits > NGX_HTTP_AGENT_EXPR_MAX_DIGITS) {
        return ngx_http_agent_expr_error(ps, "the number \"%V\" has more "
                                         "than %d digits", text,
                                         NGX_HTTP_AGENT_EXPR_MAX_DIGITS);
    }

    e->literal.type = NGX_HTTP_AGENT_V_NUMBER;
    e->literal.number = ngx_http_agent_json_number(text);

    return e;
}


static ngx_http_agent_expr_t *
ngx_http_agent_expr_node(ngx_http_agent_parser_t *ps, ngx_http_agent_op_e op)
{
    ngx_http_agent_expr_t  *e;

    e = ngx_pcalloc(ps->pool, sizeof(ngx_http_agent_expr_t));
    if (e == NULL) {
        ps->failed = 1;
        return NULL;
    }

    e->op = op;

    return e;
}


/* skips spaces, then the token if it is next ("": spaces only) */

static ngx_uint_t
ngx_http_agent_expr_skip(ngx_http_agent_parser_t *ps, const char *token)
{
    size_t  len;

    while (ps->p < ps->last && (*ps->p == ' ' || *ps->p == '\t')) {
        ps->p++;
    }

    len = ngx_strlen(token);

    if (len == 0 || (size_t) (ps->last - ps->p) < len
        || ngx_strncmp(ps->p, token, len) != 0)
    {
        return 0;
    }

    ps->p += len;

    return 1;
}


static void *
ngx_http_agent_expr_error(ngx_http_agent_parser_t *ps, const char *fmt, ...)
{
    u_char   *p;
    va_list   args;

    if (ps->err[0] != '\0') {
        return NULL;
    }

    va_start(args, fmt);
    p = ngx_vslprintf(ps->err, ps->err + ps->errlen - 1, fmt, args);
    va_end(args);

    *p = '\0';

    return NULL;
}


ngx_int_t
ngx_http_agent_expr_test(ngx_http_agent_run_t *run, ngx_http_agent_expr_t *e)
{
    ngx_http_agent_v_t  v;

    if (ngx_http_agent_expr_eval(run, e, &v) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_agent_expr_truth(&v) ? NGX_OK : NGX_DECLINED;
}


static ngx_int_t
ngx_http_agent_expr_eval(ngx_http_agent_run_t *run, ngx_http_agent_expr_t *e,
    ngx_http_agent_v_t *v)
{
    ngx_http_agent_v_t     a, b;
    ngx_http_agent_msg_t  *m;

    ngx_memzero(v, sizeof(ngx_http_agent_v_t));

    switch (e->op) {

    case NGX_HTTP_AGENT_OP_LITERAL:
        *v = e->literal;
        return NGX_OK;

    case NGX_HTTP_AGENT_OP_CHANNEL:
        return ngx_http_agent_expr_channel(run, e, v);

    case NGX_HTTP_AGENT_OP_TOOL_CALLS:
        m = ngx_http_agent_graph_last_message(run,
                                              NGX_HTTP_AGENT_CH_MESSAGES);
        v->type = NGX_HTTP_AGENT_V_BOOL;
        v->number = (m && m->role.len && m->role.data[0] == 'a'
                     && m->tool_calls.len > 2);
        return NGX_OK;

    case NGX_HTTP_AGENT_OP_NOT:
        if (ngx_http_agent_expr_eval(run, e->left, &a) != NGX_OK) {
            return NGX_ERROR;
        }

        v->type = NGX_HTTP_AGENT_V_BOOL;
        v->number = !ngx_http_agent_expr_truth(&a);
        return NGX_OK;

    case NGX_HTTP_AGENT_OP_OR:
    case NGX_HTTP_AGENT_OP_AND:
        if (ngx_http_agent_expr_eval(run, e->left, &a) != NGX_OK) {
            return NGX_ERROR;
        }

        v->type = NGX_HTTP_AGENT_V_BOOL;

        if (ngx_http_agent_expr_truth(&a) == (e->op == NGX_HTTP_AGENT_OP_OR))
        {
            v->number = (e->op == NGX_HTTP_AGENT_OP_OR);
            return NGX_OK;
        }

        if (ngx_http_agent_expr_eval(run, e->right, &b) != NGX_OK) {
            return NGX_ERROR;
        }

        v->number = ngx_http_agent_expr_truth(&b);
        return NGX_OK;

    default:
        if (ngx_http_agent_expr_eval(run, e->left, &a) != NGX_OK
            || ngx_http_agent_expr_eval(run, e->right, &b) != NGX_OK)
        {
            return NGX_ERROR;
        }

        v->type = NGX_HTTP_AGENT_V_BOOL;
        v->number = ngx_http_agent_expr_compare_values(e->op, &a, &b);
        return NGX_OK;
    }
}


static ngx_int_t
ngx_http_agent_expr_channel(ngx_http_agent_run_t *run,
    ngx_http_agent_expr_t *e, ngx_http_agent_v_t *v)
{
    yajl_val                   j, next;
    ngx_str_t                  json, *seg;
    ngx_int_t                  rc, idx;
    ngx_uint_t                 i;
    ngx_http_agent_channel_t  *ch;

    ch = (ngx_http_agent_channel_t *) run->graph->channels.elts + e->channel;

    if (ch->reducer == NGX_HTTP_AGENT_REDUCE_SUM && e->path == NULL) {
        v->type = NGX_HTTP_AGENT_V_NUMBER;
        v->number = run->state[e->channel].number;
        return NGX_OK;
    }

    rc = ngx_http_agent_graph_value(run, e->channel, &json);

    if (rc == NGX_DECLINED) {
        /* messages: an array, as long as the conversation */
        v->type = NGX_HTTP_AGENT_V_ARRAY;
        v->number = json.len;
        return NGX_OK;
    }

    if (rc != NGX_OK) {
        return NGX_ERROR;
    }

    j = ngx_http_agent_json_parse(run->pool, json.data, json.len, NULL);
    if (j == NULL) {
        return NGX_ERROR;
    }

    seg = e->path ? e->path->elts : NULL;

    for (i = 0; e->path && i < e->path->nelts; i++) {
        next = NULL;

        if (YAJL_IS_OBJECT(j)) {
            next = ngx_http_agent_json_get(j, (char *) seg[i].data);

        } else if (YAJL_IS_ARRAY(j)) {
            idx = ngx_atoi(seg[i].data, seg[i].len);

            if (idx != NGX_ERROR && (size_t) idx < j->u.array.len) {
                next = j->u.array.values[idx];
            }

            if (seg[i].len == 6 && ngx_strncmp(seg[i].data, "length", 6) == 0)
            {
                v->type = NGX_HTTP_AGENT_V_NUMBER;
                v->number = j->u.array.len;
                return NGX_OK;
            }
        }

        if (next == NULL) {
            /* a missing field is null, as in JavaScript's undefined */
            return NGX_OK;
        }

        j = next;
    }

    ngx_http_agent_expr_json(j, v);

    return NGX_OK;
}


static void
ngx_http_agent_expr_json(yajl_val j, ngx_http_agent_v_t *v)
{
    ngx_str_t  num;

    if (YAJL_IS_STRING(j)) {
        v->type = NGX_HTTP_AGENT_V_STRING;
        v->str.data = (u_char *) YAJL_GET_STRING(j);
        v->str.len = ngx_strlen(v->str.data);

    } else if (YAJL_IS_NUMBER(j)) {
        v->type = NGX_HTTP_AGENT_V_NUMBER;
        num.data = (u_char *) j->u.number.r;
        num.len = ngx_strlen(num.data);
        v->number = ngx_http_agent_json_number(&num);

    } else if (YAJL_IS_TRUE(j) || YAJL_IS_FALSE(j)) {
        v->type = NGX_HTTP_AGENT_V_BOOL;
        v->number = YAJL_IS_TRUE(j);

    } else if (YAJL_IS_ARRAY(j)) {
        v->type = NGX_HTTP_AGENT_V_ARRAY;
        v->number = j->u.array.len;

    } else if (YAJL_IS_OBJECT(j)) {
        v->type = NGX_HTTP_AGENT_V_OBJECT;
        v->number = j->u.object.len;

    } else {
        v->type = NGX_HTTP_AGENT_V_NULL;
    }
}


/* as JavaScript has it, but [] and {} are false */

static ngx_uint_t
ngx_http_agent_expr_truth(ngx_http_agent_v_t *v)
{
    switch (v->type) {

    case NGX_HTTP_AGENT_V_NULL:
        return 0;

    case NGX_HTTP_AGENT_V_STRING:
        return v->str.len > 0;

    default:
        return v->number != 0;
    }
}


static ngx_uint_t
ngx_http_agent_expr_compare_values(ngx_http_agent_op_e op,
    ngx_http_agent_v_t *a, ngx_http_agent_v_t *b)
{
    ngx_int_t  c;

    if (a->type != b->type) {
        return op == NGX_HTTP_AGENT_OP_NE;
    }

    switch (a->type) {

    case NGX_HTTP_AGENT_V_NULL:
        c = 0;
        break;

    case NGX_HTTP_AGENT_V_STRING:
        c = ngx_memn2cmp(a->str.data, b->str.data, a->str.len, b->str.len);
        break;

    case NGX_HTTP_AGENT_V_ARRAY:
    case NGX_HTTP_AGENT_V_OBJECT:
        /* only the empty ones compare equal */
        c = (a->number == 0 && b->number == 0) ? 0 : 1;

        if (op != NGX_HTTP_AGENT_OP_EQ && op != NGX_HTTP_AGENT_OP_NE) {
            return 0;
        }

        break;

    default:
        c = (a->number < b->number) ? -1 : (a->number > b->number);
    }

    switch (op) {
    case NGX_HTTP_AGENT_OP_EQ:
        return c == 0;
    case NGX_HTTP_AGENT_OP_NE:
        return c != 0;
    case NGX_HTTP_AGENT_OP_LT:
        return c < 0;
    case NGX_HTTP_AGENT_OP_LE:
        return c <= 0;
    case NGX_HTTP_AGENT_OP_GT:
        return c > 0;
    default:
        return c >= 0;
    }
}
