
/*
 * Copyright (C) ngx_http_agent_module authors
 */


/*
 * What an A2A client sends agent_a2a: any bytes are one JSON-RPC request
 * or an error with a sentence; a request's params, read as SendMessage's,
 * give the user's text (its ids of our shape) or are refused with a code
 * and a sentence.
 */


#include "fuzz_common.h"
#include "ngx_http_agent_a2a_message.h"
#include "ngx_http_agent_jsonrpc.h"


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t                        i;
    ngx_int_t                     rc, code;
    ngx_str_t                     body, why;
    ngx_pool_t                   *pool;
    ngx_http_agent_jsonrpc_t      rpc;
    ngx_http_agent_a2a_message_t  m;

    pool = ngx_create_pool(4096, &ngx_fuzz_log);

    body.data = (u_char *) data;
    body.len = size;

    ngx_http_agent_jsonrpc_read(pool, &body, &rpc);

    if (rpc.code) {
        ngx_fuzz_check(rpc.error.len > 0);
        ngx_destroy_pool(pool);
        return 0;
    }

    ngx_str_null(&why);

    rc = ngx_http_agent_a2a_message(pool, rpc.params, &m, &code, &why);

    ngx_fuzz_check(rc == NGX_OK || rc == NGX_DECLINED || rc == NGX_ERROR);

    if (rc == NGX_DECLINED) {
        ngx_fuzz_check(why.len > 0 && code < 0);
    }

    if (rc == NGX_OK) {
        ngx_fuzz_check(m.text.len > 0 && m.context_id.len <= 64);

        for (i = 0; i < m.context_id.len; i++) {
            ngx_fuzz_check(isalnum(m.context_id.data[i])
                           || m.context_id.data[i] == '-'
                           || m.context_id.data[i] == '_');
        }
    }

    ngx_destroy_pool(pool);

    return 0;
}
