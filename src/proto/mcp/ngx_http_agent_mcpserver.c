
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_mcpserver_int.h"
#include "ngx_http_agent_mcpserver.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_util.h"


/*
 * agent_mcp_server: the location's graphs as the tools of an MCP server
 * (Streamable HTTP; docs/protocols.md).  POST takes one JSON-RPC message:
 * initialize (2025-11-25 and the revisions before it) or server/discover
 * (the stateless 2026-07-28 revision), ping, logging/setLevel,
 * tools/list, tools/call.  A tool is a graph that agent_use_graph or
 * agent_assistants names; a call is a turn on a thread (a new one, or
 * "thread_id": the owner's), its answer an event stream of progress, log
 * and the result.  Mcp-Session-Id: mcpserver_session.c.
 */


static ngx_str_t *ngx_http_agent_mcpserver_version(ngx_str_t *want,
    ngx_uint_t from);
static ngx_int_t ngx_http_agent_mcpserver_cancelled(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc);
static ngx_int_t ngx_http_agent_mcpserver_initialize(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc, ngx_uint_t discover);
static ngx_int_t ngx_http_agent_mcpserver_set_level(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc);
static ngx_int_t ngx_http_agent_mcpserver_list(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc);
static void ngx_http_agent_mcpserver_schema(ngx_http_agent_json_t *j,
    ngx_http_agent_graph_t *graph);
static ngx_int_t ngx_http_agent_mcpserver_call(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc);


/*
 * the protocol revisions we speak, the latest first: the stateless one
 * (server/discover), then those an initialize may settle on
 */

static ngx_str_t  ngx_http_agent_mcpserver_versions[] = {
    ngx_string("2026-07-28"),
    ngx_string("2025-11-25"),
    ngx_string("2025-06-18"),
    ngx_string("2025-03-26"),
    ngx_null_string
};

/* every tool's structured result, the same for each graph: a constant */
static ngx_str_t  ngx_http_agent_mcpserver_output = ngx_string(
    "{\"type\":\"object\",\"properties\":{\"answer\":{\"type\":\"string\"},"
    "\"thread_id\":{\"type\":\"string\"},\"status\":{\"enum\":"
    "[\"success\",\"interrupted\",\"error\"]},\"values\":{\"type\":"
    "\"object\"},\"interrupt\":{\"type\":\"object\"}},\"required\":"
    "[\"thread_id\",\"status\"]}");


ngx_int_t
ngx_http_agent_mcpserver_route(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx)
{
    ngx_table_elt_t            *h;
    ngx_http_core_loc_conf_t   *clcf;
    ngx_http_agent_loc_conf_t  *alcf;

    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    /* every error JSON-RPC's, the owner's 401 before the pass too */
    if (ngx_http_agent_reply_rpc(r) == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* the transport's rule: a page of another site never gets in */
    if (!ngx_http_agent_cors_origin(r, alcf->cors)) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_FORBIDDEN,
                                   NGX_HTTP_AGENT_JSONRPC_SERVER_ERROR,
                                   "Forbidden: Origin is neither this "
                                   "host nor one agent_cors allows");
    }

    if (!clcf->regex && r->uri.len > clcf->name.len
        && !(r->uri.len == clcf->name.len + 1
             && r->uri.data[r->uri.len - 1] == '/'))
    {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "no such endpoint: %V", &r->uri);
    }

    if (r->method & (NGX_HTTP_POST|NGX_HTTP_DELETE)) {
        /* none sent: 2025-03-26, which had no such header */
        h = ngx_http_agent_header_in(r, "mcp-protocol-version", NULL);

        if (h && ngx_http_agent_mcpserver_version(&h->value, 0) == NULL) {
            return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_BAD_REQUEST,
                                   NGX_HTTP_AGENT_JSONRPC_INVALID_REQUEST,
                                   "Bad Request: unsupported "
                                   "MCP-Protocol-Version (supported: "
                                   "2026-07-28, 2025-11-25, 2025-06-18, "
                                   "2025-03-26)");
        }

        return NGX_OK;
    }

    /* no stream of the server's own (GET): each answer is its request's */

    return ngx_http_agent_reply_not_allowed(r, NGX_HTTP_POST|NGX_HTTP_DELETE);
}


/* a pass of POST (or DELETE) {location} */

