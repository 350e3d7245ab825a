
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
#include "ngx_http_agent_ops.h"


/*
 * A2A's push notifications, through the webhook sender (ops/webhook.c:
 * the curl bridge, retries and back-off, only to URLs agent_webhooks
 * allows, signed under its key_env).  A message's configuration names
 * one (1.0: taskPushNotificationConfig; 0.3: pushNotificationConfig): it
 * is checked at once (an URL agent_webhooks does not allow is refused)
 * and kept with the task, so that any worker that ends the task (a
 * take-over too) sends it: its URL, id and scheme in its run's kwargs,
 * written by our generator; the header line that carries its token or
 * credentials in the run's secret, a column that no API reads (the
 * LangGraph API's runs show kwargs) and that the run's end empties.  At
 * the task's end (completed, input-required, failed, canceled) the task
 * goes to the URL as the revision that named it writes one: 1.0 a
 * StreamResponse, {"task": Task}; 0.3 the Task; with the token in
 * X-A2A-Notification-Token, or "Authorization: SCHEME CREDENTIALS"; its
 * webhook-id is the task's.  GetTaskPushNotificationConfig and its list
 * read it back, without the token and the credentials; a config is not
 * made or deleted on its own.
 */


#define NGX_HTTP_AGENT_A2A_PUSH_TOKEN   512
#define NGX_HTTP_AGENT_A2A_PUSH_CREDS   4096


/* a task taken over from a worker that died: its push notification */
ngx_http_agent_turn_hooks_t  ngx_http_agent_a2a_takeover_hooks = {
    NULL,
    NULL,
    NULL,
    NULL,
    ngx_http_agent_a2a_push_done,
    NULL,
    NULL
};


static ngx_uint_t ngx_http_agent_a2a_push_safe(ngx_str_t *s, size_t max,
    ngx_uint_t space);
static ngx_int_t ngx_http_agent_a2a_push_secret(ngx_pool_t *pool,
    ngx_http_agent_a2a_push_t *push, ngx_str_t *secret);
static ngx_int_t ngx_http_agent_a2a_push_kept(ngx_pool_t *pool,
    ngx_str_t *kwargs, ngx_http_agent_a2a_push_t *push);
static void ngx_http_agent_a2a_push_config_json(ngx_http_agent_json_t *j,
    ngx_http_agent_a2a_push_t *push, ngx_str_t *task, ngx_uint_t legacy);


/*
 * a message's config, read and checked; kwargs and secret get it (or
 * stay empty)
 */

ngx_int_t
ngx_http_agent_a2a_push_read(ngx_http_request_t *r, yajl_val params,
    ngx_uint_t legacy, ngx_str_t *kwargs, ngx_str_t *secret, ngx_int_t *code,
    ngx_str_t *why)
{
    yajl_val                    conf, cfg, auth, schemes;
    ngx_str_t                   s;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_loc_conf_t  *alcf;
    ngx_http_agent_a2a_push_t   push;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    conf = ngx_http_agent_json_get(params, "configuration");
    cfg = (conf && YAJL_IS_OBJECT(conf))
          ? ngx_http_agent_json_get(conf, legacy ? "pushNotificationConfig"
                                                 : "taskPushNotificationConfig")
          : NULL;

    if (cfg == NULL || YAJL_IS_NULL(cfg)) {
        return NGX_OK;
    }

    *code = NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS;
    ngx_memzero(&push, sizeof(ngx_http_agent_a2a_push_t));
    push.legacy = legacy;

    if (alcf->webhooks == NULL) {
        *code = NGX_HTTP_AGENT_A2A_PUSH_UNSUPPORTED;
        ngx_str_set(why, "Push Notification is not supported: this agent "
                    "allows no URL (agent_webhooks)");
        return NGX_DECLINED;
    }

    if (!YAJL_IS_OBJECT(cfg)
        || ngx_http_agent_json_get_str(cfg, "url", &push.url) != NGX_OK
        || !ngx_http_agent_webhook_allowed(alcf->webhooks, &push.url))
    {
        ngx_str_set(why, "Invalid params: the push notification's \"url\" "
                    "must be one this agent allows (agent_webhooks)");
        return NGX_DECLINED;
    }

    if (ngx_http_agent_json_get_str(cfg, "id", &push.id) == NGX_ERROR
        || push.id.len > 64
        || !ngx_http_agent_a2a_push_safe(&push.id, 64, 0)
        || ngx_http_agent_json_get_str(cfg, "token", &push.token)
           == NGX_ERROR
        || !ngx_http_agent_a2a_push_safe(&push.token,
                                         NGX_HTTP_AGENT_A2A_PUSH_TOKEN, 0))
    {
        ngx_str_set(why, "Invalid params: the push notification's \"id\" "
                    "and \"token\" must be strings of visible characters");
        return NGX_DECLINED;
    }

    auth = ngx_http_agent_json_get(cfg, "authentication");

    if (auth && YAJL_IS_OBJECT(auth)) {

        /* 1.0: "scheme"; 0.3: "schemes", the first */

        if (ngx_http_agent_json_get_str(auth, "scheme", &s) != NGX_OK) {
            schemes = ngx_http_agent_json_get(auth, "schemes");
            ngx_str_null(&s);

            if (schemes && YAJL_IS_ARRAY(schemes)
                && schemes->u.array.len
                && YAJL_IS_STRING(schemes->u.array.values[0]))
            {
                s.data = (u_char *)
                         YAJL_GET_STRING(schemes->u.array.values[0]);
                s.len = ngx_strlen(s.data);
            }
        }

        push.scheme = s;

        if (ngx_http_agent_json_get_str(auth, "credentials",
                                        &push.credentials)
            == NGX_ERROR
            || !ngx_http_agent_a2a_push_safe(&push.scheme, 64, 0)
            || !ngx_http_agent_a2a_push_safe(&push.credentials,
                                             NGX_HTTP_AGENT_A2A_PUSH_CREDS,
                                             1))
        {
            ngx_str_set(why, "Invalid params: the push notification's "
                        "\"authentication\" must be a scheme and "
                        "credentials of visible characters");
            return NGX_DECLINED;
        }

    } else if (auth && !YAJL_IS_NULL(auth)) {
        ngx_str_set(why, "Invalid params: the push notification's "
                    "\"authentication\" must be an object");
        return NGX_DECLINED;
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_key(j, "push");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "url");
    ngx_http_agent_json_str(j, &push.url);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, &push.id);
    ngx_http_agent_json_key(j, "scheme");
    ngx_http_agent_json_str(j, &push.scheme);
    ngx_http_agent_json_key(j, "legacy");
    ngx_http_agent_json_bool(j, legacy);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_a2a_push_secret(r->pool, &push, secret) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_agent_json_done(j, kwargs);
}


