
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
#include "ngx_http_agent_body.h"
#include "ngx_http_agent_json.h"
#include "ngx_http_agent_graph.h"
#include "ngx_http_agent_react.h"
#include "ngx_http_agent_sse.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_csv.h"
#include "ngx_http_agent_sql.h"


/*
 * The endpoints of the contract: sessions and chat.  Everything but a turn
 * answers at once; a turn runs the graph on the event loop and streams.
 */


#define NGX_HTTP_AGENT_ID_MAX  64

/* an error answer was sent: the caller stops, the handler finalizes */
#define NGX_HTTP_AGENT_SENT    -100


typedef enum {
    NGX_HTTP_AGENT_EP_SESSIONS = 0,
    NGX_HTTP_AGENT_EP_SESSION,
    NGX_HTTP_AGENT_EP_MESSAGES,
    NGX_HTTP_AGENT_EP_STATE,
    NGX_HTTP_AGENT_EP_HISTORY,
    NGX_HTTP_AGENT_EP_RESOURCES,
    NGX_HTTP_AGENT_EP_MESSAGE,
    NGX_HTTP_AGENT_EP_MODEL,
    NGX_HTTP_AGENT_EP_CONNECTION
} ngx_http_agent_endpoint_e;


typedef struct {
    ngx_http_agent_endpoint_e       endpoint;
    ngx_str_t                       id;
    ngx_str_t                      *owner;     /* NULL: no agent_owner */
    ngx_str_t                       owner_value;
    ngx_int_t                       sent_rc;
} ngx_http_agent_ctx_t;


typedef struct {
    ngx_http_request_t             *request;
    ngx_http_agent_run_t           *run;
    ngx_http_agent_react_t          react;
    ngx_http_agent_sse_t            sse;
    ngx_str_t                       session_id;
    ngx_str_t                       run_id;
    ngx_str_t                       checkpoint_id;
    int64_t                         step;
    int64_t                         prompt_at_start;
    int64_t                         completion_at_start;
    ngx_event_t                     lease;
    ngx_msec_t                      lease_ms;
    ngx_queue_t                     queue;     /* the worker's turns */
    unsigned                        locked:1;
    unsigned                        queued:1;
} ngx_http_agent_turn_t;


/* POST /connection while its schema is read */
typedef struct {
    ngx_http_request_t             *request;
    ngx_str_t                       id;
    ngx_str_t                       name;
} ngx_http_agent_connect_t;


#if (NGX_THREADS)

typedef struct {
    ngx_http_request_t             *request;
    ngx_pool_t                     *pool;
    ngx_str_t                       session_id;
    ngx_str_t                       data;
    ngx_uint_t                      first;
    ngx_http_agent_resource_t       res;
    ngx_str_t                       err;
    ngx_int_t                       rc;
} ngx_http_agent_import_t;

#endif


static ngx_int_t ngx_http_agent_route(ngx_http_request_t *r,
    ngx_http_agent_loc_conf_t *alcf, ngx_http_agent_ctx_t *ctx);
static void ngx_http_agent_body_handler(ngx_http_request_t *r);
static void ngx_http_agent_body_done(ngx_http_request_t *r,
    ngx_str_t *body, ngx_int_t rc);
static ngx_int_t ngx_http_agent_dispatch(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx, ngx_str_t *body);
static ngx_int_t ngx_http_agent_send(ngx_http_request_t *r,
    ngx_uint_t status, ngx_str_t *json);
static ngx_int_t ngx_http_agent_error(ngx_http_request_t *r,
    ngx_uint_t status, const char *fmt, ...);
static ngx_int_t ngx_http_agent_session_lock(ngx_http_request_t *r,
    ngx_str_t *id, ngx_str_t *run_id, const char *after);
static ngx_int_t ngx_http_agent_parse_object(ngx_http_request_t *r,
    ngx_str_t *body, yajl_val *v, ngx_uint_t optional);

static ngx_int_t ngx_http_agent_sessions_create(ngx_http_request_t *r,
    ngx_str_t *body);
static ngx_int_t ngx_http_agent_sessions_list(ngx_http_request_t *r);
static void ngx_http_agent_session_json(ngx_http_agent_json_t *j,
    ngx_http_agent_session_t *s);
static ngx_int_t ngx_http_agent_session_get(ngx_http_request_t *r,
    ngx_str_t *id, ngx_http_agent_session_t *s);
static ngx_int_t ngx_http_agent_messages(ngx_http_request_t *r,
    ngx_str_t *id);
static ngx_int_t ngx_http_agent_state(ngx_http_request_t *r, ngx_str_t *id);
static ngx_int_t ngx_http_agent_history(ngx_http_request_t *r,
    ngx_str_t *id);
static ngx_int_t ngx_http_agent_resources_add(ngx_http_request_t *r,
    ngx_str_t *id, ngx_str_t *body);
static ngx_int_t ngx_http_agent_import_finish(ngx_http_request_t *r,
    ngx_str_t *id, ngx_http_agent_resource_t *res, ngx_int_t rc,
    ngx_str_t *err);
#if (NGX_THREADS)
static ngx_int_t ngx_http_agent_import_post(ngx_http_request_t *r,
    ngx_str_t *id, ngx_str_t *body, ngx_uint_t first,
    ngx_http_agent_resource_t *res);
static void ngx_http_agent_import_run(void *data, ngx_log_t *log);
static void ngx_http_agent_import_done(ngx_event_t *ev);
#endif
static ngx_int_t ngx_http_agent_resources_list(ngx_http_request_t *r,
    ngx_str_t *id);
static void ngx_http_agent_resource_json(ngx_http_agent_json_t *j,
    ngx_http_agent_resource_t *res);
static ngx_int_t ngx_http_agent_model_answer(ngx_http_request_t *r,
    ngx_str_t *id, ngx_str_t *body);
static void ngx_http_agent_connection_read(void *data, ngx_int_t rc,
    ngx_str_t *tables);
static ngx_int_t ngx_http_agent_connection_save(ngx_http_request_t *r,
    ngx_http_agent_connect_t *cn, ngx_str_t *tables);
static ngx_int_t ngx_http_agent_connection(ngx_http_request_t *r,
    ngx_str_t *id, ngx_str_t *body);

static ngx_int_t ngx_http_agent_state_load(ngx_pool_t *pool,
    ngx_str_t *id, ngx_http_agent_run_t *run,
    ngx_http_agent_checkpoint_t *cp);
static ngx_int_t ngx_http_agent_state_save(ngx_http_agent_run_t *run,
    ngx_str_t *id, ngx_http_agent_checkpoint_t *cp, ngx_str_t *node,
    ngx_int_t next);
static void ngx_http_agent_message_json(ngx_http_agent_json_t *j,
    ngx_str_t *session_id, ngx_http_agent_msg_t *m, ngx_uint_t full);

static ngx_int_t ngx_http_agent_turn_start(ngx_http_request_t *r,
    ngx_str_t *id, ngx_str_t *body);
static ngx_int_t ngx_http_agent_turn_input(ngx_http_request_t *r,
    ngx_http_agent_turn_t *turn, ngx_http_agent_session_t *session,
    ngx_http_agent_msg_t *msg, ngx_str_t *text);
static ngx_int_t ngx_http_agent_turn_images(ngx_http_request_t *r,
    yajl_val images, ngx_str_t *text, ngx_str_t *out);
static ngx_int_t ngx_http_agent_turn_checkpoint(ngx_http_agent_run_t *run,
    ngx_str_t *node, ngx_int_t next);
static void ngx_http_agent_turn_done(ngx_http_agent_run_t *run,
    ngx_int_t rc);
static ngx_int_t ngx_http_agent_turn_emit(void *data, ngx_str_t *json);
static void ngx_http_agent_turn_cleanup(void *data);
static void ngx_http_agent_turn_lease(ngx_event_t *ev);
static void ngx_http_agent_turn_track(ngx_http_agent_turn_t *turn,
    ngx_uint_t on);
static void ngx_http_agent_turn_exit_watch(ngx_event_t *ev);


static ngx_http_agent_run_handlers_t  ngx_http_agent_turn_handlers = {
    ngx_http_agent_turn_checkpoint,
    ngx_http_agent_turn_done
};


static ngx_str_t  ngx_http_agent_json_type = ngx_string("application/json");

