
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_KINDS_H_INCLUDED_
#define _NGX_HTTP_AGENT_KINDS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine.h"


/* every node kind, NULL last (kinds.c: a new kind is one line there) */
extern ngx_http_agent_kind_t  *ngx_http_agent_kinds[];


#endif /* _NGX_HTTP_AGENT_KINDS_H_INCLUDED_ */
