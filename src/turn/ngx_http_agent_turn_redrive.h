
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TURN_REDRIVE_H_INCLUDED_
#define _NGX_HTTP_AGENT_TURN_REDRIVE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"


void ngx_http_agent_turn_redrive_init(ngx_cycle_t *cycle, ngx_array_t *doors);
ngx_http_agent_door_t *ngx_http_agent_turn_redrive_door(
    ngx_array_t *doors, ngx_str_t *name);


#endif /* _NGX_HTTP_AGENT_TURN_REDRIVE_H_INCLUDED_ */
