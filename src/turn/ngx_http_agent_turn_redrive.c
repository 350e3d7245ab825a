
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"


/*
 * Runs that outlive their worker.  A worker killed mid-run (OOM, a crash,
 * kill -9) leaves its run "running" and its thread leased; nobody renews
 * the lease.  Each worker of each host that shares the store looks, once
 * a second, for such runs (the lease ran out, or its holder was a process
 * of this host that is gone), claims one through the store (one claimant
 * of all workers, its attempt counted), and drives it again where it ran:
 * its location's handler takes the run's request again without a client
 * (request/headless.c), and the protocol continues the run from its last
 * checkpoint under the same run id (the LangGraph API: lg_run_create.c).
 *
 * A run whose location is gone (a reload took it away), whose protocol
 * cannot continue it, or that was claimed more than agent_run_attempts
 * times ends "error", its outcome saying so, and its thread is let go.
 */


/*
 * a look each second, from each worker at its own time in the second; a
 * look that finds nothing doubles the wait, up to 8 s (a worker started in
 * place of one that died looks at once, and finds its runs)
 */
#define NGX_HTTP_AGENT_REDRIVE_EVERY  1000
#define NGX_HTTP_AGENT_REDRIVE_IDLE   8000

/* the claim's lease, until the run's turn takes it again as its own */
#define NGX_HTTP_AGENT_REDRIVE_HOLD   10000


/* the runs found orphaned at a look, ended if still so at the next */
#define NGX_HTTP_AGENT_REDRIVE_SEEN   8
#define NGX_HTTP_AGENT_REDRIVE_ID     64


typedef enum {
    NGX_HTTP_AGENT_REDRIVE_LOST = 0,
    NGX_HTTP_AGENT_REDRIVE_CLAIM,
    NGX_HTTP_AGENT_REDRIVE_WRITES,
    NGX_HTTP_AGENT_REDRIVE_ORPHANS,
    NGX_HTTP_AGENT_REDRIVE_END
} ngx_http_agent_redrive_phase_e;


typedef struct {
    ngx_event_t                       timer;
    ngx_pool_t                       *pool;      /* a look's */
    ngx_http_agent_store_call_t       sc;
    ngx_array_t                      *lost;
    ngx_http_agent_run_lost_t        *claimed;
    ngx_http_agent_run_row_t          row;
    ngx_http_agent_redrive_phase_e    phase;
    ngx_str_t                         why;       /* an end's */
    ngx_uint_t                        orphan;    /* an end's: its thread
                                                    is another's */
    ngx_array_t                      *doors;
    ngx_log_t                        *log;
    ngx_msec_t                        every;     /* the wait to the next */
    ngx_uint_t                        found;     /* this look found some */

    /* the orphans of the last look (their ids) */
    ngx_uint_t                        nseen;
    size_t                            seen_len[NGX_HTTP_AGENT_REDRIVE_SEEN];
    u_char                            seen[NGX_HTTP_AGENT_REDRIVE_SEEN]
                                          [NGX_HTTP_AGENT_REDRIVE_ID];
} ngx_http_agent_redrive_t;


static void ngx_http_agent_redrive_tick(ngx_event_t *ev);
static void ngx_http_agent_redrive_wake(ngx_http_agent_store_call_t *sc);
static void ngx_http_agent_redrive_pass(ngx_http_agent_redrive_t *rd);
static ngx_int_t ngx_http_agent_redrive_start(ngx_http_agent_redrive_t *rd);
static ngx_int_t ngx_http_agent_redrive_end(ngx_http_agent_redrive_t *rd);
static ngx_http_agent_run_lost_t *ngx_http_agent_redrive_pick(
    ngx_http_agent_redrive_t *rd);
static ngx_uint_t ngx_http_agent_redrive_orphans(ngx_http_agent_redrive_t *rd);
static void ngx_http_agent_redrive_next(ngx_http_agent_redrive_t *rd);
static void ngx_http_agent_redrive_pool(void *data);


static ngx_http_agent_redrive_t  ngx_http_agent_redrive;


/* in each worker, where some location keeps its runs */

void
ngx_http_agent_turn_redrive_init(ngx_cycle_t *cycle, ngx_array_t *doors)
{
    ngx_http_agent_redrive_t  *rd;

    rd = &ngx_http_agent_redrive;

    if (doors == NULL || doors->nelts == 0) {
        return;
    }

    ngx_memzero(rd, sizeof(ngx_http_agent_redrive_t));

    rd->doors = doors;
    rd->log = cycle->log;
    rd->every = NGX_HTTP_AGENT_REDRIVE_EVERY;
    rd->timer.handler = ngx_http_agent_redrive_tick;
    rd->timer.data = rd;
    rd->timer.log = cycle->log;
    rd->timer.cancelable = 1;

    ngx_add_timer(&rd->timer, NGX_HTTP_AGENT_REDRIVE_EVERY
                              + (ngx_msec_t) (ngx_pid % 500));
}


