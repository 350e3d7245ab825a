
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#if (NGX_THREADS)
#include <ngx_thread_pool.h>
#endif

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_handler.h"
#include "ngx_http_agent_sessions.h"
#include "ngx_http_agent_checkpoint.h"
#include "ngx_http_agent_resources.h"
#include "ngx_http_agent_chat.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_agui.h"
#include "ngx_http_agent_mcpserver.h"
#include "ngx_http_agent_a2a.h"
#include "ngx_http_agent_a2a_push.h"
#include "ngx_http_agent_responses.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_body.h"
#include "ngx_http_agent_json.h"
#include "ngx_http_agent_graph.h"
#include "ngx_http_agent_sse.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_csv.h"
#include "ngx_http_agent_sql.h"
#include "ngx_http_agent_cors.h"
#include "ngx_http_agent_headless.h"
#include "ngx_http_agent_metrics.h"
#include "ngx_http_agent_id.h"


static ngx_int_t ngx_http_agent_route(ngx_http_request_t *r,
    ngx_http_agent_loc_conf_t *alcf, ngx_http_agent_ctx_t *ctx);
static void ngx_http_agent_body_handler(ngx_http_request_t *r);
static void ngx_http_agent_body_done(ngx_http_request_t *r,
    ngx_str_t *body, ngx_int_t rc);
static ngx_int_t ngx_http_agent_pass(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx);
static void ngx_http_agent_store_wake(ngx_http_agent_store_call_t *sc);
static ngx_int_t ngx_http_agent_dispatch(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx, ngx_str_t *body);
static ngx_int_t ngx_http_agent_takeover(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx);




ngx_int_t
ngx_http_agent_handler(ngx_http_request_t *r)
{
    ngx_int_t                   rc;
    ngx_http_agent_ctx_t       *ctx;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    if (alcf->cors) {
        /* a preflight is answered before any endpoint sees OPTIONS */
        rc = ngx_http_agent_cors_handler(r, alcf->cors);

        if (rc != NGX_DECLINED) {
            return rc;
        }
    }

    ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_ctx_t));
    if (ctx == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_set_ctx(r, ctx, ngx_http_agent_module);

    ctx->phase = ngx_http_agent_phase_now();

    ngx_http_agent_store_call_init(&ctx->store, r->pool, r->connection->log,
                                   ngx_http_agent_store_wake, r);

    /*
     * a subrequest of an agent request is a location tool or an http node
     * of a turn: pointed at an agent location, each turn would start
     * another, without end
     */

    if (r != r->main
        && ngx_http_get_module_ctx(r->main, ngx_http_agent_module))
    {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0, "agent: a tool or "
                      "node of a turn called the agent location \"%V\": "
                      "refused, a turn starts no turn", &r->uri);

        rc = ngx_http_agent_reply_error(r, NGX_HTTP_FORBIDDEN,
                                        "an agent location is not a tool: a "
                                        "turn starts no turn");

    } else {
        rc = ngx_http_agent_route(r, alcf, ctx);
    }

    if (rc == NGX_OK && alcf->owner && !ctx->public) {
        /* sessions belong to whoever agent_owner names for this request */
        if (ngx_http_complex_value(r, alcf->owner, &ctx->owner_value)
            != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        if (ctx->owner_value.len == 0) {
            rc = ngx_http_agent_reply_error(r, NGX_HTTP_UNAUTHORIZED,
                                            "this request names no owner "
                                            "(agent_owner is empty): "
                                            "authenticate first");

        } else {
            ctx->owner = &ctx->owner_value;
        }
    }

    /* a body is read for what takes one (the LangGraph store's DELETE) */

    if (rc == NGX_OK && !(r->method & (NGX_HTTP_POST|NGX_HTTP_PATCH
                                       |NGX_HTTP_PUT))
        && !(r->method == NGX_HTTP_DELETE
             && ctx->endpoint == NGX_HTTP_AGENT_EP_LANGGRAPH))
    {
        if (ngx_http_discard_request_body(r) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        rc = ngx_http_agent_pass(r, ctx);

        if (rc == NGX_AGAIN && ctx->store.waiting) {
            /* the store answers later: the request waits for it */
            r->main->count++;
            return NGX_DONE;
        }

    } else if (rc == NGX_OK) {
        /*
         * nginx enforces client_max_body_size as the body arrives, also
         * for chunked and HTTP/2 bodies; the filter words its 413 in JSON
         */
        rc = ngx_http_read_client_request_body(r,
                                               ngx_http_agent_body_handler);

        if (rc >= NGX_HTTP_SPECIAL_RESPONSE) {
            return rc;
        }

        return NGX_DONE;
    }

    if (ctx->sent) {
        ngx_http_discard_request_body(r);
    }

    return ngx_http_agent_reply_rc(r, rc);
}



/*
 * A run taken over from a worker that died (turn_redrive.c): its request
 * made again by its protocol (its path, its body), without a client, and
 * passed as the client's was.  The request is the pass's, or its turn's,
 * which close it at their end.
 */

ngx_int_t
ngx_http_agent_handler_redrive(ngx_http_request_t *r, void *data)
{
    ngx_http_agent_run_row_t *row = data;

    ngx_int_t                   rc;
    ngx_http_agent_ctx_t       *ctx;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    ngx_http_agent_store_call_init(&ctx->store, r->pool, r->connection->log,
                                   ngx_http_agent_store_wake, r);

    rc = NGX_DECLINED;
    ctx->has_body = 1;

    if (alcf->kind == NGX_HTTP_AGENT_LANGGRAPH) {
        rc = ctx->cron ? ngx_http_agent_lg_cron_request(r, ctx->cron, &r->uri,
                                                        &ctx->body)
                       : ngx_http_agent_lg_redrive_request(r, row, &r->uri,
                                                           &ctx->body);

    } else if (alcf->kind == NGX_HTTP_AGENT_CHAT) {
        /* our API: a message with none, on the session */
        r->uri.len = alcf->location.len + row->thread_id.len
                     + sizeof("//message") - 1;
        r->uri.data = ngx_pnalloc(r->pool, r->uri.len);

        if (r->uri.data) {
            (void) ngx_sprintf(r->uri.data, "%V/%V/message", &alcf->location,
                               &row->thread_id);
            ngx_str_set(&ctx->body, "{}");
            rc = NGX_OK;
        }

    } else {
        /* A2A, Responses, MCP: none of their requests goes on without input */
        ctx->endpoint = NGX_HTTP_AGENT_EP_TAKEOVER;
        rc = NGX_DONE;
    }

    if (rc == NGX_OK) {
        rc = ngx_http_agent_route(r, alcf, ctx);

    } else if (rc == NGX_DONE) {
        rc = NGX_OK;
    }

    if (rc == NGX_OK) {
        rc = ngx_http_agent_pass(r, ctx);

        if (rc == NGX_DONE || (rc == NGX_AGAIN && ctx->store.waiting)) {
            return NGX_DONE;
        }
    }

    if (ctx->cron) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "agent: the tick of cron \"%V\" could not be made "
                      "(%i)", &((ngx_http_agent_cron_row_t *) ctx->cron)
                                   ->cron_id, rc);

    } else {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "agent: run \"%V\" could not be taken over (%i), its "
                      "lease will free its thread", &row->run_id, rc);
    }

    ngx_http_agent_headless_close(r);

    return NGX_ERROR;
}


