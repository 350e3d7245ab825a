
/*
 * Copyright (C) ngx_http_agent_module authors
 */


/*
 * What an A2A client sends agent_a2a: any bytes are one JSON-RPC request
 * or an error with a sentence; a request's params, read as SendMessage's,
 * give the user's text (its ids strings of at most 1024 bytes without a
 * control character) or are refused with a code and a sentence.
 */


#include "fuzz_common.h"
#include "ngx_http_agent_a2a.h"
#include "ngx_http_agent_util.h"


/* an id taken: 1024 bytes at most, no control character (issue 50) */

static int
ngx_fuzz_a2a_id(ngx_str_t *id)
{
    size_t  i;

    if (id->len > NGX_HTTP_AGENT_A2A_ID_MAX) {
        return 0;
    }

    for (i = 0; i < id->len; i++) {
        if (id->data[i] < 0x20 || id->data[i] == 0x7f) {
            return 0;
        }
    }

    return 1;
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
        ngx_fuzz_check(m.text.len > 0);
        ngx_fuzz_check(m.message_id.len > 0);
        ngx_fuzz_check(ngx_fuzz_a2a_id(&m.message_id));
        ngx_fuzz_check(ngx_fuzz_a2a_id(&m.context_id));
        ngx_fuzz_check(ngx_fuzz_a2a_id(&m.task_id));
    }

    ngx_destroy_pool(pool);

    return 0;
}