/* the worker's running turns, watched while nginx shuts the worker down */
static ngx_queue_t   ngx_http_agent_turns;
static ngx_event_t   ngx_http_agent_exit_watch;
static ngx_msec_t    ngx_http_agent_exit_start;


ngx_int_t
ngx_http_agent_handler(ngx_http_request_t *r)
{
    ngx_int_t                   rc;
    ngx_http_agent_ctx_t       *ctx;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_ctx_t));
    if (ctx == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_set_ctx(r, ctx, ngx_http_agent_module);

    rc = ngx_http_agent_route(r, alcf, ctx);

    if (rc == NGX_OK && alcf->owner) {
        /* sessions belong to whoever agent_owner names for this request */
        if (ngx_http_complex_value(r, alcf->owner, &ctx->owner_value)
            != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        if (ctx->owner_value.len == 0) {
            rc = ngx_http_agent_error(r, NGX_HTTP_UNAUTHORIZED,
                                      "this request names no owner "
                                      "(agent_owner is empty): "
                                      "authenticate first");

        } else {
            ctx->owner = &ctx->owner_value;
        }
    }

    if (rc == NGX_OK && !(r->method & NGX_HTTP_POST)) {
        if (ngx_http_discard_request_body(r) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        rc = ngx_http_agent_dispatch(r, ctx, NULL);

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

    if (rc == NGX_HTTP_AGENT_SENT) {
        ngx_http_discard_request_body(r);
        return ctx->sent_rc;
    }

    return rc;
}



/* the endpoint from the path after the location's prefix and the method */

static ngx_int_t
ngx_http_agent_route(ngx_http_request_t *r, ngx_http_agent_loc_conf_t *alcf,
    ngx_http_agent_ctx_t *ctx)
{
    u_char                    *p, *last, *slash;
    ngx_str_t                  action;
    ngx_uint_t                 allowed, i;
    ngx_table_elt_t           *h;
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);

    p = r->uri.data;
    last = r->uri.data + r->uri.len;

    if (clcf->name.len <= r->uri.len && !clcf->regex) {
        p += clcf->name.len;
    }

    while (p < last && *p == '/') {
        p++;
    }

    while (last > p && last[-1] == '/') {
        last--;
    }

    slash = ngx_strlchr(p, last, '/');

    ctx->id.data = p;
    ctx->id.len = (slash ? slash : last) - p;

    action.data = slash ? slash + 1 : last;
    action.len = last - action.data;

    if (ctx->id.len > NGX_HTTP_AGENT_ID_MAX
        || ngx_strlchr(action.data, last, '/') != NULL)
    {
        goto not_found;
    }

    for (i = 0; i < ctx->id.len; i++) {
        if (!(isalnum(ctx->id.data[i]) || ctx->id.data[i] == '-'
              || ctx->id.data[i] == '_'))
        {
            goto not_found;
        }
    }

#define ngx_http_agent_is(s)                                                  \
    (action.len == sizeof(s) - 1                                              \
     && ngx_strncmp(action.data, s, sizeof(s) - 1) == 0)

    if (alcf->kind == NGX_HTTP_AGENT_SESSIONS) {

        if (ctx->id.len == 0) {
            ctx->endpoint = NGX_HTTP_AGENT_EP_SESSIONS;
            allowed = NGX_HTTP_GET|NGX_HTTP_POST;

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

        } else if (ngx_http_agent_is("connection")) {
            ctx->endpoint = NGX_HTTP_AGENT_EP_CONNECTION;
            allowed = NGX_HTTP_POST;

        } else {
            goto not_found;
        }
    }

#undef ngx_http_agent_is

    if (r->method & allowed) {
        return NGX_OK;
    }

    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    h->hash = 1;
    ngx_str_set(&h->key, "Allow");

    if ((allowed & (NGX_HTTP_GET|NGX_HTTP_POST))
        == (NGX_HTTP_GET|NGX_HTTP_POST))
    {
        ngx_str_set(&h->value, "GET, POST");

    } else if (allowed & NGX_HTTP_DELETE) {
        ngx_str_set(&h->value, "GET, DELETE");

    } else if (allowed & NGX_HTTP_POST) {
        ngx_str_set(&h->value, "POST");

    } else {
        ngx_str_set(&h->value, "GET");
    }

    return ngx_http_agent_error(r, NGX_HTTP_NOT_ALLOWED,
                                "method %V is not allowed here; use %V",
                                &r->method_name, &h->value);

not_found:

    return ngx_http_agent_error(r, NGX_HTTP_NOT_FOUND,
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
        rc = ngx_http_agent_dispatch(r, ctx, body);

        if (rc == NGX_DONE) {
            /* a turn or an import: it finalizes the request itself */
            return;
        }
    }

    if (rc == NGX_HTTP_AGENT_SENT) {
        rc = ctx->sent_rc;
    }

    ngx_http_finalize_request(r, rc);
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
            rc = ngx_http_agent_session_get(r, &ctx->id, &s);
            if (rc != NGX_OK) {
                return rc;
            }

            /* a running turn would write on: the lock says if one runs */
            rc = ngx_http_agent_session_lock(r, &ctx->id, &run_id,
                                             "delete it");
            if (rc != NGX_OK) {
                return rc;
            }

            rc = ngx_http_agent_store_session_delete(r->pool, &ctx->id);

            if (rc == NGX_DECLINED) {
                return ngx_http_agent_error(r, NGX_HTTP_NOT_FOUND,
                                            "there is no session \"%V\"",
                                            &ctx->id);
            }

            if (rc != NGX_OK) {
                return ngx_http_agent_error(r,
                                            NGX_HTTP_INTERNAL_SERVER_ERROR,
                                            "the session could not be "
                                            "deleted");
            }

            return ngx_http_agent_send(r, NGX_HTTP_NO_CONTENT, NULL);
        }

        rc = ngx_http_agent_session_get(r, &ctx->id, &s);
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

            ngx_http_agent_session_json(j, &s);

            if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
                return NGX_HTTP_INTERNAL_SERVER_ERROR;
            }

            return ngx_http_agent_send(r, NGX_HTTP_OK, &out);
        }

    case NGX_HTTP_AGENT_EP_MESSAGES:
        return ngx_http_agent_messages(r, &ctx->id);

    case NGX_HTTP_AGENT_EP_STATE:
        return ngx_http_agent_state(r, &ctx->id);

    case NGX_HTTP_AGENT_EP_HISTORY:
        return ngx_http_agent_history(r, &ctx->id);

    case NGX_HTTP_AGENT_EP_RESOURCES:
        return body ? ngx_http_agent_resources_add(r, &ctx->id, body)
                    : ngx_http_agent_resources_list(r, &ctx->id);

    case NGX_HTTP_AGENT_EP_MESSAGE:
        return ngx_http_agent_turn_start(r, &ctx->id, body);

    case NGX_HTTP_AGENT_EP_MODEL:
        return ngx_http_agent_model_answer(r, &ctx->id, body);

    default: /* NGX_HTTP_AGENT_EP_CONNECTION */
        return ngx_http_agent_connection(r, &ctx->id, body);
    }
}


static ngx_int_t
ngx_http_agent_send(ngx_http_request_t *r, ngx_uint_t status,
    ngx_str_t *json)
{
    ngx_int_t     rc;
    ngx_buf_t    *b;
    ngx_chain_t   out;

    r->headers_out.status = status;
    r->headers_out.content_type = ngx_http_agent_json_type;
    r->headers_out.content_type_len = ngx_http_agent_json_type.len;
    r->headers_out.content_length_n = json ? (off_t) json->len + 1 : 0;

    if (json == NULL) {
        r->header_only = 1;
    }

    rc = ngx_http_send_header(r);

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    b = ngx_calloc_buf(r->pool);
    if (b == NULL) {
        return NGX_ERROR;
    }

    /* the body plus a newline, for people reading it with curl */
    b->pos = ngx_pnalloc(r->pool, json->len + 1);
    if (b->pos == NULL) {
        return NGX_ERROR;
    }

    b->last = ngx_cpymem(b->pos, json->data, json->len);
    *b->last++ = '\n';
    b->memory = 1;
    b->last_buf = (r == r->main) ? 1 : 0;
    b->last_in_chain = 1;

    out.buf = b;
    out.next = NULL;

    return ngx_http_output_filter(r, &out);
}


