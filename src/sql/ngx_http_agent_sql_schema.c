
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>

#include "ngx_http_agent_sql.h"
#include "ngx_http_agent_util.h"


/*
 * The schema of a database for POST /connection: its tables, their columns
 * and up to three sample rows each, read with the SQL tools' read-only
 * handle and sandbox.
 */


ngx_int_t
ngx_http_agent_sql_schema(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_database_t *database, ngx_str_t *tables)
{
    return ngx_http_agent_sql_schema_read(pool, log, database, NULL, tables);
}


/* handle: a thread's own, or NULL for the worker's */

ngx_int_t
ngx_http_agent_sql_schema_read(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_database_t *database, sqlite3 *handle, ngx_str_t *tables)
{
    u_char                    *p;
    sqlite3                   *db;
    ngx_int_t                  rc;
    ngx_str_t                  name, query, err;
    ngx_array_t                names;
    ngx_uint_t                 i;
    sqlite3_stmt              *stmt;
    ngx_http_agent_json_t     *j;
    ngx_http_agent_sql_ctx_t   ctx;

    ngx_memzero(&ctx, sizeof(ngx_http_agent_sql_ctx_t));
    ctx.database = database;
    ctx.timeout = 1000;
    ctx.max_rows = 3;
    ctx.max_bytes = 64 * 1024;
    ctx.db = handle;

    db = ngx_http_agent_sql_handle(log, &ctx);
    if (db == NULL) {
        return NGX_ERROR;
    }

    if (ngx_array_init(&names, pool, 8, sizeof(ngx_str_t)) != NGX_OK) {
        return NGX_ERROR;
    }

    if (sqlite3_prepare_v2(db, "SELECT name, sql FROM sqlite_master"
                           " WHERE type IN"
                           " ('table', 'view') AND name NOT LIKE 'sqlite_%'"
                           " ORDER BY name", -1, &stmt, NULL)
        != SQLITE_OK)
    {
        ngx_log_error(NGX_LOG_ERR, log, 0, "agent: cannot read the schema "
                      "of \"%V\": %s", &database->name, sqlite3_errmsg(db));
        return NGX_ERROR;
    }

    while (sqlite3_step(stmt) == SQLITE_ROW) {
        p = (u_char *) sqlite3_column_text(stmt, 0);
        name.len = sqlite3_column_bytes(stmt, 0);
        name.data = ngx_pstrdup(pool, &(ngx_str_t) { name.len, p });

        if (name.data == NULL || ngx_array_push_n(&names, 2) == NULL) {
            sqlite3_finalize(stmt);
            return NGX_ERROR;
        }

        ((ngx_str_t *) names.elts)[names.nelts - 2] = name;

        p = (u_char *) sqlite3_column_text(stmt, 1);
        name.len = p ? sqlite3_column_bytes(stmt, 1) : 0;
        name.data = ngx_pstrdup(pool, &(ngx_str_t) { name.len, p });

        ((ngx_str_t *) names.elts)[names.nelts - 1] = name;
    }

    sqlite3_finalize(stmt);

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_arr(j);

    for (i = 0; i < names.nelts; i += 2) {
        name = ((ngx_str_t *) names.elts)[i];

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &name);
        ngx_http_agent_json_key(j, "sql");
        ngx_http_agent_json_str(j, &((ngx_str_t *) names.elts)[i + 1]);
        ngx_http_agent_json_key(j, "sample");

        p = ngx_pnalloc(pool, name.len * 2 + 32);
        if (p == NULL) {
            return NGX_ERROR;
        }

        query.data = p;
        p = ngx_cpymem(p, "SELECT * FROM \"", 15);

        while (name.len--) {
            if (*name.data == '"') {
                *p++ = '"';
            }

            *p++ = *name.data++;
        }

        *p++ = '"';
        query.len = p - query.data;

        rc = ngx_http_agent_sql_run(pool, &ctx, db, &query, j, &err);
        if (rc == NGX_ERROR) {
            return NGX_ERROR;
        }

        if (rc == NGX_DECLINED) {
            ngx_http_agent_json_null(j);
        }

        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);

    return ngx_http_agent_json_done(j, tables);
}
