
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"


/*
 * The LangGraph API's runs on PostgreSQL (sqlite_run.c for
 * SQLite): their rows, their kept events, cancels asked from anywhere.
 */


typedef struct {
    int64_t                    seq;
    ngx_str_t                  event;
    ngx_str_t                  json;
} ngx_http_agent_pg_event_t;


ngx_int_t
ngx_http_agent_pg_run_insert(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_row_t *row, ngx_uint_t events)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, run_insert, &row->thread_id,
                                   &row->run_id);

    if (a) {
        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RUN_INSERT,
                                 ngx_http_agent_pg_done, "ssssnnssinnnnn",
                                 &row->run_id, &row->thread_id,
                                 &row->assistant_id, &row->status,
                                 &row->metadata, &row->kwargs,
                                 &row->multitask_strategy, &row->created_at,
                                 (int64_t) (events ? 1 : 0), &row->checkpoint,
                                 &row->expire, &row->origin, &row->limit_keys,
                                 &row->secret);
}


ngx_int_t
ngx_http_agent_pg_run_status(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, const char *status)
{
    u_char                       now[32];
    ngx_str_t                    st, at;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, run_status, run_id, NULL);

    if (a) {
        return a->rc;
    }

    st.data = (u_char *) status;
    st.len = ngx_strlen(status);
    at.data = now;
    at.len = ngx_http_agent_store_now(now) - now;

    /* fenced (a turn's end after its run was claimed again): declined */
    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RUN_STATUS,
                                 (sc->gen && st.data[0] != 'p'
                                  && st.data[0] != 'r')
                                 ? ngx_http_agent_pg_changed
                                 : ngx_http_agent_pg_done, "sssi", run_id, &st,
                                 &at, sc->gen);
}


ngx_int_t
ngx_http_agent_pg_run_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id, ngx_http_agent_run_row_t *row)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, run_get, thread_id, run_id);

    if (a) {
        return ngx_http_agent_pg_answered_row(a, row);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RUN_GET,
                                 ngx_http_agent_pg_read, "ss", run_id,
                                 thread_id);
}


ngx_int_t
ngx_http_agent_pg_run_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *status, ngx_int_t limit,
    ngx_int_t offset, ngx_array_t *rows)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, run_list, thread_id, status);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, rows);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RUN_LIST,
                                 ngx_http_agent_pg_read, "siis",
                                 thread_id, (int64_t) limit, (int64_t) offset,
                                 status);
}


ngx_int_t
ngx_http_agent_pg_run_cancel(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_str_t *action, ngx_uint_t now)
{
    u_char                       buf[32];
    ngx_str_t                    at;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, run_cancel, run_id, action);

    if (a) {
        return a->rc;
    }

    /* a run ended now: its kept events are not let go under its worker */
    at.data = buf;
    at.len = ngx_http_agent_store_now(buf) - buf;

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RUN_CANCEL,
                                 ngx_http_agent_pg_changed, "ssis", run_id,
                                 action, (int64_t) now, &at);
}


/* a text column of one row, or NGX_DECLINED for none or NULL */

