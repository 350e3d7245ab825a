
/*
 * Copyright (C) ngx_http_agent_module authors
 */


/*
 * The CSV importer: any bytes are imported into a SQLite file or refused
 * with a reason; never a crash, never an invalid description.
 */


#include "fuzz_common.h"
#include "ngx_http_agent_sql.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"

#include <unistd.h>


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char                        path[64];
    u_char                     *copy;
    ngx_int_t                   rc;
    ngx_str_t                   err;
    ngx_pool_t                 *pool;
    ngx_http_agent_resource_t   res;

    pool = ngx_create_pool(4096, &ngx_fuzz_log);

    snprintf(path, sizeof(path), "/tmp/agent-fuzz-csv-%d.sqlite",
             (int) getpid());
    unlink(path);

    memset(&res, 0, sizeof(res));
    ngx_str_set(&res.name, "fuzz.csv");
    ngx_str_set(&res.table, "fuzz");
    res.path.data = (u_char *) path;
    res.path.len = strlen(path);
    ngx_str_null(&err);

    /* the importer unquotes in place, as in the request body it gets */
    copy = ngx_pnalloc(pool, size + 1);
    ngx_fuzz_check(copy != NULL);
    memcpy(copy, data, size);
    copy[size] = '\0';

    rc = ngx_http_agent_csv_import(pool, &ngx_fuzz_log, copy, size, 1, &res,
                                   &err);

    ngx_fuzz_check(rc == NGX_OK || rc == NGX_DECLINED || rc == NGX_ERROR);

    if (rc == NGX_OK) {
        ngx_fuzz_check(ngx_http_agent_json_parse(pool, res.columns.data,
                                                 res.columns.len, &err)
                       != NULL);
    }

    if (rc == NGX_DECLINED) {
        ngx_fuzz_check(err.len > 0);
    }

    unlink(path);
    ngx_destroy_pool(pool);

    return 0;
}
