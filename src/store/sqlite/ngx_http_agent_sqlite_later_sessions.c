
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"


/*
 * NGX_AGENT_STORE_DEFER (sqlite_later.c): the operations on sessions, their
 * checkpoints and files, each kept in its call and answered after the
 * caller's pass.
 */


static ngx_int_t ngx_http_agent_sqlite_later_session_create(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_str_t *title,
    ngx_str_t *metadata, ngx_str_t *owner, ngx_http_agent_session_t *s);
static ngx_int_t ngx_http_agent_sqlite_later_session_get(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_http_agent_session_t *s);
static ngx_int_t ngx_http_agent_sqlite_later_session_list(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_session_query_t *q,
    ngx_array_t *sessions);
static ngx_int_t ngx_http_agent_sqlite_later_session_count(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_session_query_t *q,
    int64_t *count);
static ngx_int_t ngx_http_agent_sqlite_later_session_delete(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id);
static ngx_int_t ngx_http_agent_sqlite_later_session_set(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_uint_t field,
    ngx_str_t *value);
static ngx_int_t ngx_http_agent_sqlite_later_session_copy(
    ngx_http_agent_store_call_t *sc, ngx_str_t *from, ngx_str_t *to,
    ngx_str_t *now);
static ngx_int_t ngx_http_agent_sqlite_later_lock(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_str_t *run_id,
    ngx_msec_t lease);
static ngx_int_t ngx_http_agent_sqlite_later_lock_renew(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_str_t *run_id,
    ngx_msec_t lease);
static ngx_int_t ngx_http_agent_sqlite_later_leases_renew(
    ngx_http_agent_store_call_t *sc, ngx_array_t *leases);
static ngx_int_t ngx_http_agent_sqlite_later_unlock(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_str_t *run_id);
static ngx_int_t ngx_http_agent_sqlite_later_messages(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, int64_t upto,
    ngx_int_t images_keep, ngx_array_t *messages);
static ngx_int_t ngx_http_agent_sqlite_later_checkpoint_get(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_str_t *checkpoint_id,
    ngx_http_agent_checkpoint_t *cp);
static ngx_int_t ngx_http_agent_sqlite_later_checkpoint_list(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_str_t *ns,
    ngx_array_t *checkpoints);
static ngx_int_t ngx_http_agent_sqlite_later_checkpoint_write(
    ngx_http_agent_store_call_t *sc, ngx_str_t *session_id,
    ngx_http_agent_checkpoint_t *cp, ngx_array_t *added);
static ngx_int_t ngx_http_agent_sqlite_later_fork_later(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_str_t *from,
    ngx_array_t *later);
static ngx_int_t ngx_http_agent_sqlite_later_fork_keep(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_str_t *checkpoint_id,
    ngx_str_t *channels);
static ngx_int_t ngx_http_agent_sqlite_later_fork_cut(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, int64_t msg_count);
static ngx_int_t ngx_http_agent_sqlite_later_resource_add(
    ngx_http_agent_store_call_t *sc, ngx_str_t *session_id,
    ngx_http_agent_resource_t *res);
static ngx_int_t ngx_http_agent_sqlite_later_resource_list(
    ngx_http_agent_store_call_t *sc, ngx_str_t *session_id,
    ngx_array_t *resources);
static ngx_int_t ngx_http_agent_sqlite_later_resource_fetch(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_resource_t *res);


void
ngx_http_agent_sqlite_later_sessions(ngx_http_agent_store_backend_t *table)
{
    table->session_create = ngx_http_agent_sqlite_later_session_create;
    table->session_get = ngx_http_agent_sqlite_later_session_get;
    table->session_list = ngx_http_agent_sqlite_later_session_list;
    table->session_count = ngx_http_agent_sqlite_later_session_count;
    table->session_delete = ngx_http_agent_sqlite_later_session_delete;
    table->session_set = ngx_http_agent_sqlite_later_session_set;
    table->session_copy = ngx_http_agent_sqlite_later_session_copy;
    table->lock = ngx_http_agent_sqlite_later_lock;
    table->lock_renew = ngx_http_agent_sqlite_later_lock_renew;
    table->leases_renew = ngx_http_agent_sqlite_later_leases_renew;
    table->unlock = ngx_http_agent_sqlite_later_unlock;
    table->messages = ngx_http_agent_sqlite_later_messages;
    table->checkpoint_get = ngx_http_agent_sqlite_later_checkpoint_get;
    table->checkpoint_list = ngx_http_agent_sqlite_later_checkpoint_list;
    table->checkpoint_write = ngx_http_agent_sqlite_later_checkpoint_write;
    table->fork_later = ngx_http_agent_sqlite_later_fork_later;
    table->fork_keep = ngx_http_agent_sqlite_later_fork_keep;
    table->fork_cut = ngx_http_agent_sqlite_later_fork_cut;
    table->resource_add = ngx_http_agent_sqlite_later_resource_add;
    table->resource_list = ngx_http_agent_sqlite_later_resource_list;
    table->resource_fetch = ngx_http_agent_sqlite_later_resource_fetch;
}


