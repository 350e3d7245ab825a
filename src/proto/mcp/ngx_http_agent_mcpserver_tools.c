
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_mcpserver_int.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"


/*
 * agent_mcp_server_tools NAME ...: the agent_tool locations an MCP server
 * location serves as tools besides its graphs, so that nginx is the MCP
 * gateway of the services its graphs already call.  A call is the tool's
 * subrequest, as a turn's call of it is (its arguments parsed and written
 * anew, its location's timeout= and max_size=), made from the MCP request
 * itself: no thread, no run.  Its answer is the tool result: the body as
 * text (JSON written anew), a JSON object also as structuredContent, and
 * isError for a status of 400 or more, a cut body or a timeout.
 */


typedef struct {
    ngx_http_request_t        *request;
    ngx_event_t                done;      /* the answer, once the
                                             subrequest is over */
    ngx_uint_t                 status;
    ngx_str_t                  body;
    ngx_uint_t                 truncated;
    ngx_uint_t                 gone;      /* the request ended first */
    void                      *sub;       /* the tool's subrequest */
} ngx_http_agent_mcpserver_tool_t;


static void ngx_http_agent_mcpserver_tools_answered(void *data,
    ngx_uint_t status, ngx_str_t *body, ngx_uint_t truncated);
static void ngx_http_agent_mcpserver_tools_reply(ngx_event_t *ev);
static void ngx_http_agent_mcpserver_tools_cleanup(void *data);


/* at the location's merge: the names resolved, each a location's tool */

char *
ngx_http_agent_mcpserver_tools_merge(ngx_conf_t *cf,
    ngx_http_agent_mcpserver_conf_t *conf, ngx_http_agent_proto_t *proto)
{
    ngx_str_t                    *name;
    ngx_uint_t                    i, k;
    ngx_http_agent_tool_t       **t;
    ngx_http_agent_graph_t      **g;
    ngx_http_agent_loc_conf_t    *alcf;
    ngx_http_agent_main_conf_t   *amcf;

    if (conf->tool_names == NULL) {
        return NGX_CONF_OK;
    }

    /* the core's, merged before this module's */
    alcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_agent_module);
    amcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_agent_module);

    if (alcf->proto != proto) {
        ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "agent_mcp_server_tools: "
                      "only in a location of agent_mcp_server");
        return NGX_CONF_ERROR;
    }

    conf->tools = ngx_array_create(cf->pool, conf->tool_names->nelts,
                                   sizeof(ngx_http_agent_tool_t *));
    if (conf->tools == NULL) {
        return NGX_CONF_ERROR;
    }

    name = conf->tool_names->elts;
    g = alcf->assistant_graphs->elts;

    for (i = 0; i < conf->tool_names->nelts; i++) {
        t = ngx_array_push(conf->tools);
        if (t == NULL) {
            return NGX_CONF_ERROR;
        }

        *t = ngx_http_agent_tools_find(amcf->tools, &name[i]);

        if (*t == NULL || !ngx_http_agent_tool_location_is(*t)) {
            ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                          "agent_mcp_server_tools: \"%V\" is not a tool "
                          "of agent_tool", &name[i]);
            return NGX_CONF_ERROR;
        }

        for (k = 0; k < alcf->assistant_graphs->nelts; k++) {
            if (g[k]->name.len == name[i].len
                && ngx_strncmp(g[k]->name.data, name[i].data, name[i].len)
                   == 0)
            {
                ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                              "agent_mcp_server_tools: \"%V\" is a graph "
                              "of this location too", &name[i]);
                return NGX_CONF_ERROR;
            }
        }
    }

    return NGX_CONF_OK;
}


/* tools/list: the location's agent_tool locations, after its graphs */

ngx_int_t
ngx_http_agent_mcpserver_tools_list(ngx_http_request_t *r,
    ngx_http_agent_json_t *j)
{
    yajl_val                    v, f, x;
    ngx_uint_t                  i;
    ngx_http_agent_tool_t            **t;
    ngx_http_agent_loc_conf_t         *alcf;
    ngx_http_agent_mcpserver_conf_t   *mscf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    mscf = alcf->proto_conf;

    if (mscf->tools == NULL) {
        return NGX_OK;
    }

    t = mscf->tools->elts;

    for (i = 0; i < mscf->tools->nelts; i++) {

        /* the model's definition of it, ours: its description, schema */

        v = ngx_http_agent_json_parse(r->pool, t[i]->definition.data,
                                      t[i]->definition.len, NULL);
        f = v ? ngx_http_agent_json_get(v, "function") : NULL;

        if (f == NULL) {
            return NGX_ERROR;
        }

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &t[i]->name);

        x = ngx_http_agent_json_get(f, "description");

        if (x && YAJL_IS_STRING(x) && *YAJL_GET_STRING(x)) {
            ngx_http_agent_json_key(j, "description");
            ngx_http_agent_json_val(j, x);
        }

        x = ngx_http_agent_json_get(f, "parameters");

        if (x) {
            ngx_http_agent_json_key(j, "inputSchema");
            ngx_http_agent_json_val(j, x);
        }

        ngx_http_agent_json_end(j);
    }

    return NGX_OK;
}


