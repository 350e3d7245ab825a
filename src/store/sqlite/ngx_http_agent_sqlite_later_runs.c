
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"


/*
 * NGX_AGENT_STORE_DEFER (sqlite_later.c): the operations on runs, crons,
 * assistants and items, each kept in its call and answered after the
 * caller's pass.
 */


static ngx_int_t ngx_http_agent_sqlite_later_run_insert(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_run_row_t *row,
    ngx_uint_t events);
static ngx_int_t ngx_http_agent_sqlite_later_run_status(
    ngx_http_agent_store_call_t *sc, ngx_str_t *run_id, const char *status);
static ngx_int_t ngx_http_agent_sqlite_later_run_get(
    ngx_http_agent_store_call_t *sc, ngx_str_t *thread_id, ngx_str_t *run_id,
    ngx_http_agent_run_row_t *row);
static ngx_int_t ngx_http_agent_sqlite_later_run_list(
    ngx_http_agent_store_call_t *sc, ngx_str_t *thread_id, ngx_str_t *status,
    ngx_int_t limit, ngx_int_t offset, ngx_array_t *rows);
static ngx_int_t ngx_http_agent_sqlite_later_run_cancel(
    ngx_http_agent_store_call_t *sc, ngx_str_t *run_id, ngx_str_t *action,
    ngx_uint_t now);
static ngx_int_t ngx_http_agent_sqlite_later_run_cancelled(
    ngx_http_agent_store_call_t *sc, ngx_str_t *run_id, ngx_str_t *action);
static ngx_int_t ngx_http_agent_sqlite_later_run_event(
    ngx_http_agent_store_call_t *sc, ngx_str_t *run_id, int64_t seq,
    ngx_str_t *event, ngx_str_t *json);
static ngx_int_t ngx_http_agent_sqlite_later_run_rollback(
    ngx_http_agent_store_call_t *sc, ngx_str_t *thread_id, ngx_str_t *run_id,
    ngx_str_t *before);
static ngx_int_t ngx_http_agent_sqlite_later_run_delete(
    ngx_http_agent_store_call_t *sc, ngx_str_t *run_id);
static ngx_int_t ngx_http_agent_sqlite_later_thread_busy(
    ngx_http_agent_store_call_t *sc, ngx_str_t *thread_id, ngx_str_t *run_id);
static ngx_int_t ngx_http_agent_sqlite_later_run_claim(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_run_lost_t *lost,
    ngx_msec_t hold, ngx_http_agent_run_row_t *row);
static ngx_int_t ngx_http_agent_sqlite_later_cron_put(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_cron_row_t *row);
static ngx_int_t ngx_http_agent_sqlite_later_cron_get(
    ngx_http_agent_store_call_t *sc, ngx_str_t *owner, ngx_str_t *id,
    ngx_http_agent_cron_row_t *row);
static ngx_int_t ngx_http_agent_sqlite_later_cron_list(
    ngx_http_agent_store_call_t *sc, ngx_str_t *owner, ngx_array_t *rows);
static ngx_int_t ngx_http_agent_sqlite_later_cron_delete(
    ngx_http_agent_store_call_t *sc, ngx_str_t *owner, ngx_str_t *id);
static ngx_int_t ngx_http_agent_sqlite_later_cron_claim(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, int64_t was, int64_t next);
static ngx_int_t ngx_http_agent_sqlite_later_assistant_put(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_assistant_row_t *row);
static ngx_int_t ngx_http_agent_sqlite_later_assistant_get(
    ngx_http_agent_store_call_t *sc, ngx_str_t *owner, ngx_str_t *id,
    int64_t version, ngx_http_agent_assistant_row_t *row);
static ngx_int_t ngx_http_agent_sqlite_later_assistant_list(
    ngx_http_agent_store_call_t *sc, ngx_str_t *owner, ngx_str_t *graph_id,
    ngx_str_t *id, ngx_array_t *rows);
static ngx_int_t ngx_http_agent_sqlite_later_assistant_latest(
    ngx_http_agent_store_call_t *sc, ngx_str_t *owner, ngx_str_t *id,
    int64_t version, ngx_str_t *now);
static ngx_int_t ngx_http_agent_sqlite_later_assistant_delete(
    ngx_http_agent_store_call_t *sc, ngx_str_t *owner, ngx_str_t *id);