static ngx_int_t
ngx_http_agent_sqlite_later_session_create(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *title, ngx_str_t *metadata, ngx_str_t *owner,
    ngx_http_agent_session_t *s)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(session_create),
                                   id, title, s,
                                   sizeof(ngx_http_agent_session_t), NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.session_create(sc, id, title, metadata,
                                                  owner, s);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_session_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_http_agent_session_t *s)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(session_get), id,
                                   NULL, s, sizeof(ngx_http_agent_session_t),
                                   NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.session_get(sc, id, s);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_session_list(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_session_query_t *q, ngx_array_t *sessions)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(session_list),
                                   q->owner, q->metadata, NULL, 0, sessions,
                                   &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.session_list(sc, q, sessions);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_session_count(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_session_query_t *q, int64_t *count)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(session_count),
                                   q->owner, q->metadata, count,
                                   sizeof(int64_t), NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.session_count(sc, q, count);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_session_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(session_delete),
                                   id, NULL, NULL, 0, NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.session_delete(sc, id);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_session_set(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_uint_t field, ngx_str_t *value)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(session_set), id,
                                   value, NULL, 0, NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.session_set(sc, id, field, value);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_session_copy(ngx_http_agent_store_call_t *sc,
    ngx_str_t *from, ngx_str_t *to, ngx_str_t *now)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(session_copy),
                                   from, to, NULL, 0, NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.session_copy(sc, from, to, now);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_lock(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_str_t *run_id, ngx_msec_t lease)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    ngx_http_agent_sqlite_outs(&o, NULL, 0, NULL);

    if (ngx_http_agent_sqlite_kept(sc, ngx_http_agent_store_op(lock),
                                   id, run_id, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.lock(sc, id, run_id, lease);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_lock_renew(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_msec_t lease)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    ngx_http_agent_sqlite_outs(&o, NULL, 0, NULL);

    if (ngx_http_agent_sqlite_kept(sc, ngx_http_agent_store_op(lock_renew),
                                   id, run_id, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.lock_renew(sc, id, run_id, lease);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


/* the leases answered in place: a replay is handed them back whole */

static ngx_int_t
ngx_http_agent_sqlite_later_leases_renew(ngx_http_agent_store_call_t *sc,
    ngx_array_t *leases)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    ngx_http_agent_sqlite_outs(&o, leases->elts,
                               leases->nelts * leases->size, NULL);

    if (ngx_http_agent_sqlite_kept(sc, ngx_http_agent_store_op(leases_renew),
                                   NULL, NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.leases_renew(sc, leases);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_unlock(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    ngx_http_agent_sqlite_outs(&o, NULL, 0, NULL);

    if (ngx_http_agent_sqlite_kept(sc, ngx_http_agent_store_op(unlock),
                                   id, run_id, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.unlock(sc, id, run_id);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_messages(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t upto, ngx_int_t images_keep, ngx_array_t *messages)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(messages), id,
                                   NULL, NULL, 0, messages, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.messages(sc, id, upto, images_keep,
                                            messages);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_checkpoint_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_http_agent_checkpoint_t *cp)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(checkpoint_get),
                                   id, checkpoint_id, cp,
                                   sizeof(ngx_http_agent_checkpoint_t), NULL,
                                   &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.checkpoint_get(sc, id, checkpoint_id, cp);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_checkpoint_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *ns, ngx_array_t *checkpoints)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(checkpoint_list),
                                   id, ns, NULL, 0, checkpoints, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.checkpoint_list(sc, id, ns, checkpoints);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_checkpoint_write(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_http_agent_checkpoint_t *cp, ngx_array_t *added)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc,
                                   ngx_http_agent_store_op(checkpoint_write),
                                   session_id, &cp->node, cp,
                                   sizeof(ngx_http_agent_checkpoint_t), NULL,
                                   &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.checkpoint_write(sc, session_id, cp, added);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_fork_later(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *from, ngx_array_t *later)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(fork_later), id,
                                   from, NULL, 0, later, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.fork_later(sc, id, from, later);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_fork_keep(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_str_t *channels)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(fork_keep), id,
                                   checkpoint_id, NULL, 0, NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.fork_keep(sc, id, checkpoint_id, channels);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_fork_cut(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t msg_count)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(fork_cut), id,
                                   NULL, NULL, 0, NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.fork_cut(sc, id, msg_count);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_resource_add(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_http_agent_resource_t *res)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(resource_add),
                                   session_id, &res->name, res,
                                   sizeof(ngx_http_agent_resource_t), NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.resource_add(sc, session_id, res);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_resource_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_array_t *resources)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(resource_list),
                                   session_id, NULL, NULL, 0, resources, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.resource_list(sc, session_id, resources);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}


static ngx_int_t
ngx_http_agent_sqlite_later_resource_fetch(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_resource_t *res)
{
    ngx_int_t                     rc;
    ngx_http_agent_sqlite_outs_t  o;

    if (ngx_http_agent_sqlite_held(sc, ngx_http_agent_store_op(resource_fetch),
                                   &res->id, NULL, res,
                                   sizeof(ngx_http_agent_resource_t), NULL, &o))
    {
        return o.rc;
    }

    rc = ngx_http_agent_sqlite_now.resource_fetch(sc, res);

    return ngx_http_agent_sqlite_later(sc, &o, rc);
}
