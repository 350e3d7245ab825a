
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_a2a_int.h"
#include "ngx_http_agent_a2a.h"
#include "ngx_http_agent_http.h"


/*
 * A2A 1.0's HTTP+JSON binding (§11) over the JSON-RPC binding's handlers:
 * each route is read into the JSON-RPC request it stands for (its method,
 * and params from the body, the path and the query), the answer is the
 * result without JSON-RPC's envelope (a2a_task.c's head and tail), an
 * error a problem (RFC 9457) with the HTTP status of §5.4, which carries
 * google.rpc.Status's "error" too, as A2A's SDKs read it.
 *
 *   POST message:send, message:stream      SendMessage, SendStreaming...
 *   GET  tasks, tasks/{id}                  ListTasks, GetTask
 *   POST tasks/{id}:cancel, :subscribe      CancelTask, SubscribeToTask
 *   GET, POST tasks/{id}/pushNotificationConfigs[/{configId}], DELETE
 *   GET  extendedAgentCard                  GetExtendedAgentCard
 */


typedef struct {
    ngx_str_t                  method;      /* JSON-RPC's */
    ngx_str_t                  task;        /* the path's task id */
    ngx_str_t                  config;      /* the path's config id */
    ngx_uint_t                 allow;       /* the HTTP methods */
    unsigned                   push:1;      /* a push config's: the task
                                               is "taskId" */
} ngx_http_agent_a2a_route_t;


typedef struct {
    ngx_int_t                  code;
    ngx_uint_t                 status;
    const char                *reason;      /* google.rpc.ErrorInfo's */
    const char                *grpc;
    const char                *type;        /* §5.4's URI, its last part */
} ngx_http_agent_a2a_problem_t;


static ngx_int_t ngx_http_agent_a2a_rest_match(ngx_str_t *path,
    ngx_http_agent_a2a_route_t *rt);
static ngx_int_t ngx_http_agent_a2a_rest_problem(ngx_http_request_t *r,
    ngx_int_t code, ngx_str_t *msg, ngx_uint_t *status, ngx_str_t *out);
static void ngx_http_agent_a2a_rest_args(ngx_http_request_t *r,
    ngx_http_agent_json_t *j);


static ngx_http_agent_a2a_problem_t  ngx_http_agent_a2a_problems[] = {
    { -32001, NGX_HTTP_NOT_FOUND, "TASK_NOT_FOUND", "NOT_FOUND",
      "task-not-found" },
    { -32002, NGX_HTTP_CONFLICT, "TASK_NOT_CANCELABLE",
      "FAILED_PRECONDITION", "task-not-cancelable" },
    { -32003, NGX_HTTP_BAD_REQUEST, "PUSH_NOTIFICATION_NOT_SUPPORTED",
      "UNIMPLEMENTED", "push-notification-not-supported" },
    { -32004, NGX_HTTP_BAD_REQUEST, "UNSUPPORTED_OPERATION",
      "UNIMPLEMENTED", "unsupported-operation" },
    { -32005, 415, "CONTENT_TYPE_NOT_SUPPORTED", "INVALID_ARGUMENT",
      "content-type-not-supported" },
    { -32007, NGX_HTTP_BAD_REQUEST, "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
      "FAILED_PRECONDITION", "extended-agent-card-not-configured" },
    { -32602, NGX_HTTP_BAD_REQUEST, "INVALID_PARAMS", "INVALID_ARGUMENT",
      NULL },
    { -32600, NGX_HTTP_BAD_REQUEST, NULL, "INVALID_ARGUMENT", NULL },
    { -32700, NGX_HTTP_BAD_REQUEST, NULL, "INVALID_ARGUMENT", NULL },
    { -32601, NGX_HTTP_NOT_FOUND, NULL, "UNIMPLEMENTED", NULL },
    { 0, NGX_HTTP_INTERNAL_SERVER_ERROR, NULL, "INTERNAL", NULL }
};


/* a path of the binding: NGX_DECLINED, none; else its method checked */

