
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store_run.h"


/*
 * The crons' ticks.  Each worker of each host that serves the store looks
 * once a second (each at its own moment in the second) for crons due; of
 * each one due, it moves the next run to the schedule's next time after
 * now, through the store, from the time it read: one worker of all moves
 * it (cron_claim), and that one fires the tick.  A tick fires as a run
 * made on the location that made the cron, without a client (the
 * request made again, as a run taken over is: request/headless.c), by
 * the cron's owner: POST /threads/{id}/runs for a cron of a thread,
 * POST /runs for one that runs each time on a thread of its own.
 *
 * Ticks missed while no nginx served the store are not made up: the
 * first look after fires the cron once, and its next run is the next
 * time after now (LangGraph's way).
 */


#define NGX_HTTP_AGENT_CRON_EVERY  1000


typedef enum {
    NGX_HTTP_AGENT_CRON_DUE = 0,
    NGX_HTTP_AGENT_CRON_CLAIM
} ngx_http_agent_lg_cron_phase_e;


typedef struct {
    ngx_event_t                        timer;
    ngx_pool_t                        *pool;      /* a look's */
    ngx_http_agent_store_call_t        sc;
    ngx_array_t                       *due;
    ngx_uint_t                         i;
    int64_t                            next;      /* the one claimed's */
    ngx_http_agent_lg_cron_phase_e     phase;
    ngx_array_t                       *doors;
    ngx_log_t                         *log;
} ngx_http_agent_lg_cron_tick_t;


static void ngx_http_agent_lg_cron_tick(ngx_event_t *ev);
static void ngx_http_agent_lg_cron_wake(ngx_http_agent_store_call_t *sc);
static void ngx_http_agent_lg_cron_pass(ngx_http_agent_lg_cron_tick_t *t);
static int64_t ngx_http_agent_lg_cron_after(ngx_http_agent_cron_row_t *row,
    ngx_pool_t *pool, ngx_log_t *log);
static void ngx_http_agent_lg_cron_fire(ngx_http_agent_lg_cron_tick_t *t,
    ngx_http_agent_cron_row_t *row);
static ngx_int_t ngx_http_agent_lg_cron_copy(ngx_pool_t *pool,
    ngx_http_agent_cron_row_t *to, ngx_http_agent_cron_row_t *from);
static void ngx_http_agent_lg_cron_again(ngx_http_agent_lg_cron_tick_t *t);


static ngx_http_agent_lg_cron_tick_t  ngx_http_agent_lg_cron_ticks;


/* in each worker, where a LangGraph API location is served */

void
ngx_http_agent_lg_cron_init(ngx_cycle_t *cycle, ngx_array_t *doors)
{
    ngx_uint_t                      i;
    ngx_http_agent_door_t          *door;
    ngx_http_agent_loc_conf_t      *alcf;
    ngx_http_agent_lg_cron_tick_t  *t;

    t = &ngx_http_agent_lg_cron_ticks;

    if (doors == NULL) {
        return;
    }

    door = doors->elts;

    for (i = 0; i < doors->nelts; i++) {
        alcf = door[i].conf->loc_conf[ngx_http_agent_module.ctx_index];

        if (alcf->proto
            && (alcf->proto->flags & NGX_HTTP_AGENT_PROTO_CRONS))
        {
            break;
        }
    }

    if (i == doors->nelts) {
        return;
    }

    ngx_memzero(t, sizeof(ngx_http_agent_lg_cron_tick_t));

    t->doors = doors;
    t->log = cycle->log;
    t->timer.handler = ngx_http_agent_lg_cron_tick;
    t->timer.data = t;
    t->timer.log = cycle->log;
    t->timer.cancelable = 1;

    ngx_add_timer(&t->timer, NGX_HTTP_AGENT_CRON_EVERY
                             + (ngx_msec_t) (ngx_pid % 500));
}