/* the header line of its token or credentials, or empty */

static ngx_int_t
ngx_http_agent_a2a_push_secret(ngx_pool_t *pool,
    ngx_http_agent_a2a_push_t *push, ngx_str_t *secret)
{
    u_char  *p;

    ngx_str_null(secret);

    if (push->scheme.len && push->credentials.len) {
        p = ngx_pnalloc(pool, sizeof("Authorization: ") + push->scheme.len
                              + push->credentials.len);
        if (p == NULL) {
            return NGX_ERROR;
        }

        secret->data = p;
        secret->len = ngx_sprintf(p, "Authorization: %V %V", &push->scheme,
                                  &push->credentials)
                      - p;

    } else if (push->token.len) {
        p = ngx_pnalloc(pool, sizeof("X-A2A-Notification-Token: ")
                              + push->token.len);
        if (p == NULL) {
            return NGX_ERROR;
        }

        secret->data = p;
        secret->len = ngx_sprintf(p, "X-A2A-Notification-Token: %V",
                                  &push->token)
                      - p;
    }

    return NGX_OK;
}


/* a value for a header: visible ASCII (and spaces, if space), at most max */

static ngx_uint_t
ngx_http_agent_a2a_push_safe(ngx_str_t *s, size_t max, ngx_uint_t space)
{
    size_t  i;

    if (s->len > max) {
        return 0;
    }

    for (i = 0; i < s->len; i++) {
        if (s->data[i] > 0x7e
            || (s->data[i] < 0x21 && !(space && s->data[i] == ' ')))
        {
            return 0;
        }
    }

    return 1;
}


/* the turn's done hook: the task, as it ended, to its push URL */

void
ngx_http_agent_a2a_push_done(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev)
{
    ngx_str_t                    body, text, interrupt;
    ngx_http_request_t          *r;
    ngx_http_agent_json_t       *j;
    ngx_http_agent_a2a_out_t     o;
    ngx_http_agent_a2a_push_t    push;
    ngx_http_agent_loc_conf_t   *alcf;
    ngx_http_agent_turn_info_t   info;
    ngx_http_agent_a2a_state_e   state;
    ngx_http_agent_turn_record_t  *rec;

    ngx_http_agent_turn_info(turn, &info);
    r = info.request;
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    rec = ngx_http_agent_turn_in(turn)->record;

    if (alcf->webhooks == NULL || rec == NULL
        || ngx_http_agent_a2a_push_kept(r->pool, &rec->row.kwargs, &push)
           != NGX_OK)
    {
        return;
    }

    ngx_str_null(&interrupt);

    if (info.interrupted && info.run) {
        interrupt = info.run->interrupt;
    }

    ngx_http_agent_a2a_end(r->pool, ev, &interrupt, &state, &text);

    if (ev->type == NGX_HTTP_AGENT_EV_ERROR && ev->code
        && ev->code->len == 9
        && ngx_strncmp(ev->code->data, "cancelled", 9) == 0)
    {
        state = NGX_HTTP_AGENT_A2A_CANCELED;
    }

    ngx_memzero(&o, sizeof(ngx_http_agent_a2a_out_t));
    o.legacy = push.legacy;

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return;
    }

    /* 1.0: a StreamResponse; 0.3: the Task */

    if (!push.legacy) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "task");
    }

    ngx_http_agent_a2a_task(j, &o, info.run_id, info.session_id, state,
                            &text, state == NGX_HTTP_AGENT_A2A_COMPLETED);

    if (!push.legacy) {
        ngx_http_agent_json_end(j);
    }

    if (ngx_http_agent_json_done(j, &body) != NGX_OK) {
        return;
    }

    /* the secret: the row as it was made or taken over, in memory */

    if (ngx_http_agent_webhook_send(alcf->webhooks, &push.url, &body,
                                    &rec->row.secret, info.run_id,
                                    r->connection->log)
        != NGX_OK)
    {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "agent: the push notification of task \"%V\" is not "
                      "sent", info.run_id);
    }
}


