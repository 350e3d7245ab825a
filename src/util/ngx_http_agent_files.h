
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_FILES_H_INCLUDED_
#define _NGX_HTTP_AGENT_FILES_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


ngx_int_t ngx_http_agent_files_give(ngx_log_t *log, u_char *path,
    ngx_uid_t user, ngx_gid_t group, ngx_uint_t dir);
ngx_int_t ngx_http_agent_files_create(ngx_log_t *log, u_char *path);


#endif /* _NGX_HTTP_AGENT_FILES_H_INCLUDED_ */
