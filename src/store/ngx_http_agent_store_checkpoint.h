
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_STORE_CHECKPOINT_H_INCLUDED_
#define _NGX_HTTP_AGENT_STORE_CHECKPOINT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


ngx_int_t ngx_http_agent_store_checkpoint_merge(ngx_pool_t *pool,
    ngx_http_agent_checkpoint_t *cp, ngx_str_t *sub, ngx_str_t *sub_id);


#endif /* _NGX_HTTP_AGENT_STORE_CHECKPOINT_H_INCLUDED_ */