ngx_int_t
ngx_http_agent_a2a_rest_route(ngx_http_request_t *r, ngx_str_t *path)
{
    ngx_http_agent_a2a_route_t   rt;
    ngx_http_agent_reply_rpc_t  *rpc;

    if (ngx_http_agent_a2a_rest_match(path, &rt) != NGX_OK) {
        return NGX_DECLINED;
    }

    rpc = ngx_http_agent_reply_rpc(r);
    if (rpc == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rpc->problem = ngx_http_agent_a2a_rest_problem;

    if (r->method & rt.allow) {
        return NGX_OK;
    }

    return ngx_http_agent_reply_not_allowed(r, rt.allow);
}


ngx_uint_t
ngx_http_agent_a2a_rest_is(ngx_http_request_t *r)
{
    ngx_http_agent_ctx_t        *ctx;
    ngx_http_agent_reply_rpc_t  *rpc;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    rpc = ctx ? ctx->proto : NULL;

    return rpc && rpc->problem == ngx_http_agent_a2a_rest_problem;
}


/*
 * the request as the JSON-RPC request it stands for: a POST's body is the
 * params (message:send's SendMessageRequest), to which the path's ids and
 * the query's parameters are added
 */

ngx_int_t
ngx_http_agent_a2a_rest_read(ngx_http_request_t *r, ngx_str_t *body,
    ngx_http_agent_jsonrpc_t *rpc)
{
    size_t                       i;
    ngx_str_t                    path, json, err;
    const char                  *key;
    yajl_val                     v;
    ngx_http_agent_json_t       *j;
    ngx_http_agent_a2a_route_t   rt;

    ngx_memzero(rpc, sizeof(ngx_http_agent_jsonrpc_t));

    ngx_http_agent_reply_path(r, &path);
    (void) ngx_http_agent_a2a_rest_match(&path, &rt);

    rpc->method = rt.method;

    if (rt.push && r->method == NGX_HTTP_POST) {
        ngx_str_set(&rpc->method, "CreateTaskPushNotificationConfig");

    } else if (rt.push && r->method == NGX_HTTP_DELETE) {
        ngx_str_set(&rpc->method, "DeleteTaskPushNotificationConfig");
    }

    v = NULL;

    if (body && body->len && (r->method & NGX_HTTP_POST)) {
        v = ngx_http_agent_json_parse(r->pool, body->data, body->len, &err);

        if (v == NULL || !YAJL_IS_OBJECT(v)) {
            return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_BAD_REQUEST,
                                        NGX_HTTP_AGENT_JSONRPC_PARSE_ERROR,
                                        "the body must be a JSON object");
        }
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }


    for (i = 0; v && i < v->u.object.len; i++) {
        key = v->u.object.keys[i];

        /* the path names the task and the config, not the body */
        if ((rt.task.len || rt.config.len)
            && (ngx_strcmp(key, "id") == 0 || ngx_strcmp(key, "taskId") == 0))
        {
            continue;
        }

        /* a key is a string: written as one */
        ngx_http_agent_json_cstr(j, key);
        ngx_http_agent_json_val(j, v->u.object.values[i]);
    }

    if (rt.task.len) {
        /* the push config methods name the task taskId, the others id */
        if (rt.push) {
            ngx_http_agent_json_key(j, "taskId");

        } else {
            ngx_http_agent_json_key(j, "id");
        }

        ngx_http_agent_json_str(j, &rt.task);
    }

    if (rt.config.len) {
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_str(j, &rt.config);
    }

    ngx_http_agent_a2a_rest_args(r, j);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &json) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rpc->params = ngx_http_agent_json_parse(r->pool, json.data, json.len,
                                            &err);
    if (rpc->params == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_a2a_rest_match(ngx_str_t *path, ngx_http_agent_a2a_route_t *rt)
{
    u_char     *p, *last, *colon;
    ngx_str_t   rest;

    ngx_memzero(rt, sizeof(ngx_http_agent_a2a_route_t));

#define ngx_http_agent_path_is(s)                                             \
    (path->len == sizeof(s) - 1                                               \
     && ngx_strncmp(path->data, s, sizeof(s) - 1) == 0)

    if (ngx_http_agent_path_is("message:send")) {
        ngx_str_set(&rt->method, "SendMessage");
        rt->allow = NGX_HTTP_POST;
        return NGX_OK;
    }

    if (ngx_http_agent_path_is("message:stream")) {
        ngx_str_set(&rt->method, "SendStreamingMessage");
        rt->allow = NGX_HTTP_POST;
        return NGX_OK;
    }

    if (ngx_http_agent_path_is("tasks")) {
        ngx_str_set(&rt->method, "ListTasks");
        rt->allow = NGX_HTTP_GET;
        return NGX_OK;
    }

    if (ngx_http_agent_path_is("extendedAgentCard")) {
        ngx_str_set(&rt->method, "GetExtendedAgentCard");
        rt->allow = NGX_HTTP_GET;
        return NGX_OK;
    }

#undef ngx_http_agent_path_is

    if (path->len <= 6 || ngx_strncmp(path->data, "tasks/", 6) != 0) {
        return NGX_DECLINED;
    }

    rest.data = path->data + 6;
    rest.len = path->len - 6;
    last = rest.data + rest.len;

    /* tasks/{id}/pushNotificationConfigs[/{configId}] */

    p = ngx_strlcasestrn(rest.data, last,
                         (u_char *) "/pushNotificationConfigs", 24 - 1);

    if (p) {
        rt->task.data = rest.data;
        rt->task.len = p - rest.data;
        rt->push = 1;
        p += 24;

        if (p == last) {
            ngx_str_set(&rt->method, "ListTaskPushNotificationConfigs");
            rt->allow = NGX_HTTP_GET|NGX_HTTP_POST;
            return rt->task.len ? NGX_OK : NGX_DECLINED;
        }

        if (*p != '/' || p + 1 == last) {
            return NGX_DECLINED;
        }

        rt->config.data = p + 1;
        rt->config.len = last - p - 1;
        ngx_str_set(&rt->method, "GetTaskPushNotificationConfig");
        rt->allow = NGX_HTTP_GET|NGX_HTTP_DELETE;
        return rt->task.len ? NGX_OK : NGX_DECLINED;
    }

    /* tasks/{id}, tasks/{id}:cancel, tasks/{id}:subscribe */

    colon = NULL;

    for (p = rest.data; p < last; p++) {
        if (*p == ':') {
            colon = p;
        }
    }

    rt->task = rest;
    ngx_str_set(&rt->method, "GetTask");
    rt->allow = NGX_HTTP_GET;

    if (colon) {
        rt->task.len = colon - rest.data;

        if ((size_t) (last - colon) == sizeof(":cancel") - 1
            && ngx_strncmp(colon, ":cancel", last - colon) == 0)
        {
            ngx_str_set(&rt->method, "CancelTask");
            rt->allow = NGX_HTTP_POST;

        } else if ((size_t) (last - colon) == sizeof(":subscribe") - 1
                   && ngx_strncmp(colon, ":subscribe", last - colon) == 0)
        {
            ngx_str_set(&rt->method, "SubscribeToTask");
            rt->allow = NGX_HTTP_POST|NGX_HTTP_GET;

        } else {
            /* a colon of the id's own (a URN) */
            rt->task = rest;
        }
    }

    return rt->task.len ? NGX_OK : NGX_DECLINED;
}


/*
 * the query's parameters (§11.5), each once: numbers and booleans as
 * such, the rest strings; the handlers check them as JSON-RPC's params
 */

static void
ngx_http_agent_a2a_rest_args(ngx_http_request_t *r, ngx_http_agent_json_t *j)
{
    u_char      *dst, *src;
    ngx_int_t    n;
    ngx_str_t    arg, val;
    ngx_uint_t   k;

    static const char  *names[] = {
        "contextId", "status", "pageSize", "pageToken", "historyLength",
        "statusTimestampAfter", "includeArtifacts"
    };

    for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        if (ngx_http_arg(r, (u_char *) names[k], ngx_strlen(names[k]), &arg)
            != NGX_OK)
        {
            continue;
        }

        val.data = ngx_pnalloc(r->pool, arg.len);
        if (val.data == NULL) {
            continue;
        }

        /* URL-encoded (RFC 3986) */
        dst = val.data;
        src = arg.data;
        ngx_unescape_uri(&dst, &src, arg.len, NGX_UNESCAPE_URI);
        val.len = dst - val.data;

        ngx_http_agent_json_cstr(j, names[k]);

        n = ngx_atoi(val.data, val.len);

        if ((k == 2 || k == 4) && n != NGX_ERROR) {
            ngx_http_agent_json_int(j, n);

        } else if (k == 4 && val.len && val.data[0] == '-'
                   && ngx_atoi(val.data + 1, val.len - 1) != NGX_ERROR)
        {
            ngx_http_agent_json_int(j, -ngx_atoi(val.data + 1, val.len - 1));

        } else if (k == 6 && val.len == 4
                   && ngx_strncmp(val.data, "true", 4) == 0)
        {
            ngx_http_agent_json_bool(j, 1);

        } else if (k == 6 && val.len == 5
                   && ngx_strncmp(val.data, "false", 5) == 0)
        {
            ngx_http_agent_json_bool(j, 0);

        } else {
            ngx_http_agent_json_str(j, &val);
        }
    }
}


