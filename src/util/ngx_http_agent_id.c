
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <sys/random.h>

#include "ngx_http_agent_util.h"


/*
 * The ids of every protocol: one a client names is checked here, so that
 * it can go into a path, a header, a log line or a store key as it is; one
 * we make is a random UUID.
 */


/* 1 to NGX_HTTP_AGENT_ID_MAX letters, digits, "-" or "_" */

ngx_uint_t
ngx_http_agent_id_valid(ngx_str_t *id)
{
    size_t  i;

    if (id->len == 0 || id->len > NGX_HTTP_AGENT_ID_MAX) {
        return 0;
    }

    for (i = 0; i < id->len; i++) {
        if (!(isalnum(id->data[i]) || id->data[i] == '-'
              || id->data[i] == '_'))
        {
            return 0;
        }
    }

    return 1;
}


/* NGX_HTTP_AGENT_ID_LEN bytes, a random (version 4) UUID */

void
ngx_http_agent_id_uuid(u_char *buf)
{
    u_char      r[16];
    ngx_uint_t  i;

    if (getrandom(r, sizeof(r), GRND_NONBLOCK) != sizeof(r)) {
        for (i = 0; i < sizeof(r); i++) {
            r[i] = (u_char) ngx_random();
        }
    }

    r[6] = (r[6] & 0x0f) | 0x40;
    r[8] = (r[8] & 0x3f) | 0x80;

    buf = ngx_hex_dump(buf, r, 4);
    *buf++ = '-';
    buf = ngx_hex_dump(buf, r + 4, 2);
    *buf++ = '-';
    buf = ngx_hex_dump(buf, r + 6, 2);
    *buf++ = '-';
    buf = ngx_hex_dump(buf, r + 8, 2);
    *buf++ = '-';
    (void) ngx_hex_dump(buf, r + 10, 6);
}


ngx_int_t
ngx_http_agent_id_make(ngx_pool_t *pool, ngx_str_t *id)
{
    id->data = ngx_pnalloc(pool, NGX_HTTP_AGENT_ID_LEN);
    if (id->data == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_id_uuid(id->data);
    id->len = NGX_HTTP_AGENT_ID_LEN;

    return NGX_OK;
}
