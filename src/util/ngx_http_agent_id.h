
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_ID_H_INCLUDED_
#define _NGX_HTTP_AGENT_ID_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


/*
 * the longest id a client may name (a thread, a run) and a tool's name:
 * what the providers take as a function's name, [A-Za-z0-9_-]{1,64}
 */
#define NGX_HTTP_AGENT_ID_MAX   64

/* the text of a random (version 4) UUID, the ids we make */
#define NGX_HTTP_AGENT_ID_LEN   36


ngx_uint_t ngx_http_agent_id_valid(ngx_str_t *id);
void ngx_http_agent_id_uuid(u_char *buf);
ngx_int_t ngx_http_agent_id_make(ngx_pool_t *pool, ngx_str_t *id);


#endif /* _NGX_HTTP_AGENT_ID_H_INCLUDED_ */
