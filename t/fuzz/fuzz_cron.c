
/*
 * Copyright (C) ngx_http_agent_module authors
 */


/*
 * Crons' schedules, times and zones: the input's first line is a cron
 * schedule, its second an ISO 8601 time, the rest a TZif file.  Any
 * schedule parses or is refused; one that parses names a time after
 * the one asked, or none, in UTC and in the zone when the file parses;
 * a zone's wall-clock times map back to times whose offset is one of its.
 */


#include "fuzz_common.h"
#include "ngx_http_agent_util.h"


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    u_char                 *p, *last, *nl;
    int64_t                 after, next, sec, t;
    int32_t                 off;
    ngx_str_t               line, zone;
    ngx_uint_t              i, k, found;
    ngx_pool_t             *pool;
    ngx_http_agent_tz_t     tz, *utc;
    ngx_http_agent_cron_t   cron;

    static int64_t  times[] = { 0, 1798761599, 1804000000, -86400,
                                2147483647, 4102444800 };

    pool = ngx_create_pool(4096, &ngx_fuzz_log);

    p = ngx_pnalloc(pool, size + 1);
    ngx_memcpy(p, data, size);
    last = p + size;

    ngx_str_null(&zone);
    utc = ngx_http_agent_tz_get(&zone, &ngx_fuzz_log);
    ngx_fuzz_check(utc != NULL);

    ngx_memzero(&tz, sizeof(ngx_http_agent_tz_t));

    /* the schedule */

    nl = ngx_strlchr(p, last, '\n');
    line.data = p;
    line.len = (nl ? nl : last) - p;
    p = nl ? nl + 1 : last;

    /* the time */

    nl = ngx_strlchr(p, last, '\n');
    zone.data = p;
    zone.len = (nl ? nl : last) - p;
    p = nl ? nl + 1 : last;

    if (ngx_http_agent_cron_time(&zone, &sec) != NGX_OK) {
        sec = 0;
    }

    found = (ngx_http_agent_tz_parse(&tz, p, last, pool) == NGX_OK);

    if (found) {
        /* its offsets, and its wall-clock times back to one of them */

        for (i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
            off = ngx_http_agent_tz_offset(&tz, times[i]);
            t = ngx_http_agent_tz_utc(&tz, times[i] + off);
            off = ngx_http_agent_tz_offset(&tz, t);

            ngx_fuzz_check(off == tz.first || tz.n > 0);
        }
    }

    if (ngx_http_agent_cron_parse(&line, &cron) == NGX_OK) {
        for (i = 0; i < sizeof(times) / sizeof(times[0]) + 1; i++) {
            after = (i == sizeof(times) / sizeof(times[0])) ? sec : times[i];

            if (after < 0 || after > 4102444800LL) {
                continue;
            }

            for (k = 0; k < 2; k++) {
                if (k == 1 && !found) {
                    break;
                }

                next = ngx_http_agent_cron_next(&cron, k ? &tz : utc, after);

                ngx_fuzz_check(next == -1 || next > after);
            }
        }
    }

    ngx_destroy_pool(pool);

    return 0;
}