static void
ngx_http_agent_redrive_tick(ngx_event_t *ev)
{
    ngx_http_agent_redrive_t *rd = ev->data;

    if (ngx_exiting || ngx_terminate || ngx_quit) {
        return;
    }

    rd->pool = ngx_create_pool(4096, rd->log);
    if (rd->pool == NULL) {
        ngx_http_agent_redrive_next(rd);
        return;
    }

    rd->lost = ngx_array_create(rd->pool, 8,
                                sizeof(ngx_http_agent_run_lost_t));
    if (rd->lost == NULL) {
        ngx_http_agent_redrive_next(rd);
        return;
    }

    ngx_http_agent_store_call_init(&rd->sc, rd->pool, rd->log,
                                   ngx_http_agent_redrive_wake, rd);
    rd->phase = NGX_HTTP_AGENT_REDRIVE_LOST;
    rd->orphan = 0;
    rd->found = 0;

    ngx_http_agent_redrive_pass(rd);
}


static void
ngx_http_agent_redrive_wake(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_redrive_pass(sc->data);
}


/* one pass of the look's phase; again from its start on each answer */

static void
ngx_http_agent_redrive_pass(ngx_http_agent_redrive_t *rd)
{
    ngx_int_t                   rc;
    ngx_http_agent_store_call_t *sc;

    sc = &rd->sc;
    sc->n = 0;

    switch (rd->phase) {

    case NGX_HTTP_AGENT_REDRIVE_LOST:
        rd->lost->nelts = 0;

        rc = ngx_http_agent_store_run_lost(sc, rd->lost);
        if (rc == NGX_AGAIN) {
            return;
        }

        ngx_http_agent_store_call_reset(sc);

        if (rc != NGX_OK) {
            break;
        }

        rd->found |= (rd->lost->nelts != 0);

        /* one run a look: the others are the next look's, or another's */
        rd->claimed = ngx_http_agent_redrive_pick(rd);
        rd->phase = rd->claimed ? NGX_HTTP_AGENT_REDRIVE_CLAIM
                                : NGX_HTTP_AGENT_REDRIVE_ORPHANS;

        ngx_http_agent_redrive_pass(rd);
        return;

    case NGX_HTTP_AGENT_REDRIVE_ORPHANS:
        rd->lost->nelts = 0;

        rc = ngx_http_agent_store_run_orphans(sc, rd->lost);
        if (rc == NGX_AGAIN) {
            return;
        }

        ngx_http_agent_store_call_reset(sc);

        rd->found |= (rc == NGX_OK && rd->lost->nelts != 0);

        if (rc != NGX_OK || !ngx_http_agent_redrive_orphans(rd)) {
            break;
        }

        rd->phase = NGX_HTTP_AGENT_REDRIVE_END;

        ngx_http_agent_redrive_pass(rd);
        return;

    case NGX_HTTP_AGENT_REDRIVE_CLAIM:
        rc = ngx_http_agent_store_begin(sc);

        if (rc == NGX_OK) {
            rc = ngx_http_agent_store_run_claim(sc, rd->claimed,
                                                NGX_HTTP_AGENT_REDRIVE_HOLD,
                                                &rd->row);
        }

        if (rc == NGX_AGAIN) {
            return;
        }

        if (rc == NGX_OK) {
            rc = ngx_http_agent_store_commit(sc);

        } else if (rc != NGX_ERROR) {
            (void) ngx_http_agent_store_commit(sc);

        } else {
            ngx_http_agent_store_rollback(sc);
        }

        /* the commit's answer, still to come, is no one's: the pool goes */
        ngx_http_agent_store_cancel(sc);
        ngx_http_agent_store_call_reset(sc);

        if (rc != NGX_OK) {
            /* another worker claimed it first, or the store failed */
            break;
        }

        ngx_log_error(NGX_LOG_WARN, rd->log, 0,
                      "agent: run \"%V\" of thread \"%V\" lost its worker, "
                      "taken over (attempt %L)", &rd->row.run_id,
                      &rd->row.thread_id, rd->row.attempts);

        rd->phase = NGX_HTTP_AGENT_REDRIVE_WRITES;

        ngx_http_agent_redrive_pass(rd);
        return;

    case NGX_HTTP_AGENT_REDRIVE_WRITES:

        /* its cut step's tool results: those calls are not run again */

        rc = ngx_http_agent_turn_writes_read(sc, &rd->row);
        if (rc == NGX_AGAIN) {
            return;
        }

        ngx_http_agent_store_call_reset(sc);

        if (rc != NGX_OK) {
            /* its calls are all run again: at least once */
            rd->row.writes = NULL;
        }

        if (ngx_http_agent_redrive_start(rd) == NGX_OK) {
            /* the pool is the run's request's now */
            rd->pool = NULL;
            break;
        }

        rd->phase = NGX_HTTP_AGENT_REDRIVE_END;

        ngx_http_agent_redrive_pass(rd);
        return;

    case NGX_HTTP_AGENT_REDRIVE_END:
        if (ngx_http_agent_redrive_end(rd) == NGX_AGAIN) {
            return;
        }

        break;
    }

    ngx_http_agent_redrive_next(rd);
}


