
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_util.h"


/*
 * A worker's leases renewed in one statement (leases_renew): what both
 * back ends share.  The leases go to the statement as one JSON array, a
 * row each with its session, run, expiry and generation; the statement
 * returns the rows it renewed, in no order (an UPDATE's), and each is
 * found among the leases by its run id, which the leases are sorted by.
 */


static int ngx_libc_cdecl ngx_http_agent_store_lease_cmp(const void *one,
    const void *two);


/* [{"id":..,"r":..,"e":..,"g":..}, ...], its leases sorted by run id */

ngx_int_t
ngx_http_agent_store_leases_json(ngx_pool_t *pool, ngx_array_t *leases,
    ngx_str_t *json)
{
    int64_t                        now;
    ngx_uint_t                     i;
    ngx_http_agent_json_t         *j;
    ngx_http_agent_store_lease_t  *l;

    ngx_qsort(leases->elts, leases->nelts, leases->size,
              ngx_http_agent_store_lease_cmp);

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    now = ngx_http_agent_store_ms();
    l = leases->elts;

    ngx_http_agent_json_arr(j);

    for (i = 0; i < leases->nelts; i++) {
        l[i].renewed = 0;

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_str(j, &l[i].id);
        ngx_http_agent_json_key(j, "r");
        ngx_http_agent_json_str(j, &l[i].run_id);
        ngx_http_agent_json_key(j, "e");
        ngx_http_agent_json_int(j, now + (int64_t) l[i].lease);
        ngx_http_agent_json_key(j, "g");
        ngx_http_agent_json_int(j, l[i].gen);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);

    return ngx_http_agent_json_done(j, json);
}


/* a row the statement returned: its lease renewed */

void
ngx_http_agent_store_lease_renewed(ngx_array_t *leases, u_char *run_id,
    size_t len)
{
    ngx_int_t                      d;
    ngx_uint_t                     lo, hi, mid;
    ngx_http_agent_store_lease_t  *l;

    l = leases->elts;
    lo = 0;
    hi = leases->nelts;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;

        d = ngx_memn2cmp(run_id, l[mid].run_id.data, len, l[mid].run_id.len);

        if (d == 0) {
            l[mid].renewed = 1;
            return;
        }

        if (d < 0) {
            hi = mid;

        } else {
            lo = mid + 1;
        }
    }
}


static int ngx_libc_cdecl
ngx_http_agent_store_lease_cmp(const void *one, const void *two)
{
    const ngx_http_agent_store_lease_t  *a = one;
    const ngx_http_agent_store_lease_t  *b = two;

    return (int) ngx_memn2cmp(a->run_id.data, b->run_id.data, a->run_id.len,
                              b->run_id.len);
}
