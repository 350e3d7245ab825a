
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_mcpserver_rpc.h"


/*
 * What an MCP client sends, read: one JSON-RPC message (batches left the
 * protocol in 2025-06-18), and a graph's tools/call arguments.  No I/O:
 * the fuzz target calls these as they are.
 */


void
ngx_http_agent_mcpserver_rpc_read(ngx_pool_t *pool, ngx_str_t *body,
    ngx_http_agent_mcpserver_rpc_t *rpc)
{
    yajl_val   v, id;
    ngx_str_t  err, version;

    ngx_memzero(rpc, sizeof(ngx_http_agent_mcpserver_rpc_t));
    ngx_str_set(&err, "");

    v = ngx_http_agent_json_parse(pool, body->data, body->len, &err);

    if (v == NULL) {
        rpc->code = NGX_HTTP_AGENT_RPC_PARSE_ERROR;
        ngx_str_set(&rpc->error, "Parse error: the body is not JSON");
        return;
    }

    if (YAJL_IS_ARRAY(v)) {
        rpc->code = NGX_HTTP_AGENT_RPC_INVALID_REQUEST;
        ngx_str_set(&rpc->error, "Invalid Request: batches are not taken "
                    "(MCP 2025-06-18 and later)");
        return;
    }

    if (!YAJL_IS_OBJECT(v)
        || ngx_http_agent_json_get_str(v, "jsonrpc", &version) != NGX_OK
        || version.len != 3 || ngx_strncmp(version.data, "2.0", 3) != 0)
    {
        rpc->code = NGX_HTTP_AGENT_RPC_INVALID_REQUEST;
        ngx_str_set(&rpc->error, "Invalid Request: a JSON-RPC 2.0 object "
                    "is wanted");
        return;
    }

    id = ngx_http_agent_json_get(v, "id");

    if (id && !YAJL_IS_NULL(id)) {
        if (!(YAJL_IS_STRING(id) || YAJL_IS_INTEGER(id))) {
            rpc->code = NGX_HTTP_AGENT_RPC_INVALID_REQUEST;
            ngx_str_set(&rpc->error, "Invalid Request: \"id\" must be a "
                        "string or an integer");
            return;
        }

        if (ngx_http_agent_json_encode(pool, id, &rpc->id) != NGX_OK) {
            rpc->code = NGX_HTTP_AGENT_RPC_INTERNAL_ERROR;
            ngx_str_set(&rpc->error, "Internal error");
            return;
        }
    }

    if (ngx_http_agent_json_get_str(v, "method", &rpc->method) != NGX_OK
        || rpc->method.len == 0)
    {
        /* a response to a request of ours: we send none */
        rpc->code = NGX_HTTP_AGENT_RPC_INVALID_REQUEST;
        ngx_str_set(&rpc->error, "Invalid Request: \"method\" is missing");
        return;
    }

    rpc->params = ngx_http_agent_json_get(v, "params");

    if (rpc->params && !YAJL_IS_NULL(rpc->params)
        && !YAJL_IS_OBJECT(rpc->params))
    {
        rpc->code = NGX_HTTP_AGENT_RPC_INVALID_PARAMS;
        ngx_str_set(&rpc->error, "Invalid params: \"params\" must be an "
                    "object");
        return;
    }

    if (rpc->params && YAJL_IS_NULL(rpc->params)) {
        rpc->params = NULL;
    }
}


/*
 * tools/call's params: {"name", "arguments": {"message", "thread_id",
 * "resume", and channels of the graph}, "_meta": {"progressToken"}}.
 * Channels other than the graph's own (messages, the turn's input and
 * session_id) and names that are no channel are refused: a tool's schema
 * lists what it takes.
 */

