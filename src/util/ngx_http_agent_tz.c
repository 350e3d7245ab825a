
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"


/*
 * IANA time zones for the crons' schedules (lg_crons.c), read from the
 * system's database (RFC 8536's TZif files) without touching the
 * process's own zone: setting TZ and calling tzset() would change
 * nginx's log times under it.  A zone is read once per worker, on its
 * first use, and kept: its file is a few kilobytes (at most 64 are
 * read).  Past its last transition (Debian's files list them to 2037)
 * the last offset holds.
 */


#define NGX_HTTP_AGENT_TZ_FILE_MAX   65536
#define NGX_HTTP_AGENT_TZ_KEPT       64


static ngx_http_agent_tz_t *ngx_http_agent_tz_read(ngx_str_t *name,
    ngx_pool_t *pool, ngx_log_t *log);
static ngx_int_t ngx_http_agent_tz_name_valid(ngx_str_t *name);
static uint32_t ngx_http_agent_tz_u32(u_char *p);
static int64_t ngx_http_agent_tz_i64(u_char *p);


static ngx_http_agent_tz_t   ngx_http_agent_tz_utc_zone = {
    ngx_string("UTC"), 0, NULL, NULL, 0
};

static ngx_pool_t           *ngx_http_agent_tz_pool;
static ngx_http_agent_tz_t  *ngx_http_agent_tz_kept[NGX_HTTP_AGENT_TZ_KEPT];
static ngx_uint_t            ngx_http_agent_tz_nkept;


/* a zone by its name, kept for the worker's life; NULL: no such zone */

ngx_http_agent_tz_t *
ngx_http_agent_tz_get(ngx_str_t *name, ngx_log_t *log)
{
    ngx_uint_t            i;
    ngx_http_agent_tz_t  *tz;

    if (name == NULL || name->len == 0
        || (name->len == 3 && ngx_strncasecmp(name->data, (u_char *) "UTC", 3)
                              == 0))
    {
        return &ngx_http_agent_tz_utc_zone;
    }

    if (ngx_http_agent_tz_name_valid(name) != NGX_OK) {
        return NULL;
    }

    for (i = 0; i < ngx_http_agent_tz_nkept; i++) {
        tz = ngx_http_agent_tz_kept[i];

        if (tz->name.len == name->len
            && ngx_strncmp(tz->name.data, name->data, name->len) == 0)
        {
            return tz;
        }
    }

    if (ngx_http_agent_tz_nkept == NGX_HTTP_AGENT_TZ_KEPT) {
        ngx_log_error(NGX_LOG_WARN, log, 0,
                      "agent: more than %d time zones in use, \"%V\" not "
                      "read", NGX_HTTP_AGENT_TZ_KEPT, name);
        return NULL;
    }

    if (ngx_http_agent_tz_pool == NULL) {
        ngx_http_agent_tz_pool = ngx_create_pool(4096, ngx_cycle->log);
        if (ngx_http_agent_tz_pool == NULL) {
            return NULL;
        }
    }

    tz = ngx_http_agent_tz_read(name, ngx_http_agent_tz_pool, log);
    if (tz == NULL) {
        return NULL;
    }

    ngx_http_agent_tz_kept[ngx_http_agent_tz_nkept++] = tz;

    return tz;
}


/* the zone's offset from UTC at a UTC second */

int32_t
ngx_http_agent_tz_offset(ngx_http_agent_tz_t *tz, int64_t utc)
{
    ngx_uint_t  lo, hi, mid;

    if (tz->n == 0 || utc < tz->at[0]) {
        return tz->first;
    }

    /* the last transition at or before it */

    lo = 0;
    hi = tz->n;

    while (hi - lo > 1) {
        mid = lo + (hi - lo) / 2;

        if (tz->at[mid] <= utc) {
            lo = mid;

        } else {
            hi = mid;
        }
    }

    return tz->offset[lo];
}


/*
 * The UTC second of a wall-clock time of the zone (seconds as if it were
 * UTC): of a time that comes twice (clocks go back) the first; of one
 * that never comes (clocks go forward) the same time after the jump
 */

int64_t
ngx_http_agent_tz_utc(ngx_http_agent_tz_t *tz, int64_t local)
{
    int32_t     before, after;
    int64_t     t;
    ngx_uint_t  found;

    /* the offsets a day either side: a zone changes at most once a day */

    before = ngx_http_agent_tz_offset(tz, local - 86400);
    after = ngx_http_agent_tz_offset(tz, local + 86400);

    found = 0;
    t = 0;

    if (ngx_http_agent_tz_offset(tz, local - before) == before) {
        t = local - before;
        found = 1;
    }

    if (after != before
        && ngx_http_agent_tz_offset(tz, local - after) == after
        && (!found || local - after < t))
    {
        t = local - after;
        found = 1;
    }

    return found ? t : local - before;
}


