
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_sha1.h>

#include "ngx_http_agent_util.h"


/* a key made of what was hashed: prefix, then the SHA-1's 40 hex digits */

ngx_int_t
ngx_http_agent_digest_key(ngx_pool_t *pool, const char *prefix,
    ngx_sha1_t *sha1, ngx_str_t *key)
{
    u_char  *p, hash[20];
    size_t   len;

    ngx_sha1_final(hash, sha1);

    len = ngx_strlen(prefix);

    p = ngx_pnalloc(pool, len + 2 * sizeof(hash));
    if (p == NULL) {
        return NGX_ERROR;
    }

    key->data = p;
    p = ngx_cpymem(p, prefix, len);
    key->len = ngx_hex_dump(p, hash, sizeof(hash)) - key->data;

    return NGX_OK;
}
