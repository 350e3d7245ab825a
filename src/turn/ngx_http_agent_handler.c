
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
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_ops.h"


/*
 * The core's handler, which every protocol's module sets on its location:
 * what all of them share (CORS preflights, agent_owner, the body, the
 * passes that wait on the store, runs taken over), the rest through the
 * location's protocol (ngx_http_agent_proto_t), as nginx's upstream
 * serves proxy, fastcgi and uwsgi.
 */


static ngx_int_t ngx_http_agent_handler_redrive(ngx_http_request_t *r,
    void *data);
static void ngx_http_agent_body_handler(ngx_http_request_t *r);
static void ngx_http_agent_body_done(ngx_http_request_t *r,
    ngx_str_t *body, ngx_int_t rc);
static ngx_int_t ngx_http_agent_pass(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx);
static void ngx_http_agent_store_wake(ngx_http_agent_store_call_t *sc);
static ngx_int_t ngx_http_agent_dispatch(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx, ngx_str_t *body);


/* the context of a protocol's module with no configuration of its own */
ngx_http_module_t  ngx_http_agent_handler_module_ctx = {
    NULL,                                  /* preconfiguration */
    NULL,                                  /* postconfiguration */

    NULL,                                  /* create main configuration */
    NULL,                                  /* init main configuration */

    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */

    NULL,                                  /* create location configuration */
    NULL                                   /* merge location configuration */
};


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
        rc = alcf->proto->route(r, ctx);
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
             && (alcf->proto->flags & NGX_HTTP_AGENT_PROTO_DELETE_BODY)))
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

static ngx_int_t
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

    ctx->has_body = 1;

    if (alcf->proto->redrive) {
        rc = alcf->proto->redrive(r, ctx, row);

    } else {
        /* none of its requests goes on without input: the turn does */
        ctx->takeover = 1;
        rc = NGX_DONE;
    }

    if (rc == NGX_OK) {
        rc = alcf->proto->route(r, ctx);

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


/*
 * A kept run of a protocol without a request of its own to make again
 * (A2A, Open Responses, MCP) goes on as a turn of no protocol
 * (turn_chat.c), with the protocol's hooks (A2A's push notification)
 */

static ngx_int_t
ngx_http_agent_dispatch(ngx_http_request_t *r, ngx_http_agent_ctx_t *ctx,
    ngx_str_t *body)
{
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    if (ctx->takeover) {
        return ngx_http_agent_turn_takeover(r, ctx->redrive,
                                            alcf->proto->takeover);
    }

    return alcf->proto->dispatch(r, ctx, body);
}


/*
 * A protocol's location directive: the location served by the core's
 * handler through proto, which reads its own configuration (conf) from
 * the core's, as upstream's u->conf; its turns kept, one its worker lost
 * is run here again.  The protocol's module sets clcf->handler itself.
 */

char *
ngx_http_agent_handler_proto(ngx_conf_t *cf, ngx_http_agent_proto_t *proto,
    void *conf)
{
    ngx_http_agent_door_t       *door;
    ngx_http_core_loc_conf_t    *clcf;
    ngx_http_agent_loc_conf_t   *alcf;
    ngx_http_agent_main_conf_t  *amcf;

    alcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_agent_module);

    if (alcf->proto) {
        return "is duplicate: a location serves one protocol: chat, "
               "sessions, the LangGraph API, AG-UI, MCP, A2A or Responses";
    }

    amcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_agent_module);

    if (amcf->checkpoint_db.len == 0) {
        return "needs agent_checkpoint_db in the http block before it";
    }

    if ((proto->flags & NGX_HTTP_AGENT_PROTO_TURNS)
        && amcf->models.nelts == 0)
    {
        return "needs at least one agent_model in the http block before it";
    }

    alcf->proto = proto;
    alcf->proto_conf = conf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);

    alcf->location = clcf->name;

    if (!(proto->flags & NGX_HTTP_AGENT_PROTO_TURNS)) {
        return NGX_CONF_OK;
    }

    if (proto->flags & NGX_HTTP_AGENT_PROTO_KEEPS) {
        alcf->redrive = ngx_http_agent_handler_redrive;
    }

    if (amcf->doors == NULL) {
        amcf->doors = ngx_array_create(cf->pool, 4,
                                       sizeof(ngx_http_agent_door_t));
        if (amcf->doors == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    door = ngx_array_push(amcf->doors);
    if (door == NULL) {
        return NGX_CONF_ERROR;
    }

    door->name = clcf->name;
    door->conf = cf->ctx;

    return NGX_CONF_OK;
}