ngx_int_t
ngx_http_agent_mcpserver_run(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx, ngx_str_t *body)
{
    ngx_int_t                  rc;
    ngx_http_agent_json_t     *j;
    ngx_http_agent_jsonrpc_t   rpc;

    /* errors as JSON-RPC's, the turn's refusals (409, 429, ...) too */

    if (ngx_http_agent_reply_rpc(r) == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_agent_mcpserver_session_check(r);
    if (rc != NGX_OK) {
        return rc;
    }

    if (r->method == NGX_HTTP_DELETE) {
        /* a session ends: nothing is kept of it */
        return ngx_http_agent_reply_send(r, NGX_HTTP_NO_CONTENT, NULL);
    }

    rc = ngx_http_agent_reply_rpc_read(r, body, &rpc, 0, 1);
    if (rc != NGX_OK) {
        return rc;
    }

#define ngx_http_agent_method_is(s)                                           \
    (rpc.method.len == sizeof(s) - 1                                          \
     && ngx_strncmp(rpc.method.data, s, sizeof(s) - 1) == 0)

    /* a notification (initialized, cancelled): taken, never answered */

    if (rpc.notification) {
        if (ngx_http_agent_method_is("notifications/cancelled")
            && ngx_http_agent_mcpserver_cancelled(r, &rpc) == NGX_AGAIN)
        {
            return NGX_AGAIN;
        }

        return ngx_http_agent_reply_rpc_taken(r, NGX_HTTP_ACCEPTED);
    }

    if (ngx_http_agent_method_is("initialize")) {
        return ngx_http_agent_mcpserver_initialize(r, &rpc, 0);
    }

    if (ngx_http_agent_method_is("server/discover")) {
        return ngx_http_agent_mcpserver_initialize(r, &rpc, 1);
    }

    if (ngx_http_agent_method_is("ping")) {
        j = ngx_http_agent_json_create_obj(r->pool);
        if (j == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        ngx_http_agent_json_end(j);

        return ngx_http_agent_reply_rpc_result(r, j);
    }

    if (ngx_http_agent_method_is("logging/setLevel")) {
        return ngx_http_agent_mcpserver_set_level(r, &rpc);
    }

    if (ngx_http_agent_method_is("tools/list")) {
        return ngx_http_agent_mcpserver_list(r, &rpc);
    }

    if (ngx_http_agent_method_is("tools/call")) {
        return ngx_http_agent_mcpserver_call(r, &rpc);
    }

    if (rpc.response) {
        /* the client's answer to an elicitation/create of ours */
        return ngx_http_agent_mcpserver_elicit_answer(r, &rpc);
    }

#undef ngx_http_agent_method_is

    return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                   NGX_HTTP_AGENT_JSONRPC_METHOD_NOT_FOUND,
                                   "Method not found: %V", &rpc.method);
}


/* notifications/cancelled: the request's run stops, wherever it runs */

static ngx_int_t
ngx_http_agent_mcpserver_cancelled(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc)
{
    u_char     buf[36];
    yajl_val   v;
    ngx_str_t  request, run;

    v = rpc->params ? ngx_http_agent_json_get(rpc->params, "requestId")
                    : NULL;

    if (v == NULL || !(YAJL_IS_STRING(v) || YAJL_IS_INTEGER(v))
        || ngx_http_agent_json_encode(r->pool, v, &request) != NGX_OK
        || !ngx_http_agent_mcpserver_session_run_id(r, &request, buf))
    {
        return NGX_OK;
    }

    run.data = buf;
    run.len = 36;

    /* a run over, or never there, has nothing to stop */
    return ngx_http_agent_turn_record_cancel(ngx_http_agent_reply_sc(r), &run,
                                             0) == NGX_AGAIN
           ? NGX_AGAIN : NGX_OK;
}


/* a revision we speak, from the versions' index from on, or NULL */

static ngx_str_t *
ngx_http_agent_mcpserver_version(ngx_str_t *want, ngx_uint_t from)
{
    ngx_str_t  *v;

    for (v = &ngx_http_agent_mcpserver_versions[from]; v->len; v++) {
        if (v->len == want->len
            && ngx_strncmp(v->data, want->data, want->len) == 0)
        {
            return v;
        }
    }

    return NULL;
}


/*
 * initialize: the client's revision if we speak it, else our latest, and
 * a session id; server/discover (2026-07-28): every revision, no session
 */

static ngx_int_t
ngx_http_agent_mcpserver_initialize(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc, ngx_uint_t discover)
{
    ngx_str_t              *version, want;
    ngx_uint_t              i;
    ngx_http_agent_json_t  *j;

    version = NULL;

    if (!discover
        && ngx_http_agent_json_get_str(rpc->params, "protocolVersion", &want)
           == NGX_OK)
    {
        version = ngx_http_agent_mcpserver_version(&want, 1);
    }

    if (version == NULL) {
        version = &ngx_http_agent_mcpserver_versions[1];
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }


    if (discover) {
        ngx_http_agent_json_key(j, "supportedVersions");
        ngx_http_agent_json_arr(j);

        for (i = 0; ngx_http_agent_mcpserver_versions[i].len; i++) {
            ngx_http_agent_json_str(j, &ngx_http_agent_mcpserver_versions[i]);
        }

        ngx_http_agent_json_arr_end(j);

    } else {
        ngx_http_agent_json_key(j, "protocolVersion");
        ngx_http_agent_json_str(j, version);
    }

    ngx_http_agent_json_key(j, "capabilities");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "tools");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "listChanged");
    ngx_http_agent_json_bool(j, 0);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "logging");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "serverInfo");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_cstr(j, "ngx_http_agent_module");
    ngx_http_agent_json_key(j, "version");
    ngx_http_agent_json_cstr(j, "1");
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "instructions");
    ngx_http_agent_json_cstr(j, "Each tool runs an agent graph. Pass "
                             "\"thread_id\" from a result to go on in the "
                             "same conversation.");
    ngx_http_agent_json_end(j);

    if (!discover
        && ngx_http_agent_mcpserver_session_make(r, rpc->params) != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_reply_rpc_result(r, j);
}


