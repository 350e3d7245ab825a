
/*
 * Copyright (C) ngx_http_agent_module authors
 */


/*
 * Open Responses' create request (agent_responses): any bytes that parse
 * as JSON are read into a turn's input or refused with a sentence naming
 * the field; an input read has a model, text or the outputs of function
 * calls (then a conversation), a conversation id of our shape or none,
 * and at most 128 tools.
 */


#include "fuzz_common.h"
#include "ngx_http_agent_responses.h"
#include "ngx_http_agent_util.h"


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t                            i;
    yajl_val                          v;
    ngx_int_t                         rc;
    ngx_str_t                         why;
    ngx_pool_t                       *pool;
    ngx_http_agent_responses_input_t  in;

    pool = ngx_create_pool(4096, &ngx_fuzz_log);

    v = ngx_http_agent_json_parse(pool, (u_char *) data, size, NULL);

    if (v == NULL || !YAJL_IS_OBJECT(v)) {
        ngx_destroy_pool(pool);
        return 0;
    }

    ngx_str_null(&why);

    rc = ngx_http_agent_responses_input(pool, v, &in, &why);

    ngx_fuzz_check(rc == NGX_OK || rc == NGX_DECLINED || rc == NGX_ERROR);

    if (rc == NGX_DECLINED) {
        ngx_fuzz_check(why.len > 0 && in.param.len > 0);
    }

    if (rc == NGX_OK) {
        ngx_fuzz_check(in.model.len > 0
                       && (in.text.len > 0
                           || (in.outputs && in.outputs->nelts > 0
                               && in.thread_id.len > 0)));
        ngx_fuzz_check(in.thread_id.len <= 64);
        ngx_fuzz_check(in.tools == NULL
                       || in.tools->nelts <= NGX_HTTP_AGENT_RESPONSES_TOOLS);

        for (i = 0; i < in.thread_id.len; i++) {
            ngx_fuzz_check(isalnum(in.thread_id.data[i])
                           || in.thread_id.data[i] == '-'
                           || in.thread_id.data[i] == '_');
        }
    }

    ngx_destroy_pool(pool);

    return 0;
}
