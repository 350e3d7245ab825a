
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine_int.h"
#include "ngx_http_agent_util.h"


/* an if= condition evaluated against a run's channels */


static ngx_int_t ngx_http_agent_expr_eval(ngx_http_agent_run_t *run,
    ngx_http_agent_expr_t *e, ngx_http_agent_v_t *v);
static ngx_int_t ngx_http_agent_expr_channel(ngx_http_agent_run_t *run,
    ngx_http_agent_expr_t *e, ngx_http_agent_v_t *v);
static void ngx_http_agent_expr_message(ngx_http_agent_run_t *run,
    ngx_http_agent_expr_t *e, ngx_http_agent_v_t *v);
static void ngx_http_agent_expr_json(yajl_val j, ngx_http_agent_v_t *v);
static ngx_uint_t ngx_http_agent_expr_truth(ngx_http_agent_v_t *v);
static ngx_uint_t ngx_http_agent_expr_compare_values(ngx_http_agent_op_e op,
    ngx_http_agent_v_t *a, ngx_http_agent_v_t *b);


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

        if (e->path) {
            ngx_http_agent_expr_message(run, e, v);
        }

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


/*
 * messages.length, and a message by its place (messages.0, messages.last):
 * its content, role (user, assistant, tool, system) or type (LangChain's:
 * human, ai, tool, system); anything else is null
 */

static void
ngx_http_agent_expr_message(ngx_http_agent_run_t *run,
    ngx_http_agent_expr_t *e, ngx_http_agent_v_t *v)
{
    ngx_str_t             *seg;
    ngx_int_t              idx;
    ngx_array_t           *msgs;
    ngx_http_agent_msg_t  *m;

    seg = e->path->elts;
    msgs = run->state[e->channel].messages;

    if (seg[0].len == 6 && ngx_strncmp(seg[0].data, "length", 6) == 0
        && e->path->nelts == 1)
    {
        v->type = NGX_HTTP_AGENT_V_NUMBER;
        return;
    }

    v->type = NGX_HTTP_AGENT_V_NULL;

    if (msgs == NULL || msgs->nelts == 0 || e->path->nelts > 2) {
        return;
    }

    if (seg[0].len == 4 && ngx_strncmp(seg[0].data, "last", 4) == 0) {
        idx = msgs->nelts - 1;

    } else {
        idx = ngx_atoi(seg[0].data, seg[0].len);

        if (idx == NGX_ERROR || (ngx_uint_t) idx >= msgs->nelts) {
            return;
        }
    }

    m = (ngx_http_agent_msg_t *) msgs->elts + idx;

    if (e->path->nelts == 1) {
        v->type = NGX_HTTP_AGENT_V_OBJECT;
        v->number = 1;
        return;
    }

    v->type = NGX_HTTP_AGENT_V_STRING;

    if (seg[1].len == 7 && ngx_strncmp(seg[1].data, "content", 7) == 0) {
        v->str = m->content;

    } else if (seg[1].len == 4 && ngx_strncmp(seg[1].data, "role", 4) == 0) {
        v->str = m->role;

    } else if (seg[1].len == 4 && ngx_strncmp(seg[1].data, "type", 4) == 0)
    {
        switch (m->role.len ? m->role.data[0] : 0) {
        case 'u':
            ngx_str_set(&v->str, "human");
            break;
        case 'a':
            ngx_str_set(&v->str, "ai");
            break;
        default:
            v->str = m->role;
        }

    } else {
        v->type = NGX_HTTP_AGENT_V_NULL;
    }
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
