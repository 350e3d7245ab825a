
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_CRON_H_INCLUDED_
#define _NGX_HTTP_AGENT_CRON_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tz.h"


/* a cron schedule: "minute hour day-of-month month day-of-week" */
typedef struct {
    uint64_t      minute;      /* bit n: minute n */
    uint32_t      hour;
    uint32_t      mday;        /* bit n: day n, 1 to 31 */
    uint32_t      month;       /* bit n: month n, 1 to 12 */
    uint32_t      wday;        /* bit n: day n, Sunday 0 */
    unsigned      mday_any:1;  /* "*": the other day field decides */
    unsigned      wday_any:1;
} ngx_http_agent_cron_t;


ngx_int_t ngx_http_agent_cron_parse(ngx_str_t *text,
    ngx_http_agent_cron_t *cron);
int64_t ngx_http_agent_cron_next(ngx_http_agent_cron_t *cron,
    ngx_http_agent_tz_t *tz, int64_t after);
ngx_int_t ngx_http_agent_cron_time(ngx_str_t *iso, int64_t *sec);
u_char *ngx_http_agent_cron_iso(u_char *buf, int64_t sec);

/* "2026-11-27T21:54:48Z" and the offset "+00:00" form, the longest */
#define NGX_HTTP_AGENT_CRON_ISO_LEN  (sizeof("2026-11-27T21:54:48+00:00") - 1)


#endif /* _NGX_HTTP_AGENT_CRON_H_INCLUDED_ */
