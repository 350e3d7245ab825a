
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"


/*
 * The LangGraph API's assistants on PostgreSQL (sqlite_assistant.c for
 * SQLite): a version written is one statement, its row and the
 * assistant's together.
 */


ngx_int_t
ngx_http_agent_pg_assistant_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_assistant_row_t *row)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, assistant_put, &row->assistant_id,
                                   &row->owner);

    if (a) {
        return a->rc;
    }

    if (row->version == 1) {
        return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_ASSISTANT_CREATE,
                                     ngx_http_agent_pg_changed,
                                     "sssss", &row->assistant_id,
                                     &row->owner, &row->graph_id, &row->doc,
                                     &row->updated_at);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_ASSISTANT_BUMP,
                                 ngx_http_agent_pg_changed, "sssssi",
                                 &row->assistant_id, &row->owner,
                                 &row->graph_id, &row->doc, &row->updated_at,
                                 row->version);
}


ngx_int_t
ngx_http_agent_pg_assistant_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, int64_t version,
    ngx_http_agent_assistant_row_t *row)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, assistant_get, owner, id);

    if (a) {
        return ngx_http_agent_pg_answered_row(a, row);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_ASSISTANT_GET,
                                 ngx_http_agent_pg_read, "ssi", id,
                                 owner, version);
}


ngx_int_t
ngx_http_agent_pg_assistant_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *graph_id, ngx_str_t *id, ngx_array_t *rows)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, assistant_list, owner, id);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, rows);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_ASSISTANT_LIST,
                                 ngx_http_agent_pg_read, "sss",
                                 owner, graph_id, id);
}


ngx_int_t
ngx_http_agent_pg_assistant_latest(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, int64_t version, ngx_str_t *now)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, assistant_latest, owner, id);

    if (a) {
        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_ASSISTANT_LATEST,
                                 ngx_http_agent_pg_changed, "ssis",
                                 id, owner, version, now);
}


ngx_int_t
ngx_http_agent_pg_assistant_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, assistant_delete, owner, id);

    if (a) {
        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_ASSISTANT_DELETE,
                                 ngx_http_agent_pg_changed, "ss", id,
                                 owner);
}
