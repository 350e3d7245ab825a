
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"


/*
 * A resumable run's events (the LangGraph API's runs, Open Responses'
 * background responses), kept in a pool of their own as they are sent:
 * saved in one unit of writes at each poll of the run's record and at its
 * end, then the pool is reset, so that a long run holds only the events of
 * one poll.  Past agent_run_events_max_size the run's events are streamed
 * but no longer kept: a join sees those kept, then the run's end.
 */


#define NGX_HTTP_AGENT_TURN_KEPT_BATCH  256


static void ngx_http_agent_turn_kept_free(void *data);
static ngx_int_t ngx_http_agent_turn_kept_sent(void *data, int64_t seq,
    ngx_str_t *event, ngx_str_t *json);


ngx_int_t
ngx_http_agent_turn_kept_add(ngx_http_agent_turn_kept_t *k,
    ngx_http_request_t *r, ngx_str_t *run_id, int64_t seq, ngx_str_t *name,
    ngx_str_t *json)
{
    ngx_pool_cleanup_t                *cln;
    ngx_http_agent_loc_conf_t         *alcf;
    ngx_http_agent_turn_kept_event_t  *e;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    if (k->full || k->bytes + name->len + json->len > alcf->run_events_max) {
        if (!k->full) {
            ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                          "agent: run \"%V\" kept %uz bytes of events "
                          "(agent_run_events_max_size), the rest is not "
                          "kept", run_id, k->bytes);
            k->full = 1;
        }

        return NGX_OK;
    }

    if (k->pool == NULL) {
        k->pool = ngx_create_pool(4096, ngx_cycle->log);
        if (k->pool == NULL) {
            return NGX_ERROR;
        }

        cln = ngx_pool_cleanup_add(r->pool, 0);
        if (cln == NULL) {
            ngx_destroy_pool(k->pool);
            k->pool = NULL;
            return NGX_ERROR;
        }

        cln->handler = ngx_http_agent_turn_kept_free;
        cln->data = k;
    }

    if (k->events == NULL) {
        /* the array lives in the pool a save resets */
        k->events = ngx_array_create(k->pool, 32,
                                     sizeof(ngx_http_agent_turn_kept_event_t));
        if (k->events == NULL) {
            return NGX_ERROR;
        }
    }

    e = ngx_array_push(k->events);
    if (e == NULL) {
        return NGX_ERROR;
    }

    k->bytes += name->len + json->len;

    e->seq = seq;
    e->name.len = name->len;
    e->name.data = ngx_pstrdup(k->pool, name);
    e->json.len = json->len;
    e->json.data = ngx_pstrdup(k->pool, json);

    return (e->name.data && e->json.data) ? NGX_OK : NGX_ERROR;
}


/* the events kept since the last save, saved in one unit of writes */

ngx_int_t
ngx_http_agent_turn_kept_save(ngx_http_agent_turn_kept_t *k,
    ngx_http_agent_store_call_t *sc, ngx_str_t *run_id)
{
    ngx_uint_t                         i;
    ngx_http_agent_turn_kept_event_t  *e;

    if (k->events == NULL || k->events->nelts == 0) {
        return NGX_OK;
    }

    if (ngx_http_agent_store_begin(sc) != NGX_OK) {
        return NGX_ERROR;
    }

    e = k->events->elts;

    for (i = 0; i < k->events->nelts; i++) {
        if (ngx_http_agent_store_run_event(sc, run_id, e[i].seq, &e[i].name,
                                           &e[i].json)
            != NGX_OK)
        {
            ngx_http_agent_store_rollback(sc);
            return NGX_ERROR;
        }
    }

    if (ngx_http_agent_store_commit(sc) != NGX_OK) {
        return NGX_ERROR;
    }

    k->events = NULL;
    ngx_reset_pool(k->pool);

    return NGX_OK;
}


/*
 * A replay from the event last on (a join, a GET with stream=true): a run
 * that holds its lease while it runs is lost when no event came for twice
 * the lease; stream: the events are sent as server-sent events
 */

ngx_int_t
ngx_http_agent_turn_kept_follow(ngx_http_agent_turn_kept_replay_t *rp,
    ngx_http_request_t *r, int64_t last, ngx_uint_t stream)
{
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    rp->last = last;
    rp->lease = alcf->turn_lease;
    rp->deadline = ngx_current_msec + 2 * rp->lease;

    if (!stream) {
        return NGX_OK;
    }

    if (ngx_http_agent_sse_start(&rp->sse, r, alcf->heartbeat) != NGX_OK) {
        return NGX_ERROR;
    }

    rp->sse.id = last;
    rp->sse.zero = 1;

    return NGX_OK;
}


/*
 * The kept events from rp->last on, sent as they are read, in batches:
 * NGX_OK, all there are now; NGX_AGAIN, the store answers later (the
 * same call then reads its answer)
 */

ngx_int_t
ngx_http_agent_turn_kept_replay(ngx_http_agent_turn_kept_replay_t *rp,
    ngx_http_agent_store_call_t *sc, ngx_str_t *run_id)
{
    int64_t    before;
    ngx_int_t  rc;

    for ( ;; ) {
        before = rp->last;

        rc = ngx_http_agent_store_run_events(sc, run_id, rp->last,
                                             NGX_HTTP_AGENT_TURN_KEPT_BATCH,
                                             ngx_http_agent_turn_kept_sent,
                                             rp);
        if (rc == NGX_AGAIN) {
            return NGX_AGAIN;
        }

        ngx_http_agent_store_call_reset(sc);

        if (rc != NGX_OK) {
            return NGX_ERROR;
        }

        if (rp->last - before != NGX_HTTP_AGENT_TURN_KEPT_BATCH) {
            return NGX_OK;
        }
    }
}


static ngx_int_t
ngx_http_agent_turn_kept_sent(void *data, int64_t seq, ngx_str_t *event,
    ngx_str_t *json)
{
    ngx_http_agent_turn_kept_replay_t *rp = data;

    rp->last = seq;
    rp->sse.id = seq - 1;

    /* a run that still writes lives, however long it runs */
    rp->deadline = ngx_current_msec + 2 * rp->lease;

    return ngx_http_agent_sse_named(&rp->sse, event, json, 1);
}


static void
ngx_http_agent_turn_kept_free(void *data)
{
    ngx_http_agent_turn_kept_t *k = data;

    if (k->pool) {
        ngx_destroy_pool(k->pool);
        k->pool = NULL;
        k->events = NULL;
    }
}