static void
ngx_http_agent_lg_cron_tick(ngx_event_t *ev)
{
    ngx_http_agent_lg_cron_tick_t *t = ev->data;

    if (ngx_exiting || ngx_terminate || ngx_quit) {
        return;
    }

    t->pool = ngx_create_pool(4096, t->log);
    if (t->pool == NULL) {
        ngx_http_agent_lg_cron_again(t);
        return;
    }

    t->due = ngx_array_create(t->pool, 8, sizeof(ngx_http_agent_cron_row_t));
    if (t->due == NULL) {
        ngx_http_agent_lg_cron_again(t);
        return;
    }

    ngx_http_agent_store_call_init(&t->sc, t->pool, t->log,
                                   ngx_http_agent_lg_cron_wake, t);
    t->phase = NGX_HTTP_AGENT_CRON_DUE;
    t->i = 0;

    ngx_http_agent_lg_cron_pass(t);
}


static void
ngx_http_agent_lg_cron_wake(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_lg_cron_pass(sc->data);
}


/* one pass of the look's phase; again from its start on each answer */

static void
ngx_http_agent_lg_cron_pass(ngx_http_agent_lg_cron_tick_t *t)
{
    ngx_int_t                   rc;
    ngx_http_agent_cron_row_t  *row;

    t->sc.n = 0;

    if (t->phase == NGX_HTTP_AGENT_CRON_DUE) {
        rc = ngx_http_agent_store_cron_due(&t->sc, ngx_time(), t->due);
        if (rc == NGX_AGAIN) {
            return;
        }

        ngx_http_agent_store_call_reset(&t->sc);

        if (rc != NGX_OK) {
            t->due->nelts = 0;
        }

        t->phase = NGX_HTTP_AGENT_CRON_CLAIM;
        t->i = 0;
        t->next = -1;
    }

    row = t->due->elts;

    while (t->i < t->due->nelts) {

        /* the next time after now, the same in each pass of the claim */

        if (t->next == -1) {
            t->next = ngx_http_agent_lg_cron_after(&row[t->i], t->pool,
                                                   t->log);
        }

        rc = ngx_http_agent_store_cron_claim(&t->sc, &row[t->i].cron_id,
                                             row[t->i].next_run, t->next);
        if (rc == NGX_AGAIN) {
            return;
        }

        ngx_http_agent_store_call_reset(&t->sc);

        if (rc == NGX_OK) {
            ngx_http_agent_lg_cron_fire(t, &row[t->i]);
        }

        /* NGX_DECLINED: another worker fired it */

        t->i++;
        t->next = -1;
    }

    ngx_http_agent_lg_cron_again(t);
}


/* the cron's next run after now; 0: none (its end, or a bad document) */

static int64_t
ngx_http_agent_lg_cron_after(ngx_http_agent_cron_row_t *row,
    ngx_pool_t *pool, ngx_log_t *log)
{
    int64_t                 next, until;
    yajl_val                doc, x;
    ngx_str_t               s, zone;
    ngx_http_agent_tz_t    *tz;
    ngx_http_agent_cron_t   cron;

    doc = ngx_http_agent_json_parse(pool, row->doc.data, row->doc.len, NULL);

    ngx_str_null(&zone);

    if (doc == NULL
        || ngx_http_agent_json_get_str(doc, "schedule", &s) != NGX_OK
        || ngx_http_agent_cron_parse(&s, &cron) != NGX_OK
        || ngx_http_agent_json_get_str(doc, "timezone", &zone) == NGX_ERROR
        || (tz = ngx_http_agent_tz_get(&zone, log)) == NULL)
    {
        ngx_log_error(NGX_LOG_ERR, log, 0,
                      "agent: cron \"%V\" has no schedule that can be read, "
                      "it fires no more", &row->cron_id);
        return 0;
    }

    next = ngx_http_agent_cron_next(&cron, tz, ngx_time());

    x = ngx_http_agent_json_get(doc, "end_time");

    if (next > 0 && x && YAJL_IS_STRING(x)) {
        s.data = (u_char *) YAJL_GET_STRING(x);
        s.len = ngx_strlen(s.data);

        if (ngx_http_agent_cron_time(&s, &until) == NGX_OK && next > until) {
            next = 0;
        }
    }

    return next > 0 ? next : 0;
}


