
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_responses_int.h"


/*
 * Open Responses as its own module: agent_responses serves it at a
 * location; a run taken over goes on as a turn of no protocol.
 */


static char *ngx_http_agent_responses_module_conf(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);


static ngx_http_agent_proto_t  ngx_http_agent_responses_proto = {
    ngx_string("agent_responses"),
    NGX_HTTP_AGENT_PROTO_TURNS|NGX_HTTP_AGENT_PROTO_GRAPHS
    |NGX_HTTP_AGENT_PROTO_KEEPS,
    ngx_http_agent_responses_route,
    ngx_http_agent_responses_run,
    NULL,
    NULL
};


static ngx_command_t  ngx_http_agent_responses_commands[] = {

    { ngx_string("agent_responses"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_agent_responses_module_conf,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

      ngx_null_command
};


ngx_module_t  ngx_http_agent_responses_module =
    NGX_HTTP_AGENT_MODULE(&ngx_http_agent_handler_module_ctx,
                          ngx_http_agent_responses_commands, NULL);


static char *
ngx_http_agent_responses_module_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_agent_handler;

    return ngx_http_agent_handler_proto(cf, &ngx_http_agent_responses_proto,
                                        conf);
}