/* the config kept in a task's kwargs, or NGX_DECLINED */

static ngx_int_t
ngx_http_agent_a2a_push_kept(ngx_pool_t *pool, ngx_str_t *kwargs,
    ngx_http_agent_a2a_push_t *push)
{
    yajl_val  v, p, legacy;

    ngx_memzero(push, sizeof(ngx_http_agent_a2a_push_t));

    if (kwargs->len == 0) {
        return NGX_DECLINED;
    }

    v = ngx_http_agent_json_parse(pool, kwargs->data, kwargs->len, NULL);
    p = v ? ngx_http_agent_json_get(v, "push") : NULL;

    if (p == NULL || !YAJL_IS_OBJECT(p)
        || ngx_http_agent_json_get_str(p, "url", &push->url) != NGX_OK
        || ngx_http_agent_json_get_str(p, "id", &push->id) != NGX_OK
        || ngx_http_agent_json_get_str(p, "scheme", &push->scheme) != NGX_OK)
    {
        return NGX_DECLINED;
    }

    legacy = ngx_http_agent_json_get(p, "legacy");
    push->legacy = (legacy && YAJL_IS_TRUE(legacy));

    return NGX_OK;
}


/*
 * GetTaskPushNotificationConfig and ListTaskPushNotificationConfigs (and
 * 0.3's tasks/pushNotificationConfig/get, /list) of a task read: its
 * config, without its token and credentials; list: none or one
 */

ngx_int_t
ngx_http_agent_a2a_push_answer(ngx_http_request_t *r,
    ngx_http_agent_a2a_out_t *o, ngx_http_agent_turn_outcome_t *out,
    ngx_uint_t list)
{
    ngx_int_t                  found;
    ngx_http_agent_json_t     *j;
    ngx_http_agent_a2a_push_t  push;

    found = (ngx_http_agent_a2a_push_kept(r->pool, &out->row.kwargs, &push)
             == NGX_OK);

    if (!list && !found) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_OK,
                                      NGX_HTTP_AGENT_A2A_TASK_NOT_FOUND,
                                      "Push notification config not found "
                                      "for task %V", &out->row.run_id);
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    o->bare = 1;
    ngx_http_agent_a2a_head(j, o);

    if (!list) {
        ngx_http_agent_a2a_push_config_json(j, &push, &out->row.run_id,
                                            o->legacy);

    } else {
        if (!o->legacy) {
            ngx_http_agent_json_obj(j);
            ngx_http_agent_json_key(j, "configs");
        }

        ngx_http_agent_json_arr(j);

        if (found) {
            ngx_http_agent_a2a_push_config_json(j, &push, &out->row.run_id,
                                                o->legacy);
        }

        ngx_http_agent_json_arr_end(j);

        if (!o->legacy) {
            ngx_http_agent_json_key(j, "nextPageToken");
            ngx_http_agent_json_cstr(j, "");
            ngx_http_agent_json_end(j);
        }
    }

    ngx_http_agent_a2a_tail(j, o);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/* 1.0's TaskPushNotificationConfig, flat; 0.3's with the config inside */

static void
ngx_http_agent_a2a_push_config_json(ngx_http_agent_json_t *j,
    ngx_http_agent_a2a_push_t *push, ngx_str_t *task, ngx_uint_t legacy)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "taskId");
    ngx_http_agent_json_str(j, task);

    if (legacy) {
        ngx_http_agent_json_key(j, "pushNotificationConfig");
        ngx_http_agent_json_obj(j);
    }

    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, push->id.len ? &push->id : task);
    ngx_http_agent_json_key(j, "url");
    ngx_http_agent_json_str(j, &push->url);

    if (push->scheme.len) {
        ngx_http_agent_json_key(j, "authentication");
        ngx_http_agent_json_obj(j);

        if (legacy) {
            ngx_http_agent_json_key(j, "schemes");
            ngx_http_agent_json_arr(j);
            ngx_http_agent_json_str(j, &push->scheme);
            ngx_http_agent_json_arr_end(j);

        } else {
            ngx_http_agent_json_key(j, "scheme");
            ngx_http_agent_json_str(j, &push->scheme);
        }

        ngx_http_agent_json_end(j);
    }

    if (legacy) {
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);
}