/*
 * logging/setLevel: the level of the session's calls' notifications/message
 * from now on, kept in its id (mcpserver_session.c); a call's own level in
 * its _meta (the 2026-07-28 revision's way) goes first
 */

static ngx_int_t
ngx_http_agent_mcpserver_set_level(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc)
{
    ngx_uint_t              log;
    ngx_http_agent_json_t  *j;

    log = ngx_http_agent_mcpserver_rpc_level(
              ngx_http_agent_json_get(rpc->params, "level"));

    if (log == 0) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                      NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                      "Invalid params: \"level\" must be "
                                      "debug, info, notice, warning, error, "
                                      "critical, alert or emergency");
    }

    j = ngx_http_agent_json_create(r->pool);

    if (j == NULL || ngx_http_agent_mcpserver_session_level(r, log) != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_rpc_result(r, j);
}


/* tools/list: the location's graphs, each a tool of its name */

static ngx_int_t
ngx_http_agent_mcpserver_list(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc)
{
    ngx_uint_t                  i;
    ngx_http_agent_graph_t    **g;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    g = alcf->assistant_graphs->elts;

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "tools");
    ngx_http_agent_json_arr(j);

    for (i = 0; i < alcf->assistant_graphs->nelts; i++) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &g[i]->name);
        ngx_http_agent_json_key(j, "description");
        ngx_http_agent_json_cstr(j, "Runs the agent graph of this name on "
                                 "a message; \"thread_id\" goes on in a "
                                 "conversation, \"resume\" answers what a "
                                 "run waits for.");
        ngx_http_agent_mcpserver_schema(j, g[i]);
        ngx_http_agent_json_end(j);
    }

    if (ngx_http_agent_mcpserver_tools_list(r, j) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_rpc_result(r, j);
}


/* a graph's inputSchema and outputSchema */

