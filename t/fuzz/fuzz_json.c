
/*
 * Copyright (C) ngx_http_agent_module authors
 */


/*
 * The request JSON: whatever parses is written again by our generator as
 * valid UTF-8 JSON that parses to the same text a second time.
 */


#include "fuzz_common.h"
#include "ngx_http_agent_util.h"


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    yajl_val     v, v2;
    ngx_str_t    err, out, out2;
    ngx_pool_t  *pool;

    pool = ngx_create_pool(4096, &ngx_fuzz_log);

    v = ngx_http_agent_json_parse(pool, (u_char *) data, size, &err);

    if (v) {
        ngx_fuzz_check(ngx_http_agent_json_encode(pool, v, &out) == NGX_OK);
        ngx_fuzz_check(ngx_http_agent_json_utf8_valid(out.data, out.len));

        v2 = ngx_http_agent_json_parse(pool, out.data, out.len, &err);
        ngx_fuzz_check(v2 != NULL);
        ngx_fuzz_check(ngx_http_agent_json_encode(pool, v2, &out2)
                       == NGX_OK);
        ngx_fuzz_check(out.len == out2.len
                       && memcmp(out.data, out2.data, out.len) == 0);
    }

    /* any bytes as a string: valid UTF-8 JSON out */
    out.data = (u_char *) data;
    out.len = size;
    ngx_fuzz_check(ngx_http_agent_json_quote(pool, &out, &out2) == NGX_OK);
    ngx_fuzz_check(ngx_http_agent_json_utf8_valid(out2.data, out2.len));
    ngx_fuzz_check(ngx_http_agent_json_parse(pool, out2.data, out2.len,
                                             &err)
                   != NULL);

    ngx_destroy_pool(pool);

    return 0;
}
