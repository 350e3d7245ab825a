
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"


/*
 * Cron schedules for the LangGraph API's crons (lg_crons.c): the five
 * fields of cron(8) (lists, ranges, steps, month and day names, "?" as
 * "*" in the day fields), the "@daily" names, and the time after a given
 * one that a schedule names, on the wall clock of a time zone (tz.c).
 * As cron(8), a day matches either day field when both are given, the
 * other one when one is "*".  Times are whole seconds of UTC.
 */


/* the years a schedule is looked for in: "0 0 29 2 1" has one in 28 */
#define NGX_HTTP_AGENT_CRON_YEARS  28


typedef struct {
    ngx_uint_t    min;
    ngx_uint_t    max;
    const char   *names;     /* three letters each, from min on */
} ngx_http_agent_cron_field_t;


static ngx_int_t ngx_http_agent_cron_field(u_char *p, u_char *last,
    ngx_http_agent_cron_field_t *f, uint64_t *bits);
static ngx_int_t ngx_http_agent_cron_number(u_char **pp, u_char *last,
    ngx_http_agent_cron_field_t *f, ngx_uint_t *n);
static int64_t ngx_http_agent_cron_days(int64_t y, ngx_uint_t m,
    ngx_uint_t d);
static void ngx_http_agent_cron_civil(int64_t days, int64_t *y,
    ngx_uint_t *m, ngx_uint_t *d);
static ngx_uint_t ngx_http_agent_cron_mdays(int64_t y, ngx_uint_t m);
static ngx_int_t ngx_http_agent_cron_digits(u_char **pp, u_char *last,
    ngx_uint_t n, ngx_uint_t *v);
static ngx_int_t ngx_http_agent_cron_exact(u_char **pp, u_char *last,
    ngx_uint_t n, ngx_uint_t *v);


static ngx_http_agent_cron_field_t  ngx_http_agent_cron_fields[] = {
    { 0, 59, NULL },
    { 0, 23, NULL },
    { 1, 31, NULL },
    { 1, 12, "JANFEBMARAPRMAYJUNJULAUGSEPOCTNOVDEC" },
    { 0, 7, "SUNMONTUEWEDTHUFRISAT" }
};


static struct {
    ngx_str_t     name;
    ngx_str_t     schedule;
} ngx_http_agent_cron_names[] = {
    { ngx_string("@yearly"), ngx_string("0 0 1 1 *") },
    { ngx_string("@annually"), ngx_string("0 0 1 1 *") },
    { ngx_string("@monthly"), ngx_string("0 0 1 * *") },
    { ngx_string("@weekly"), ngx_string("0 0 * * 0") },
    { ngx_string("@daily"), ngx_string("0 0 * * *") },
    { ngx_string("@midnight"), ngx_string("0 0 * * *") },
    { ngx_string("@hourly"), ngx_string("0 * * * *") },
    { ngx_null_string, ngx_null_string }
};


