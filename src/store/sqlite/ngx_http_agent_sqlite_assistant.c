
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"


/*
 * The LangGraph API's assistants: a row per assistant (its owner, its
 * latest and highest versions) and a row per version (its graph and its
 * document: name, description, config, context, metadata).
 */


static ngx_int_t ngx_http_agent_sqlite_assistant_write(
    ngx_http_agent_assistant_row_t *row);


/* the assistant's row and the version's in one transaction */

ngx_int_t
ngx_http_agent_sqlite_assistant_put(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_assistant_row_t *row)
{
    ngx_int_t  rc;

    rc = ngx_http_agent_sqlite_begin(sc);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_sqlite_assistant_write(row);

    if (rc != NGX_OK) {
        ngx_http_agent_sqlite_rollback(sc);
        return rc;
    }

    return ngx_http_agent_sqlite_commit(sc);
}


static ngx_int_t
ngx_http_agent_sqlite_assistant_write(ngx_http_agent_assistant_row_t *row)
{
    ngx_int_t  rc;

    if (row->version == 1) {
        rc = ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_ASSISTANT_CREATE,
                                      "ssss", &row->assistant_id, &row->owner,
                                      &row->graph_id, &row->updated_at);

    } else {
        rc = ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_ASSISTANT_BUMP,
                                      "ssiss", &row->assistant_id,
                                      &row->owner, row->version,
                                      &row->graph_id, &row->updated_at);
    }

    if (rc != NGX_OK) {
        return NGX_ERROR;
    }

    if (sqlite3_changes(ngx_http_agent_sqlite_db) == 0) {
        return NGX_DECLINED;
    }

    return ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_ASSISTANT_VERSION,
                                    "sisss", &row->assistant_id, row->version,
                                    &row->graph_id, &row->doc,
                                    &row->updated_at);
}


/* NGX_DECLINED: no such assistant of that owner, or no such version */

ngx_int_t
ngx_http_agent_sqlite_assistant_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, int64_t version,
    ngx_http_agent_assistant_row_t *row)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_ASSISTANT_GET, "ssi",
                                       id, owner, version);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_one(sc->pool, stmt,
                                     &ngx_http_agent_store_assistant_cols, row);
}


ngx_int_t
ngx_http_agent_sqlite_assistant_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *graph_id, ngx_str_t *id, ngx_array_t *rows)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_ASSISTANT_LIST,
                                       "sss", owner, graph_id, id);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_rows(sc->pool, stmt,
                                      &ngx_http_agent_store_assistant_cols,
                                      rows);
}


ngx_int_t
ngx_http_agent_sqlite_assistant_latest(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id, int64_t version, ngx_str_t *now)
{
    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_ASSISTANT_LATEST, "ssis",
                                 id, owner, version, now)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return sqlite3_changes(ngx_http_agent_sqlite_db) ? NGX_OK : NGX_DECLINED;
}


ngx_int_t
ngx_http_agent_sqlite_assistant_delete(ngx_http_agent_store_call_t *sc,
    ngx_str_t *owner, ngx_str_t *id)
{
    ngx_uint_t  gone;

    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_ASSISTANT_DELETE, "ss",
                                 id, owner)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    gone = sqlite3_changes(ngx_http_agent_sqlite_db);

    /* the versions of an assistant no longer there */

    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_ASSISTANT_PURGE, "s", id)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return gone ? NGX_OK : NGX_DECLINED;
}