static ngx_int_t ngx_http_agent_sqlite_later_item_put(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_item_t *item, int64_t now,
    ngx_uint_t quota_items, size_t quota_size);
static ngx_int_t ngx_http_agent_sqlite_later_item_get(
    ngx_http_agent_store_call_t *sc, ngx_str_t *owner, ngx_str_t *ns,
    ngx_str_t *key, int64_t now, ngx_http_agent_item_t *item);
static ngx_int_t ngx_http_agent_sqlite_later_item_delete(
    ngx_http_agent_store_call_t *sc, ngx_str_t *owner, ngx_str_t *ns,
    ngx_str_t *key);
static ngx_int_t ngx_http_agent_sqlite_later_item_search(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_item_query_t *q,
    ngx_array_t *items);
static ngx_int_t ngx_http_agent_sqlite_later_item_namespaces(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_item_query_t *q,
    ngx_array_t *namespaces);


void
ngx_http_agent_sqlite_later_runs(ngx_http_agent_store_backend_t *table)
{
    table->run_insert = ngx_http_agent_sqlite_later_run_insert;
    table->run_status = ngx_http_agent_sqlite_later_run_status;
    table->run_get = ngx_http_agent_sqlite_later_run_get;
    table->run_list = ngx_http_agent_sqlite_later_run_list;
    table->run_cancel = ngx_http_agent_sqlite_later_run_cancel;
    table->run_cancelled = ngx_http_agent_sqlite_later_run_cancelled;
    table->run_event = ngx_http_agent_sqlite_later_run_event;
    table->run_rollback = ngx_http_agent_sqlite_later_run_rollback;
    table->run_delete = ngx_http_agent_sqlite_later_run_delete;
    table->thread_busy = ngx_http_agent_sqlite_later_thread_busy;
    table->run_claim = ngx_http_agent_sqlite_later_run_claim;
    table->cron_put = ngx_http_agent_sqlite_later_cron_put;
    table->cron_get = ngx_http_agent_sqlite_later_cron_get;
    table->cron_list = ngx_http_agent_sqlite_later_cron_list;
    table->cron_delete = ngx_http_agent_sqlite_later_cron_delete;
    table->cron_claim = ngx_http_agent_sqlite_later_cron_claim;
    table->assistant_put = ngx_http_agent_sqlite_later_assistant_put;
    table->assistant_get = ngx_http_agent_sqlite_later_assistant_get;
    table->assistant_list = ngx_http_agent_sqlite_later_assistant_list;
    table->assistant_latest = ngx_http_agent_sqlite_later_assistant_latest;
    table->assistant_delete = ngx_http_agent_sqlite_later_assistant_delete;
    table->item_put = ngx_http_agent_sqlite_later_item_put;
    table->item_get = ngx_http_agent_sqlite_later_item_get;
    table->item_delete = ngx_http_agent_sqlite_later_item_delete;
    table->item_search = ngx_http_agent_sqlite_later_item_search;
    table->item_namespaces = ngx_http_agent_sqlite_later_item_namespaces;
}


