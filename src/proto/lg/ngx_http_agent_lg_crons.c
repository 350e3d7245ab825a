
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_ops.h"
#include "ngx_http_agent_store_run.h"


/*
 * The LangGraph API's crons: a run made on a schedule, on a thread
 * (POST /threads/{id}/runs/crons) or each time on a thread of its own
 * (POST /runs/crons); updated (PATCH /runs/crons/{id}), deleted,
 * searched and counted.  The store keeps them for their owner, the
 * location that made one fires it (lg_cron_tick.c).  A cron's row keeps
 * its schedule and its run's payload in a document:
 *
 *   {"schedule": ..., "timezone": ..., "end_time": ...,
 *    "on_run_completed": ..., "metadata": {...}, "payload": {...}}
 */


/* what a cron's request says of the cron itself, not of its runs */
static char  *ngx_http_agent_lg_cron_own[] = {
    "schedule", "timezone", "end_time", "enabled", "on_run_completed",
    "metadata", "assistant_id", "thread_id", NULL
};


static ngx_int_t ngx_http_agent_lg_cron_found(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_int_t rc);
static ngx_int_t ngx_http_agent_lg_cron_write(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, yajl_val v, ngx_http_agent_cron_row_t *old);
static ngx_int_t ngx_http_agent_lg_cron_next(ngx_http_request_t *r,
    yajl_val schedule, yajl_val timezone, yajl_val end,
    ngx_http_agent_cron_row_t *row);
static ngx_uint_t ngx_http_agent_lg_cron_is(char **names, const char *key);
static yajl_val ngx_http_agent_lg_cron_get(yajl_val v, yajl_val old,
    const char *key);


ngx_int_t
ngx_http_agent_lg_crons(ngx_http_request_t *r, ngx_http_agent_lg_req_t *req,
    ngx_str_t *body)
{
    yajl_val                    v;
    ngx_int_t                   rc;
    ngx_http_agent_ctx_t       *ctx;
    ngx_http_agent_cron_row_t   old;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    if (req->route == NGX_HTTP_AGENT_LG_CRON && r->method == NGX_HTTP_DELETE) {
        rc = ngx_http_agent_store_cron_delete(ngx_http_agent_reply_sc(r),
                                              ctx->owner, &req->id);
        if (rc != NGX_OK) {
            return ngx_http_agent_lg_cron_found(r, req, rc);
        }

        return ngx_http_agent_reply_send(r, NGX_HTTP_NO_CONTENT, NULL);
    }

    rc = ngx_http_agent_reply_parse(r, body, &v,
                                    req->route != NGX_HTTP_AGENT_LG_CRONS);
    if (rc != NGX_OK) {
        return rc;
    }

    switch (req->route) {

    case NGX_HTTP_AGENT_LG_CRONS:
        return ngx_http_agent_lg_cron_write(r, req, v, NULL);

    case NGX_HTTP_AGENT_LG_CRON:
        rc = ngx_http_agent_store_cron_get(ngx_http_agent_reply_sc(r),
                                           ctx->owner, &req->id, &old);
        if (rc != NGX_OK) {
            return ngx_http_agent_lg_cron_found(r, req, rc);
        }

        return ngx_http_agent_lg_cron_write(r, req, v, &old);

    default:
        return ngx_http_agent_lg_cron_search(r, req, v);
    }
}


/* a cron's read or removal that is not NGX_OK: NGX_AGAIN, 404 or 500 */

static ngx_int_t
ngx_http_agent_lg_cron_found(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_int_t rc)
{
    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "Cron \"%V\" not found", &req->id);
    }

    return (rc == NGX_AGAIN) ? NGX_AGAIN : NGX_HTTP_INTERNAL_SERVER_ERROR;
}


/*
 * A cron made (old NULL) or updated: its schedule checked and its next
 * run found, its assistant and thread the owner's, its webhook allowed
 */

