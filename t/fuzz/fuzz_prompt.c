
/*
 * Copyright (C) ngx_http_agent_module authors
 */


/*
 * The prompt template renderer: the input is a template (up to a NUL)
 * and two values; any template renders, and every {{name}} of a known
 * name is replaced.
 */


#include "fuzz_common.h"
#include "ngx_http_agent_engine.h"


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t                        i;
    ngx_str_t                     tpl, out;
    ngx_pool_t                   *pool;
    ngx_http_agent_prompt_var_t   vars[2];

    for (i = 0; i < size && data[i]; i++) {
        /* void */
    }

    tpl.data = (u_char *) data;
    tpl.len = i;

    ngx_str_set(&vars[0].name, "csv_metadata");
    ngx_str_set(&vars[1].name, "db_schema");

    vars[0].value.data = (u_char *) data + ngx_min(i + 1, size);
    vars[0].value.len = size - ngx_min(i + 1, size);
    vars[1].value = vars[0].value;

    pool = ngx_create_pool(4096, &ngx_fuzz_log);

    /* each replaced name takes 13 bytes at least ("{{db_schema}}") */
    if (ngx_http_agent_prompt_render(pool, &tpl, vars, 2, &out) == NGX_OK) {
        ngx_fuzz_check(out.len <= tpl.len
                                  + (tpl.len / 13 + 1) * vars[0].value.len);
    }

    ngx_destroy_pool(pool);

    return 0;
}
