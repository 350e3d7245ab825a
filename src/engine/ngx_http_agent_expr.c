
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine_int.h"
#include "ngx_http_agent_util.h"


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


/*
 * skips spaces, then the token if it is next ("": spaces only); a long
 * condition may go on over lines of nginx.conf
 */

static ngx_uint_t
ngx_http_agent_expr_skip(ngx_http_agent_parser_t *ps, const char *token)
{
    size_t  len;

    while (ps->p < ps->last
           && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == CR
               || *ps->p == LF))
    {
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
