
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"


/*
 * The LangGraph API's crons on PostgreSQL (sqlite_cron.c for SQLite).  A
 * tick is claimed in one statement that skips a row another host has
 * locked (FOR UPDATE SKIP LOCKED) and moves the next run only from the
 * time read: of the workers of every host that saw it due, one fires it.
 */


ngx_int_t
ngx_http_agent_pg_cron_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_cron_row_t *row)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, cron_put, &row->owner, &row->cron_id);

    if (a) {
        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CRON_PUT,
                                 ngx_http_agent_pg_changed, "ssssssiissn",
                                 &row->cron_id, &row->owner,
                                 &row->assistant_id, &row->thread_id,
                                 &row->origin, &row->doc, row->next_run,
                                 (int64_t) row->enabled, &row->created_at,
                                 &row->updated_at, &row->limit_keys);
}


ngx_int_t
ngx_http_agent_pg_cron_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, ngx_http_agent_cron_row_t *row)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, cron_get, owner, id);

    if (a) {
        return ngx_http_agent_pg_answered_row(a, row);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CRON_GET,
                                 ngx_http_agent_pg_read, "ss", id,
                                 owner);
}


ngx_int_t
ngx_http_agent_pg_cron_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_array_t *rows)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, cron_list, owner, NULL);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, rows);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CRON_LIST,
                                 ngx_http_agent_pg_read, "s", owner);
}


ngx_int_t
ngx_http_agent_pg_cron_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, cron_delete, owner, id);

    if (a) {
        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CRON_DELETE,
                                 ngx_http_agent_pg_changed, "ss", id,
                                 owner);
}


ngx_int_t
ngx_http_agent_pg_cron_due(ngx_http_agent_store_call_t *sc, int64_t now,
    ngx_array_t *rows)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, cron_due, NULL, NULL);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, rows);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CRON_DUE,
                                 ngx_http_agent_pg_read, "i", now);
}


ngx_int_t
ngx_http_agent_pg_cron_claim(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t was, int64_t next)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, cron_claim, id, NULL);

    if (a) {
        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CRON_CLAIM,
                                 ngx_http_agent_pg_changed, "sii", id,
                                 was, next);
}