static ngx_int_t
ngx_http_agent_error(ngx_http_request_t *r, ngx_uint_t status,
    const char *fmt, ...)
{
    u_char                 *p, buf[1024];
    va_list                 args;
    ngx_str_t               msg, out;
    ngx_http_agent_ctx_t   *ctx;
    ngx_http_agent_json_t  *j;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    va_start(args, fmt);
    p = ngx_vslprintf(buf, buf + sizeof(buf), fmt, args);
    va_end(args);

    msg.data = buf;
    msg.len = p - buf;

    if (status >= NGX_HTTP_INTERNAL_SERVER_ERROR) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0, "agent: %V", &msg);
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "error");
    ngx_http_agent_json_str(j, &msg);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->sent_rc = ngx_http_agent_send(r, status, &out);

    return NGX_HTTP_AGENT_SENT;
}


/*
 * The session's turn lock for a request that changes it (DELETE, POST
 * /connection): 409 while a turn runs, saying what to do after it.
 */

static ngx_int_t
ngx_http_agent_session_lock(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *run_id, const char *after)
{
    u_char                     *p;
    ngx_int_t                   rc;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    p = ngx_pnalloc(r->pool, 36);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_store_new_id(p);
    run_id->data = p;
    run_id->len = 36;

    rc = ngx_http_agent_store_lock(id, run_id, alcf->turn_lease);

    if (rc == NGX_BUSY) {
        return ngx_http_agent_error(r, NGX_HTTP_CONFLICT,
                                    "a turn is running on this session; "
                                    "%s when it has ended", after);
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_error(r, NGX_HTTP_NOT_FOUND,
                                    "there is no session \"%V\"", id);
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the session could not be locked");
    }

    return NGX_OK;
}


/* NGX_OK with *v the object (or NULL for an empty optional body) */

static ngx_int_t
ngx_http_agent_parse_object(ngx_http_request_t *r, ngx_str_t *body,
    yajl_val *v, ngx_uint_t optional)
{
    ngx_str_t  err;

    *v = NULL;

    if (body->len == 0) {
        if (optional) {
            return NGX_OK;
        }

        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "the request body must be a JSON "
                                    "object");
    }

    ngx_str_set(&err, "");

    *v = ngx_http_agent_json_parse(r->pool, body->data, body->len, &err);

    if (*v == NULL) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "the request body is not valid JSON: %V",
                                    &err);
    }

    if (!YAJL_IS_OBJECT(*v)) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "the request body must be a JSON "
                                    "object");
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_session_get(ngx_http_request_t *r, ngx_str_t *id,
    ngx_http_agent_session_t *s)
{
    ngx_int_t              rc;

    ngx_http_agent_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    rc = ngx_http_agent_store_session_get(r->pool, id, s);

    /* another owner's session is answered as an unknown one */
    if (rc == NGX_OK && ctx->owner
        && (s->owner.len != ctx->owner->len
            || ngx_strncmp(s->owner.data, ctx->owner->data, s->owner.len)
               != 0))
    {
        rc = NGX_DECLINED;
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_error(r, NGX_HTTP_NOT_FOUND,
                                    "there is no session \"%V\"", id);
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the session store failed");
    }

    return NGX_OK;
}


static void
ngx_http_agent_session_json(ngx_http_agent_json_t *j,
    ngx_http_agent_session_t *s)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, &s->id);
    ngx_http_agent_json_key(j, "title");
    ngx_http_agent_json_str(j, &s->title);
    ngx_http_agent_json_key(j, "created_at");
    ngx_http_agent_json_str(j, &s->created_at);
    ngx_http_agent_json_key(j, "updated_at");
    ngx_http_agent_json_str(j, &s->updated_at);
    ngx_http_agent_json_key(j, "message_count");
    ngx_http_agent_json_int(j, s->message_count);
    ngx_http_agent_json_key(j, "metadata");

    if (s->metadata.len) {
        ngx_http_agent_json_raw(j, &s->metadata);

    } else {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);
}


static ngx_int_t
ngx_http_agent_sessions_create(ngx_http_request_t *r, ngx_str_t *body)
{
    yajl_val                   v, meta;
    ngx_int_t                  rc;
    ngx_str_t                  title, metadata, out;
    ngx_http_agent_ctx_t      *ctx;
    ngx_http_agent_json_t     *j;
    ngx_http_agent_session_t   s;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    rc = ngx_http_agent_parse_object(r, body, &v, 1);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_str_set(&title, "");
    ngx_str_null(&metadata);

    rc = ngx_http_agent_json_get_str(v, "title", &title);
    if (rc == NGX_ERROR) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "\"title\" must be a string");
    }

    if (title.len > 1024) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "\"title\" is longer than 1024 bytes");
    }

    meta = ngx_http_agent_json_get(v, "metadata");

    if (meta && !YAJL_IS_NULL(meta)) {
        if (!YAJL_IS_OBJECT(meta)) {
            return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                        "\"metadata\" must be an object");
        }

        if (ngx_http_agent_json_encode(r->pool, meta, &metadata) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    if (ngx_http_agent_store_session_create(r->pool, &title, &metadata,
                                            ctx->owner, &s)
        != NGX_OK)
    {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the session could not be created");
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_session_json(j, &s);

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_send(r, NGX_HTTP_CREATED, &out);
}


static ngx_int_t
ngx_http_agent_sessions_list(ngx_http_request_t *r)
{
    ngx_int_t                  limit, offset;
    ngx_str_t                  arg, out;
    ngx_uint_t                 i;
    ngx_array_t                sessions;
    ngx_http_agent_json_t     *j;
    ngx_http_agent_ctx_t      *ctx;
    ngx_http_agent_session_t  *s;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    limit = 50;
    offset = 0;

    if (ngx_http_arg(r, (u_char *) "limit", 5, &arg) == NGX_OK) {
        limit = ngx_atoi(arg.data, arg.len);
        if (limit == NGX_ERROR || limit < 1 || limit > 1000) {
            return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                        "\"limit\" must be a number from 1 "
                                        "to 1000");
        }
    }

    if (ngx_http_arg(r, (u_char *) "offset", 6, &arg) == NGX_OK) {
        offset = ngx_atoi(arg.data, arg.len);
        if (offset == NGX_ERROR) {
            return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                        "\"offset\" must be a number of 0 "
                                        "or more");
        }
    }

    if (ngx_array_init(&sessions, r->pool, 16,
                       sizeof(ngx_http_agent_session_t))
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_agent_store_session_list(r->pool, limit, offset,
                                          ctx->owner, &sessions)
        != NGX_OK)
    {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the sessions could not be listed");
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "sessions");
    ngx_http_agent_json_arr(j);

    s = sessions.elts;

    for (i = 0; i < sessions.nelts; i++) {
        ngx_http_agent_session_json(j, &s[i]);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_send(r, NGX_HTTP_OK, &out);
}


static void
ngx_http_agent_message_json(ngx_http_agent_json_t *j, ngx_str_t *session_id,
    ngx_http_agent_msg_t *m, ngx_uint_t full)
{
    ngx_http_agent_json_obj(j);

    if (session_id) {
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_int(j, m->seq);
        ngx_http_agent_json_key(j, "session_id");
        ngx_http_agent_json_str(j, session_id);
    }

    ngx_http_agent_json_key(j, "role");
    ngx_http_agent_json_str(j, &m->role);
    ngx_http_agent_json_key(j, "content");
    ngx_http_agent_json_str(j, &m->content);

    if (full && m->tool_calls.len) {
        ngx_http_agent_json_key(j, "tool_calls");
        ngx_http_agent_json_raw(j, &m->tool_calls);
    }

    if (full && m->tool_call_id.len) {
        ngx_http_agent_json_key(j, "tool_call_id");
        ngx_http_agent_json_str(j, &m->tool_call_id);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &m->name);
    }

    if (session_id) {
        ngx_http_agent_json_key(j, "created_at");
        ngx_http_agent_json_str(j, &m->created_at);
        ngx_http_agent_json_key(j, "metadata");

        if (m->metadata.len) {
            ngx_http_agent_json_raw(j, &m->metadata);

        } else {
            ngx_http_agent_json_obj(j);
            ngx_http_agent_json_end(j);
        }
    }

    ngx_http_agent_json_end(j);
}


