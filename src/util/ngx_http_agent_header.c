
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"


/*
 * A request header by its name, case-insensitive: the first of them, or
 * NULL; count (when given) gets how many the request has (two traceparents
 * contradict each other)
 */

ngx_table_elt_t *
ngx_http_agent_header_in(ngx_http_request_t *r, const char *name,
    ngx_uint_t *count)
{
    size_t            len;
    ngx_uint_t        i, n;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h, *first;

    len = ngx_strlen(name);
    first = NULL;
    n = 0;

    part = &r->headers_in.headers.part;
    h = part->elts;

    for (i = 0; /* void */; i++) {

        if (i >= part->nelts) {
            if (part->next == NULL) {
                break;
            }

            part = part->next;
            h = part->elts;
            i = 0;
        }

        if (h[i].key.len == len
            && ngx_strncasecmp(h[i].key.data, (u_char *) name, len) == 0)
        {
            if (first == NULL) {
                first = &h[i];

                if (count == NULL) {
                    break;
                }
            }

            n++;
        }
    }

    if (count) {
        *count = n;
    }

    return first;
}