static ngx_int_t
ngx_http_agent_sqlite_later_run_insert(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_row_t *row, ngx_uint_t events)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(run_insert),
                                   &row->thread_id, &row->run_id, row,
                                   sizeof(ngx_http_agent_run_row_t), NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.run_insert(sc, row, events);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_run_status(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, const char *status)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(run_status),
                                   run_id, NULL, NULL, 0, NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.run_status(sc, run_id, status);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_run_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id, ngx_http_agent_run_row_t *row)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(run_get),
                                   thread_id, run_id, row,
                                   sizeof(ngx_http_agent_run_row_t), NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.run_get(sc, thread_id, run_id, row);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_run_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *status, ngx_int_t limit, ngx_int_t offset,
    ngx_array_t *rows)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(run_list),
                                   thread_id, status, NULL, 0, rows, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.run_list(sc, thread_id, status, limit,
                                            offset, rows);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_run_cancel(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_str_t *action, ngx_uint_t now)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(run_cancel),
                                   run_id, action, NULL, 0, NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.run_cancel(sc, run_id, action, now);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_run_cancelled(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_str_t *action)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(run_cancelled),
                                   run_id, NULL, action, sizeof(ngx_str_t),
                                   NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.run_cancelled(sc, run_id, action);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_run_event(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, int64_t seq, ngx_str_t *event, ngx_str_t *json)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(run_event),
                                   run_id, event, NULL, 0, NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.run_event(sc, run_id, seq, event, json);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_run_rollback(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id, ngx_str_t *before)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(run_rollback),
                                   thread_id, run_id, NULL, 0, NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.run_rollback(sc, thread_id, run_id, before);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_run_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(run_delete),
                                   run_id, NULL, NULL, 0, NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.run_delete(sc, run_id);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_thread_busy(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(thread_busy),
                                   thread_id, NULL, run_id, sizeof(ngx_str_t),
                                   NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.thread_busy(sc, thread_id, run_id);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_run_claim(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_lost_t *lost, ngx_msec_t hold,
    ngx_http_agent_run_row_t *row)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(run_claim),
                                   &lost->thread_id, &lost->run_id, row,
                                   sizeof(ngx_http_agent_run_row_t), NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.run_claim(sc, lost, hold, row);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_cron_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_cron_row_t *row)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(cron_put),
                                   &row->owner, &row->cron_id, row,
                                   sizeof(ngx_http_agent_cron_row_t), NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.cron_put(sc, row);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_cron_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, ngx_http_agent_cron_row_t *row)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(cron_get), owner,
                                   id, row, sizeof(ngx_http_agent_cron_row_t),
                                   NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.cron_get(sc, owner, id, row);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_cron_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_array_t *rows)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(cron_list),
                                   owner, NULL, NULL, 0, rows, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.cron_list(sc, owner, rows);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_cron_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(cron_delete),
                                   owner, id, NULL, 0, NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.cron_delete(sc, owner, id);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_cron_claim(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t was, int64_t next)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(cron_claim), id,
                                   NULL, NULL, 0, NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.cron_claim(sc, id, was, next);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_assistant_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_assistant_row_t *row)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(assistant_put),
                                   &row->assistant_id, &row->owner, row,
                                   sizeof(ngx_http_agent_assistant_row_t), NULL,
                                   &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.assistant_put(sc, row);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_assistant_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, int64_t version,
    ngx_http_agent_assistant_row_t *row)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(assistant_get),
                                   owner, id, row,
                                   sizeof(ngx_http_agent_assistant_row_t), NULL,
                                   &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.assistant_get(sc, owner, id, version, row);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_assistant_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *graph_id, ngx_str_t *id, ngx_array_t *rows)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(assistant_list),
                                   owner, id, NULL, 0, rows, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.assistant_list(sc, owner, graph_id, id,
                                                  rows);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_assistant_latest(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, int64_t version, ngx_str_t *now)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc,
                                   ngx_http_agent_store_op(assistant_latest),
                                   owner, id, NULL, 0, NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.assistant_latest(sc, owner, id, version,
                                                    now);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_assistant_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc,
                                   ngx_http_agent_store_op(assistant_delete),
                                   owner, id, NULL, 0, NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.assistant_delete(sc, owner, id);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_item_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_t *item, int64_t now, ngx_uint_t quota_items,
    size_t quota_size)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(item_put),
                                   &item->ns, &item->key, item,
                                   sizeof(ngx_http_agent_item_t), NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.item_put(sc, item, now, quota_items,
                                            quota_size);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_item_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *ns, ngx_str_t *key, int64_t now,
    ngx_http_agent_item_t *item)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(item_get), ns,
                                   key, item, sizeof(ngx_http_agent_item_t),
                                   NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.item_get(sc, owner, ns, key, now, item);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_item_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *ns, ngx_str_t *key)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(item_delete), ns,
                                   key, NULL, 0, NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.item_delete(sc, owner, ns, key);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_item_search(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q, ngx_array_t *items)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (q->vector.len) {
        /* by meaning: it answers later of itself (sqlite_near.c) */
        return ngx_http_agent_sqlite_now.item_search(sc, q, items);
    }

    ngx_http_agent_sqlite_outs(&o, NULL, 0, items);

    if (ngx_http_agent_sqlite_kept(sc, ngx_http_agent_store_op(item_search),
                                   &q->prefix, &q->query, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.item_search(sc, q, items);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_item_namespaces(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_item_query_t *q, ngx_array_t *namespaces)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(item_namespaces),
                                   &q->prefix, &q->suffix, NULL, 0, namespaces,
                                   &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.item_namespaces(sc, q, namespaces);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}
