
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"
#include "ngx_http_agent_util.h"


/*
 * The PostgreSQL store's operations, as the SQLite store's: each sends one
 * statement (ngx_http_agent_pg_sql.c) and answers NGX_AGAIN; the
 * caller's next pass reads the answer kept in its call, in the same order,
 * through the same function.  Values the store makes itself (ids, times)
 * are made when the call is sent, and kept with the answer.
 */


static ngx_int_t ngx_http_agent_pg_leases_renewed(
    ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a);
static ngx_int_t ngx_http_agent_pg_unlock_ask(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_str_t *run_id,
    int64_t gen);
static void ngx_http_agent_pg_unlock_failed(ngx_http_agent_pg_query_t *q);
static ngx_int_t ngx_http_agent_pg_unlock_send(ngx_str_t *id,
    ngx_str_t *run_id, int64_t gen);


static ngx_http_agent_store_call_t  ngx_http_agent_pg_unlock_call;


ngx_int_t
ngx_http_agent_pg_session_create(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *title, ngx_str_t *metadata, ngx_str_t *owner,
    ngx_http_agent_session_t *s)
{
    ngx_http_agent_pg_query_t   *q;
    ngx_http_agent_pg_answer_t  *a;
    ngx_http_agent_session_t    *made;

    a = ngx_http_agent_pg_answered(sc, session_create, id, title);

    if (a) {
        if (a->value) {
            *s = *(ngx_http_agent_session_t *) a->value;
        }

        return a->rc;
    }

    made = ngx_pcalloc(sc->pool, sizeof(ngx_http_agent_session_t));

    if (made == NULL
        || ngx_http_agent_store_made(sc->pool, id, &made->id,
                                     &made->created_at)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    made->updated_at = made->created_at;
    made->title = *title;
    made->metadata = *metadata;

    if (owner) {
        made->owner = *owner;
    }

    *s = *made;

    q = ngx_http_agent_pg_query(sc, NGX_HTTP_AGENT_PG_SESSION_INSERT,
                                ngx_http_agent_pg_done);
    if (q == NULL
        || ngx_http_agent_pg_param(q, &made->id) != NGX_OK
        || ngx_http_agent_pg_param(q, title) != NGX_OK
        || ngx_http_agent_pg_param(q, metadata->len ? metadata : NULL)
           != NGX_OK
        || ngx_http_agent_pg_param(q, &made->created_at) != NGX_OK
        || ngx_http_agent_pg_param(q, owner) != NGX_OK)
    {
        return NGX_ERROR;
    }

    q->data = made;

    return ngx_http_agent_pg_send(q, 0);
}


ngx_int_t
ngx_http_agent_pg_session_get(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_http_agent_session_t *s)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, session_get, id, NULL);

    if (a) {
        return ngx_http_agent_pg_answered_row(a, s);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_SESSION_GET,
                                 ngx_http_agent_pg_read, "s", id);
}


static ngx_int_t
ngx_http_agent_pg_session_counted(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a)
{
    int64_t  *n;

    n = ngx_palloc(q->sc->pool, sizeof(int64_t));
    if (n == NULL || PQntuples(res) != 1) {
        return NGX_ERROR;
    }

    *n = ngx_http_agent_pg_int(res, 0, 0);
    a->value = n;

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_pg_session_count(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_session_query_t *q, int64_t *count)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, session_count, q->owner, q->metadata);

    if (a) {
        if (a->rc == NGX_OK) {
            *count = *(int64_t *) a->value;
        }

        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_SESSION_COUNT,
                                 ngx_http_agent_pg_session_counted, "ss",
                                 q->owner, q->metadata);
}


ngx_int_t
ngx_http_agent_pg_session_list(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_session_query_t *q, ngx_array_t *sessions)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, session_list, q->owner, q->metadata);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, sessions);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_SESSION_LIST,
                                 ngx_http_agent_pg_read, "iissi",
                                 (int64_t) q->limit, (int64_t) q->offset,
                                 q->owner, q->metadata,
                                 (int64_t) (q->asc ? 1 : 0));
}


/* '' first when the session was there, then its files: gone with it */

static ngx_int_t
ngx_http_agent_pg_session_deleted(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a)
{
    int    i;
    char  *path;

    for (i = 1; i < PQntuples(res); i++) {
        path = PQgetvalue(res, i, 0);

        if (ngx_delete_file(path) == NGX_FILE_ERROR && ngx_errno != ENOENT) {
            ngx_log_error(NGX_LOG_WARN, ngx_cycle->log, ngx_errno,
                          "agent: cannot delete \"%s\"", path);
        }
    }

    return PQntuples(res) ? NGX_OK : NGX_DECLINED;
}


ngx_int_t
ngx_http_agent_pg_session_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, session_delete, id, NULL);

    if (a) {
        return a->rc;
    }

    /* with no one to answer too, the files go */
    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_SESSION_DELETE,
                                 ngx_http_agent_pg_session_deleted, "s", id);
}