static ngx_http_agent_tz_t *
ngx_http_agent_tz_read(ngx_str_t *name, ngx_pool_t *pool, ngx_log_t *log)
{
    u_char               *buf, *path;
    ssize_t               n;
    ngx_file_t            file;
    ngx_file_info_t       fi;
    ngx_http_agent_tz_t  *tz;

    path = ngx_pnalloc(pool, sizeof(NGX_HTTP_AGENT_TZ_DIR) + name->len);
    tz = ngx_pcalloc(pool, sizeof(ngx_http_agent_tz_t));
    if (path == NULL || tz == NULL) {
        return NULL;
    }

    ngx_memcpy(ngx_cpymem(path, NGX_HTTP_AGENT_TZ_DIR,
                          sizeof(NGX_HTTP_AGENT_TZ_DIR) - 1),
               name->data, name->len);
    path[sizeof(NGX_HTTP_AGENT_TZ_DIR) - 1 + name->len] = '\0';

    ngx_memzero(&file, sizeof(ngx_file_t));
    file.name.data = path;
    file.name.len = ngx_strlen(path);
    file.log = log;

    file.fd = ngx_open_file(path, NGX_FILE_RDONLY, NGX_FILE_OPEN, 0);
    if (file.fd == NGX_INVALID_FILE) {
        return NULL;
    }

    buf = NULL;
    n = -1;

    if (ngx_fd_info(file.fd, &fi) != NGX_FILE_ERROR
        && ngx_is_file(&fi)
        && ngx_file_size(&fi) <= NGX_HTTP_AGENT_TZ_FILE_MAX)
    {
        buf = ngx_alloc((size_t) ngx_file_size(&fi) + 1, log);

        if (buf) {
            n = ngx_read_file(&file, buf, (size_t) ngx_file_size(&fi), 0);
        }
    }

    (void) ngx_close_file(file.fd);

    if (n < 0
        || ngx_http_agent_tz_parse(tz, buf, buf + n, pool) != NGX_OK)
    {
        if (buf) {
            ngx_free(buf);
        }

        ngx_log_error(NGX_LOG_WARN, log, 0,
                      "agent: time zone \"%V\" could not be read from \"%s\"",
                      name, path);
        return NULL;
    }

    ngx_free(buf);

    tz->name.data = ngx_pstrdup(pool, name);
    if (tz->name.data == NULL) {
        return NULL;
    }

    tz->name.len = name->len;

    return tz;
}


/*
 * A TZif file: a header, a block of 32-bit times; from version 2 on a
 * second header and block of 64-bit times, the one read then
 */

ngx_int_t
ngx_http_agent_tz_parse(ngx_http_agent_tz_t *tz, u_char *p, u_char *last,
    ngx_pool_t *pool)
{
    u_char      *types, *idx;
    size_t       tsize, len;
    uint32_t     isut, isstd, leap, timecnt, typecnt, charcnt;
    ngx_uint_t   i, pass;

    for (pass = 0; /* void */; pass++) {
        tsize = pass ? 8 : 4;

        if (last - p < 44 || ngx_strncmp(p, "TZif", 4) != 0) {
            return NGX_ERROR;
        }

        isut = ngx_http_agent_tz_u32(p + 20);
        isstd = ngx_http_agent_tz_u32(p + 24);
        leap = ngx_http_agent_tz_u32(p + 28);
        timecnt = ngx_http_agent_tz_u32(p + 32);
        typecnt = ngx_http_agent_tz_u32(p + 36);
        charcnt = ngx_http_agent_tz_u32(p + 40);

        if (timecnt > 4096 || typecnt == 0 || typecnt > 256
            || charcnt > 4096 || leap > 4096 || isut > 256 || isstd > 256)
        {
            return NGX_ERROR;
        }

        len = timecnt * tsize + timecnt + typecnt * 6 + charcnt
              + leap * (tsize + 4) + isstd + isut;

        if ((size_t) (last - p) < 44 + len) {
            return NGX_ERROR;
        }

        if (pass == 0 && p[4] >= '2') {
            /* the 64-bit block follows */
            p += 44 + len;
            continue;
        }

        p += 44;
        break;
    }

    idx = p + timecnt * tsize;
    types = idx + timecnt;

    tz->n = timecnt;
    tz->first = (int32_t) ngx_http_agent_tz_u32(types);

    if (timecnt == 0) {
        return NGX_OK;
    }

    tz->at = ngx_palloc(pool, timecnt * sizeof(int64_t));
    tz->offset = ngx_palloc(pool, timecnt * sizeof(int32_t));
    if (tz->at == NULL || tz->offset == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < timecnt; i++) {
        tz->at[i] = (tsize == 8) ? ngx_http_agent_tz_i64(p + i * 8)
                                 : (int32_t) ngx_http_agent_tz_u32(p + i * 4);

        if (idx[i] >= typecnt || (i && tz->at[i] <= tz->at[i - 1])) {
            return NGX_ERROR;
        }

        tz->offset[i] = (int32_t) ngx_http_agent_tz_u32(types + idx[i] * 6);
    }

    return NGX_OK;
}


/* "Area/Place": letters, digits, "_", "-", "+", "/" between names */

static ngx_int_t
ngx_http_agent_tz_name_valid(ngx_str_t *name)
{
    u_char      c;
    ngx_uint_t  i;

    if (name->len > NGX_HTTP_AGENT_TZ_NAME) {
        return NGX_ERROR;
    }

    for (i = 0; i < name->len; i++) {
        c = name->data[i];

        if (c == '/') {
            if (i == 0 || i == name->len - 1 || name->data[i - 1] == '/') {
                return NGX_ERROR;
            }

            continue;
        }

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '+'))
        {
            return NGX_ERROR;
        }
    }

    /* not "posix/..." nor "right/...": the plain zones only */

    if (name->len > 6 && (ngx_strncmp(name->data, "posix/", 6) == 0
                          || ngx_strncmp(name->data, "right/", 6) == 0))
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}


static uint32_t
ngx_http_agent_tz_u32(u_char *p)
{
    return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16)
           | ((uint32_t) p[2] << 8) | p[3];
}


static int64_t
ngx_http_agent_tz_i64(u_char *p)
{
    return (int64_t) (((uint64_t) ngx_http_agent_tz_u32(p) << 32)
                      | ngx_http_agent_tz_u32(p + 4));
}
