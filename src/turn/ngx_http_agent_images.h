
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_IMAGES_H_INCLUDED_
#define _NGX_HTTP_AGENT_IMAGES_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"


/* for the files of src/turn/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_images(ngx_http_request_t *r, yajl_val images,
    ngx_str_t *out);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_IMAGES_H_INCLUDED_ */