static ngx_int_t
ngx_http_agent_messages(ngx_http_request_t *r, ngx_str_t *id)
{
    ngx_int_t                  rc;
    ngx_str_t                  arg, out;
    ngx_uint_t                 i, all;
    ngx_array_t                messages;
    ngx_http_agent_msg_t      *m;
    ngx_http_agent_json_t     *j;
    ngx_http_agent_session_t   s;

    rc = ngx_http_agent_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    all = (ngx_http_arg(r, (u_char *) "include_tools", 13, &arg) == NGX_OK
           && arg.len && arg.data[0] != '0' && arg.data[0] != 'f');

    if (ngx_array_init(&messages, r->pool, 32, sizeof(ngx_http_agent_msg_t))
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_agent_store_messages(r->pool, id, -1, all, &messages)
        != NGX_OK)
    {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the messages could not be read");
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "messages");
    ngx_http_agent_json_arr(j);

    m = messages.elts;

    for (i = 0; i < messages.nelts; i++) {
        ngx_http_agent_message_json(j, id, &m[i], all);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_send(r, NGX_HTTP_OK, &out);
}


/* a run's state from the session's latest checkpoint */

static ngx_int_t
ngx_http_agent_state_load(ngx_pool_t *pool, ngx_str_t *id,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp)
{
    size_t                   i;
    yajl_val                 v, c;
    ngx_int_t                rc, ch;
    ngx_http_agent_graph_t  *graph;

    ngx_memzero(cp, sizeof(ngx_http_agent_checkpoint_t));
    cp->step = -1;

    rc = ngx_http_agent_store_checkpoint_latest(pool, id, cp);

    if (rc == NGX_DECLINED) {
        return NGX_OK;
    }

    if (rc != NGX_OK) {
        return NGX_ERROR;
    }

    graph = run->graph;

    v = ngx_http_agent_json_parse(pool, cp->channels.data, cp->channels.len,
                                  NULL);
    if (v == NULL || !YAJL_IS_OBJECT(v)) {
        return NGX_ERROR;
    }

    for (i = 0; i < v->u.object.len; i++) {
        ch = ngx_http_agent_graph_channel(graph, v->u.object.keys[i]);
        if (ch == NGX_ERROR) {
            continue;
        }

        c = v->u.object.values[i];

        if (graph->channels[ch].kind == NGX_HTTP_AGENT_CHANNEL_COUNTER) {
            run->state[ch].counter = YAJL_IS_INTEGER(c) ? YAJL_GET_INTEGER(c)
                                                        : 0;

        } else if (graph->channels[ch].kind == NGX_HTTP_AGENT_CHANNEL_VALUE
                   && !YAJL_IS_NULL(c))
        {
            if (ngx_http_agent_json_encode(pool, c, &run->state[ch].json)
                != NGX_OK)
            {
                return NGX_ERROR;
            }
        }
    }

    return ngx_http_agent_store_messages(pool, id, cp->msg_count, 1,
                            run->state[NGX_HTTP_AGENT_REACT_MESSAGES].messages);
}


/* a checkpoint of the run's state after node; cp: the parent, then this */

static ngx_int_t
ngx_http_agent_state_save(ngx_http_agent_run_t *run, ngx_str_t *id,
    ngx_http_agent_checkpoint_t *cp, ngx_str_t *node, ngx_int_t next)
{
    ngx_uint_t                   i;
    ngx_array_t                 *added;
    ngx_http_agent_json_t       *j;
    ngx_http_agent_write_t      *w;
    ngx_http_agent_graph_t      *graph;
    ngx_http_agent_checkpoint_t  parent;

    graph = run->graph;
    parent = *cp;

    /* the channels are bound to the insert and forgotten: a scratch text */
    if (run->scratch == NULL) {
        run->scratch = ngx_http_agent_json_create(run->pool);
        if (run->scratch == NULL) {
            return NGX_ERROR;
        }
    }

    j = run->scratch;

    ngx_http_agent_json_obj(j);

    for (i = 0; i < graph->nchannels; i++) {
        if (graph->channels[i].kind == NGX_HTTP_AGENT_CHANNEL_MESSAGES) {
            continue;
        }

        ngx_http_agent_json_ok(j, yajl_gen_string(j->gen,
                                       graph->channels[i].name.data,
                                       graph->channels[i].name.len));

        if (graph->channels[i].kind == NGX_HTTP_AGENT_CHANNEL_COUNTER) {
            ngx_http_agent_json_int(j, run->state[i].counter);

        } else {
            ngx_http_agent_json_raw(j, &run->state[i].json);
        }
    }

    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_scratch(j, &cp->channels) != NGX_OK) {
        return NGX_ERROR;
    }

    /* only what this step added goes to the messages table */

    added = NULL;
    w = run->update->elts;

    for (i = 0; i < run->update->nelts; i++) {
        if (w[i].channel == NGX_HTTP_AGENT_REACT_MESSAGES) {
            added = w[i].value.messages;
        }
    }

    cp->parent_id = parent.id;
    cp->step = parent.step + 1;
    cp->node = *node;
    cp->msg_count =
                run->state[NGX_HTTP_AGENT_REACT_MESSAGES].messages->nelts;

    if (next == NGX_HTTP_AGENT_END) {
        ngx_str_null(&cp->next);

    } else {
        cp->next = graph->nodes[next].name;
    }

    return ngx_http_agent_store_checkpoint_write(run->pool, id, cp, added);
}


static ngx_int_t
ngx_http_agent_state(ngx_http_request_t *r, ngx_str_t *id)
{
    ngx_int_t                     rc;
    ngx_str_t                     out;
    ngx_uint_t                    i, n;
    ngx_array_t                  *msgs;
    ngx_http_agent_run_t         *run;
    ngx_http_agent_msg_t         *m;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_graph_t       *graph;
    ngx_http_agent_session_t      s;
    ngx_http_agent_checkpoint_t   cp;

    rc = ngx_http_agent_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    graph = &ngx_http_agent_react_graph;

    run = ngx_http_agent_graph_run_create(r->pool, r->connection->log, graph);
    if (run == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_agent_state_load(r->pool, id, run, &cp) != NGX_OK) {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the state could not be read");
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "checkpoint_id");

    if (cp.id.len) {
        ngx_http_agent_json_str(j, &cp.id);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_key(j, "step");
    ngx_http_agent_json_int(j, cp.step);
    ngx_http_agent_json_key(j, "next");
    ngx_http_agent_json_arr(j);

    if (cp.next.len) {
        ngx_http_agent_json_str(j, &cp.next);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "values");
    ngx_http_agent_json_obj(j);

    for (i = 0; i < graph->nchannels; i++) {
        ngx_http_agent_json_ok(j, yajl_gen_string(j->gen,
                                       graph->channels[i].name.data,
                                       graph->channels[i].name.len));

        switch (graph->channels[i].kind) {

        case NGX_HTTP_AGENT_CHANNEL_MESSAGES:
            msgs = run->state[i].messages;
            m = msgs->elts;

            ngx_http_agent_json_arr(j);

            for (n = 0; n < msgs->nelts; n++) {
                ngx_http_agent_message_json(j, NULL, &m[n], 1);
            }

            ngx_http_agent_json_arr_end(j);
            break;

        case NGX_HTTP_AGENT_CHANNEL_COUNTER:
            ngx_http_agent_json_int(j, run->state[i].counter);
            break;

        default:
            ngx_http_agent_json_raw(j, &run->state[i].json);
        }
    }

    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_send(r, NGX_HTTP_OK, &out);
}


static ngx_int_t
ngx_http_agent_history(ngx_http_request_t *r, ngx_str_t *id)
{
    ngx_int_t                     rc;
    ngx_str_t                     out;
    ngx_uint_t                    i;
    ngx_array_t                   list;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_session_t      s;
    ngx_http_agent_checkpoint_t  *cp;

    rc = ngx_http_agent_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ngx_array_init(&list, r->pool, 16,
                       sizeof(ngx_http_agent_checkpoint_t))
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_agent_store_checkpoint_list(r->pool, id, &list) != NGX_OK) {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the checkpoints could not be read");
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "checkpoints");
    ngx_http_agent_json_arr(j);

    cp = list.elts;

    for (i = 0; i < list.nelts; i++) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "checkpoint_id");
        ngx_http_agent_json_str(j, &cp[i].id);
        ngx_http_agent_json_key(j, "parent_checkpoint_id");

        if (cp[i].parent_id.len) {
            ngx_http_agent_json_str(j, &cp[i].parent_id);

        } else {
            ngx_http_agent_json_null(j);
        }

        ngx_http_agent_json_key(j, "step");
        ngx_http_agent_json_int(j, cp[i].step);
        ngx_http_agent_json_key(j, "node");
        ngx_http_agent_json_str(j, &cp[i].node);
        ngx_http_agent_json_key(j, "next");

        if (cp[i].next.len) {
            ngx_http_agent_json_str(j, &cp[i].next);

        } else {
            ngx_http_agent_json_null(j);
        }

        ngx_http_agent_json_key(j, "created_at");
        ngx_http_agent_json_str(j, &cp[i].created_at);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_send(r, NGX_HTTP_OK, &out);
}


