
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_a2a_int.h"
#include "ngx_http_agent_a2a.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store.h"


/*
 * agent_a2a: the location's graph as an A2A agent (docs/protocols.md).
 * GET {location}.well-known/agent-card.json is its card (a skill per
 * graph the location allows, the JSON-RPC interface in A2A 1.0 and 0.3);
 * POST {location} takes JSON-RPC: SendMessage and SendStreamingMessage
 * (1.0), message/send and message/stream (0.3).  A message is a turn on
 * its contextId's thread (a new id makes one for the owner, another
 * owner's is "not found"); a thread that waits at an interrupt takes the
 * next message as its answer (input-required).  A task is the turn's
 * record: GetTask, ListTasks, CancelTask and SubscribeToTask (and 0.3's
 * tasks/get, tasks/cancel, tasks/resubscribe) read it (a2a_tasks.c).
 */


static ngx_int_t ngx_http_agent_a2a_card(ngx_http_request_t *r);
static ngx_int_t ngx_http_agent_a2a_send(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc, ngx_uint_t stream, ngx_uint_t legacy);
static ngx_int_t ngx_http_agent_a2a_config(yajl_val params,
    ngx_uint_t *now, ngx_http_agent_a2a_hist_t *hist);
static ngx_int_t ngx_http_agent_a2a_continues(ngx_http_request_t *r,
    ngx_http_agent_a2a_message_t *am, ngx_int_t *answered);


#define NGX_HTTP_AGENT_A2A_CARD  ".well-known/agent-card.json"


ngx_int_t
ngx_http_agent_a2a_route(ngx_http_request_t *r, ngx_http_agent_ctx_t *ctx)
{
    ngx_int_t                    rc;
    ngx_str_t                    rest;
    ngx_http_agent_reply_rpc_t  *rpc;

    ngx_http_agent_reply_path(r, &rest);

    if (rest.len == sizeof(NGX_HTTP_AGENT_A2A_CARD) - 1
        && ngx_strncmp(rest.data, NGX_HTTP_AGENT_A2A_CARD, rest.len) == 0)
    {
        /* the card is for anyone who finds the agent: no owner asked */
        ctx->id = rest;
        ctx->public = 1;

        if (r->method & (NGX_HTTP_GET|NGX_HTTP_HEAD)) {
            return NGX_OK;
        }

        return ngx_http_agent_reply_not_allowed(r, NGX_HTTP_GET);
    }

    /* every other error JSON-RPC's, the owner's 401 before the pass too */
    rpc = ngx_http_agent_reply_rpc(r);
    if (rpc == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* -32600 and -32700 with 200, as every other error (docs/protocols.md) */
    rpc->ok = 1;

    if (rest.len) {
        /* A2A 1.0's HTTP+JSON binding (a2a_rest.c) */
        rc = ngx_http_agent_a2a_rest_route(r, &rest);

        if (rc != NGX_DECLINED) {
            return rc;
        }

        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "no such endpoint: %V", &r->uri);
    }

    if (r->method == NGX_HTTP_POST) {
        return NGX_OK;
    }

    return ngx_http_agent_reply_not_allowed(r, NGX_HTTP_POST);
}


/* a pass of GET {location}.well-known/agent-card.json or POST {location} */

/* SendMessage's answer, and the task's push notification at its end */
static ngx_http_agent_turn_hooks_t  ngx_http_agent_a2a_hooks = {
    NULL,
    NULL,
    ngx_http_agent_a2a_started,
    NULL,
    ngx_http_agent_a2a_push_done,
    ngx_http_agent_a2a_answer,
    NULL
};