/* the tick's run: a request on the cron's location, by its owner */

static void
ngx_http_agent_lg_cron_fire(ngx_http_agent_lg_cron_tick_t *t,
    ngx_http_agent_cron_row_t *row)
{
    ngx_http_request_t         *r;
    ngx_http_agent_ctx_t       *ctx;
    ngx_http_agent_door_t      *door;
    ngx_http_agent_loc_conf_t  *alcf;
    ngx_http_agent_cron_row_t  *cron;

    door = ngx_http_agent_turn_redrive_door(t->doors, &row->origin);
    alcf = door ? door->conf->loc_conf[ngx_http_agent_module.ctx_index]
                : NULL;

    if (alcf == NULL || alcf->proto == NULL
        || !(alcf->proto->flags & NGX_HTTP_AGENT_PROTO_CRONS)
        || alcf->redrive == NULL)
    {
        ngx_log_error(NGX_LOG_ERR, t->log, 0,
                      "agent: cron \"%V\" is due, but its location \"%V\" "
                      "is not served any more", &row->cron_id, &row->origin);
        return;
    }

    r = ngx_http_agent_headless_create(door->conf, &door->name, t->log);
    if (r == NULL) {
        return;
    }

    ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_ctx_t));
    cron = ngx_palloc(r->pool, sizeof(ngx_http_agent_cron_row_t));

    if (ctx == NULL || cron == NULL
        || ngx_http_agent_lg_cron_copy(r->pool, cron, row) != NGX_OK)
    {
        ngx_http_agent_headless_close(r);
        return;
    }

    ngx_http_set_ctx(r, ctx, ngx_http_agent_module);

    ctx->headless = 1;
    ctx->cron = cron;

    if (cron->owner.len) {
        ctx->owner_value = cron->owner;
        ctx->owner = &ctx->owner_value;
    }

    /* counted as the request that made the cron was */
    ctx->limit_keys = cron->limit_keys;

    ngx_log_error(NGX_LOG_INFO, t->log, 0, "agent: cron \"%V\" fires",
                  &cron->cron_id);

    /* the location's handler ends the request, whatever it says */
    (void) alcf->redrive(r, NULL);
}