static void
ngx_http_agent_resource_json(ngx_http_agent_json_t *j,
    ngx_http_agent_resource_t *res)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, &res->id);
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, &res->name);
    ngx_http_agent_json_key(j, "table");
    ngx_http_agent_json_str(j, &res->table);
    ngx_http_agent_json_key(j, "columns");
    ngx_http_agent_json_raw(j, &res->columns);
    ngx_http_agent_json_key(j, "row_count");
    ngx_http_agent_json_int(j, res->row_count);
    ngx_http_agent_json_key(j, "size_bytes");
    ngx_http_agent_json_int(j, res->size_bytes);
    ngx_http_agent_json_key(j, "created_at");
    ngx_http_agent_json_str(j, &res->created_at);
    ngx_http_agent_json_end(j);
}


static ngx_int_t
ngx_http_agent_resources_add(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body)
{
    u_char                      *p;
    ngx_int_t                    rc;
    ngx_str_t                    name, err, out, *t;
    ngx_uint_t                   i;
    ngx_array_t                  list, taken;
    ngx_http_agent_session_t     s;
    ngx_http_agent_resource_t    res, *prev;
    ngx_http_agent_main_conf_t  *amcf;
#if (NGX_THREADS)
    ngx_http_agent_loc_conf_t   *alcf;
#endif

    amcf = ngx_http_get_module_main_conf(r, ngx_http_agent_module);

    if (amcf->resources_dir.len == 0) {
        return ngx_http_agent_error(r, NGX_HTTP_SERVICE_UNAVAILABLE,
                                    "uploads are off: set "
                                    "agent_resources_dir in nginx.conf");
    }

    if (ngx_http_arg(r, (u_char *) "name", 4, &name) != NGX_OK
        || name.len == 0)
    {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "name the file: ?name=FILE.csv");
    }

    p = ngx_pnalloc(r->pool, name.len);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    out.data = p;
    ngx_unescape_uri(&p, &name.data, name.len, NGX_UNESCAPE_URI);
    name.data = out.data;
    name.len = p - out.data;

    if (name.len == 0 || name.len > 255) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "the file name must have 1 to 255 "
                                    "bytes");
    }

    rc = ngx_http_agent_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    if (body->len == 0) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "the request body must be the CSV "
                                    "file");
    }

    if (ngx_array_init(&list, r->pool, 4, sizeof(ngx_http_agent_resource_t))
        != NGX_OK
        || ngx_array_init(&taken, r->pool, 4, sizeof(ngx_str_t)) != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_agent_store_resource_list(r->pool, id, &list) != NGX_OK) {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the session's files could not be "
                                    "listed");
    }

    prev = list.elts;

    for (i = 0; i < list.nelts; i++) {
        t = ngx_array_push(&taken);
        if (t == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        *t = prev[i].table;
    }

    ngx_memzero(&res, sizeof(ngx_http_agent_resource_t));
    res.name = name;

    if (ngx_http_agent_csv_table_name(r->pool, &name, &taken, &res.table)
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    p = ngx_pnalloc(r->pool, 36 + 24 + amcf->resources_dir.len + 48);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_store_new_id(p);
    res.id.data = p;
    res.id.len = 36;
    p += 36;

    res.created_at.data = p;
    p = ngx_http_agent_store_now(p);
    res.created_at.len = p - res.created_at.data;

    res.path.data = p;
    p = ngx_sprintf(p, "%V/%V.sqlite", &amcf->resources_dir, &res.id);
    res.path.len = p - res.path.data;
    *p = '\0';

#if (NGX_THREADS)
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    /* a large file takes a while to import: not on the event loop */
    if (alcf->thread_pool
        && ngx_http_agent_import_post(r, id, body, list.nelts == 0, &res)
           == NGX_OK)
    {
        return NGX_DONE;
    }
#endif

    ngx_str_null(&err);

    rc = ngx_http_agent_csv_import(r->pool, r->connection->log, body->data,
                                   body->len, list.nelts == 0, &res, &err);

    return ngx_http_agent_import_finish(r, id, &res, rc, &err);
}


static ngx_int_t
ngx_http_agent_import_finish(ngx_http_request_t *r, ngx_str_t *id,
    ngx_http_agent_resource_t *res, ngx_int_t rc, ngx_str_t *err)
{
    ngx_str_t               out;
    ngx_http_agent_json_t  *j;

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST, "%V", err);
    }

    if (rc != NGX_OK || ngx_http_agent_store_resource_add(id, res) != NGX_OK)
    {
        (void) ngx_delete_file(res->path.data);
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the CSV file could not be stored");
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_resource_json(j, res);

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_send(r, NGX_HTTP_CREATED, &out);
}


#if (NGX_THREADS)

/*
 * The import on nginx's thread pool: the thread reads the body and the
 * names (the request keeps them: nothing finalizes it meanwhile) and
 * allocates only from the job's own pool.
 */

static ngx_int_t
ngx_http_agent_import_post(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body, ngx_uint_t first, ngx_http_agent_resource_t *res)
{
    ngx_pool_t                 *pool;
    ngx_thread_task_t          *task;
    ngx_http_agent_import_t    *imp;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    pool = ngx_create_pool(4096, ngx_cycle->log);
    if (pool == NULL) {
        return NGX_ERROR;
    }

    task = ngx_thread_task_alloc(pool, sizeof(ngx_http_agent_import_t));
    if (task == NULL) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    imp = task->ctx;
    imp->request = r;
    imp->pool = pool;
    imp->session_id = *id;
    imp->data = *body;
    imp->first = first;
    imp->res = *res;
    ngx_str_null(&imp->err);

    task->handler = ngx_http_agent_import_run;
    task->event.handler = ngx_http_agent_import_done;
    task->event.data = imp;
    task->event.log = r->connection->log;

    if (ngx_thread_task_post(alcf->thread_pool, task) != NGX_OK) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    return NGX_OK;
}


static void
ngx_http_agent_import_run(void *data, ngx_log_t *log)
{
    ngx_http_agent_import_t *imp = data;

    imp->rc = ngx_http_agent_csv_import(imp->pool, log, imp->data.data,
                                        imp->data.len, imp->first,
                                        &imp->res, &imp->err);
}


static void
ngx_http_agent_import_done(ngx_event_t *ev)
{
    ngx_http_agent_import_t *imp = ev->data;

    ngx_int_t              rc;
    ngx_pool_t            *pool;
    ngx_connection_t      *c;
    ngx_http_request_t    *r;
    ngx_http_agent_ctx_t  *ctx;

    r = imp->request;
    c = r->connection;
    pool = imp->pool;

    rc = ngx_http_agent_import_finish(r, &imp->session_id, &imp->res,
                                      imp->rc, &imp->err);

    if (rc == NGX_HTTP_AGENT_SENT) {
        ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
        rc = ctx->sent_rc;
    }

    /* the request may be gone after this: only c and pool are used */
    ngx_http_finalize_request(r, rc);
    ngx_http_run_posted_requests(c);

    ngx_destroy_pool(pool);
}

#endif


static ngx_int_t
ngx_http_agent_resources_list(ngx_http_request_t *r, ngx_str_t *id)
{
    ngx_int_t                   rc;
    ngx_str_t                   out;
    ngx_uint_t                  i;
    ngx_array_t                 list;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_session_t    s;
    ngx_http_agent_resource_t  *res;

    rc = ngx_http_agent_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ngx_array_init(&list, r->pool, 4, sizeof(ngx_http_agent_resource_t))
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_agent_store_resource_list(r->pool, id, &list) != NGX_OK) {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the session's files could not be "
                                    "listed");
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "resources");
    ngx_http_agent_json_arr(j);

    res = list.elts;

    for (i = 0; i < list.nelts; i++) {
        ngx_http_agent_resource_json(j, &res[i]);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_send(r, NGX_HTTP_OK, &out);
}


