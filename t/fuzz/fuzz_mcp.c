
/*
 * Copyright (C) ngx_http_agent_module authors
 */


/*
 * An MCP server's answer: any bytes, as a JSON-RPC message, a batch, or an
 * event stream, give the answer to request 1, its absence, or a sentence;
 * an answer found is a result object or an error with its text.
 */


#include "fuzz_common.h"
#include "ngx_http_agent_mcp.h"


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ngx_int_t                     rc;
    ngx_str_t                     body;
    ngx_pool_t                   *pool;
    ngx_http_agent_mcp_answer_t   a;

    pool = ngx_create_pool(4096, &ngx_fuzz_log);

    body.data = (u_char *) data;
    body.len = size;

    rc = ngx_http_agent_mcp_rpc_answer(pool, &body, 1, &a);

    ngx_fuzz_check(rc == NGX_OK || rc == NGX_DECLINED || rc == NGX_ERROR);

    if (rc == NGX_OK) {
        ngx_fuzz_check(a.rpc_error ? a.error.len > 0
                                   : a.result != NULL
                                     && YAJL_IS_OBJECT(a.result));
    }

    if (rc == NGX_ERROR) {
        ngx_fuzz_check(a.error.len > 0);
    }

    ngx_destroy_pool(pool);

    return 0;
}