ngx_int_t
ngx_http_agent_a2a_run(ngx_http_request_t *r, ngx_http_agent_ctx_t *ctx,
    ngx_str_t *body)
{
    ngx_int_t                    rc;
    ngx_uint_t                   push;
    ngx_http_agent_jsonrpc_t     rpc;
    ngx_http_agent_loc_conf_t   *alcf;
    ngx_http_agent_reply_rpc_t  *state;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    if (ctx->id.len) {
        return ngx_http_agent_a2a_card(r);
    }

    /* errors as JSON-RPC's, the turn's refusals (409, 429, ...) too */

    state = ngx_http_agent_reply_rpc(r);
    if (state == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    state->ok = 1;

    /* A2A has no notification of the client's: taken, unanswered */

    if (state->problem) {
        /* a route of the HTTP+JSON binding, read as its JSON-RPC request */
        rc = ngx_http_agent_a2a_rest_read(r, body, &rpc);

    } else {
        rc = ngx_http_agent_reply_rpc_read(r, body, &rpc, NGX_HTTP_NO_CONTENT,
                                           0);
    }

    if (rc != NGX_OK) {
        return rc;
    }

#define ngx_http_agent_method_is(s)                                           \
    (rpc.method.len == sizeof(s) - 1                                          \
     && ngx_strncmp(rpc.method.data, s, sizeof(s) - 1) == 0)

    if (ngx_http_agent_method_is("SendMessage")) {
        return ngx_http_agent_a2a_send(r, &rpc, 0, 0);
    }

    if (ngx_http_agent_method_is("SendStreamingMessage")) {
        return ngx_http_agent_a2a_send(r, &rpc, 1, 0);
    }

    if (ngx_http_agent_method_is("message/send")) {
        return ngx_http_agent_a2a_send(r, &rpc, 0, 1);
    }

    if (ngx_http_agent_method_is("message/stream")) {
        return ngx_http_agent_a2a_send(r, &rpc, 1, 1);
    }

    if (ngx_http_agent_method_is("GetTask")) {
        return ngx_http_agent_a2a_tasks(r, &rpc, NGX_HTTP_AGENT_A2A_GET, 0);
    }

    if (ngx_http_agent_method_is("ListTasks")) {
        return ngx_http_agent_a2a_tasks(r, &rpc, NGX_HTTP_AGENT_A2A_LIST, 0);
    }

    if (ngx_http_agent_method_is("CancelTask")) {
        return ngx_http_agent_a2a_tasks(r, &rpc, NGX_HTTP_AGENT_A2A_CANCEL,
                                        0);
    }

    if (ngx_http_agent_method_is("SubscribeToTask")) {
        return ngx_http_agent_a2a_tasks(r, &rpc,
                                        NGX_HTTP_AGENT_A2A_SUBSCRIBE, 0);
    }

    if (ngx_http_agent_method_is("tasks/get")) {
        return ngx_http_agent_a2a_tasks(r, &rpc, NGX_HTTP_AGENT_A2A_GET, 1);
    }

    if (ngx_http_agent_method_is("tasks/cancel")) {
        return ngx_http_agent_a2a_tasks(r, &rpc, NGX_HTTP_AGENT_A2A_CANCEL,
                                        1);
    }

    if (ngx_http_agent_method_is("tasks/resubscribe")) {
        return ngx_http_agent_a2a_tasks(r, &rpc,
                                        NGX_HTTP_AGENT_A2A_SUBSCRIBE, 1);
    }

    /* a task's push config is its message's: read back, not made alone */

    push = (alcf->webhooks != NULL);

    if (push && ngx_http_agent_method_is("GetTaskPushNotificationConfig")) {
        return ngx_http_agent_a2a_tasks(r, &rpc,
                                        NGX_HTTP_AGENT_A2A_PUSH_GET, 0);
    }

    if (push && ngx_http_agent_method_is("ListTaskPushNotificationConfigs")) {
        return ngx_http_agent_a2a_tasks(r, &rpc,
                                        NGX_HTTP_AGENT_A2A_PUSH_LIST, 0);
    }

    if (push && ngx_http_agent_method_is("tasks/pushNotificationConfig/get"))
    {
        return ngx_http_agent_a2a_tasks(r, &rpc,
                                        NGX_HTTP_AGENT_A2A_PUSH_GET, 1);
    }

    if (push && ngx_http_agent_method_is("tasks/pushNotificationConfig/list"))
    {
        return ngx_http_agent_a2a_tasks(r, &rpc,
                                        NGX_HTTP_AGENT_A2A_PUSH_LIST, 1);
    }

    if (ngx_http_agent_method_is("CreateTaskPushNotificationConfig")
        || ngx_http_agent_method_is("GetTaskPushNotificationConfig")
        || ngx_http_agent_method_is("ListTaskPushNotificationConfigs")
        || ngx_http_agent_method_is("DeleteTaskPushNotificationConfig")
        || ngx_http_agent_method_is("tasks/pushNotificationConfig/set")
        || ngx_http_agent_method_is("tasks/pushNotificationConfig/get")
        || ngx_http_agent_method_is("tasks/pushNotificationConfig/list")
        || ngx_http_agent_method_is("tasks/pushNotificationConfig/delete"))
    {
        return push ? ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                   NGX_HTTP_AGENT_A2A_UNSUPPORTED_OPERATION,
                                   "This operation is not supported: a "
                                   "task's push notification config is set "
                                   "with its message (configuration)")
                    : ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                   NGX_HTTP_AGENT_A2A_PUSH_UNSUPPORTED,
                                   "Push Notification is not supported");
    }

    /* no extended card is declared (capabilities.extendedAgentCard) */

    if (ngx_http_agent_method_is("GetExtendedAgentCard")) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                   NGX_HTTP_AGENT_A2A_UNSUPPORTED_OPERATION,
                                   "This operation is not supported: this "
                                   "agent has no extended agent card");
    }

    if (ngx_http_agent_method_is("agent/getAuthenticatedExtendedCard")) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                   NGX_HTTP_AGENT_A2A_CARD_NOT_CONFIGURED,
                                   "Authenticated Extended Card is not "
                                   "configured");
    }