static ngx_int_t
ngx_http_agent_model_answer(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body)
{
    u_char                      *key;
    yajl_val                     v;
    ngx_int_t                    rc;
    ngx_str_t                    name, out;
    ngx_uint_t                   i;
    ngx_http_agent_json_t       *j;
    ngx_http_agent_model_t      *m, *cur;
    ngx_http_agent_session_t     s;
    ngx_http_agent_main_conf_t  *amcf;

    amcf = ngx_http_get_module_main_conf(r, ngx_http_agent_module);

    rc = ngx_http_agent_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    cur = s.model.len ? ngx_http_agent_model_find(amcf, &s.model) : NULL;

    if (cur == NULL) {
        cur = amcf->models.elts;
    }

    if (body) {
        rc = ngx_http_agent_parse_object(r, body, &v, 0);
        if (rc != NGX_OK) {
            return rc;
        }

        if (ngx_http_agent_json_get_str(v, "name", &name) != NGX_OK) {
            return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                        "\"name\" must be a string");
        }

        cur = ngx_http_agent_model_find(amcf, &name);
        if (cur == NULL) {
            return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                        "there is no model \"%V\"", &name);
        }

        if (ngx_http_agent_store_session_set(id, NGX_HTTP_AGENT_STORE_MODEL,
                                             &cur->name)
            != NGX_OK)
        {
            return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                        "the model could not be saved");
        }
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "thread_id");
    ngx_http_agent_json_str(j, id);
    ngx_http_agent_json_key(j, "model");
    ngx_http_agent_json_str(j, &cur->name);
    ngx_http_agent_json_key(j, "models");
    ngx_http_agent_json_obj(j);

    m = amcf->models.elts;

    for (i = 0; i < amcf->models.nelts; i++) {
        ngx_http_agent_json_str(j, &m[i].name);

        key = NULL;
        if (m[i].key_env.len) {
            key = (u_char *) getenv((char *) m[i].key_env.data);
        }

        ngx_http_agent_json_bool(j, m[i].key_env.len == 0
                                    || (key && *key));
    }

    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_send(r, NGX_HTTP_OK, &out);
}


static ngx_int_t
ngx_http_agent_connection(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body)
{
    yajl_val                     v;
    ngx_int_t                    rc;
    ngx_str_t                    tables;
    ngx_http_agent_session_t     s;
    ngx_http_agent_database_t   *db;
    ngx_http_agent_loc_conf_t   *alcf;
    ngx_http_agent_main_conf_t  *amcf;
    ngx_http_agent_connect_t    *cn;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    amcf = ngx_http_get_module_main_conf(r, ngx_http_agent_module);

    rc = ngx_http_agent_parse_object(r, body, &v, 0);
    if (rc != NGX_OK) {
        return rc;
    }

    cn = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_connect_t));
    if (cn == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_agent_json_get_str(v, "database", &cn->name) != NGX_OK) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "\"database\" must be a string");
    }

    db = ngx_http_agent_database_find(amcf, &cn->name);
    if (db == NULL) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "there is no database \"%V\"",
                                    &cn->name);
    }

    rc = ngx_http_agent_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    cn->request = r;
    cn->id = *id;

    /* the schema is read on the thread pool; inline only without one */
    rc = ngx_http_agent_sql_schema_post(alcf->thread_pool,
                                        r->connection->log, db,
                                        ngx_http_agent_connection_read, cn);
    if (rc == NGX_OK) {
        /* the body's read holds the request: the callback finalizes it */
        return NGX_DONE;
    }

    if (ngx_http_agent_sql_schema(r->pool, r->connection->log, db, &tables)
        != NGX_OK)
    {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the database \"%V\" cannot be read",
                                    &cn->name);
    }

    return ngx_http_agent_connection_save(r, cn, &tables);
}


static void
ngx_http_agent_connection_read(void *data, ngx_int_t rc, ngx_str_t *tables)
{
    ngx_http_agent_connect_t *cn = data;

    ngx_str_t              copy;
    ngx_connection_t      *c;
    ngx_http_request_t    *r;
    ngx_http_agent_ctx_t  *ctx;

    r = cn->request;
    c = r->connection;

    if (rc != NGX_OK) {
        rc = ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                  "the database \"%V\" cannot be read",
                                  &cn->name);

    } else {
        copy.len = tables->len;
        copy.data = ngx_pstrdup(r->pool, tables);

        rc = copy.data ? ngx_http_agent_connection_save(r, cn, &copy)
                       : NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (rc == NGX_HTTP_AGENT_SENT) {
        ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
        rc = ctx->sent_rc;
    }

    /* a thread's completion, not a request handler */
    ngx_http_finalize_request(r, rc);
    ngx_http_run_posted_requests(c);
}


static ngx_int_t
ngx_http_agent_connection_save(ngx_http_request_t *r,
    ngx_http_agent_connect_t *cn, ngx_str_t *tables)
{
    ngx_int_t                     rc;
    ngx_str_t                     out, run_id, node, *id, name;
    ngx_http_agent_run_t         *run;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_checkpoint_t   cp;

    id = &cn->id;
    name = cn->name;

    rc = ngx_http_agent_session_lock(r, id, &run_id, "connect");
    if (rc != NGX_OK) {
        return rc;
    }

    run = ngx_http_agent_graph_run_create(r->pool, r->connection->log,
                                          &ngx_http_agent_react_graph);

    rc = NGX_ERROR;

    if (run
        && ngx_http_agent_store_session_set(id, NGX_HTTP_AGENT_STORE_DATABASE,
                                            &name) == NGX_OK
        && ngx_http_agent_state_load(r->pool, id, run, &cp) == NGX_OK)
    {
        run->update = ngx_http_agent_graph_update_create(r->pool);

        ngx_str_set(&node, "__connection__");

        if (run->update
            && ngx_http_agent_graph_write_value(run->update,
                                            NGX_HTTP_AGENT_REACT_DB_SCHEMA,
                                            tables) == NGX_OK
            && ngx_http_agent_graph_apply(run, run->update) == NGX_OK)
        {
            rc = ngx_http_agent_state_save(run, id, &cp, &node,
                                           cp.next.len
                                           ? NGX_HTTP_AGENT_REACT_MODEL
                                           : NGX_HTTP_AGENT_END);
        }
    }

    ngx_http_agent_store_unlock(id, &run_id);

    if (rc != NGX_OK) {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the connection could not be saved");
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "database");
    ngx_http_agent_json_str(j, &name);
    ngx_http_agent_json_key(j, "tables");
    ngx_http_agent_json_raw(j, tables);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_send(r, NGX_HTTP_OK, &out);
}


/* a turn: POST /{session_id}/message */

