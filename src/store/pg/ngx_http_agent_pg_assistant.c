
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


static ngx_int_t ngx_http_agent_pg_assistant_some(
    ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a);
static ngx_int_t ngx_http_agent_pg_assistant_read(
    ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a);


/* NGX_OK: a row written, NGX_DECLINED: none was */

static ngx_int_t
ngx_http_agent_pg_assistant_some(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    char  *n;

    n = PQcmdTuples(res);

    return (n[0] != '\0' && n[0] != '0') ? NGX_OK : NGX_DECLINED;
}


static ngx_int_t
ngx_http_agent_pg_assistant_read(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    int                              i;
    size_t                           used;
    ngx_pool_t                      *pool;
    ngx_array_t                     *rows;
    ngx_http_agent_assistant_row_t  *row;

    if (q->stmt == NGX_HTTP_AGENT_PG_ASSISTANT_GET && PQntuples(res) == 0) {
        return NGX_DECLINED;
    }

    pool = q->sc->pool;

    rows = ngx_array_create(pool, PQntuples(res) + 1,
                            sizeof(ngx_http_agent_assistant_row_t));
    if (rows == NULL) {
        return NGX_ERROR;
    }

    used = 0;

    for (i = 0;
         i < PQntuples(res) && ngx_http_agent_pg_room(res, i, &used);
         i++)
    {
        row = ngx_array_push(rows);
        if (row == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(row, sizeof(ngx_http_agent_assistant_row_t));

        (void) ngx_http_agent_pg_str(pool, res, i, 0, &row->assistant_id);
        (void) ngx_http_agent_pg_str(pool, res, i, 1, &row->owner);
        (void) ngx_http_agent_pg_str(pool, res, i, 2, &row->graph_id);
        row->version = ngx_http_agent_pg_int(res, i, 3);
        row->latest = ngx_http_agent_pg_int(res, i, 4);
        row->versions = ngx_http_agent_pg_int(res, i, 5);
        (void) ngx_http_agent_pg_str(pool, res, i, 6, &row->doc);
        (void) ngx_http_agent_pg_str(pool, res, i, 7, &row->created_at);
        (void) ngx_http_agent_pg_str(pool, res, i, 8, &row->updated_at);
    }

    a->value = rows;

    return NGX_OK;
}


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
                                     ngx_http_agent_pg_assistant_some,
                                     "sssss", &row->assistant_id,
                                     &row->owner, &row->graph_id, &row->doc,
                                     &row->updated_at);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_ASSISTANT_BUMP,
                                 ngx_http_agent_pg_assistant_some, "sssssi",
                                 &row->assistant_id, &row->owner,
                                 &row->graph_id, &row->doc, &row->updated_at,
                                 row->version);
}


ngx_int_t
ngx_http_agent_pg_assistant_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, int64_t version,
    ngx_http_agent_assistant_row_t *row)
{
    ngx_array_t                 *rows;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, assistant_get, owner, id);

    if (a) {
        if (a->rc == NGX_OK) {
            rows = a->value;
            *row = *(ngx_http_agent_assistant_row_t *) rows->elts;
        }

        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_ASSISTANT_GET,
                                 ngx_http_agent_pg_assistant_read, "ssi", id,
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
                                 ngx_http_agent_pg_assistant_read, "sss",
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
                                 ngx_http_agent_pg_assistant_some, "ssis",
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
                                 ngx_http_agent_pg_assistant_some, "ss", id,
                                 owner);
}
