
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_mcpserver_int.h"
#include "ngx_http_agent_llm.h"


/*
 * The MCP server as its own module: agent_mcp_server serves it at a
 * location, agent_mcp_server_tools adds agent_tool locations to its tools,
 * agent_mcp_server_elicitation bounds the wait for a user's answer.  A run
 * taken over goes on as a turn of no protocol.
 */


static char *ngx_http_agent_mcpserver_module_conf(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static void *ngx_http_agent_mcpserver_module_create_conf(ngx_conf_t *cf);
static char *ngx_http_agent_mcpserver_module_merge_conf(ngx_conf_t *cf,
    void *parent, void *child);


static ngx_http_agent_proto_t  ngx_http_agent_mcpserver_proto = {
    ngx_string("agent_mcp_server"),
    NGX_HTTP_AGENT_PROTO_TURNS|NGX_HTTP_AGENT_PROTO_GRAPHS
    |NGX_HTTP_AGENT_PROTO_KEEPS,
    ngx_http_agent_mcpserver_route,
    ngx_http_agent_mcpserver_run,
    NULL,
    NULL
};


static ngx_command_t  ngx_http_agent_mcpserver_commands[] = {

    { ngx_string("agent_mcp_server"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_agent_mcpserver_module_conf,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("agent_mcp_server_tools"),
      NGX_HTTP_LOC_CONF|NGX_CONF_1MORE,
      ngx_http_agent_allowed_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_mcpserver_conf_t, tool_names),
      NULL },

    { ngx_string("agent_mcp_server_elicitation"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_msec_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_agent_mcpserver_conf_t, elicitation),
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_agent_mcpserver_module_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL,    /* no main, server conf */
    ngx_http_agent_mcpserver_module_create_conf,
    ngx_http_agent_mcpserver_module_merge_conf
};


ngx_module_t  ngx_http_agent_mcpserver_module =
    NGX_HTTP_AGENT_MODULE(&ngx_http_agent_mcpserver_module_ctx,
                          ngx_http_agent_mcpserver_commands, NULL);


static char *
ngx_http_agent_mcpserver_module_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_agent_handler;

    return ngx_http_agent_handler_proto(cf, &ngx_http_agent_mcpserver_proto,
                                        conf);
}


static void *
ngx_http_agent_mcpserver_module_create_conf(ngx_conf_t *cf)
{
    ngx_http_agent_mcpserver_conf_t  *mscf;

    mscf = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_mcpserver_conf_t));
    if (mscf == NULL) {
        return NULL;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     mscf->tools = NULL;
     */

    mscf->tool_names = NGX_CONF_UNSET_PTR;
    mscf->elicitation = NGX_CONF_UNSET_MSEC;

    return mscf;
}


static char *
ngx_http_agent_mcpserver_module_merge_conf(ngx_conf_t *cf, void *parent,
    void *child)
{
    ngx_http_agent_mcpserver_conf_t *prev = parent;
    ngx_http_agent_mcpserver_conf_t *conf = child;

    ngx_conf_merge_msec_value(conf->elicitation, prev->elicitation, 300000);
    ngx_conf_merge_ptr_value(conf->tool_names, prev->tool_names, NULL);

    return ngx_http_agent_mcpserver_tools_merge(cf, conf,
                                          &ngx_http_agent_mcpserver_proto);
}