static ngx_int_t
ngx_http_agent_turn_start(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body)
{
    u_char                      *p;
    yajl_val                     v, images;
    ngx_int_t                    rc;
    ngx_str_t                    text, name, json;
    ngx_http_cleanup_t          *cln;
    ngx_http_agent_msg_t         msg;
    ngx_http_agent_run_t        *run;
    ngx_http_agent_turn_t       *turn;
    ngx_http_agent_json_t       *j;
    ngx_http_agent_model_t      *model;
    ngx_http_agent_react_t      *react;
    ngx_http_agent_session_t     s;
    ngx_http_agent_loc_conf_t   *alcf;
    ngx_http_agent_main_conf_t  *amcf;

    amcf = ngx_http_get_module_main_conf(r, ngx_http_agent_module);
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    rc = ngx_http_agent_parse_object(r, body, &v, 0);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ngx_http_agent_json_get_str(v, "message", &text) != NGX_OK
        || text.len == 0)
    {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "\"message\" must be a non-empty "
                                    "string");
    }

    ngx_memzero(&msg, sizeof(ngx_http_agent_msg_t));
    ngx_str_set(&msg.role, "user");
    msg.content = text;

    images = ngx_http_agent_json_get(v, "images");

    if (images && !YAJL_IS_NULL(images)) {
        rc = ngx_http_agent_turn_images(r, images, &text, &msg.images);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    rc = ngx_http_agent_json_get_str(v, "model", &name);
    if (rc == NGX_ERROR) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "\"model\" must be a string");
    }

    if (rc == NGX_DECLINED) {
        ngx_str_null(&name);
    }

    rc = ngx_http_agent_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    if (name.len == 0) {
        name = s.model;
    }

    model = name.len ? ngx_http_agent_model_find(amcf, &name)
                     : amcf->models.elts;

    if (model == NULL) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "there is no model \"%V\"", &name);
    }

    turn = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_turn_t));
    if (turn == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    react = &turn->react;

    if (model->key_env.len) {
        p = (u_char *) getenv((char *) model->key_env.data);

        if (p == NULL || *p == '\0') {
            return ngx_http_agent_error(r, NGX_HTTP_SERVICE_UNAVAILABLE,
                                        "the model \"%V\" has no API key: "
                                        "set %V for nginx and add \"env %V;"
                                        "\" to nginx.conf", &model->name,
                                        &model->key_env, &model->key_env);
        }

        react->api_key.data = p;
        react->api_key.len = ngx_strlen(p);
    }

    turn->request = r;
    turn->session_id = s.id;
    react->model = model;

    p = ngx_pnalloc(r->pool, 36);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_store_new_id(p);
    turn->run_id.data = p;
    turn->run_id.len = 36;

    cln = ngx_http_cleanup_add(r, 0);
    if (cln == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    cln->handler = ngx_http_agent_turn_cleanup;
    cln->data = turn;

    /*
     * the lock, the state and the input step in one transaction: the
     * fewer write transactions a turn has, the less workers wait on each
     * other
     */

    if (ngx_http_agent_store_begin() != NGX_OK) {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the session store is not available");
    }

    rc = ngx_http_agent_turn_input(r, turn, &s, &msg, &text);

    if (rc != NGX_OK) {
        ngx_http_agent_store_rollback();
        turn->locked = 0;
        return rc;
    }

    if (ngx_http_agent_store_commit() != NGX_OK) {
        turn->locked = 0;
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the message could not be saved");
    }

    if (ngx_http_agent_sse_start(&turn->sse, r, alcf->heartbeat) != NGX_OK) {
        return NGX_ERROR;
    }

    run = turn->run;

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "start");
    ngx_http_agent_json_key(j, "session_id");
    ngx_http_agent_json_str(j, &s.id);
    ngx_http_agent_json_key(j, "run_id");
    ngx_http_agent_json_str(j, &turn->run_id);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &json) != NGX_OK
        || ngx_http_agent_sse_event(&turn->sse, &json) != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* a client that goes away ends the turn: see the cleanup */
    r->read_event_handler = ngx_http_test_reading;

    ngx_http_agent_graph_start(run);

    return NGX_DONE;
}


/* inside the caller's transaction: the lock, the state, the input step */

static ngx_int_t
ngx_http_agent_turn_input(ngx_http_request_t *r, ngx_http_agent_turn_t *turn,
    ngx_http_agent_session_t *session, ngx_http_agent_msg_t *msg,
    ngx_str_t *text)
{
    ngx_int_t                     rc;
    ngx_str_t                     json, node, *id;
    ngx_http_agent_run_t         *run;
    ngx_http_agent_react_t       *react;
    ngx_http_agent_checkpoint_t   cp;
    ngx_http_agent_loc_conf_t    *alcf;
    ngx_http_agent_main_conf_t   *amcf;

    amcf = ngx_http_get_module_main_conf(r, ngx_http_agent_module);
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    id = &session->id;
    react = &turn->react;

    rc = ngx_http_agent_store_lock(id, &turn->run_id, alcf->turn_lease);

    if (rc == NGX_BUSY) {
        return ngx_http_agent_error(r, NGX_HTTP_CONFLICT,
                                    "a turn is already running on this "
                                    "session; wait for its end event");
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_error(r, NGX_HTTP_NOT_FOUND,
                                    "there is no session \"%V\"", id);
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the session could not be locked");
    }

    turn->locked = 1;

    /* the lease is renewed while the turn runs (and by each checkpoint) */
    turn->lease_ms = alcf->turn_lease;
    turn->lease.handler = ngx_http_agent_turn_lease;
    turn->lease.data = turn;
    turn->lease.log = r->connection->log;
    turn->lease.cancelable = 1;
    ngx_add_timer(&turn->lease, turn->lease_ms / 3);

    ngx_http_agent_turn_track(turn, 1);

    run = ngx_http_agent_graph_run_create(r->pool, r->connection->log,
                                          &ngx_http_agent_react_graph);
    if (run == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    turn->run = run;
    run->limit = alcf->recursion_limit;
    run->handlers = &ngx_http_agent_turn_handlers;
    run->ctx = turn;
    run->data = react;

    if (ngx_http_agent_state_load(r->pool, id, run, &cp) != NGX_OK) {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the session's state could not be "
                                    "read");
    }

    turn->checkpoint_id = cp.id;
    turn->step = cp.step;
    turn->prompt_at_start =
                     run->state[NGX_HTTP_AGENT_REACT_PROMPT_TOKENS].counter;
    turn->completion_at_start =
                 run->state[NGX_HTTP_AGENT_REACT_COMPLETION_TOKENS].counter;

    react->session_id = *id;
    react->system_prompt = &amcf->system_prompt;
    react->alcf = alcf;
    react->calls_at_start =
                       run->state[NGX_HTTP_AGENT_REACT_MODEL_CALLS].counter;
    react->emit = ngx_http_agent_turn_emit;
    react->emit_data = turn;
    react->sql.timeout = alcf->sql_timeout;
    react->sql.max_rows = alcf->sql_max_rows;
    react->sql.max_bytes = alcf->sql_max_bytes;
    react->sql.thread_pool = alcf->thread_pool;
    react->sql.database = session->database.len
                          ? ngx_http_agent_database_find(amcf,
                                                         &session->database)
                          : NULL;

    if (react->sql.database == NULL) {
        react->sql.database = alcf->database;
    }

    /* the input is a step of its own, as LangGraph's "__input__" is */

    run->update = ngx_http_agent_graph_update_create(r->pool);
    if (run->update == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_agent_graph_write_message(run, run->update,
                                           NGX_HTTP_AGENT_REACT_MESSAGES,
                                           msg)
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_agent_json_quote(r->pool, id, &json) != NGX_OK
        || ngx_http_agent_graph_write_value(run->update,
                                            NGX_HTTP_AGENT_REACT_SESSION_ID,
                                            &json) != NGX_OK
        || ngx_http_agent_json_quote(r->pool, text, &json) != NGX_OK
        || ngx_http_agent_graph_write_value(run->update,
                                         NGX_HTTP_AGENT_REACT_CURRENT_QUERY,
                                         &json) != NGX_OK
        || ngx_http_agent_graph_apply(run, run->update) != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_str_set(&node, "__input__");

    if (ngx_http_agent_turn_checkpoint(run, &node,
                                       ngx_http_agent_react_graph.entry)
        != NGX_OK)
    {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the message could not be saved");
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_turn_images(ngx_http_request_t *r, yajl_val images,
    ngx_str_t *text, ngx_str_t *out)
{
    size_t                  i;
    yajl_val                img;
    ngx_str_t               data, mime, url;
    ngx_http_agent_json_t  *j;

    if (!YAJL_IS_ARRAY(images)) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "\"images\" must be an array");
    }

    if (images->u.array.len == 0) {
        return NGX_OK;
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* the provider's content parts: the text, then each image */

    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "text");
    ngx_http_agent_json_key(j, "text");
    ngx_http_agent_json_str(j, text);
    ngx_http_agent_json_end(j);

    for (i = 0; i < images->u.array.len; i++) {
        img = images->u.array.values[i];

        if (ngx_http_agent_json_get_str(img, "data", &data) != NGX_OK
            || data.len == 0
            || ngx_http_agent_json_get_str(img, "mime_type", &mime) != NGX_OK
            || mime.len < 7 || mime.len > 32
            || ngx_strncmp(mime.data, "image/", 6) != 0)
        {
            return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                        "each image needs \"data\" (base64) "
                                        "and \"mime_type\" (image/...)");
        }

        url.data = ngx_pnalloc(r->pool, data.len + mime.len + 16);
        if (url.data == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        url.len = ngx_sprintf(url.data, "data:%V;base64,%V", &mime, &data)
                  - url.data;

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "image_url");
        ngx_http_agent_json_key(j, "image_url");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "url");
        ngx_http_agent_json_str(j, &url);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);

    if (ngx_http_agent_json_done(j, out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_turn_checkpoint(ngx_http_agent_run_t *run, ngx_str_t *node,
    ngx_int_t next)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_uint_t                   end;
    ngx_http_agent_checkpoint_t  cp;

    ngx_memzero(&cp, sizeof(ngx_http_agent_checkpoint_t));
    cp.id = turn->checkpoint_id;
    cp.step = turn->step;

    /* the last step and the release of the session: one transaction */
    end = (next == NGX_HTTP_AGENT_END && turn->locked);

    if (end && ngx_http_agent_store_begin() != NGX_OK) {
        return NGX_ERROR;
    }

    if (ngx_http_agent_state_save(run, &turn->session_id, &cp, node, next)
        != NGX_OK)
    {
        if (end) {
            ngx_http_agent_store_rollback();
        }

        return NGX_ERROR;
    }

    if (end) {
        ngx_http_agent_store_unlock(&turn->session_id, &turn->run_id);

        if (ngx_http_agent_store_commit() != NGX_OK) {
            return NGX_ERROR;
        }

        turn->locked = 0;
    }

    turn->checkpoint_id = cp.id;
    turn->step = cp.step;

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_turn_emit(void *data, ngx_str_t *json)
{
    ngx_http_agent_turn_t *turn = data;

    return ngx_http_agent_sse_event(&turn->sse, json);
}


static void
ngx_http_agent_turn_done(ngx_http_agent_run_t *run, ngx_int_t rc)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_str_t               json, text;
    ngx_connection_t       *c;
    ngx_http_request_t     *r;
    ngx_http_agent_json_t  *j;

    r = turn->request;
    c = r->connection;

    ngx_http_agent_turn_track(turn, 0);

    if (turn->locked) {
        ngx_http_agent_store_unlock(&turn->session_id, &turn->run_id);
        turn->locked = 0;
    }

    if (rc != NGX_OK) {
        ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                      "agent: turn on session \"%V\" failed after %ui "
                      "steps: %V", &turn->session_id, run->step,
                      &run->error);

    } else {
        ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                      "agent: turn on session \"%V\" ended after %ui steps",
                      &turn->session_id, run->step);
    }

    if (turn->sse.failed) {
        goto failed;
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        goto failed;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");

    if (rc == NGX_OK) {
        text.data = turn->react.text;
        text.len = turn->react.text_len;

        ngx_http_agent_json_cstr(j, "end");
        ngx_http_agent_json_key(j, "full_response");
        ngx_http_agent_json_str(j, &text);
        ngx_http_agent_json_key(j, "usage");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "prompt_tokens");
        ngx_http_agent_json_int(j,
                   run->state[NGX_HTTP_AGENT_REACT_PROMPT_TOKENS].counter
                   - turn->prompt_at_start);
        ngx_http_agent_json_key(j, "completion_tokens");
        ngx_http_agent_json_int(j,
               run->state[NGX_HTTP_AGENT_REACT_COMPLETION_TOKENS].counter
               - turn->completion_at_start);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_key(j, "checkpoint_id");
        ngx_http_agent_json_str(j, &turn->checkpoint_id);

    } else {
        ngx_http_agent_json_cstr(j, "error");
        ngx_http_agent_json_key(j, "error");
        ngx_http_agent_json_str(j, &run->error);
        ngx_http_agent_json_key(j, "code");

        if (run->code.len) {
            ngx_http_agent_json_str(j, &run->code);

        } else {
            ngx_http_agent_json_cstr(j, "internal");
        }
    }

    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &json) != NGX_OK
        || ngx_http_agent_sse_event(&turn->sse, &json) != NGX_OK
        || ngx_http_agent_sse_finish(&turn->sse) != NGX_OK)
    {
        goto failed;
    }

    ngx_http_finalize_request(r, NGX_OK);

    /* called from curl, timer and thread events, not a request handler */
    ngx_http_run_posted_requests(c);

    return;

