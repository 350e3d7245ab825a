
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"


/*
 * JSON-RPC 2.0 for the protocols that speak it (MCP, A2A): one message a
 * client sent, read; a result or an error written by our generator.
 * Batches are refused: MCP left them in 2025-06-18, A2A never had them.
 * No I/O: the fuzz target calls these as they are.
 */


void
ngx_http_agent_jsonrpc_read(ngx_pool_t *pool, ngx_str_t *body,
    ngx_http_agent_jsonrpc_t *rpc)
{
    u_char     *p;
    yajl_val    v, id;
    ngx_str_t   err, version;

    ngx_memzero(rpc, sizeof(ngx_http_agent_jsonrpc_t));
    ngx_str_set(&err, "");

    v = ngx_http_agent_json_parse(pool, body->data, body->len, &err);

    if (v == NULL) {
        rpc->code = NGX_HTTP_AGENT_JSONRPC_PARSE_ERROR;

        p = ngx_pnalloc(pool, err.len + sizeof("Parse error: "));
        if (p == NULL) {
            ngx_str_set(&rpc->error, "Parse error");
            return;
        }

        rpc->error.data = p;
        rpc->error.len = ngx_sprintf(p, "Parse error: %V", &err) - p;
        return;
    }

    if (YAJL_IS_ARRAY(v)) {
        rpc->code = NGX_HTTP_AGENT_JSONRPC_INVALID_REQUEST;
        ngx_str_set(&rpc->error, "Invalid Request: batches are not taken");
        return;
    }

    if (!YAJL_IS_OBJECT(v)) {
        rpc->code = NGX_HTTP_AGENT_JSONRPC_INVALID_REQUEST;
        ngx_str_set(&rpc->error, "Invalid Request: a JSON-RPC 2.0 object "
                    "is wanted");
        return;
    }

    /* the id first: an error about the rest names it */

    id = ngx_http_agent_json_get(v, "id");
    rpc->notification = (id == NULL);

    if (id && !(YAJL_IS_STRING(id) || YAJL_IS_INTEGER(id))) {
        rpc->code = NGX_HTTP_AGENT_JSONRPC_INVALID_REQUEST;
        ngx_str_set(&rpc->error, "Invalid Request: \"id\" must be a "
                    "string or an integer");
        return;
    }

    if (id && ngx_http_agent_json_encode(pool, id, &rpc->id) != NGX_OK) {
        rpc->code = NGX_HTTP_AGENT_JSONRPC_INTERNAL_ERROR;
        ngx_str_set(&rpc->error, "Internal error");
        return;
    }

    if (ngx_http_agent_json_get_str(v, "jsonrpc", &version) != NGX_OK
        || version.len != 3 || ngx_strncmp(version.data, "2.0", 3) != 0)
    {
        rpc->code = NGX_HTTP_AGENT_JSONRPC_INVALID_REQUEST;
        ngx_str_set(&rpc->error, "Invalid Request: \"jsonrpc\" must be "
                    "\"2.0\"");
        return;
    }

    if (ngx_http_agent_json_get_str(v, "method", &rpc->method) != NGX_OK
        || rpc->method.len == 0)
    {
        /* the answer to a request of ours (MCP's elicitation/create) */

        if (id && ngx_http_agent_json_get(v, "method") == NULL) {
            rpc->result = ngx_http_agent_json_get(v, "result");

            if ((rpc->result && YAJL_IS_OBJECT(rpc->result))
                || (rpc->result == NULL
                    && ngx_http_agent_json_get(v, "error")))
            {
                rpc->response = 1;
                return;
            }

            rpc->result = NULL;
        }

        rpc->code = NGX_HTTP_AGENT_JSONRPC_INVALID_REQUEST;
        ngx_str_set(&rpc->error, "Invalid Request: \"method\" is missing");
        return;
    }

    rpc->params = ngx_http_agent_json_get(v, "params");

    if (rpc->params && !YAJL_IS_NULL(rpc->params)
        && !YAJL_IS_OBJECT(rpc->params))
    {
        rpc->code = NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS;
        ngx_str_set(&rpc->error, "Invalid params: \"params\" must be an "
                    "object");
        return;
    }

    if (rpc->params && YAJL_IS_NULL(rpc->params)) {
        rpc->params = NULL;
    }
}


/* {"jsonrpc": "2.0", "id", "result"}: result is our generator's JSON */

ngx_int_t
ngx_http_agent_jsonrpc_result(ngx_pool_t *pool, ngx_str_t *id,
    ngx_str_t *result, ngx_str_t *out)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create_obj(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_key(j, "jsonrpc");
    ngx_http_agent_json_cstr(j, "2.0");
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_raw(j, id);
    ngx_http_agent_json_key(j, "result");
    ngx_http_agent_json_raw(j, result);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, out);
}


/* {"jsonrpc": "2.0", "id" (null when unknown), "error": {code, message}} */

ngx_int_t
ngx_http_agent_jsonrpc_error(ngx_pool_t *pool, ngx_str_t *id,
    ngx_int_t code, ngx_str_t *msg, ngx_str_t *out)
{
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create_obj(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_key(j, "jsonrpc");
    ngx_http_agent_json_cstr(j, "2.0");
    ngx_http_agent_json_key(j, "id");

    if (id && id->len) {
        ngx_http_agent_json_raw(j, id);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_key(j, "error");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "code");
    ngx_http_agent_json_int(j, code);
    ngx_http_agent_json_key(j, "message");
    ngx_http_agent_json_str(j, msg);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, out);
}