/* the run's request again, on its location, without a client */

static ngx_int_t
ngx_http_agent_redrive_start(ngx_http_agent_redrive_t *rd)
{
    ngx_str_t                   uri;
    ngx_pool_cleanup_t         *cln;
    ngx_http_request_t         *r;
    ngx_http_agent_ctx_t       *ctx;
    ngx_http_agent_door_t      *door;
    ngx_http_agent_loc_conf_t  *alcf;

    door = ngx_http_agent_turn_redrive_door(rd->doors, &rd->row.origin);

    if (door == NULL) {
        ngx_str_set(&rd->why, "its worker was lost, and the location it "
                    "ran on is not served any more");
        return NGX_DECLINED;
    }

    alcf = door->conf->loc_conf[ngx_http_agent_module.ctx_index];

    if (alcf->redrive == NULL) {
        ngx_str_set(&rd->why, "its worker was lost, and its protocol does "
                    "not take runs over");
        return NGX_DECLINED;
    }

    if ((ngx_uint_t) rd->row.attempts > alcf->run_attempts) {
        ngx_str_set(&rd->why, "its worker was lost more often than "
                    "agent_run_attempts allows");
        return NGX_DECLINED;
    }

    uri = door->name;

    r = ngx_http_agent_headless_create(door->conf, &uri, rd->log);
    if (r == NULL) {
        ngx_str_set(&rd->why, "its worker was lost, and no request could "
                    "be made to take it over");
        return NGX_DECLINED;
    }

    /* the look's pool, where the row is, goes with the request */

    cln = ngx_pool_cleanup_add(r->pool, 0);
    ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_ctx_t));

    if (cln == NULL || ctx == NULL) {
        ngx_http_agent_headless_close(r);
        ngx_str_set(&rd->why, "its worker was lost, and no request could "
                    "be made to take it over");
        return NGX_DECLINED;
    }

    cln->handler = ngx_http_agent_redrive_pool;
    cln->data = rd->pool;

    ngx_http_set_ctx(r, ctx, ngx_http_agent_module);

    ctx->headless = 1;

    if (rd->row.owner.len) {
        ctx->owner_value = rd->row.owner;
        ctx->owner = &ctx->owner_value;
    }

    /* the row is the request's: a copy of the look's */

    ctx->redrive = ngx_palloc(r->pool, sizeof(ngx_http_agent_run_row_t));
    if (ctx->redrive == NULL) {
        ngx_http_agent_headless_close(r);
        return NGX_OK;
    }

    ngx_memcpy(ctx->redrive, &rd->row, sizeof(ngx_http_agent_run_row_t));

    /* counted as its client's request was (its pool is the request's) */
    ctx->limit_keys = rd->row.limit_keys;

    /* the protocol ends the request (or its turn does), whatever it says */
    (void) alcf->redrive(r, ctx->redrive);

    return NGX_OK;
}


/*
 * The first lost run to claim now.  A turn of our chat API waits out its
 * lease: until then its client's next message takes the session over
 * (the lost turn is then an orphan, ended below); a run no client
 * continues is claimed at once.
 */

static ngx_http_agent_run_lost_t *
ngx_http_agent_redrive_pick(ngx_http_agent_redrive_t *rd)
{
    int64_t                     now;
    ngx_uint_t                  i;
    ngx_time_t                 *tp;
    ngx_http_agent_door_t      *door;
    ngx_http_agent_run_lost_t  *l;
    ngx_http_agent_loc_conf_t  *alcf;

    tp = ngx_timeofday();
    now = (int64_t) tp->sec * 1000 + tp->msec;
    l = rd->lost->elts;

    for (i = 0; i < rd->lost->nelts; i++) {
        door = ngx_http_agent_turn_redrive_door(rd->doors, &l[i].origin);
        alcf = door ? door->conf->loc_conf[ngx_http_agent_module.ctx_index]
                    : NULL;

        if (alcf && alcf->proto
            && (alcf->proto->flags & NGX_HTTP_AGENT_PROTO_LEASED)
            && l[i].expires >= now)
        {
            continue;
        }

        return &l[i];
    }

    return NULL;
}


