
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_HTTP_INT_H_INCLUDED_
#define _NGX_HTTP_AGENT_HTTP_INT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


/* nginx's own error pages in the module's locations, answered in JSON */
extern ngx_module_t  ngx_http_agent_filter_module;


#endif /* _NGX_HTTP_AGENT_HTTP_INT_H_INCLUDED_ */