ngx_int_t
ngx_http_agent_mcpserver_rpc_call(ngx_pool_t *pool, yajl_val params,
    ngx_http_agent_graph_t *graph, ngx_http_agent_mcpserver_call_t *call,
    ngx_str_t *why)
{
    size_t                  i, n;
    yajl_val                args, v, meta;
    ngx_int_t               ch;
    ngx_str_t               key, out;
    ngx_uint_t              any;
    ngx_http_agent_json_t  *j;

    ngx_memzero(call, sizeof(ngx_http_agent_mcpserver_call_t));

    meta = ngx_http_agent_json_get(params, "_meta");
    v = meta ? ngx_http_agent_json_get(meta, "progressToken") : NULL;

    if (v && (YAJL_IS_STRING(v) || YAJL_IS_INTEGER(v))
        && ngx_http_agent_json_encode(pool, v, &call->progress)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    args = ngx_http_agent_json_get(params, "arguments");

    if (args == NULL || !YAJL_IS_OBJECT(args)) {
        ngx_str_set(why, "\"arguments\" must be an object with "
                    "\"message\"");
        return NGX_DECLINED;
    }

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);
    any = 0;

    for (i = 0; i < args->u.object.len; i++) {
        key.data = (u_char *) args->u.object.keys[i];
        key.len = ngx_strlen(key.data);
        v = args->u.object.values[i];

        if (key.len == 7 && ngx_strncmp(key.data, "message", 7) == 0) {
            if (!YAJL_IS_STRING(v)) {
                ngx_str_set(why, "\"message\" must be a string");
                return NGX_DECLINED;
            }

            call->message.data = (u_char *) YAJL_GET_STRING(v);
            call->message.len = ngx_strlen(call->message.data);
            continue;
        }

        if (key.len == 9 && ngx_strncmp(key.data, "thread_id", 9) == 0) {
            if (!YAJL_IS_STRING(v)) {
                ngx_str_set(why, "\"thread_id\" must be a string");
                return NGX_DECLINED;
            }

            call->thread_id.data = (u_char *) YAJL_GET_STRING(v);
            call->thread_id.len = ngx_strlen(call->thread_id.data);

            for (n = 0; n < call->thread_id.len; n++) {
                if (!(isalnum(call->thread_id.data[n])
                      || call->thread_id.data[n] == '-'
                      || call->thread_id.data[n] == '_'))
                {
                    break;
                }
            }

            if (n == 0 || n != call->thread_id.len || n > 64) {
                ngx_str_set(why, "\"thread_id\" must be an id: 1 to 64 "
                            "letters, digits, - or _");
                return NGX_DECLINED;
            }

            continue;
        }

        if (key.len == 6 && ngx_strncmp(key.data, "resume", 6) == 0) {
            if (ngx_http_agent_json_encode(pool, v, &call->resume)
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            continue;
        }

        ch = graph ? ngx_http_agent_graph_channel(graph, &key) : NGX_ERROR;

        if (ch == NGX_ERROR || ch == NGX_HTTP_AGENT_CH_MESSAGES
            || ch == NGX_HTTP_AGENT_CH_INPUT
            || ch == NGX_HTTP_AGENT_CH_SESSION_ID)
        {
            ngx_str_set(why, "an argument is neither \"message\", "
                        "\"thread_id\", \"resume\" nor an input of the "
                        "graph: see the tool's inputSchema");
            return NGX_DECLINED;
        }

        ngx_http_agent_json_str(j, &key);
        ngx_http_agent_json_val(j, v);
        any = 1;
    }

    ngx_http_agent_json_end(j);

    if (call->resume.len && call->thread_id.len == 0) {
        ngx_str_set(why, "\"resume\" answers a thread's interrupt: "
                    "\"thread_id\" names the thread");
        return NGX_DECLINED;
    }

    if (call->resume.len == 0 && call->message.len == 0) {
        ngx_str_set(why, "\"message\" must be a non-empty string");
        return NGX_DECLINED;
    }

    if (!any) {
        return NGX_OK;
    }

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_ERROR;
    }

    call->values = ngx_http_agent_json_parse(pool, out.data, out.len, NULL);

    return call->values ? NGX_OK : NGX_ERROR;
}

