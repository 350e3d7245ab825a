
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_A2A_TASK_H_INCLUDED_
#define _NGX_HTTP_AGENT_A2A_TASK_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_turn.h"


/* a task's state, in both revisions' words (a2a_task.c's table) */
typedef enum {
    NGX_HTTP_AGENT_A2A_WORKING = 0,
    NGX_HTTP_AGENT_A2A_COMPLETED,
    NGX_HTTP_AGENT_A2A_INPUT_REQUIRED,
    NGX_HTTP_AGENT_A2A_FAILED
} ngx_http_agent_a2a_state_e;


/* what a SendMessage tells its turn's format and answer */
typedef struct {
    ngx_str_t                  id;          /* the JSON-RPC id, as JSON */
    ngx_str_t                  interrupt;   /* the run waits: {"node",
                                               "value"} */
    unsigned                   legacy:1;    /* A2A 0.3's names and shapes */
    unsigned                   over:1;
} ngx_http_agent_a2a_out_t;


extern ngx_http_agent_format_t      ngx_http_agent_a2a_format;
extern ngx_http_agent_turn_hooks_t  ngx_http_agent_a2a_hooks;


#endif /* _NGX_HTTP_AGENT_A2A_TASK_H_INCLUDED_ */
