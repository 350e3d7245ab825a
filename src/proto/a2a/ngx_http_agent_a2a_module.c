
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_a2a_int.h"


/*
 * A2A as its own module: agent_a2a serves it at a prefix location; a run
 * taken over goes on as a turn of no protocol, its push notification
 * still sent at its end.
 */


static char *ngx_http_agent_a2a_module_conf(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);


static ngx_http_agent_proto_t  ngx_http_agent_a2a_proto = {
    ngx_string("agent_a2a"),
    NGX_HTTP_AGENT_PROTO_TURNS|NGX_HTTP_AGENT_PROTO_GRAPHS
    |NGX_HTTP_AGENT_PROTO_KEEPS,
    ngx_http_agent_a2a_route,
    ngx_http_agent_a2a_run,
    NULL,
    &ngx_http_agent_a2a_takeover_hooks
};


static ngx_command_t  ngx_http_agent_a2a_commands[] = {

    { ngx_string("agent_a2a"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_agent_a2a_module_conf,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

      ngx_null_command
};


ngx_module_t  ngx_http_agent_a2a_module =
    NGX_HTTP_AGENT_MODULE(&ngx_http_agent_handler_module_ctx,
                          ngx_http_agent_a2a_commands, NULL);


static char *
ngx_http_agent_a2a_module_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);

    if (clcf->regex) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "agent_a2a needs a prefix "
                           "location: its agent card is at "
                           "{location}.well-known/agent-card.json");
        return NGX_CONF_ERROR;
    }

    clcf->handler = ngx_http_agent_handler;

    return ngx_http_agent_handler_proto(cf, &ngx_http_agent_a2a_proto, conf);
}