/*
 * tools/call of an agent_tool: NGX_DECLINED if name is none of them; else
 * the call started (NGX_DONE: its answer finalizes the request) or an
 * error's reply
 */

ngx_int_t
ngx_http_agent_mcpserver_tools_call(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc, ngx_str_t *name)
{
    void                             *sub;
    yajl_val                          args;
    ngx_uint_t                        i;
    ngx_http_cleanup_t               *cln;
    ngx_http_agent_tool_t           **t, *tool;
    ngx_http_agent_mcpserver_tool_t  *mt;
    ngx_http_agent_loc_conf_t        *alcf;
    ngx_http_agent_mcpserver_conf_t  *mscf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    mscf = alcf->proto_conf;

    if (mscf->tools == NULL) {
        return NGX_DECLINED;
    }

    t = mscf->tools->elts;
    tool = NULL;

    for (i = 0; i < mscf->tools->nelts; i++) {
        if (t[i]->name.len == name->len
            && ngx_strncmp(t[i]->name.data, name->data, name->len) == 0)
        {
            tool = t[i];
            break;
        }
    }

    if (tool == NULL) {
        return NGX_DECLINED;
    }

    args = ngx_http_agent_json_get(rpc->params, "arguments");

    if (args != NULL && !YAJL_IS_OBJECT(args)) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                      NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                      "Invalid params: \"arguments\" must "
                                      "be an object");
    }

    mt = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_mcpserver_tool_t));
    if (mt == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (args == NULL) {
        args = ngx_http_agent_json_parse(r->pool, (u_char *) "{}", 2, NULL);
        if (args == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    cln = ngx_http_cleanup_add(r, 0);
    if (cln == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    cln->handler = ngx_http_agent_mcpserver_tools_cleanup;
    cln->data = mt;

    mt->request = r;
    mt->done.handler = ngx_http_agent_mcpserver_tools_reply;
    mt->done.data = mt;
    mt->done.log = r->connection->log;

    sub = ngx_http_agent_tool_location_call(r, tool, args,
                                   ngx_http_agent_mcpserver_tools_answered, mt);
    mt->sub = sub;

    if (sub == NULL) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                      NGX_HTTP_AGENT_JSONRPC_INTERNAL_ERROR,
                                      "Internal error: the tool's location "
                                      "could not be called");
    }

    return NGX_DONE;
}


/*
 * The subrequest is over; the answer goes from a posted event, once
 * nginx is done with the subrequest (it ends after this returns)
 */

static void
ngx_http_agent_mcpserver_tools_answered(void *data, ngx_uint_t status,
    ngx_str_t *body, ngx_uint_t truncated)
{
    ngx_http_agent_mcpserver_tool_t *mt = data;

    mt->status = status;
    mt->body = *body;
    mt->truncated = truncated;
    mt->sub = NULL;

    if (!mt->gone) {
        ngx_post_event(&mt->done, &ngx_posted_events);
    }
}


/* a request ended before its answer (a shutdown): nothing is posted */

static void
ngx_http_agent_mcpserver_tools_cleanup(void *data)
{
    ngx_http_agent_mcpserver_tool_t *mt = data;

    if (!mt->gone && mt->sub) {
        /* its timeout's timer is in this pool: no answer is wanted now */
        ngx_http_agent_subrequest_drop(mt->sub);
    }

    mt->gone = 1;

    if (mt->done.posted) {
        ngx_delete_posted_event(&mt->done);
    }
}


static void
ngx_http_agent_mcpserver_tools_reply(ngx_event_t *ev)
{
    ngx_http_agent_mcpserver_tool_t *mt = ev->data;

    yajl_val                v;
    ngx_int_t               rc;
    ngx_str_t               text;
    ngx_uint_t              error;
    ngx_connection_t       *c;
    ngx_http_request_t     *r;
    ngx_http_agent_json_t  *j;

    r = mt->request;
    c = r->connection;
    mt->gone = 1;

    error = (mt->status >= NGX_HTTP_BAD_REQUEST || mt->truncated);
    v = NULL;

    if (!error && mt->body.len) {
        v = ngx_http_agent_json_parse(r->pool, mt->body.data, mt->body.len,
                                      NULL);
    }

    /* JSON as our generator writes it; other text as it came */

    text = mt->body;

    if (v && ngx_http_agent_json_encode(r->pool, v, &text) != NGX_OK) {
        text = mt->body;
        v = NULL;
    }

    if (error && text.len == 0) {
        ngx_str_set(&text, "the tool's location failed");
    }

    j = ngx_http_agent_json_create(r->pool);

    if (j == NULL) {
        rc = NGX_HTTP_INTERNAL_SERVER_ERROR;

    } else {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_mcpserver_stream_content(j, &text);

        if (v && YAJL_IS_OBJECT(v)) {
            ngx_http_agent_json_key(j, "structuredContent");
            ngx_http_agent_json_val(j, v);
        }

        ngx_http_agent_json_key(j, "isError");
        ngx_http_agent_json_bool(j, error);
        ngx_http_agent_json_end(j);

        rc = ngx_http_agent_reply_rpc_result(r, j);
    }

    ngx_http_finalize_request(r, ngx_http_agent_reply_rc(r, rc));
    ngx_http_run_posted_requests(c);
}