static ngx_int_t
ngx_http_agent_lg_cron_write(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, yajl_val v, ngx_http_agent_cron_row_t *old)
{
    size_t                           i;
    yajl_val                         od, op, x, meta;
    ngx_int_t                        rc;
    ngx_str_t                        s, assistant;
    ngx_uint_t                       enabled;
    ngx_http_agent_ctx_t            *ctx;
    ngx_http_agent_json_t           *j;
    ngx_http_agent_graph_t          *graph;
    ngx_http_agent_lg_cron_t         c;
    ngx_http_agent_session_t         session;
    ngx_http_agent_loc_conf_t       *alcf;
    ngx_http_agent_cron_row_t        row;
    ngx_http_agent_assistant_row_t   arow;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    ngx_memzero(&row, sizeof(ngx_http_agent_cron_row_t));

    od = NULL;

    if (old) {
        row = *old;

        od = ngx_http_agent_json_parse(r->pool, old->doc.data, old->doc.len,
                                       NULL);
        if (od == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    op = od ? ngx_http_agent_json_get(od, "payload") : NULL;

    /* its assistant, and its thread: the owner's */

    if (old == NULL) {
        if (ngx_http_agent_json_get_str(v, "assistant_id", &assistant)
            != NGX_OK)
        {
            return ngx_http_agent_reply_error(r, 422, "\"assistant_id\" is "
                                              "required: a graph's name or "
                                              "its assistant id");
        }

        rc = ngx_http_agent_lg_assistant_find(r, &assistant, &graph, &arow);

        if (rc == NGX_DECLINED) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                              "No assistant found for "
                                              "\"%V\"", &assistant);
        }

        if (rc != NGX_OK) {
            return rc == NGX_AGAIN ? NGX_AGAIN
                                   : NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        row.assistant_id = assistant;

        if (req->thread_id.len) {
            rc = ngx_http_agent_reply_session_get(r, &req->thread_id,
                                                  &session);
            if (rc != NGX_OK) {
                return rc;
            }

            row.thread_id = req->thread_id;
        }

        /* the same id in each pass of the request */

        if (ngx_http_agent_lg_made(r, &row.cron_id) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
        row.origin = alcf->location;

        if (ctx->owner) {
            row.owner = *ctx->owner;
        }
    }

    /* its schedule, in its time zone, until its end */

    rc = ngx_http_agent_lg_cron_next(r,
                      ngx_http_agent_lg_cron_get(v, od, "schedule"),
                      ngx_http_agent_lg_cron_get(v, od, "timezone"),
                      ngx_http_agent_lg_cron_get(v, od, "end_time"), &row);
    if (rc != NGX_OK) {
        return rc;
    }

    x = ngx_http_agent_json_get(v, "enabled");
    enabled = old ? old->enabled : 1;

    if (x && !YAJL_IS_NULL(x)) {
        if (!YAJL_IS_TRUE(x) && !YAJL_IS_FALSE(x)) {
            return ngx_http_agent_reply_error(r, 422, "\"enabled\" is true "
                                              "or false");
        }

        enabled = YAJL_IS_TRUE(x);
    }

    row.enabled = enabled;

    x = ngx_http_agent_lg_cron_get(v, od, "on_run_completed");

    if (row.thread_id.len == 0 && x && !YAJL_IS_NULL(x)
        && (!YAJL_IS_STRING(x)
            || (ngx_strcmp(x->u.string, "delete") != 0
                && ngx_strcmp(x->u.string, "keep") != 0)))
    {
        return ngx_http_agent_reply_error(r, 422, "\"on_run_completed\" is "
                                          "\"delete\" or \"keep\"");
    }

    meta = ngx_http_agent_json_get(v, "metadata");

    if (meta && !YAJL_IS_NULL(meta) && !YAJL_IS_OBJECT(meta)) {
        return ngx_http_agent_reply_error(r, 422, "\"metadata\" is an "
                                          "object");
    }

    rc = ngx_http_agent_lg_webhook(r, v, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    /* the document: the cron's own, and its runs' payload */

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }


    for (i = 0; i < 3; i++) {
        /* schedule, timezone, end_time */
        ngx_http_agent_json_cstr(j, ngx_http_agent_lg_cron_own[i]);
        x = ngx_http_agent_lg_cron_get(v, od, ngx_http_agent_lg_cron_own[i]);

        if (x) {
            ngx_http_agent_json_val(j, x);

        } else {
            ngx_http_agent_json_null(j);
        }
    }

    /* a thread of its own for each run: deleted after it, or kept */

    ngx_http_agent_json_key(j, "on_run_completed");
    x = ngx_http_agent_lg_cron_get(v, od, "on_run_completed");

    if (row.thread_id.len) {
        ngx_http_agent_json_null(j);

    } else if (x && YAJL_IS_STRING(x)) {
        ngx_http_agent_json_val(j, x);

    } else {
        ngx_http_agent_json_cstr(j, "delete");
    }

    ngx_http_agent_json_key(j, "metadata");
    ngx_http_agent_json_merge(j, od ? ngx_http_agent_json_get(od, "metadata")
                                    : NULL,
                              meta && YAJL_IS_OBJECT(meta) ? meta : NULL);

    /* the payload: the old one's keys the request does not name, then its */

    ngx_http_agent_json_key(j, "payload");
    ngx_http_agent_json_obj(j);

    for (i = 0; op && YAJL_IS_OBJECT(op) && i < op->u.object.len; i++) {
        if (ngx_http_agent_json_get(v, op->u.object.keys[i]) == NULL) {
            ngx_http_agent_json_cstr(j, op->u.object.keys[i]);
            ngx_http_agent_json_val(j, op->u.object.values[i]);
        }
    }

    for (i = 0; i < v->u.object.len; i++) {
        if (!ngx_http_agent_lg_cron_is(ngx_http_agent_lg_cron_own,
                                       v->u.object.keys[i]))
        {
            ngx_http_agent_json_cstr(j, v->u.object.keys[i]);
            ngx_http_agent_json_val(j, v->u.object.values[i]);
        }
    }

    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &row.doc) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_agent_lg_now(r, &row.updated_at) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (old == NULL) {
        row.created_at = row.updated_at;
    }

    /*
     * the keys of its limits, as this request has them: its ticks have no
     * client; an update keeps its maker's
     */

    if (row.limit_keys.len == 0
        && ngx_http_agent_limit_keys(r, alcf->limits, &row.limit_keys)
           != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_agent_store_cron_put(ngx_http_agent_reply_sc(r), &row);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    c.row = &row;
    c.doc = ngx_http_agent_json_parse(r->pool, row.doc.data, row.doc.len,
                                      NULL);
    if (c.doc == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_lg_cron_search_json(j, &c, (ngx_uint_t) -1);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/* a value of the request, or the old document's when it names none */

static yajl_val
ngx_http_agent_lg_cron_get(yajl_val v, yajl_val old, const char *key)
{
    yajl_val  x;

    x = ngx_http_agent_json_get(v, key);

    if (x == NULL && old) {
        x = ngx_http_agent_json_get(old, key);
    }

    return x;
}


/* the cron's next run from now: its schedule in its zone, before its end */

static ngx_int_t
ngx_http_agent_lg_cron_next(ngx_http_request_t *r, yajl_val schedule,
    yajl_val timezone, yajl_val end, ngx_http_agent_cron_row_t *row)
{
    int64_t                 next, until;
    ngx_str_t               s;
    ngx_http_agent_tz_t    *tz;
    ngx_http_agent_cron_t   cron;

    if (schedule == NULL || !YAJL_IS_STRING(schedule)) {
        return ngx_http_agent_reply_error(r, 422, "\"schedule\" is "
                                          "required: a cron schedule, "
                                          "\"minute hour day month "
                                          "weekday\"");
    }

    s.data = (u_char *) YAJL_GET_STRING(schedule);
    s.len = ngx_strlen(s.data);

    if (ngx_http_agent_cron_parse(&s, &cron) != NGX_OK) {
        return ngx_http_agent_reply_error(r, 422, "\"schedule\" is not a "
                                          "cron schedule: \"%V\"", &s);
    }

    ngx_str_null(&s);

    if (timezone && !YAJL_IS_NULL(timezone)) {
        if (!YAJL_IS_STRING(timezone)) {
            return ngx_http_agent_reply_error(r, 422, "\"timezone\" is an "
                                              "IANA time zone's name");
        }

        s.data = (u_char *) YAJL_GET_STRING(timezone);
        s.len = ngx_strlen(s.data);
    }

    tz = ngx_http_agent_tz_get(&s, r->connection->log);

    if (tz == NULL) {
        return ngx_http_agent_reply_error(r, 422, "\"timezone\" is not a "
                                          "known time zone: \"%V\"", &s);
    }

    until = 0;

    if (end && !YAJL_IS_NULL(end)) {
        s.data = YAJL_IS_STRING(end) ? (u_char *) YAJL_GET_STRING(end)
                                     : NULL;
        s.len = s.data ? ngx_strlen(s.data) : 0;

        if (s.data == NULL || ngx_http_agent_cron_time(&s, &until) != NGX_OK)
        {
            return ngx_http_agent_reply_error(r, 422, "\"end_time\" is an "
                                              "ISO 8601 time");
        }
    }

    next = ngx_http_agent_cron_next(&cron, tz, ngx_time());

    if (next < 0) {
        return ngx_http_agent_reply_error(r, 422, "\"schedule\" names no "
                                          "time that comes");
    }

    row->next_run = (end && !YAJL_IS_NULL(end) && next > until) ? 0 : next;

    return NGX_OK;
}


static ngx_uint_t
ngx_http_agent_lg_cron_is(char **names, const char *key)
{
    ngx_uint_t  i;

    for (i = 0; names[i]; i++) {
        if (ngx_strcmp(names[i], key) == 0) {
            return 1;
        }
    }

    return 0;
}
