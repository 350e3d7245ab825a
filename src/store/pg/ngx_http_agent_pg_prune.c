
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_pg.h"


/*
 * agent_checkpoint_keep on PostgreSQL: a pass is one DELETE the server
 * runs, sent behind the run's last writes on its thread's connection and
 * wanting no answer; the worker waits for nothing.  A thread's storage is
 * one statement's rows.
 */


static ngx_int_t ngx_http_agent_pg_pruned(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);
static ngx_int_t ngx_http_agent_pg_storage_read(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);


ngx_int_t
ngx_http_agent_pg_checkpoint_prune(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *run_id, ngx_uint_t keep, ngx_msec_t age)
{
    u_char                       buf[24];
    ngx_str_t                    before, *bp;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, checkpoint_prune, id, NULL);

    if (a) {
        return a->rc == NGX_AGAIN ? NGX_OK : a->rc;
    }

    bp = NULL;

    if (age) {
        before.data = buf;
        before.len = ngx_http_agent_store_ago(buf, age) - buf;
        bp = &before;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CHECKPOINT_PRUNE,
                                 ngx_http_agent_pg_pruned, "!sisis", id,
                                 (int64_t) keep, bp,
                                 (int64_t) NGX_HTTP_AGENT_STORE_PRUNE_PASS,
                                 run_id);
}


static ngx_int_t
ngx_http_agent_pg_pruned(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, ngx_http_agent_pg_log, 0,
                   "agent: %s old checkpoints let go", PQcmdTuples(res));

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_pg_thread_storage(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_http_agent_storage_t *st)
{
    ngx_uint_t                         i;
    ngx_array_t                       *got;
    ngx_http_agent_storage_t          *kept;
    ngx_http_agent_pg_answer_t        *a;
    ngx_http_agent_storage_channel_t  *ch, *from;

    a = ngx_http_agent_pg_answered(sc, thread_storage, id, NULL);

    if (a == NULL) {
        return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_THREAD_STORAGE,
                                     ngx_http_agent_pg_storage_read, "s",
                                     id);
    }

    if (a->rc != NGX_OK) {
        return a->rc;
    }

    /* the kept answer into the caller's, whose array is its pass's */

    kept = a->value;
    got = st->channels;
    *st = *kept;
    st->channels = got;

    from = kept->channels->elts;

    for (i = 0; i < kept->channels->nelts; i++) {
        ch = ngx_array_push(got);
        if (ch == NULL) {
            return NGX_ERROR;
        }

        *ch = from[i];
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_pg_storage_read(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    int                                row;
    ngx_pool_t                        *pool;
    ngx_http_agent_storage_t          *st;
    ngx_http_agent_storage_channel_t  *ch;

    pool = q->sc->pool;

    st = ngx_pcalloc(pool, sizeof(ngx_http_agent_storage_t));
    if (st == NULL) {
        return NGX_ERROR;
    }

    st->channels = ngx_array_create(pool, 8,
                                    sizeof(ngx_http_agent_storage_channel_t));
    if (st->channels == NULL) {
        return NGX_ERROR;
    }

    for (row = 0; row < PQntuples(res); row++) {

        if (PQgetisnull(res, row, 0)) {
            st->checkpoints = ngx_http_agent_pg_int(res, row, 1);
            st->checkpoint_bytes = ngx_http_agent_pg_int(res, row, 2);
            st->messages = ngx_http_agent_pg_int(res, row, 3);
            st->message_bytes = ngx_http_agent_pg_int(res, row, 4);
            st->writes = ngx_http_agent_pg_int(res, row, 5);
            st->write_bytes = ngx_http_agent_pg_int(res, row, 6);
            continue;
        }

        ch = ngx_array_push(st->channels);

        if (ch == NULL
            || ngx_http_agent_pg_str(pool, res, row, 0, &ch->name) != NGX_OK)
        {
            return NGX_ERROR;
        }

        ch->count = ngx_http_agent_pg_int(res, row, 1);
        ch->bytes = ngx_http_agent_pg_int(res, row, 2);
    }

    a->value = st;

    return NGX_OK;
}
