
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_mcp.h"


/*
 * An MCP server's answer over Streamable HTTP: one JSON-RPC message, a
 * batch of them, or a server-sent event stream whose events' data are
 * messages (requests and notifications of the server among them).  What we
 * want of it is the response with our request's id, and whether the server
 * said its tools changed.  Nothing here trusts the text: every message is
 * parsed by our parser, with its depth bounded, and what is malformed is a
 * sentence, never a crash.  The request itself is mcp_http.c.
 */


static ngx_int_t ngx_http_agent_mcp_rpc_message(ngx_pool_t *pool,
    yajl_val m, int64_t id, ngx_http_agent_mcp_answer_t *a);
static ngx_int_t ngx_http_agent_mcp_rpc_json(ngx_pool_t *pool, u_char *p,
    size_t len, int64_t id, ngx_http_agent_mcp_answer_t *a);


/* NGX_OK: the answer found; NGX_DECLINED: not in it; NGX_ERROR: malformed */

ngx_int_t
ngx_http_agent_mcp_rpc_answer(ngx_pool_t *pool, ngx_str_t *body, int64_t id,
    ngx_http_agent_mcp_answer_t *a)
{
    u_char     *p, *last, *line, *eol, *data;
    size_t      dlen;
    ngx_int_t   rc, found;
    ngx_uint_t  events;

    ngx_memzero(a, sizeof(ngx_http_agent_mcp_answer_t));

    p = body->data;
    last = body->data + body->len;

    while (p < last && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
    {
        p++;
    }

    if (p == last) {
        return NGX_DECLINED;
    }

    if (*p == '{' || *p == '[') {
        return ngx_http_agent_mcp_rpc_json(pool, p, last - p, id, a);
    }

    /* an event stream: the data lines of each event, joined by newlines */

    data = ngx_pnalloc(pool, body->len + 1);
    if (data == NULL) {
        return NGX_ERROR;
    }

    dlen = 0;
    events = 0;
    found = NGX_DECLINED;
    line = body->data;

    while (line <= last) {
        eol = ngx_strlchr(line, last, '\n');
        if (eol == NULL) {
            eol = last;
        }

        if (eol - line >= 5 && ngx_strncmp(line, "data:", 5) == 0) {
            p = line + 5;

            if (p < eol && *p == ' ') {
                p++;
            }

            if (dlen) {
                data[dlen++] = '\n';
            }

            dlen = ngx_cpymem(data + dlen, p, eol - p) - data;

            if (dlen && data[dlen - 1] == '\r') {
                dlen--;
            }

        } else if (eol == line || (eol - line == 1 && *line == '\r')
                   || eol == last)
        {
            /* the end of an event */

            if (dlen) {
                events++;
                rc = ngx_http_agent_mcp_rpc_json(pool, data, dlen, id, a);

                if (rc == NGX_ERROR) {
                    return NGX_ERROR;
                }

                if (rc == NGX_OK) {
                    found = NGX_OK;
                }

                dlen = 0;
            }
        }

        if (eol == last) {
            break;
        }

        line = eol + 1;
    }

    if (events == 0) {
        ngx_str_set(&a->error, "it is neither JSON nor an event stream");
        return NGX_ERROR;
    }

    return found;
}


static ngx_int_t
ngx_http_agent_mcp_rpc_json(ngx_pool_t *pool, u_char *p, size_t len,
    int64_t id, ngx_http_agent_mcp_answer_t *a)
{
    size_t     i;
    yajl_val   v;
    ngx_int_t  rc, found;
    ngx_str_t  err;

    ngx_str_set(&err, "");

    v = ngx_http_agent_json_parse(pool, p, len, &err);

    if (v == NULL) {
        ngx_str_set(&a->error, "it is not JSON");
        return NGX_ERROR;
    }

    if (!YAJL_IS_ARRAY(v)) {
        return ngx_http_agent_mcp_rpc_message(pool, v, id, a);
    }

    found = NGX_DECLINED;

    for (i = 0; i < v->u.array.len; i++) {
        rc = ngx_http_agent_mcp_rpc_message(pool, v->u.array.values[i], id,
                                            a);
        if (rc == NGX_ERROR) {
            return NGX_ERROR;
        }

        if (rc == NGX_OK) {
            found = NGX_OK;
        }
    }

    return found;
}


static ngx_int_t
ngx_http_agent_mcp_rpc_message(ngx_pool_t *pool, yajl_val m, int64_t id,
    ngx_http_agent_mcp_answer_t *a)
{
    yajl_val   mid, result, error, msg;
    ngx_str_t  method;

    if (!YAJL_IS_OBJECT(m)) {
        ngx_str_set(&a->error, "the MCP server sent a message that is not "
                    "a JSON object");
        return NGX_ERROR;
    }

    if (ngx_http_agent_json_get_str(m, "method", &method) == NGX_OK) {
        if (method.len == 32
            && ngx_strncmp(method.data, "notifications/tools/list_changed",
                           32) == 0)
        {
            a->list_changed = 1;
        }

        /* a request or notification of the server: not our answer */
        return NGX_DECLINED;
    }

    mid = ngx_http_agent_json_get(m, "id");

    if (mid == NULL || !YAJL_IS_INTEGER(mid) || YAJL_GET_INTEGER(mid) != id) {
        return NGX_DECLINED;
    }

    result = ngx_http_agent_json_get(m, "result");
    error = ngx_http_agent_json_get(m, "error");

    if (result && YAJL_IS_OBJECT(result)) {
        a->result = result;
        return NGX_OK;
    }

    if (error && YAJL_IS_OBJECT(error)) {
        msg = ngx_http_agent_json_get(error, "message");

        if (msg && YAJL_IS_STRING(msg) && YAJL_GET_STRING(msg)[0]) {
            a->error.data = (u_char *) YAJL_GET_STRING(msg);
            a->error.len = ngx_strlen(a->error.data);

        } else {
            /* no message, or an empty one: still an error the model reads */
            ngx_str_set(&a->error, "the MCP server answered an error");
        }

        a->rpc_error = 1;
        return NGX_OK;
    }

    ngx_str_set(&a->error, "the MCP server's answer has neither a result "
                "nor an error");
    return NGX_ERROR;
}
