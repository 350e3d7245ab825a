
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"


/*
 * agent_tool NAME location=/internal/path [schema=FILE] ["description=..."]
 *     [timeout=TIME] [max_size=SIZE] [idempotent=on];
 *
 * A tool that is an nginx location: the model's arguments, parsed and
 * written anew, go as a JSON POST in a subrequest; the answer's body is the
 * result, JSON as it parses (written anew) or else text, cut at max_size
 * with a marker; a status of 400 and above is an error result the model
 * sees.  schema= is the JSON Schema of the arguments, the model's
 * "parameters" (a file, relative to nginx's conf prefix).
 */


#define NGX_HTTP_AGENT_TOOL_MAX      (1024 * 1024)
#define NGX_HTTP_AGENT_TOOL_TIMEOUT  60000
#define NGX_HTTP_AGENT_TOOL_SHOWN    1000


typedef struct {
    ngx_str_t                  uri;
    ngx_msec_t                 timeout;
    size_t                     max;
    ngx_str_t                  schema;       /* at configuration only */
    ngx_str_t                  description;
    ngx_flag_t                 idempotent;   /* run again after a take-over */
} ngx_http_agent_tool_location_t;


static ngx_int_t ngx_http_agent_tool_location_schema(ngx_conf_t *cf,
    ngx_str_t *file, yajl_val *schema);
static ngx_int_t ngx_http_agent_tool_location_run(
    ngx_http_agent_tool_call_t *call);
static void ngx_http_agent_tool_location_done(void *data, ngx_uint_t status,
    ngx_str_t *body, ngx_uint_t truncated);
static void ngx_http_agent_tool_location_cancel(
    ngx_http_agent_tool_call_t *call);
static void ngx_http_agent_tool_location_orphan(
    ngx_http_agent_tool_call_t *call);


static ngx_http_agent_param_bounds_t  ngx_http_agent_tool_location_timeout = {
    1, NGX_MAX_INT_T_VALUE
};

static ngx_http_agent_param_bounds_t  ngx_http_agent_tool_location_max = {
    64, NGX_MAX_INT_T_VALUE
};


static ngx_http_agent_param_t  ngx_http_agent_tool_location_params[] = {
    { ngx_string("location"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_tool_location_t, uri), NULL },
    { ngx_string("schema"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_tool_location_t, schema), NULL },
    { ngx_string("description"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_tool_location_t, description), NULL },
    { ngx_string("timeout"), ngx_http_agent_params_set_msec,
      offsetof(ngx_http_agent_tool_location_t, timeout),
      &ngx_http_agent_tool_location_timeout },
    { ngx_string("max_size"), ngx_http_agent_params_set_size,
      offsetof(ngx_http_agent_tool_location_t, max),
      &ngx_http_agent_tool_location_max },
    { ngx_string("idempotent"), ngx_http_agent_params_set_flag,
      offsetof(ngx_http_agent_tool_location_t, idempotent), NULL },
    ngx_http_agent_null_param
};


