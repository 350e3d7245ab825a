
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_TURN_LIST_H_INCLUDED_
#define _NGX_HTTP_AGENT_TURN_LIST_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


/* for the files of src/turn/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


void ngx_http_agent_turn_list_add(ngx_queue_t *q);
void ngx_http_agent_turn_list_remove(ngx_queue_t *q);
ngx_queue_t *ngx_http_agent_turn_list_first(void);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_TURN_LIST_H_INCLUDED_ */