/*
 * A kept run of A2A, Open Responses or MCP taken over: a turn of no
 * protocol (turn_chat.c); of A2A's end, its push notification still holds
 */

static ngx_int_t
ngx_http_agent_takeover(ngx_http_request_t *r, ngx_http_agent_ctx_t *ctx)
{
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    return ngx_http_agent_turn_takeover(r, ctx->redrive,
                                        alcf->kind == NGX_HTTP_AGENT_A2A
                                        ? &ngx_http_agent_a2a_takeover_hooks
                                        : NULL);
}


/* the endpoint from the path after the location's prefix and the method */

static ngx_int_t
ngx_http_agent_route(ngx_http_request_t *r, ngx_http_agent_loc_conf_t *alcf,
    ngx_http_agent_ctx_t *ctx)
{
    u_char      *p, *last, *slash;
    ngx_str_t    path, action;
    ngx_uint_t   allowed;

    if (alcf->kind == NGX_HTTP_AGENT_LANGGRAPH) {
        return ngx_http_agent_lg_route(r, ctx);
    }

    if (alcf->kind == NGX_HTTP_AGENT_AGUI) {
        return ngx_http_agent_agui_route(r, ctx);
    }

    if (alcf->kind == NGX_HTTP_AGENT_MCP_SERVER) {
        return ngx_http_agent_mcpserver_route(r, ctx,
                                  ngx_http_agent_cors_origin(r, alcf->cors));
    }

    if (alcf->kind == NGX_HTTP_AGENT_A2A) {
        return ngx_http_agent_a2a_route(r, ctx);
    }

    if (alcf->kind == NGX_HTTP_AGENT_RESPONSES) {
        return ngx_http_agent_responses_route(r, ctx);
    }

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

    if (alcf->kind == NGX_HTTP_AGENT_SESSIONS) {

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


static void
ngx_http_agent_body_handler(ngx_http_request_t *r)
{
    ngx_int_t                   rc;
    ngx_str_t                   body;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    rc = ngx_http_agent_body_get(r, alcf->thread_pool, &body,
                                 ngx_http_agent_body_done);

    if (rc == NGX_AGAIN) {
        /* read back from its temp file on a thread: the callback goes on */
        return;
    }

    ngx_http_agent_body_done(r, &body,
                             rc == NGX_OK ? NGX_OK
                                          : NGX_HTTP_INTERNAL_SERVER_ERROR);
}


static void
ngx_http_agent_body_done(ngx_http_request_t *r, ngx_str_t *body,
    ngx_int_t rc)
{
    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    if (rc == NGX_OK) {
        ctx->body = *body;
        ctx->has_body = 1;

        rc = ngx_http_agent_pass(r, ctx);

        if (rc == NGX_DONE || (rc == NGX_AGAIN && ctx->store.waiting)) {
            /* a turn or an import finalizes the request itself; a store's
             * answer to come runs the pass again */
            return;
        }
    }

    ngx_http_finalize_request(r, ngx_http_agent_reply_rc(r, rc));
}


/*
 * A pass of the endpoint's code.  When it waits on the store (NGX_AGAIN,
 * the store's call waiting), the answer runs it again from the start: the
 * calls it made before are answered from the kept answers
 * (ngx_http_agent_store.h), so nothing is done twice, and the endpoints
 * read as if the store answered at once.
 */

static ngx_int_t
ngx_http_agent_pass(ngx_http_request_t *r, ngx_http_agent_ctx_t *ctx)
{
    ngx_int_t  rc;

    ctx->store.n = 0;

    rc = ngx_http_agent_dispatch(r, ctx, ctx->has_body ? &ctx->body : NULL);

    /* a failure that is a document the store refused: answered as such */
    if ((rc == NGX_ERROR || rc >= NGX_HTTP_INTERNAL_SERVER_ERROR)
        && ctx->store.refused.len)
    {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "%V", &ctx->store.refused);
    }

    /* NGX_AGAIN with no answer to come: the client's, sending the reply */

    if (rc != NGX_AGAIN || ctx->store.waiting == 0) {
        return rc;
    }

    if (ngx_http_agent_reply_wait(r) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return NGX_AGAIN;
}


static void
ngx_http_agent_store_wake(ngx_http_agent_store_call_t *sc)
{
    ngx_http_request_t *r = sc->data;

    ngx_int_t              rc;
    ngx_connection_t      *c;
    ngx_http_agent_ctx_t  *ctx;

    c = r->connection;
    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    rc = ngx_http_agent_pass(r, ctx);

    if (rc == NGX_AGAIN && ctx->store.waiting) {
        return;
    }

    if (ctx->headless) {
        /* a run taken over: its turn has the request, or it ends here */
        if (rc != NGX_DONE) {
            ngx_log_error(NGX_LOG_ERR, c->log, 0, "agent: a run could not "
                          "be taken over (%i)", rc);
            ngx_http_agent_headless_close(r);
        }

        return;
    }

    rc = ngx_http_agent_reply_rc(r, rc);

    /*
     * a body's pass that started a turn leaves the request to it; a pass
     * without a body holds the count taken when it first waited
     */

    if (rc != NGX_DONE || !ctx->has_body) {
        ngx_http_finalize_request(r, rc);
    }

    ngx_http_run_posted_requests(c);
}


static ngx_int_t
ngx_http_agent_dispatch(ngx_http_request_t *r, ngx_http_agent_ctx_t *ctx,
    ngx_str_t *body)
{
    ngx_int_t                 rc;
    ngx_str_t                 run_id;
    ngx_http_agent_session_t  s;

    switch (ctx->endpoint) {

    case NGX_HTTP_AGENT_EP_SESSIONS:
        return body ? ngx_http_agent_sessions_create(r, body)
                    : ngx_http_agent_sessions_list(r);

    case NGX_HTTP_AGENT_EP_SESSION:
        if (r->method == NGX_HTTP_DELETE) {
            rc = ngx_http_agent_reply_session_get(r, &ctx->id, &s);
            if (rc != NGX_OK) {
                return rc;
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
                && ngx_http_agent_store_unlock(&ctx->store, &ctx->id,
                                               &run_id)
                   == NGX_AGAIN)
            {
                return NGX_AGAIN;
            }

            if (rc != NGX_OK) {
                rc = NGX_HTTP_INTERNAL_SERVER_ERROR;
                return ngx_http_agent_reply_error(r, rc, "the session could "
                                                  "not be deleted");
            }

            return ngx_http_agent_reply_send(r, NGX_HTTP_NO_CONTENT, NULL);
        }

        rc = ngx_http_agent_reply_session_get(r, &ctx->id, &s);
        if (rc != NGX_OK) {
            return rc;
        }

        {
            ngx_str_t               out;
            ngx_http_agent_json_t  *j;

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

    case NGX_HTTP_AGENT_EP_LANGGRAPH:
        return ngx_http_agent_lg_dispatch(r, ctx, body);

    case NGX_HTTP_AGENT_EP_AGUI:
        return ngx_http_agent_agui_run(r, body);

    case NGX_HTTP_AGENT_EP_MCP:
        return ngx_http_agent_mcpserver_run(r, body);

    case NGX_HTTP_AGENT_EP_A2A:
        return ngx_http_agent_a2a_run(r, body);

    case NGX_HTTP_AGENT_EP_RESPONSES:
        return ngx_http_agent_responses_run(r, body);

    case NGX_HTTP_AGENT_EP_TAKEOVER:
        return ngx_http_agent_takeover(r, ctx);

    default: /* NGX_HTTP_AGENT_EP_CONNECTION */
        return ngx_http_agent_chat_connection(r, &ctx->id, body);
    }
}