static void
ngx_http_agent_mcpserver_schema(ngx_http_agent_json_t *j,
    ngx_http_agent_graph_t *graph)
{
    ngx_str_t                 *c;
    ngx_uint_t                 i, k;
    ngx_http_agent_channel_t  *ch;

    static const char  *types[] = NGX_HTTP_AGENT_TYPE_NAMES;

    ch = graph->channels.elts;

    ngx_http_agent_json_key(j, "inputSchema");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "object");
    ngx_http_agent_json_key(j, "properties");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "message");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "string");
    ngx_http_agent_json_key(j, "description");
    ngx_http_agent_json_cstr(j, "the user's message");
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "thread_id");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "string");
    ngx_http_agent_json_key(j, "description");
    ngx_http_agent_json_cstr(j, "a thread of an earlier result, to go on "
                             "in it; none: a new thread");
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "resume");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "description");
    ngx_http_agent_json_cstr(j, "the answer to what the thread's run waits "
                             "for (with thread_id, instead of a message)");
    ngx_http_agent_json_end(j);

    /* the graph's channels, each an optional input of its type */

    for (i = 0; i < graph->channels.nelts; i++) {
        if (i == NGX_HTTP_AGENT_CH_MESSAGES || i == NGX_HTTP_AGENT_CH_INPUT
            || i == NGX_HTTP_AGENT_CH_SESSION_ID)
        {
            continue;
        }

        ngx_http_agent_json_str(j, &ch[i].name);
        ngx_http_agent_json_obj(j);

        if (ch[i].type && ch[i].type < 7) {
            ngx_http_agent_json_key(j, "type");
            ngx_http_agent_json_cstr(j, types[ch[i].type]);
        }

        if (ch[i].choices) {
            c = ch[i].choices->elts;

            ngx_http_agent_json_key(j, "enum");
            ngx_http_agent_json_arr(j);

            for (k = 0; k < ch[i].choices->nelts; k++) {
                ngx_http_agent_json_str(j, &c[k]);
            }

            ngx_http_agent_json_arr_end(j);
        }

        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    ngx_http_agent_json_key(j, "outputSchema");
    ngx_http_agent_json_raw(j, &ngx_http_agent_mcpserver_output);
}


/*
 * tools/call: the graph's turn on the owner's thread, answered by its
 * stream; a new thread's id is made once and kept across the passes
 */

static ngx_int_t
ngx_http_agent_mcpserver_call(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc)
{
    ngx_int_t                         rc;
    ngx_str_t                         name, why;
    ngx_http_agent_msg_t             *msg;
    ngx_http_agent_turn_t            *turn;
    ngx_http_agent_graph_t           *graph;
    ngx_http_agent_turn_in_t         *in;
    ngx_http_agent_session_t          s;
    u_char                            id[36];
    ngx_http_agent_loc_conf_t        *alcf;
    ngx_http_agent_mcpserver_out_t   *out;
    ngx_http_agent_mcpserver_conf_t  *mscf;
    ngx_http_agent_mcpserver_call_t   call;

    if (ngx_http_agent_json_get_str(rpc->params, "name", &name) != NGX_OK
        || name.len == 0)
    {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                      NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                      "Invalid params: \"name\" must name "
                                      "a tool");
    }

    graph = ngx_http_agent_turn_graph(r, &name);

    if (graph == NULL) {
        /* an agent_tool location this server serves too */
        rc = ngx_http_agent_mcpserver_tools_call(r, rpc, &name);
        if (rc != NGX_DECLINED) {
            return rc;
        }

        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                      NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                      "Unknown tool: %V", &name);
    }

    ngx_str_null(&why);

    rc = ngx_http_agent_mcpserver_rpc_call(r->pool, rpc->params, graph,
                                           &call, &why);

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                      NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                      "Invalid params: %V", &why);
    }

    if (rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* the thread: the owner's, or a new one */

    rc = ngx_http_agent_turn_rpc(r, &call.thread_id, 0, &s, &turn);

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                      NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                      "Thread with ID %V not found",
                                      &call.thread_id);
    }

    if (turn == NULL) {
        return rc;
    }

    out = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_mcpserver_out_t));
    if (out == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    out->id = rpc->id;
    out->progress = call.progress;
    out->log = call.log ? call.log : ngx_http_agent_mcpserver_session_log(r);
    out->graph = graph->name;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    mscf = alcf->proto_conf;

    /* an interrupt asks the client's user, where the client can be asked */
    out->elicit = ngx_http_agent_mcpserver_session_elicits(r)
                  && mscf->elicitation > 0;

    in = ngx_http_agent_turn_in(turn);

    /* kept: notifications/cancelled names it by the session and the id */

    in->record = &out->record;

    if (ngx_http_agent_mcpserver_session_run_id(r, &rpc->id, id)) {
        ngx_http_agent_turn_id(turn, id);
    }

    in->graph = graph;
    in->format = &ngx_http_agent_mcpserver_format;
    in->format_data = out;
    in->hooks = out->elicit ? &ngx_http_agent_mcpserver_elicit_hooks : NULL;
    in->values = call.values;
    in->resume = call.resume;

    /* a message on a thread that waits answers the wait, as "resume" */
    in->reply = 1;

    if (call.resume.len == 0) {
        msg = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_msg_t));
        if (msg == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        ngx_str_set(&msg->role, "user");
        msg->content = call.message;

        in->msgs = msg;
        in->nmsgs = 1;
        in->text = call.message;
    }

    return ngx_http_agent_turn_begin(turn, &s);
}