/*
 * An error as a problem (§11.6, RFC 9457: type, title, status, detail)
 * with §5.4's status, and google.rpc.Status's "error" (code, status,
 * message, an ErrorInfo of A2A's reason), which A2A's SDKs read
 */

static ngx_int_t
ngx_http_agent_a2a_rest_problem(ngx_http_request_t *r, ngx_int_t code,
    ngx_str_t *msg, ngx_uint_t *status, ngx_str_t *out)
{
    u_char                        buf[128], *p;
    ngx_str_t                     type;
    const char                   *grpc;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_a2a_problem_t  *e;

    for (e = ngx_http_agent_a2a_problems; e->code; e++) {
        if (e->code == code) {
            break;
        }
    }

    /* the turn's refusals (409, 429, 503, ...) keep their own */

    if (e->code == 0 && *status != NGX_HTTP_OK) {
        /* as it is */

    } else {
        *status = e->status;
    }

    /* google.rpc.Code of such a status, as gRPC's HTTP mapping reads it */

    grpc = e->grpc;

    if (e->code == 0) {
        switch (*status) {
        case NGX_HTTP_UNAUTHORIZED:
            grpc = "UNAUTHENTICATED";
            break;
        case NGX_HTTP_FORBIDDEN:
            grpc = "PERMISSION_DENIED";
            break;
        case NGX_HTTP_NOT_FOUND:
            grpc = "NOT_FOUND";
            break;
        case NGX_HTTP_NOT_ALLOWED:
            grpc = "UNIMPLEMENTED";
            break;
        case NGX_HTTP_CONFLICT:
            grpc = "ABORTED";
            break;
        case NGX_HTTP_REQUEST_ENTITY_TOO_LARGE:
            grpc = "INVALID_ARGUMENT";
            break;
        case 429:
            grpc = "RESOURCE_EXHAUSTED";
            break;
        case NGX_HTTP_SERVICE_UNAVAILABLE:
            grpc = "UNAVAILABLE";
            break;
        }
    }

    if (e->type) {
        p = ngx_snprintf(buf, sizeof(buf),
                         "https://a2a-protocol.org/errors/%s", e->type);
        type.data = buf;
        type.len = p - buf;

    } else {
        ngx_str_set(&type, "about:blank");
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_str(j, &type);
    ngx_http_agent_json_key(j, "title");
    ngx_http_agent_json_cstr(j, e->reason ? e->reason : grpc);
    ngx_http_agent_json_key(j, "status");
    ngx_http_agent_json_int(j, *status);
    ngx_http_agent_json_key(j, "detail");
    ngx_http_agent_json_str(j, msg);

    ngx_http_agent_json_key(j, "error");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "code");
    ngx_http_agent_json_int(j, *status);
    ngx_http_agent_json_key(j, "status");
    ngx_http_agent_json_cstr(j, grpc);
    ngx_http_agent_json_key(j, "message");
    ngx_http_agent_json_str(j, msg);

    if (e->reason) {
        ngx_http_agent_json_key(j, "details");
        ngx_http_agent_json_arr(j);
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "@type");
        ngx_http_agent_json_cstr(j, "type.googleapis.com/google.rpc.ErrorInfo");
        ngx_http_agent_json_key(j, "reason");
        ngx_http_agent_json_cstr(j, e->reason);
        ngx_http_agent_json_key(j, "domain");
        ngx_http_agent_json_cstr(j, "a2a-protocol.org");
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_arr_end(j);
    }

    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, out);
}