/*
 * Runs still "running" whose thread another turn took (a lost turn of our
 * chat API whose client sent its next message), or that hold it no more:
 * one seen so at two looks in a row (a run that ends lets its thread go a
 * moment before its row says so) ends, superseded
 */

static ngx_uint_t
ngx_http_agent_redrive_orphans(ngx_http_agent_redrive_t *rd)
{
    ngx_uint_t                  i, k, n, found;
    ngx_http_agent_run_lost_t  *l;

    l = rd->lost->elts;
    found = 0;

    for (i = 0; i < rd->lost->nelts && !found; i++) {
        for (k = 0; k < rd->nseen; k++) {
            if (rd->seen_len[k] == l[i].run_id.len
                && ngx_memcmp(rd->seen[k], l[i].run_id.data,
                              l[i].run_id.len)
                   == 0)
            {
                ngx_memzero(&rd->row, sizeof(ngx_http_agent_run_row_t));
                rd->row.run_id = l[i].run_id;
                rd->row.thread_id = l[i].thread_id;
                rd->orphan = 1;
                ngx_str_set(&rd->why, "another turn took its thread over "
                            "after its worker was lost");
                found = 1;
                break;
            }
        }
    }

    /* this look's, for the next */

    n = 0;

    for (i = 0; i < rd->lost->nelts && n < NGX_HTTP_AGENT_REDRIVE_SEEN; i++) {
        if (l[i].run_id.len <= NGX_HTTP_AGENT_REDRIVE_ID) {
            ngx_memcpy(rd->seen[n], l[i].run_id.data, l[i].run_id.len);
            rd->seen_len[n++] = l[i].run_id.len;
        }
    }

    rd->nseen = n;

    return found;
}


/* the location of that name that keeps its runs, or NULL */

ngx_http_agent_door_t *
ngx_http_agent_turn_redrive_door(ngx_array_t *doors, ngx_str_t *name)
{
    ngx_uint_t              i;
    ngx_http_agent_door_t  *door;

    door = doors->elts;

    for (i = 0; i < doors->nelts; i++) {
        if (door[i].name.len == name->len
            && ngx_strncmp(door[i].name.data, name->data, name->len) == 0)
        {
            return &door[i];
        }
    }

    return NULL;
}


static void
ngx_http_agent_redrive_pool(void *data)
{
    ngx_destroy_pool(data);
}


/*
 * A run that cannot be taken over ends: its outcome an error that says
 * why, its status "error", its thread let go
 */

static ngx_int_t
ngx_http_agent_redrive_end(ngx_http_agent_redrive_t *rd)
{
    ngx_int_t               kept, status, unlocked;
    ngx_str_t               name, json;
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(rd->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "error");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "code");
    ngx_http_agent_json_cstr(j, "lost");
    ngx_http_agent_json_key(j, "message");
    ngx_http_agent_json_str(j, &rd->why);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_str_set(&name, "outcome");

    kept = ngx_http_agent_store_run_event(&rd->sc, &rd->row.run_id, 0, &name,
                                          &json);
    status = ngx_http_agent_store_run_status(&rd->sc, &rd->row.run_id,
                                             "error");
    unlocked = rd->orphan ? NGX_OK
                          : ngx_http_agent_store_unlock(&rd->sc,
                                                        &rd->row.thread_id,
                                                        &rd->row.run_id);

    if (kept == NGX_AGAIN || status == NGX_AGAIN || unlocked == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    ngx_log_error(NGX_LOG_ERR, rd->log, 0,
                  "agent: run \"%V\" of thread \"%V\" ended: %V",
                  &rd->row.run_id, &rd->row.thread_id, &rd->why);

    ngx_http_agent_store_call_reset(&rd->sc);

    return NGX_OK;
}


static void
ngx_http_agent_redrive_next(ngx_http_agent_redrive_t *rd)
{
    if (rd->pool) {
        ngx_http_agent_store_cancel(&rd->sc);
        ngx_destroy_pool(rd->pool);
        rd->pool = NULL;
    }

    if (ngx_exiting || ngx_terminate || ngx_quit) {
        return;
    }

    rd->every = rd->found ? NGX_HTTP_AGENT_REDRIVE_EVERY
                          : ngx_min(rd->every * 2,
                                    NGX_HTTP_AGENT_REDRIVE_IDLE);

    ngx_add_timer(&rd->timer, rd->every);
}