failed:

    ngx_http_finalize_request(r, NGX_ERROR);
    ngx_http_run_posted_requests(c);
}


static void
ngx_http_agent_turn_cleanup(void *data)
{
    ngx_http_agent_turn_t *turn = data;

    if (turn->run && !turn->run->finished) {
        ngx_log_error(NGX_LOG_INFO, turn->request->connection->log, 0,
                      "agent: client gone, turn on session \"%V\" cancelled",
                      &turn->session_id);
        ngx_http_agent_graph_cancel(turn->run);
    }

    if (turn->locked) {
        ngx_http_agent_store_unlock(&turn->session_id, &turn->run_id);
        turn->locked = 0;
    }

    if (turn->lease.timer_set) {
        ngx_del_timer(&turn->lease);
    }

    ngx_http_agent_turn_track(turn, 0);

    ngx_http_agent_sse_stop(&turn->sse);
}


static void
ngx_http_agent_turn_track(ngx_http_agent_turn_t *turn, ngx_uint_t on)
{
    if (ngx_http_agent_turns.next == NULL) {
        ngx_queue_init(&ngx_http_agent_turns);
    }

    if (!on) {
        if (turn->queued) {
            ngx_queue_remove(&turn->queue);
            turn->queued = 0;
        }

        return;
    }

    ngx_queue_insert_tail(&ngx_http_agent_turns, &turn->queue);
    turn->queued = 1;

    if (!ngx_http_agent_exit_watch.timer_set) {
        ngx_http_agent_exit_watch.handler = ngx_http_agent_turn_exit_watch;
        ngx_http_agent_exit_watch.log = ngx_cycle->log;
        ngx_http_agent_exit_watch.cancelable = 1;
        ngx_add_timer(&ngx_http_agent_exit_watch, 1000);
    }
}


/*
 * A graceful shutdown (nginx -s quit, reload) lets running turns finish;
 * with worker_shutdown_timeout set, a turn still running half a second
 * before it ends with an error event, the steps it completed saved,
 * rather than be cut off without a word when nginx closes its connection.
 */

static void
ngx_http_agent_turn_exit_watch(ngx_event_t *ev)
{
    ngx_msec_t              timeout;
    ngx_queue_t            *q;
    ngx_core_conf_t        *ccf;
    ngx_http_agent_run_t   *run;
    ngx_http_agent_turn_t  *turn;

    if (ngx_queue_empty(&ngx_http_agent_turns)) {
        return;
    }

    if (!ngx_exiting) {
        ngx_add_timer(ev, 1000);
        return;
    }

    ccf = (ngx_core_conf_t *) ngx_get_conf(ngx_cycle->conf_ctx,
                                           ngx_core_module);
    timeout = ccf->shutdown_timeout;

    if (timeout == 0) {
        /* nginx waits for the turns: so do they */
        return;
    }

    if (ngx_http_agent_exit_start == 0) {
        ngx_http_agent_exit_start = ngx_current_msec;
    }

    if (ngx_current_msec - ngx_http_agent_exit_start + 500 < timeout) {
        ngx_add_timer(ev, 100);
        return;
    }

    while (!ngx_queue_empty(&ngx_http_agent_turns)) {
        q = ngx_queue_head(&ngx_http_agent_turns);
        turn = ngx_queue_data(q, ngx_http_agent_turn_t, queue);

        ngx_queue_remove(q);
        turn->queued = 0;

        run = turn->run;

        if (run == NULL || run->finished) {
            continue;
        }

        ngx_log_error(NGX_LOG_NOTICE, ev->log, 0, "agent: the worker is "
                      "shutting down, turn on session \"%V\" ends",
                      &turn->session_id);

        ngx_http_agent_graph_cancel(run);
        (void) ngx_http_agent_graph_fail(run, "shutdown", "the server is "
                                         "shutting down; the steps of this "
                                         "turn that completed are saved, "
                                         "send the message again");
        ngx_http_agent_turn_done(run, NGX_ERROR);
    }
}


static void
ngx_http_agent_turn_lease(ngx_event_t *ev)
{
    ngx_http_agent_turn_t *turn = ev->data;

    if (!turn->locked) {
        return;
    }

    if (ngx_http_agent_store_lock_renew(&turn->session_id, &turn->run_id,
                                        turn->lease_ms)
        != NGX_OK)
    {
        ngx_log_error(NGX_LOG_WARN, ev->log, 0, "agent: the lease of "
                      "session \"%V\" could not be renewed",
                      &turn->session_id);
    }

    ngx_add_timer(ev, turn->lease_ms / 3);
}
