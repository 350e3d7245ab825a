
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_chat_int.h"
#include "ngx_http_agent_util.h"


/*
 * Our own API as two protocols of one module: agent_sessions (the
 * sessions, their messages, state, history and files) and agent_chat (a
 * session's turns, its model, its database connection).
 */


typedef enum {
    NGX_HTTP_AGENT_EP_SESSIONS = 0,
    NGX_HTTP_AGENT_EP_SESSION,
    NGX_HTTP_AGENT_EP_MESSAGES,
    NGX_HTTP_AGENT_EP_STATE,
    NGX_HTTP_AGENT_EP_HISTORY,
    NGX_HTTP_AGENT_EP_RESOURCES,
    NGX_HTTP_AGENT_EP_MESSAGE,
    NGX_HTTP_AGENT_EP_MODEL,
    NGX_HTTP_AGENT_EP_CONNECTION,
    NGX_HTTP_AGENT_EP_RESUME,
    NGX_HTTP_AGENT_EP_GRAPH
} ngx_http_agent_chat_module_endpoint_e;


static char *ngx_http_agent_chat_module_conf(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static ngx_int_t ngx_http_agent_chat_module_route(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx);
static ngx_int_t ngx_http_agent_chat_module_dispatch(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx, ngx_str_t *body);
static ngx_int_t ngx_http_agent_chat_module_session(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx);
static ngx_int_t ngx_http_agent_chat_module_redrive(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx, void *data);


static ngx_http_agent_proto_t  ngx_http_agent_sessions_proto = {
    ngx_string("agent_sessions"),
    0,
    ngx_http_agent_chat_module_route,
    ngx_http_agent_chat_module_dispatch,
    NULL,
    NULL
};


static ngx_http_agent_proto_t  ngx_http_agent_chat_proto = {
    ngx_string("agent_chat"),
    NGX_HTTP_AGENT_PROTO_TURNS|NGX_HTTP_AGENT_PROTO_KEEPS
    |NGX_HTTP_AGENT_PROTO_LEASED,
    ngx_http_agent_chat_module_route,
    ngx_http_agent_chat_module_dispatch,
    ngx_http_agent_chat_module_redrive,
    NULL
};


static ngx_command_t  ngx_http_agent_chat_commands[] = {

    { ngx_string("agent_chat"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_agent_chat_module_conf,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      &ngx_http_agent_chat_proto },

    { ngx_string("agent_sessions"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_agent_chat_module_conf,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      &ngx_http_agent_sessions_proto },

      ngx_null_command
};


ngx_module_t  ngx_http_agent_chat_module =
    NGX_HTTP_AGENT_MODULE(&ngx_http_agent_handler_module_ctx,
                          ngx_http_agent_chat_commands, NULL);


static char *
ngx_http_agent_chat_module_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_agent_handler;

    return ngx_http_agent_handler_proto(cf, cmd->post, NULL);
}


/* the endpoint from the path after the location's prefix and the method */

static ngx_int_t
ngx_http_agent_chat_module_route(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx)
{
    u_char                     *p, *last, *slash;
    ngx_str_t                   path, action;
    ngx_uint_t                  allowed;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    ngx_http_agent_reply_path(r, &path);

    p = path.data;
    last = path.data + path.len;

    slash = ngx_strlchr(p, last, '/');

    ctx->id.data = p;
    ctx->id.len = (slash ? slash : last) - p;

    action.data = slash ? slash + 1 : last;
    action.len = last - action.data;

    if ((ctx->id.len && !ngx_http_agent_id_valid(&ctx->id))
        || ngx_strlchr(action.data, last, '/') != NULL)
    {
        goto not_found;
    }

#define ngx_http_agent_is(s)                                                  \
    (action.len == sizeof(s) - 1                                              \
     && ngx_strncmp(action.data, s, sizeof(s) - 1) == 0)

    if (alcf->proto == &ngx_http_agent_sessions_proto) {

        if (ctx->id.len == 0) {
            ctx->endpoint = NGX_HTTP_AGENT_EP_SESSIONS;
            allowed = NGX_HTTP_GET|NGX_HTTP_POST;

        } else if (action.len == 0 && ctx->id.len == 6
                   && ngx_strncmp(ctx->id.data, "_graph", 6) == 0)
        {
            /* not a session: the location's graph, as a picture */
            ctx->endpoint = NGX_HTTP_AGENT_EP_GRAPH;
            allowed = NGX_HTTP_GET;

        } else if (action.len == 0) {
            ctx->endpoint = NGX_HTTP_AGENT_EP_SESSION;
            allowed = NGX_HTTP_GET|NGX_HTTP_DELETE;

        } else if (ngx_http_agent_is("messages")) {
            ctx->endpoint = NGX_HTTP_AGENT_EP_MESSAGES;
            allowed = NGX_HTTP_GET;

        } else if (ngx_http_agent_is("state")) {
            ctx->endpoint = NGX_HTTP_AGENT_EP_STATE;
            allowed = NGX_HTTP_GET;

        } else if (ngx_http_agent_is("history")) {
            ctx->endpoint = NGX_HTTP_AGENT_EP_HISTORY;
            allowed = NGX_HTTP_GET;

        } else if (ngx_http_agent_is("resources")) {
            ctx->endpoint = NGX_HTTP_AGENT_EP_RESOURCES;
            allowed = NGX_HTTP_GET|NGX_HTTP_POST;

        } else {
            goto not_found;
        }

    } else {

        if (ctx->id.len == 0) {
            goto not_found;
        }

        if (ngx_http_agent_is("message")) {
            ctx->endpoint = NGX_HTTP_AGENT_EP_MESSAGE;
            allowed = NGX_HTTP_POST;

        } else if (ngx_http_agent_is("model")) {
            ctx->endpoint = NGX_HTTP_AGENT_EP_MODEL;
            allowed = NGX_HTTP_GET|NGX_HTTP_POST;

        } else if (ngx_http_agent_is("resume")) {
            ctx->endpoint = NGX_HTTP_AGENT_EP_RESUME;
            allowed = NGX_HTTP_POST;

        } else if (ngx_http_agent_is("connection")) {
            ctx->endpoint = NGX_HTTP_AGENT_EP_CONNECTION;
            allowed = NGX_HTTP_GET|NGX_HTTP_POST;

        } else {
            goto not_found;
        }
    }

#undef ngx_http_agent_is

    if (r->method & allowed) {
        return NGX_OK;
    }

    return ngx_http_agent_reply_not_allowed(r, allowed);

not_found:

    return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                      "no such endpoint: %V", &r->uri);
}


static ngx_int_t
ngx_http_agent_chat_module_dispatch(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx, ngx_str_t *body)
{
    switch (ctx->endpoint) {

    case NGX_HTTP_AGENT_EP_SESSIONS:
        return body ? ngx_http_agent_sessions_create(r, body)
                    : ngx_http_agent_sessions_list(r);

    case NGX_HTTP_AGENT_EP_SESSION:
        return ngx_http_agent_chat_module_session(r, ctx);

    case NGX_HTTP_AGENT_EP_GRAPH:
        return ngx_http_agent_sessions_graph_answer(r);

    case NGX_HTTP_AGENT_EP_MESSAGES:
        return ngx_http_agent_sessions_messages(r, &ctx->id);

    case NGX_HTTP_AGENT_EP_STATE:
        return ngx_http_agent_sessions_state(r, &ctx->id);

    case NGX_HTTP_AGENT_EP_HISTORY:
        return ngx_http_agent_sessions_history(r, &ctx->id);

    case NGX_HTTP_AGENT_EP_RESOURCES:
        return body ? ngx_http_agent_resources_add(r, &ctx->id, body)
                    : ngx_http_agent_resources_list(r, &ctx->id);

    case NGX_HTTP_AGENT_EP_MESSAGE:
        return ngx_http_agent_turn_start(r, &ctx->id, body, 0);

    case NGX_HTTP_AGENT_EP_RESUME:
        return ngx_http_agent_turn_start(r, &ctx->id, body, 1);

    case NGX_HTTP_AGENT_EP_MODEL:
        return ngx_http_agent_chat_model_answer(r, &ctx->id, body);

    default: /* NGX_HTTP_AGENT_EP_CONNECTION */
        return ngx_http_agent_chat_connection(r, &ctx->id, body);
    }
}


/* a session: read, or deleted when no turn runs on it */

static ngx_int_t
ngx_http_agent_chat_module_session(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx)
{
    ngx_int_t                 rc;
    ngx_str_t                 run_id, out;
    ngx_http_agent_json_t    *j;
    ngx_http_agent_session_t  s;

    rc = ngx_http_agent_reply_session_get(r, &ctx->id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    if (r->method != NGX_HTTP_DELETE) {
        j = ngx_http_agent_json_create(r->pool);
        if (j == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        ngx_http_agent_sessions_json(j, &s);

        if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        return ngx_http_agent_reply_send(r, NGX_HTTP_OK, &out);
    }

    /* a running turn would write on: the lock says if one runs */
    rc = ngx_http_agent_reply_session_lock(r, &ctx->id, &run_id,
                                           "delete it");
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_store_session_delete(&ctx->store, &ctx->id);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "there is no session \"%V\"",
                                          &ctx->id);
    }

    /* not deleted: the session is let go, then the answer */

    if (rc != NGX_OK
        && ngx_http_agent_store_unlock(&ctx->store, &ctx->id, &run_id)
           == NGX_AGAIN)
    {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the session could not be "
                                          "deleted");
    }

    return ngx_http_agent_reply_send(r, NGX_HTTP_NO_CONTENT, NULL);
}


/* a turn taken over: a message with none, on the session */

static ngx_int_t
ngx_http_agent_chat_module_redrive(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx, void *data)
{
    ngx_http_agent_run_row_t *row = data;

    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    r->uri.len = alcf->location.len + row->thread_id.len
                 + sizeof("//message") - 1;
    r->uri.data = ngx_pnalloc(r->pool, r->uri.len);
    if (r->uri.data == NULL) {
        return NGX_ERROR;
    }

    (void) ngx_sprintf(r->uri.data, "%V/%V/message", &alcf->location,
                       &row->thread_id);
    ngx_str_set(&ctx->body, "{}");

    return NGX_OK;
}