ngx_int_t
ngx_http_agent_cron_parse(ngx_str_t *text, ngx_http_agent_cron_t *cron)
{
    u_char      *p, *last, *s;
    uint64_t     bits[5];
    ngx_str_t   *t;
    ngx_uint_t   i, any[5];

    t = text;

    for (i = 0; ngx_http_agent_cron_names[i].name.len; i++) {
        if (text->len == ngx_http_agent_cron_names[i].name.len
            && ngx_strncasecmp(text->data,
                               ngx_http_agent_cron_names[i].name.data,
                               text->len)
               == 0)
        {
            t = &ngx_http_agent_cron_names[i].schedule;
            break;
        }
    }

    p = t->data;
    last = t->data + t->len;

    for (i = 0; i < 5; i++) {
        while (p < last && (*p == ' ' || *p == '\t')) {
            p++;
        }

        s = p;

        while (p < last && *p != ' ' && *p != '\t') {
            p++;
        }

        if (s == p) {
            return NGX_ERROR;
        }

        any[i] = (*s == '*' || *s == '?');

        if ((*s == '?' && (i != 2 && i != 4))
            || ngx_http_agent_cron_field(s, p, &ngx_http_agent_cron_fields[i],
                                         &bits[i])
               != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    while (p < last && (*p == ' ' || *p == '\t')) {
        p++;
    }

    if (p != last) {
        return NGX_ERROR;
    }

    cron->minute = bits[0];
    cron->hour = (uint32_t) bits[1];
    cron->mday = (uint32_t) bits[2];
    cron->month = (uint32_t) bits[3];

    /* day 7 is Sunday too */
    cron->wday = (uint32_t) ((bits[4] | (bits[4] >> 7)) & 0x7f);

    cron->mday_any = any[2];
    cron->wday_any = any[4];

    return NGX_OK;
}


/* "1,5-10,*\/15,MON-FRI/2" */

static ngx_int_t
ngx_http_agent_cron_field(u_char *p, u_char *last,
    ngx_http_agent_cron_field_t *f, uint64_t *bits)
{
    ngx_uint_t  lo, hi, step, n;

    *bits = 0;

    for ( ;; ) {
        if (p < last && (*p == '*' || *p == '?')) {
            p++;
            lo = f->min;
            hi = f->max;

        } else {
            if (ngx_http_agent_cron_number(&p, last, f, &lo) != NGX_OK) {
                return NGX_ERROR;
            }

            hi = lo;

            if (p < last && *p == '-') {
                p++;

                if (ngx_http_agent_cron_number(&p, last, f, &hi) != NGX_OK
                    || hi < lo)
                {
                    return NGX_ERROR;
                }
            }
        }

        step = 1;

        if (p < last && *p == '/') {
            p++;

            if (ngx_http_agent_cron_digits(&p, last, 2, &step) != NGX_OK
                || step == 0 || step > f->max)
            {
                return NGX_ERROR;
            }

            if (hi == lo) {
                /* "5/15": from 5 to the end */
                hi = f->max;
            }
        }

        for (n = lo; n <= hi; n += step) {
            *bits |= (uint64_t) 1 << n;
        }

        if (p == last) {
            return NGX_OK;
        }

        if (*p++ != ',' || p == last) {
            return NGX_ERROR;
        }
    }
}


static ngx_int_t
ngx_http_agent_cron_number(u_char **pp, u_char *last,
    ngx_http_agent_cron_field_t *f, ngx_uint_t *n)
{
    u_char      *p;
    ngx_uint_t   i;

    p = *pp;

    if (f->names && last - p >= 3
        && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
    {
        for (i = 0; f->names[i * 3]; i++) {
            if (ngx_strncasecmp(p, (u_char *) &f->names[i * 3], 3) == 0) {
                *n = f->min + i;
                *pp = p + 3;
                return NGX_OK;
            }
        }

        return NGX_ERROR;
    }

    if (ngx_http_agent_cron_digits(pp, last, 2, n) != NGX_OK
        || *n < f->min || *n > f->max)
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * The first minute after "after" that the schedule names, on the zone's
 * wall clock; -1: none in NGX_HTTP_AGENT_CRON_YEARS years ("0 0 31 2 *")
 */

int64_t
ngx_http_agent_cron_next(ngx_http_agent_cron_t *cron,
    ngx_http_agent_tz_t *tz, int64_t after)
{
    int64_t     local, days, y, end, t;
    ngx_uint_t  m, d, h, mi, wday, mday_ok, wday_ok, day_ok;

    local = after + ngx_http_agent_tz_offset(tz, after);

    /* the next whole minute of the wall clock */
    local = local - ((local % 60) + 60) % 60 + 60;

    days = local / 86400 - (local % 86400 < 0);
    ngx_http_agent_cron_civil(days, &y, &m, &d);

    t = local - days * 86400;
    h = (ngx_uint_t) (t / 3600);
    mi = (ngx_uint_t) (t % 3600 / 60);

    end = y + NGX_HTTP_AGENT_CRON_YEARS;

    for ( ;; ) {

        /* the fields carried over */

        if (mi > 59) {
            mi = 0;
            h++;
        }

        if (h > 23) {
            h = 0;
            d++;
        }

        if (m > 12) {
            m = 1;
            y++;
        }

        if (d > ngx_http_agent_cron_mdays(y, m)) {
            d = 1;

            if (++m > 12) {
                m = 1;
                y++;
            }
        }

        if (y > end) {
            return -1;
        }

        if (!(cron->month & ((uint32_t) 1 << m))) {
            m++;
            d = 1;
            h = 0;
            mi = 0;
            continue;
        }

        days = ngx_http_agent_cron_days(y, m, d);
        wday = (ngx_uint_t) (((days % 7) + 7 + 4) % 7);

        mday_ok = (cron->mday & ((uint32_t) 1 << d)) != 0;
        wday_ok = (cron->wday & ((uint32_t) 1 << wday)) != 0;

        if (cron->mday_any || cron->wday_any) {
            day_ok = mday_ok && wday_ok;

        } else {
            day_ok = mday_ok || wday_ok;
        }

        if (!day_ok) {
            d++;
            h = 0;
            mi = 0;
            continue;
        }

        if (!(cron->hour & ((uint32_t) 1 << h))) {
            h++;
            mi = 0;
            continue;
        }

        if (!(cron->minute & ((uint64_t) 1 << mi))) {
            mi++;
            continue;
        }

        t = ngx_http_agent_tz_utc(tz, days * 86400 + h * 3600 + mi * 60);

        if (t > after) {
            return t;
        }

        /* a wall-clock minute that came before: the clocks went back */
        mi++;
    }
}


/* "2026-11-27T21:54:48.123Z", "+01:00", "-0500", or a date: UTC seconds */

ngx_int_t
ngx_http_agent_cron_time(ngx_str_t *iso, int64_t *sec)
{
    u_char      *p, *last, sign;
    ngx_uint_t   y, m, d, h, mi, s, oh, om;

    p = iso->data;
    last = iso->data + iso->len;

    h = 0;
    mi = 0;
    s = 0;

    if (ngx_http_agent_cron_exact(&p, last, 4, &y) != NGX_OK
        || p == last || *p++ != '-'
        || ngx_http_agent_cron_exact(&p, last, 2, &m) != NGX_OK
        || p == last || *p++ != '-'
        || ngx_http_agent_cron_exact(&p, last, 2, &d) != NGX_OK
        || m < 1 || m > 12 || d < 1
        || d > ngx_http_agent_cron_mdays((int64_t) y, m))
    {
        return NGX_ERROR;
    }

    if (p < last && (*p == 'T' || *p == 't' || *p == ' ')) {
        p++;

        if (ngx_http_agent_cron_exact(&p, last, 2, &h) != NGX_OK
            || p == last || *p++ != ':'
            || ngx_http_agent_cron_exact(&p, last, 2, &mi) != NGX_OK
            || h > 23 || mi > 59)
        {
            return NGX_ERROR;
        }

        if (p < last && *p == ':') {
            p++;

            if (ngx_http_agent_cron_exact(&p, last, 2, &s) != NGX_OK
                || s > 60)
            {
                return NGX_ERROR;
            }

            if (p < last && *p == '.') {
                p++;

                if (p == last || *p < '0' || *p > '9') {
                    return NGX_ERROR;
                }

                while (p < last && *p >= '0' && *p <= '9') {
                    p++;
                }
            }
        }
    }

    *sec = ngx_http_agent_cron_days((int64_t) y, m, d) * 86400
           + (int64_t) (h * 3600 + mi * 60 + s);

    if (p == last) {
        return NGX_OK;
    }

    if ((*p == 'Z' || *p == 'z') && p + 1 == last) {
        return NGX_OK;
    }

    if (*p != '+' && *p != '-') {
        return NGX_ERROR;
    }

    sign = *p++;

    if (ngx_http_agent_cron_exact(&p, last, 2, &oh) != NGX_OK) {
        return NGX_ERROR;
    }

    if (p < last && *p == ':') {
        p++;
    }

    if (ngx_http_agent_cron_exact(&p, last, 2, &om) != NGX_OK
        || p != last || oh > 23 || om > 59)
    {
        return NGX_ERROR;
    }

    *sec += (sign == '+' ? -1 : 1) * (int64_t) (oh * 3600 + om * 60);

    return NGX_OK;
}


/* "2026-11-27T21:55:00+00:00", as LangGraph writes a cron's times */

u_char *
ngx_http_agent_cron_iso(u_char *buf, int64_t sec)
{
    int64_t     days, y, t;
    ngx_uint_t  m, d;

    days = sec / 86400 - (sec % 86400 < 0);
    t = sec - days * 86400;

    ngx_http_agent_cron_civil(days, &y, &m, &d);

    return ngx_sprintf(buf, "%04L-%02ui-%02uiT%02L:%02L:%02L+00:00", y, m, d,
                       t / 3600, t % 3600 / 60, t % 60);
}


/* days since 1970-01-01 of a date (H. Hinnant's days_from_civil) */

static int64_t
ngx_http_agent_cron_days(int64_t y, ngx_uint_t m, ngx_uint_t d)
{
    int64_t  era, yoe, doy, doe;

    y -= (m <= 2);
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (int64_t) (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

    return era * 146097 + doe - 719468;
}


static void
ngx_http_agent_cron_civil(int64_t days, int64_t *y, ngx_uint_t *m,
    ngx_uint_t *d)
{
    int64_t  era, doe, yoe, doy, mp;

    days += 719468;
    era = (days >= 0 ? days : days - 146096) / 146097;
    doe = days - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;

    *d = (ngx_uint_t) (doy - (153 * mp + 2) / 5 + 1);
    *m = (ngx_uint_t) (mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}


static ngx_uint_t
ngx_http_agent_cron_mdays(int64_t y, ngx_uint_t m)
{
    static ngx_uint_t  mdays[] = { 31, 28, 31, 30, 31, 30,
                                   31, 31, 30, 31, 30, 31 };

    if (m == 2 && (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))) {
        return 29;
    }

    return mdays[m - 1];
}


/* n digits at most, at least one */

static ngx_int_t
ngx_http_agent_cron_digits(u_char **pp, u_char *last, ngx_uint_t n,
    ngx_uint_t *v)
{
    u_char      *p;
    ngx_uint_t   i;

    p = *pp;
    *v = 0;

    for (i = 0; i < n && p < last && *p >= '0' && *p <= '9'; i++) {
        *v = *v * 10 + (*p++ - '0');
    }

    if (i == 0) {
        return NGX_ERROR;
    }

    *pp = p;

    return NGX_OK;
}


/* exactly n digits */

static ngx_int_t
ngx_http_agent_cron_exact(u_char **pp, u_char *last, ngx_uint_t n,
    ngx_uint_t *v)
{
    u_char  *p;

    p = *pp;

    if (ngx_http_agent_cron_digits(pp, last, n, v) != NGX_OK
        || (ngx_uint_t) (*pp - p) != n)
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}
