
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TZ_H_INCLUDED_
#define _NGX_HTTP_AGENT_TZ_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


/* where the system's time zone database is (Debian's tzdata) */
#define NGX_HTTP_AGENT_TZ_DIR   "/usr/share/zoneinfo/"

/* the longest zone name taken ("America/Argentina/ComodRivadavia") */
#define NGX_HTTP_AGENT_TZ_NAME  64


/* an IANA time zone: its offsets from UTC and when each began */
typedef struct {
    ngx_str_t     name;
    ngx_uint_t    n;           /* transitions */
    int64_t      *at;          /* each one's UTC second */
    int32_t      *offset;      /* the offset from it on, in seconds */
    int32_t       first;       /* the offset before the first */
} ngx_http_agent_tz_t;


ngx_http_agent_tz_t *ngx_http_agent_tz_get(ngx_str_t *name, ngx_log_t *log);
int32_t ngx_http_agent_tz_offset(ngx_http_agent_tz_t *tz, int64_t utc);
int64_t ngx_http_agent_tz_utc(ngx_http_agent_tz_t *tz, int64_t local);
ngx_int_t ngx_http_agent_tz_parse(ngx_http_agent_tz_t *tz, u_char *p,
    u_char *last, ngx_pool_t *pool);


#endif /* _NGX_HTTP_AGENT_TZ_H_INCLUDED_ */