#undef ngx_http_agent_method_is

    return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                    NGX_HTTP_AGENT_JSONRPC_METHOD_NOT_FOUND,
                                    "Method not found: %V", &rpc.method);
}


/* the agent card: A2A 1.0's, with 0.3's fields beside for its clients */

static ngx_int_t
ngx_http_agent_a2a_card(ngx_http_request_t *r)
{
    u_char                     *p;
    ngx_str_t                   url, *host, local;
    ngx_uint_t                  i;
    ngx_http_agent_graph_t    **g;
    ngx_http_agent_json_t      *j;
    ngx_http_core_loc_conf_t   *clcf;
    ngx_http_agent_loc_conf_t  *alcf;

    static const char  *versions[] = { "1.0", "0.3" };

    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    /* the endpoint's URL, as the client reached this one */

    host = r->headers_in.host ? &r->headers_in.host->value : NULL;

    for (i = 0; host && i < host->len; i++) {

        /* a name or an address and a port, nothing a URL would read else */

        if (!(isalnum(host->data[i]) || host->data[i] == '.'
              || host->data[i] == '-' || host->data[i] == ':'
              || host->data[i] == '[' || host->data[i] == ']'))
        {
            host = NULL;
        }
    }

    if (host == NULL || host->len == 0) {
        /* HTTP/1.0 without Host: the address it came to */
        local.data = ngx_pnalloc(r->pool, NGX_SOCKADDR_STRLEN);
        if (local.data == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        local.len = NGX_SOCKADDR_STRLEN;

        if (ngx_connection_local_sockaddr(r->connection, &local, 1)
            != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        host = &local;
    }

    p = ngx_pnalloc(r->pool, sizeof("https://") + host->len
                             + clcf->name.len);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    url.data = p;
    url.len = ngx_sprintf(p, "%s://%V%V",
#if (NGX_HTTP_SSL)
                          r->connection->ssl ? "https" :
#endif
                          "http", host, &clcf->name)
              - p;

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, &alcf->graph->name);
    ngx_http_agent_json_key(j, "description");
    ngx_http_agent_json_cstr(j, "An agent graph served by nginx "
                             "(ngx_http_agent_module). Each skill is a "
                             "graph; metadata \"skill\" on a message picks "
                             "one, the first is the default.");
    ngx_http_agent_json_key(j, "version");
    ngx_http_agent_json_cstr(j, "1");
    ngx_http_agent_json_key(j, "supportedInterfaces");
    ngx_http_agent_json_arr(j);

    for (i = 0; i < 2; i++) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "url");
        ngx_http_agent_json_str(j, &url);
        ngx_http_agent_json_key(j, "protocolBinding");
        ngx_http_agent_json_cstr(j, "JSONRPC");
        ngx_http_agent_json_key(j, "protocolVersion");
        ngx_http_agent_json_cstr(j, versions[i]);
        ngx_http_agent_json_end(j);
    }

    /* the HTTP+JSON binding, 1.0's, at the same URL (a2a_rest.c) */
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "url");
    ngx_http_agent_json_str(j, &url);
    ngx_http_agent_json_key(j, "protocolBinding");
    ngx_http_agent_json_cstr(j, "HTTP+JSON");
    ngx_http_agent_json_key(j, "protocolVersion");
    ngx_http_agent_json_cstr(j, "1.0");
    ngx_http_agent_json_end(j);

    ngx_http_agent_json_arr_end(j);

    /* 0.3's clients read these */
    ngx_http_agent_json_key(j, "protocolVersion");
    ngx_http_agent_json_cstr(j, "0.3.0");
    ngx_http_agent_json_key(j, "url");
    ngx_http_agent_json_str(j, &url);
    ngx_http_agent_json_key(j, "preferredTransport");
    ngx_http_agent_json_cstr(j, "JSONRPC");

    ngx_http_agent_json_key(j, "capabilities");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "streaming");
    ngx_http_agent_json_bool(j, 1);
    ngx_http_agent_json_key(j, "pushNotifications");
    ngx_http_agent_json_bool(j, alcf->webhooks != NULL);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "defaultInputModes");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_cstr(j, "text/plain");
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "defaultOutputModes");
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_cstr(j, "text/plain");
    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "skills");
    ngx_http_agent_json_arr(j);

    g = alcf->assistant_graphs->elts;

    for (i = 0; i < alcf->assistant_graphs->nelts; i++) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_str(j, &g[i]->name);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &g[i]->name);
        ngx_http_agent_json_key(j, "description");
        ngx_http_agent_json_cstr(j, "the agent graph of this name");
        ngx_http_agent_json_key(j, "tags");
        ngx_http_agent_json_arr(j);
        ngx_http_agent_json_cstr(j, "graph");
        ngx_http_agent_json_arr_end(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/*
 * SendMessage and its streaming and 0.3 kin: the turn on the context's
 * thread; a thread that waits takes the message as its answer
 */

static ngx_int_t
ngx_http_agent_a2a_send(ngx_http_request_t *r, ngx_http_agent_jsonrpc_t *rpc,
    ngx_uint_t stream, ngx_uint_t legacy)
{
    ngx_int_t                      rc, code;
    ngx_str_t                      why, kwargs, secret;
    ngx_uint_t                     now;
    ngx_http_agent_a2a_hist_t      hist;
    ngx_http_agent_msg_t          *msg;
    ngx_http_agent_turn_t         *turn;
    ngx_http_agent_graph_t        *graph;
    ngx_http_agent_turn_in_t      *in;
    ngx_http_agent_a2a_out_t      *out;
    ngx_http_agent_session_t       s;
    ngx_http_agent_a2a_message_t   am;

    ngx_str_null(&why);

    rc = ngx_http_agent_a2a_message(r->pool, rpc->params, &am, &code, &why);

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK, code, "%V", &why);
    }

    if (rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_memzero(&hist, sizeof(ngx_http_agent_a2a_hist_t));

    if (ngx_http_agent_a2a_config(rpc->params, &now, &hist) != NGX_OK) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                        "Invalid params: \"historyLength\" "
                                        "is a number of 0 or more, "
                                        "\"returnImmediately\" and "
                                        "\"blocking\" booleans");
    }

    /* a message to a task: the task goes on, in its own context */

    if (am.task_id.len) {
        rc = ngx_http_agent_a2a_continues(r, &am, &code);
        if (rc != NGX_OK) {
            return (rc == NGX_DONE) ? code : rc;
        }
    }

    /* its push notification config, kept with the task */

    ngx_str_null(&kwargs);
    ngx_str_null(&secret);

    rc = ngx_http_agent_a2a_push_read(r, rpc->params, legacy, &kwargs,
                                      &secret, &code, &why);

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK, code, "%V",
                                              &why);
    }

    if (rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    graph = ngx_http_agent_turn_graph(r, &am.skill);

    if (graph == NULL) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                        "Invalid params: no skill \"%V\" in "
                                        "the agent card", &am.skill);
    }

    /* the context: the owner's thread, a new one of the id given, or ours */

    rc = ngx_http_agent_turn_rpc(r, &am.context_id, am.task_id.len == 0,
                                 &s, &turn);

    if (rc == NGX_DECLINED && am.task_id.len) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_A2A_TASK_NOT_FOUND,
                                        "Task not found: %V", &am.task_id);
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_A2A_TASK_NOT_FOUND,
                                        "Context with ID %V not found",
                                        &am.context_id);
    }

    if (turn == NULL) {
        return rc;
    }

    out = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_a2a_out_t));
    msg = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_msg_t));

    if (out == NULL || msg == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    out->id = rpc->id;
    out->legacy = legacy;
    out->rest = ngx_http_agent_a2a_rest_is(r);
    out->now = (now && !stream);
    out->task = am.task_id;
    out->hist = hist;

    ngx_str_set(&msg->role, "user");
    msg->content = am.text;

    in = ngx_http_agent_turn_in(turn);

    in->graph = graph;
    in->format = &ngx_http_agent_a2a_format;
    in->format_data = out;
    in->hooks = &ngx_http_agent_a2a_hooks;
    in->data = out;

    /* the task kept, with how it ends: GetTask and the rest read it */
    in->record = &out->record;
    out->record.keep = 1;
    out->record.events = 1;
    out->record.row.kwargs = kwargs;
    out->record.row.secret = secret;

    if (am.task_id.len) {
        /* the task's events say its id; its row says which task it is */
        in->run_id = am.task_id;

        if (ngx_http_agent_a2a_link(r->pool, &am.task_id,
                                    &out->record.row.metadata)
            != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    in->json = !stream;
    in->created = out->now;
    in->msgs = msg;
    in->nmsgs = 1;
    in->text = am.text;

    /* input-required: the next message answers the wait */
    in->reply = 1;

    return ngx_http_agent_turn_begin(turn, &s);
}


/*
 * SendMessage's configuration: returnImmediately (1.0) or blocking false
 * (0.3); historyLength checked (a Task here carries no history, so any N
 * holds: at most N messages)
 */

static ngx_int_t
ngx_http_agent_a2a_config(yajl_val params, ngx_uint_t *now,
    ngx_http_agent_a2a_hist_t *hist)
{
    yajl_val  c, v;

    *now = 0;

    c = ngx_http_agent_json_get(params, "configuration");

    if (c == NULL || YAJL_IS_NULL(c)) {
        return NGX_OK;
    }

    if (!YAJL_IS_OBJECT(c)) {
        return NGX_ERROR;
    }

    v = ngx_http_agent_json_get(c, "returnImmediately");

    if (v && !YAJL_IS_NULL(v)) {
        if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v)) {
            return NGX_ERROR;
        }

        *now = YAJL_IS_TRUE(v);
    }

    v = ngx_http_agent_json_get(c, "blocking");

    if (v && !YAJL_IS_NULL(v)) {
        if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v)) {
            return NGX_ERROR;
        }

        *now = *now || YAJL_IS_FALSE(v);
    }

    return ngx_http_agent_a2a_history_of(c, hist);
}