static ngx_int_t
ngx_http_agent_lg_cron_copy(ngx_pool_t *pool, ngx_http_agent_cron_row_t *to,
    ngx_http_agent_cron_row_t *from)
{
    ngx_uint_t   i;
    ngx_str_t   *s;

    static size_t  strs[] = {
        offsetof(ngx_http_agent_cron_row_t, cron_id),
        offsetof(ngx_http_agent_cron_row_t, owner),
        offsetof(ngx_http_agent_cron_row_t, assistant_id),
        offsetof(ngx_http_agent_cron_row_t, thread_id),
        offsetof(ngx_http_agent_cron_row_t, origin),
        offsetof(ngx_http_agent_cron_row_t, limit_keys),
        offsetof(ngx_http_agent_cron_row_t, doc)
    };

    *to = *from;

    for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
        s = (ngx_str_t *) ((u_char *) to + strs[i]);

        if (s->len == 0) {
            continue;
        }

        s->data = ngx_pstrdup(pool, s);
        if (s->data == NULL) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


static void
ngx_http_agent_lg_cron_again(ngx_http_agent_lg_cron_tick_t *t)
{
    if (t->pool) {
        ngx_http_agent_store_cancel(&t->sc);
        ngx_destroy_pool(t->pool);
        t->pool = NULL;
    }

    if (ngx_exiting || ngx_terminate || ngx_quit) {
        return;
    }

    ngx_add_timer(&t->timer, NGX_HTTP_AGENT_CRON_EVERY);
}


/*
 * A tick's request: the cron's run payload, its assistant, its metadata
 * and its id as the run's metadata; the run goes on without a client
 */

ngx_int_t
ngx_http_agent_lg_cron_request(ngx_http_request_t *r,
    ngx_http_agent_cron_row_t *row, ngx_str_t *uri, ngx_str_t *body)
{
    u_char                     *p;
    size_t                      i;
    yajl_val                    doc, payload, meta, x;
    ngx_str_t                   keep;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    doc = ngx_http_agent_json_parse(r->pool, row->doc.data, row->doc.len,
                                    NULL);
    if (doc == NULL) {
        return NGX_DECLINED;
    }

    payload = ngx_http_agent_json_get(doc, "payload");
    meta = ngx_http_agent_json_get(doc, "metadata");

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }


    for (i = 0; payload && YAJL_IS_OBJECT(payload)
                && i < payload->u.object.len; i++)
    {
        x = payload->u.object.values[i];

        if (ngx_strcmp(payload->u.object.keys[i], "on_disconnect") == 0
            || ngx_strcmp(payload->u.object.keys[i], "on_completion") == 0
            || (ngx_strcmp(payload->u.object.keys[i], "multitask_strategy")
                == 0 && (row->thread_id.len == 0 || YAJL_IS_NULL(x))))
        {
            continue;
        }

        ngx_http_agent_json_cstr(j, payload->u.object.keys[i]);
        ngx_http_agent_json_val(j, x);
    }

    ngx_http_agent_json_key(j, "assistant_id");
    ngx_http_agent_json_str(j, &row->assistant_id);

    ngx_http_agent_json_key(j, "metadata");
    ngx_http_agent_json_obj(j);

    for (i = 0; meta && YAJL_IS_OBJECT(meta) && i < meta->u.object.len; i++)
    {
        if (ngx_strcmp(meta->u.object.keys[i], "cron_id") != 0) {
            ngx_http_agent_json_cstr(j, meta->u.object.keys[i]);
            ngx_http_agent_json_val(j, meta->u.object.values[i]);
        }
    }

    ngx_http_agent_json_key(j, "cron_id");
    ngx_http_agent_json_str(j, &row->cron_id);
    ngx_http_agent_json_end(j);

    ngx_http_agent_json_key(j, "on_disconnect");
    ngx_http_agent_json_cstr(j, "continue");

    if (row->thread_id.len) {
        /* a tick while the thread runs waits for it */

        x = payload ? ngx_http_agent_json_get(payload, "multitask_strategy")
                    : NULL;

        if (x == NULL || YAJL_IS_NULL(x)) {
            ngx_http_agent_json_key(j, "multitask_strategy");
            ngx_http_agent_json_cstr(j, "enqueue");
        }

    } else {
        ngx_http_agent_json_key(j, "on_completion");

        if (ngx_http_agent_json_get_str(doc, "on_run_completed", &keep)
            == NGX_OK
            && keep.len == 4 && ngx_strncmp(keep.data, "keep", 4) == 0)
        {
            ngx_http_agent_json_cstr(j, "keep");

        } else {
            ngx_http_agent_json_cstr(j, "delete");
        }
    }

    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, body) != NGX_OK) {
        return NGX_ERROR;
    }

    uri->data = ngx_pnalloc(r->pool, alcf->location.len
                                     + sizeof("/threads//runs") - 1
                                     + row->thread_id.len);
    if (uri->data == NULL) {
        return NGX_ERROR;
    }

    if (row->thread_id.len) {
        /* its thread named as its owner's client names it */
        p = ngx_sprintf(uri->data, "%V/threads/%*s/runs", &alcf->location,
                        ngx_http_agent_store_id_shown(&row->thread_id),
                        row->thread_id.data);

    } else {
        p = ngx_sprintf(uri->data, "%V/runs", &alcf->location);
    }

    uri->len = p - uri->data;

    return NGX_OK;
}