static ngx_int_t
ngx_http_agent_pg_text_read(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    ngx_str_t  *s;

    if (PQntuples(res) == 0 || PQgetisnull(res, 0, 0)) {
        return NGX_DECLINED;
    }

    s = ngx_palloc(q->sc->pool, sizeof(ngx_str_t));
    if (s == NULL
        || ngx_http_agent_pg_str(q->sc->pool, res, 0, 0, s) != NGX_OK)
    {
        return NGX_ERROR;
    }

    a->value = s;

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_pg_text(ngx_http_agent_store_call_t *sc, ngx_uint_t stmt,
    ngx_str_t *key, int64_t n, ngx_str_t *out)
{
    ngx_http_agent_pg_query_t   *q;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_store_answered(sc,
                                      stmt == NGX_HTTP_AGENT_PG_THREAD_BUSY
                                      ? ngx_http_agent_store_op(thread_busy)
                                      : ngx_http_agent_store_op(run_cancelled),
                                      key, NULL);

    if (a) {
        if (a->rc == NGX_OK) {
            *out = *(ngx_str_t *) a->value;
        }

        return a->rc;
    }

    q = ngx_http_agent_pg_query(sc, stmt, ngx_http_agent_pg_text_read);
    if (q == NULL || ngx_http_agent_pg_param(q, key) != NGX_OK) {
        return NGX_ERROR;
    }

    if (stmt == NGX_HTTP_AGENT_PG_THREAD_BUSY
        && ngx_http_agent_pg_param_int(q, n) != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_pg_send(q, 0);
}


ngx_int_t
ngx_http_agent_pg_run_cancelled(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_str_t *action)
{
    return ngx_http_agent_pg_text(sc, NGX_HTTP_AGENT_PG_RUN_CANCELLED, run_id,
                                  0, action);
}


ngx_int_t
ngx_http_agent_pg_thread_busy(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id)
{
    return ngx_http_agent_pg_text(sc, NGX_HTTP_AGENT_PG_THREAD_BUSY,
                                  thread_id, ngx_http_agent_store_ms(),
                                  run_id);
}


ngx_int_t
ngx_http_agent_pg_run_event(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, int64_t seq, ngx_str_t *event, ngx_str_t *json)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, run_event, run_id, event);

    if (a) {
        return a->rc;
    }

    /* a pending write fenced is declined (always replaced otherwise) */
    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RUN_EVENT,
                                 (sc->gen && seq < 0)
                                 ? ngx_http_agent_pg_changed
                                 : ngx_http_agent_pg_done, "sissi", run_id,
                                 (int64_t) seq, event, json, sc->gen);
}


static ngx_int_t
ngx_http_agent_pg_events_read(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    int                         i;
    ngx_array_t                *rows;
    ngx_http_agent_pg_event_t  *e;

    rows = ngx_array_create(q->sc->pool, PQntuples(res) + 1,
                            sizeof(ngx_http_agent_pg_event_t));
    if (rows == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < PQntuples(res); i++) {
        e = ngx_array_push(rows);
        if (e == NULL) {
            return NGX_ERROR;
        }

        e->seq = ngx_http_agent_pg_int(res, i, 0);

        if (ngx_http_agent_pg_str(q->sc->pool, res, i, 1, &e->event)
            != NGX_OK
            || ngx_http_agent_pg_str(q->sc->pool, res, i, 2, &e->json)
               != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    a->value = rows;

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_pg_run_events(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, int64_t after, ngx_uint_t limit,
    ngx_http_agent_store_event_pt handler, void *data)
{
    ngx_uint_t                   i;
    ngx_array_t                 *rows;
    ngx_http_agent_pg_event_t   *e;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, run_events, run_id, NULL);

    if (a) {
        if (a->rc != NGX_OK) {
            return a->rc;
        }

        rows = a->value;
        e = rows->elts;

        for (i = 0; i < rows->nelts; i++) {
            if (handler(data, e[i].seq, &e[i].event, &e[i].json) != NGX_OK) {
                return NGX_ERROR;
            }
        }

        return NGX_OK;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RUN_EVENTS,
                                 ngx_http_agent_pg_events_read, "sii", run_id,
                                 (int64_t) after, (int64_t) limit);
}


ngx_int_t
ngx_http_agent_pg_run_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, run_delete, run_id, NULL);

    if (a) {
        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RUN_DELETE,
                                 ngx_http_agent_pg_done, "s", run_id);
}


ngx_int_t
ngx_http_agent_pg_run_rollback(ngx_http_agent_store_call_t *sc,
    ngx_str_t *thread_id, ngx_str_t *run_id, ngx_str_t *before)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, run_rollback, thread_id, run_id);

    if (a) {
        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RUN_ROLLBACK,
                                 ngx_http_agent_pg_done, "sss", thread_id,
                                 run_id, before->len ? before : NULL);
}