/*
 * A message that names its task (§3.4.3): the task's context is the
 * message's, inferred when it names none; a task that waits for input
 * goes on; a terminal one takes no more messages (§3.1.1)
 */

static ngx_int_t
ngx_http_agent_a2a_continues(ngx_http_request_t *r,
    ngx_http_agent_a2a_message_t *am, ngx_int_t *answered)
{
    ngx_int_t                       rc;
    ngx_http_agent_session_t        s;
    ngx_http_agent_run_state_e      state;
    ngx_http_agent_turn_outcome_t  *out;

    out = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_turn_outcome_t));
    if (out == NULL) {
        *answered = NGX_HTTP_INTERNAL_SERVER_ERROR;
        return NGX_DONE;
    }

    rc = ngx_http_agent_a2a_latest(r, &am->task_id, out);

    if (rc == NGX_OK) {
        /* another owner's task is as good as not there */
        rc = ngx_http_agent_reply_rpc_thread(r, &out->row.thread_id, 0, &s);
    }

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_DECLINED) {
        *answered = ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_A2A_TASK_NOT_FOUND,
                                        "Task not found: %V", &am->task_id);
        return NGX_DONE;
    }

    if (rc != NGX_OK) {
        *answered = ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_JSONRPC_INTERNAL_ERROR,
                                        "Internal error: the store failed");
        return NGX_DONE;
    }

    if (am->context_id.len
        && (am->context_id.len != out->row.thread_id.len
            || ngx_strncmp(am->context_id.data, out->row.thread_id.data,
                           am->context_id.len) != 0))
    {
        *answered = ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                        NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                        "Invalid params: the task %V is not "
                                        "of the context %V", &am->task_id,
                                        &am->context_id);
        return NGX_DONE;
    }

    am->context_id = out->row.thread_id;

    /* the task's graph, unless the message names one */

    if (am->skill.len == 0) {
        am->skill = out->row.assistant_id;
    }

    state = ngx_http_agent_turn_record_state(out);

    if (state == NGX_HTTP_AGENT_RUN_SUCCESS
        || state == NGX_HTTP_AGENT_RUN_ERROR
        || state == NGX_HTTP_AGENT_RUN_CANCELLED)
    {
        *answered = ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                   NGX_HTTP_AGENT_A2A_UNSUPPORTED_OPERATION,
                                   "This operation is not supported: the "
                                   "task %V is in a terminal state",
                                   &am->task_id);
        return NGX_DONE;
    }

    /* one that waits is answered; one that runs: the thread is busy (409) */

    return NGX_OK;
}