ngx_int_t
ngx_http_agent_pg_session_set(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_uint_t field, ngx_str_t *value)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, session_set, id, value);

    if (a) {
        return a->rc;
    }

    /* the statements in the order of the fields */
    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_SESSION_SET_MODEL
                                     + field,
                                 ngx_http_agent_pg_done, "ss", id, value);
}


/* a session copied as to, its rows with it: one statement, one transaction */

ngx_int_t
ngx_http_agent_pg_session_copy(ngx_http_agent_store_call_t *sc,
    ngx_str_t *from, ngx_str_t *to, ngx_str_t *now)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, session_copy, from, to);

    if (a) {
        return a->rc;
    }

    /* the answer's one row: the session's copy made; none, NGX_DECLINED */
    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_SESSION_COPY,
                                 ngx_http_agent_pg_changed, "sss", from, to,
                                 now);
}


/*
 * The lease, as the SQLite store takes it: held by a process of this host
 * that is gone, it is taken over at once; on another host only its expiry
 * frees it.
 */


static ngx_int_t
ngx_http_agent_pg_locked(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    ngx_http_agent_pg_lock_t  *lk;

    lk = q->data;

    if (PQntuples(res) != 1) {
        return NGX_ERROR;
    }

    switch (ngx_http_agent_pg_int(res, 0, 0)) {

    case 0:
        return NGX_OK;

    case 2:
        return NGX_DECLINED;
    }

    /* taken over: NGX_OK; someone was quicker: NGX_BUSY */
    return ngx_http_agent_pg_take_over(q, res, 1, 3, 2, lk,
                                       ngx_http_agent_pg_changed);
}


/*
 * A lease held: taken over (a second statement for the same answer) when
 * its holder was a process of this host that is gone; columns of the
 * owner's run id, host and pid in the result's first row
 */

ngx_int_t
ngx_http_agent_pg_take_over(ngx_http_agent_pg_query_t *q, PGresult *res,
    int owner_col, int host_col, int pid_col, ngx_http_agent_pg_lock_t *lk,
    ngx_http_agent_pg_decode_pt decode)
{
    ngx_str_t                   owner;
    ngx_http_agent_pg_query_t  *next;

    if (PQgetisnull(res, 0, host_col)
        || !ngx_http_agent_store_holder_gone(&lk->id,
                                 (u_char *) PQgetvalue(res, 0, host_col),
                                 PQgetlength(res, 0, host_col),
                                 (ngx_pid_t) ngx_http_agent_pg_int(res, 0,
                                                                   pid_col)))
    {
        return NGX_BUSY;
    }

    (void) ngx_http_agent_pg_str(q->pool, res, 0, owner_col, &owner);

    next = ngx_http_agent_pg_query(q->sc, NGX_HTTP_AGENT_PG_LOCK_STEAL,
                                   decode);
    if (next == NULL
        || ngx_http_agent_pg_param(next, &lk->id) != NGX_OK
        || ngx_http_agent_pg_param(next, &lk->run_id) != NGX_OK
        || ngx_http_agent_pg_param_int(next, ngx_pid) != NGX_OK
        || ngx_http_agent_pg_param(next, &owner) != NGX_OK
        || ngx_http_agent_pg_param_int(next, lk->expires) != NGX_OK
        || ngx_http_agent_pg_param(next, &ngx_http_agent_store_host)
           != NGX_OK
        || ngx_http_agent_pg_param_int(next, lk->gen) != NGX_OK)
    {
        if (next) {
            ngx_destroy_pool(next->pool);
        }

        return NGX_ERROR;
    }

    return ngx_http_agent_pg_follow(q, next);
}


ngx_int_t
ngx_http_agent_pg_lock(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_str_t *run_id, ngx_msec_t lease)
{
    int64_t                      now;
    ngx_http_agent_pg_lock_t    *lk;
    ngx_http_agent_pg_query_t   *q;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, lock, id, run_id);

    if (a) {
        return a->rc;
    }

    now = ngx_http_agent_store_ms();

    q = ngx_http_agent_pg_query(sc, NGX_HTTP_AGENT_PG_LOCK,
                                ngx_http_agent_pg_locked);
    if (q == NULL) {
        return NGX_ERROR;
    }

    lk = ngx_palloc(q->pool, sizeof(ngx_http_agent_pg_lock_t));
    if (lk == NULL) {
        ngx_destroy_pool(q->pool);
        return NGX_ERROR;
    }

    lk->expires = now + lease;
    lk->gen = sc->gen;
    lk->id.len = id->len;
    lk->id.data = ngx_pstrdup(q->pool, id);
    lk->run_id.len = run_id->len;
    lk->run_id.data = ngx_pstrdup(q->pool, run_id);
    q->data = lk;

    if (lk->id.data == NULL || lk->run_id.data == NULL
        || ngx_http_agent_pg_param(q, id) != NGX_OK
        || ngx_http_agent_pg_param(q, run_id) != NGX_OK
        || ngx_http_agent_pg_param_int(q, ngx_pid) != NGX_OK
        || ngx_http_agent_pg_param_int(q, now + lease) != NGX_OK
        || ngx_http_agent_pg_param_int(q, now) != NGX_OK
        || ngx_http_agent_pg_param(q, &ngx_http_agent_store_host) != NGX_OK
        || ngx_http_agent_pg_param_int(q, sc->gen) != NGX_OK)
    {
        ngx_destroy_pool(q->pool);
        return NGX_ERROR;
    }

    return ngx_http_agent_pg_send(q, 0);
}