char *
ngx_http_agent_tool_location(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_main_conf_t *amcf = conf;

    yajl_val                         schema;
    ngx_str_t                       *value;
    ngx_http_agent_tool_t           *tool, **t;
    ngx_http_agent_tool_location_t  *loc;

    value = cf->args->elts;

    if (!ngx_http_agent_id_valid(&value[1])) {
        return "needs a NAME of letters, digits, \"_\" and \"-\", at most 64";
    }

    if (ngx_http_agent_tools_find(amcf->tools, &value[1])) {
        return "names a tool that exists already";
    }

    loc = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_tool_location_t));
    tool = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_tool_t));
    if (loc == NULL || tool == NULL) {
        return NGX_CONF_ERROR;
    }

    loc->timeout = NGX_HTTP_AGENT_TOOL_TIMEOUT;
    loc->max = NGX_HTTP_AGENT_TOOL_MAX;
    ngx_str_set(&loc->description, "");

    if (ngx_http_agent_params_parse(cf, ngx_http_agent_tool_location_params,
                                    &value[2], cf->args->nelts - 2, loc,
                                    "agent_tool", &value[1])
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (loc->uri.len == 0 || loc->uri.data[0] != '/') {
        return "needs location=/PATH, the location the tool is";
    }

    schema = NULL;

    if (loc->schema.len
        && ngx_http_agent_tool_location_schema(cf, &loc->schema, &schema)
           != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (ngx_http_agent_tools_define(cf->pool, &value[1], &loc->description,
                                    schema, &tool->definition)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    tool->name = value[1];
    tool->run = ngx_http_agent_tool_location_run;
    tool->data = loc;
    tool->peer = 1;
    tool->idempotent = loc->idempotent ? 1 : 0;

    if (amcf->tools == NULL) {
        amcf->tools = ngx_array_create(cf->pool, 4,
                                       sizeof(ngx_http_agent_tool_t *));
        if (amcf->tools == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    t = ngx_array_push(amcf->tools);
    if (t == NULL) {
        return NGX_CONF_ERROR;
    }

    *t = tool;

    return NGX_CONF_OK;
}


/* the schema file, relative to the conf prefix: a JSON object */

static ngx_int_t
ngx_http_agent_tool_location_schema(ngx_conf_t *cf, ngx_str_t *file,
    yajl_val *schema)
{
    u_char     *slash;
    ngx_str_t   full, dir, base, text, err;

    full = *file;

    if (ngx_conf_full_name(cf->cycle, &full, 1) != NGX_OK) {
        return NGX_ERROR;
    }

    slash = full.data + full.len;

    while (slash > full.data && slash[-1] != '/') {
        slash--;
    }

    dir.data = full.data;
    dir.len = slash > full.data ? slash - 1 - full.data : 0;
    base.data = slash;
    base.len = full.data + full.len - slash;

    if (dir.len == 0) {
        ngx_str_set(&dir, "/");
    }

    if (ngx_http_agent_prompt_load(cf, &dir, &base, &text) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_str_set(&err, "");

    *schema = ngx_http_agent_json_parse(cf->pool, text.data, text.len, &err);

    if (*schema == NULL || !YAJL_IS_OBJECT(*schema)) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "agent_tool: the schema "
                           "\"%V\" is not a JSON object %V", &full, &err);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * The tool called outside a turn (an MCP server's tools/call of an
 * agent_tool: mcpserver_tools.c), from the request r: its arguments
 * written anew, as a turn's call; NULL if it is not a location's tool or
 * its subrequest could not start
 */

void *
ngx_http_agent_tool_location_call(ngx_http_request_t *r,
    ngx_http_agent_tool_t *tool, yajl_val args,
    ngx_http_agent_subrequest_pt handler, void *data)
{
    ngx_str_t                        body;
    ngx_http_agent_tool_location_t  *loc;

    if (!ngx_http_agent_tool_location_is(tool)
        || ngx_http_agent_json_encode(r->pool, args, &body) != NGX_OK)
    {
        return NULL;
    }

    loc = tool->data;

    return ngx_http_agent_subrequest_start(r, &loc->uri, &body, NULL,
                                           loc->max, loc->timeout, handler,
                                           data);
}


ngx_uint_t
ngx_http_agent_tool_location_is(ngx_http_agent_tool_t *tool)
{
    return tool->run == ngx_http_agent_tool_location_run;
}


static ngx_int_t
ngx_http_agent_tool_location_run(ngx_http_agent_tool_call_t *call)
{
    ngx_str_t                        body, err;
    ngx_http_agent_env_t            *env;
    ngx_http_agent_subrequest_t     *sub;
    ngx_http_agent_tool_location_t  *loc;

    loc = call->tool->data;
    env = call->run->data;

    if (call->args == NULL || !YAJL_IS_OBJECT(call->args)) {
        ngx_str_set(&err, "the arguments must be a JSON object");
        return ngx_http_agent_json_error(call->run->pool, &err,
                                         &call->result);
    }

    if (ngx_http_agent_json_encode(call->run->pool, call->args, &body)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    sub = ngx_http_agent_subrequest_start(env->services.data, &loc->uri, &body,
                                          &call->key, loc->max, loc->timeout,
                                          ngx_http_agent_tool_location_done,
                                          call);
    if (sub == NULL) {
        ngx_str_set(&err, "the tool's location could not be called");
        return ngx_http_agent_json_error(call->run->pool, &err,
                                         &call->result);
    }

    call->data = sub;
    call->cancel = ngx_http_agent_tool_location_cancel;

    return NGX_AGAIN;
}


static void
ngx_http_agent_tool_location_done(void *data, ngx_uint_t status,
    ngx_str_t *body, ngx_uint_t truncated)
{
    ngx_http_agent_tool_call_t *call = data;

    u_char                          *p;
    size_t                           n;
    yajl_val                         v;
    ngx_str_t                        text, err;
    ngx_pool_t                      *pool;
    ngx_http_agent_tool_location_t  *loc;

    pool = call->run->pool;
    loc = call->tool->data;
    call->cancel = NULL;

    /* timeout=: the subrequest runs on and keeps its place till it ends */
    ngx_http_agent_tool_location_orphan(call);

    v = NULL;

    if (status < NGX_HTTP_BAD_REQUEST && !truncated && body->len) {
        v = ngx_http_agent_json_parse(pool, body->data, body->len, NULL);
    }

    if (v) {
        if (ngx_http_agent_json_encode(pool, v, &call->result) != NGX_OK) {
            ngx_str_null(&call->result);
        }

        goto done;
    }

    n = (status >= NGX_HTTP_BAD_REQUEST)
        ? ngx_min(body->len, NGX_HTTP_AGENT_TOOL_SHOWN) : body->len;

    p = ngx_pnalloc(pool, n + 128);
    if (p == NULL) {
        ngx_str_null(&call->result);
        goto done;
    }

    text.data = p;

    if (status == NGX_HTTP_GATEWAY_TIME_OUT && body->len == 0) {
        p = ngx_sprintf(p, "the tool's location did not answer within %M ms",
                        loc->timeout);

    } else if (status >= NGX_HTTP_BAD_REQUEST) {
        p = ngx_sprintf(p, "the tool's location answered %ui: ", status);
    }

    p = ngx_cpymem(p, body->data, n);

    if (truncated || n < body->len) {
        p = ngx_sprintf(p, "\n[cut: the answer was larger than %uz bytes]",
                        truncated ? loc->max : n);
    }

    text.len = p - text.data;

    if (status >= NGX_HTTP_BAD_REQUEST) {
        err = text;

        if (ngx_http_agent_json_error(pool, &err, &call->result) != NGX_OK) {
            ngx_str_null(&call->result);
        }

    } else if (ngx_http_agent_json_quote(pool, &text, &call->result)
               != NGX_OK)
    {
        ngx_str_null(&call->result);
    }

done:

    call->done(call);
}


static void
ngx_http_agent_tool_location_cancel(ngx_http_agent_tool_call_t *call)
{
    if (call->data) {
        ngx_http_agent_subrequest_cancel(call->data);
        ngx_http_agent_tool_location_orphan(call);
    }
}


/*
 * The call ends before its subrequest (the node's timeout=, the tool's,
 * a cancelled turn): the subrequest is counted against the turn's
 * agent_tool_concurrency until it ends, so a model that keeps calling a
 * slow location cannot pile up connections to its upstream.
 */

static void
ngx_http_agent_tool_location_orphan(ngx_http_agent_tool_call_t *call)
{
    ngx_http_agent_subrequest_t  *sub;

    sub = call->data;

    if (sub == NULL || sub->done || sub->ended || !call->counted) {
        return;
    }

    call->orphan = 1;
    sub->ended = ngx_http_agent_env_peer_end;
    sub->ended_data = call->run->data;
}