ngx_int_t
ngx_http_agent_pg_lock_renew(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_str_t *run_id, ngx_msec_t lease)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, lock_renew, id, run_id);

    if (a) {
        return a->rc;
    }

    /* NGX_DECLINED: the lease is no longer this run's */
    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RENEW,
                                 ngx_http_agent_pg_changed, "ssii", id,
                                 run_id,
                                 (int64_t) (ngx_http_agent_store_ms()
                                            + lease), sc->gen);
}


/*
 * A worker's leases in one statement (store_leases.c): the rows it
 * returns are those renewed.  The caller keeps the leases until the answer
 */

ngx_int_t
ngx_http_agent_pg_leases_renew(ngx_http_agent_store_call_t *sc,
    ngx_array_t *leases)
{
    ngx_str_t                    json;
    ngx_http_agent_pg_query_t   *q;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, leases_renew, NULL, NULL);

    if (a) {
        return a->rc;
    }

    q = ngx_http_agent_pg_query(sc, NGX_HTTP_AGENT_PG_LEASES_RENEW,
                                ngx_http_agent_pg_leases_renewed);
    if (q == NULL) {
        return NGX_ERROR;
    }

    q->data = leases;

    if (ngx_http_agent_store_leases_json(q->pool, leases, &json) != NGX_OK
        || ngx_http_agent_pg_param(q, &json) != NGX_OK)
    {
        ngx_destroy_pool(q->pool);
        return NGX_ERROR;
    }

    return ngx_http_agent_pg_send(q, 0);
}


static ngx_int_t
ngx_http_agent_pg_leases_renewed(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a)
{
    int  i;

    /* no caller: the leases may be gone */
    if (a == NULL) {
        return NGX_OK;
    }

    for (i = 0; i < PQntuples(res); i++) {
        ngx_http_agent_store_lease_renewed(q->data,
                                       (u_char *) PQgetvalue(res, i, 0),
                                       PQgetlength(res, i, 0));
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_pg_unlock(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_str_t *run_id)
{
    ngx_int_t                    rc;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, unlock, id, run_id);

    if (a) {
        rc = a->rc;
        goto done;
    }

    /*
     * a caller with a wake handler hears when the lease is let go (its
     * answer, a 400 say, follows it); for one without, a write that wants
     * no answer
     */

    rc = ngx_http_agent_pg_unlock_ask(sc, id, run_id, sc->gen);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

done:

    /* not sent (the server down) or failed: sent again */

    if (rc == NGX_ERROR) {
        ngx_http_agent_store_unlock_later(id, run_id, sc->gen,
                                          ngx_http_agent_pg_unlock_send,
                                          ngx_http_agent_pg_log);
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_pg_unlock_ask(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_str_t *run_id, int64_t gen)
{
    ngx_http_agent_pg_query_t  *q;

    q = ngx_http_agent_pg_query(sc, NGX_HTTP_AGENT_PG_UNLOCK, NULL);
    if (q == NULL) {
        return NGX_ERROR;
    }

    if (ngx_http_agent_pg_param(q, id) != NGX_OK
        || ngx_http_agent_pg_param(q, run_id) != NGX_OK
        || ngx_http_agent_pg_param_int(q, gen) != NGX_OK)
    {
        ngx_destroy_pool(q->pool);
        return NGX_ERROR;
    }

    /* one that wants no answer, lost with its connection: sent again */
    q->failed = ngx_http_agent_pg_unlock_failed;

    return ngx_http_agent_pg_send(q, 0);
}


static void
ngx_http_agent_pg_unlock_failed(ngx_http_agent_pg_query_t *q)
{
    int64_t    gen;
    ngx_str_t  id, run_id;

    /* the parameters, as sent */

    id.data = (u_char *) q->values[0];
    id.len = q->lengths[0];
    run_id.data = (u_char *) q->values[1];
    run_id.len = q->lengths[1];
    gen = ngx_atoof((u_char *) q->values[2], q->lengths[2]);

    ngx_http_agent_store_unlock_later(&id, &run_id, gen > 0 ? gen : 0,
                                      ngx_http_agent_pg_unlock_send,
                                      ngx_http_agent_pg_log);
}


/* an unlock sent again, on a call of the worker's: NGX_OK, it is on its way */

static ngx_int_t
ngx_http_agent_pg_unlock_send(ngx_str_t *id, ngx_str_t *run_id, int64_t gen)
{
    ngx_http_agent_store_call_t  *sc;

    sc = &ngx_http_agent_pg_unlock_call;

    /* the session's connection */
    ngx_http_agent_store_call_init(sc, ngx_cycle->pool, ngx_cycle->log, NULL,
                                   NULL);
    sc->key = *id;

    return ngx_http_agent_pg_unlock_ask(sc, id, run_id, gen);
}
