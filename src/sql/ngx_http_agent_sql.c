
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>
#include <time.h>

#include "ngx_http_agent_sql.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"


/*
 * The SQL tools the model may call.  Each worker keeps one read-only handle
 * per agent_database (and one in-memory handle for sessions without one);
 * a session's CSV files are attached read-only for the statement.  The
 * statement runs under an authorizer that allows reading only, and a
 * progress handler that stops it at the time cap.
 */


#define NGX_HTTP_AGENT_SQL_SAMPLE_ROWS   5


typedef struct {
    ngx_str_t                    name;
    sqlite3                     *db;
} ngx_http_agent_sql_handle_t;


static ngx_int_t ngx_http_agent_sql_attach(sqlite3 *db, ngx_pool_t *pool,
    ngx_array_t *resources, ngx_uint_t *n);
static void ngx_http_agent_sql_detach(sqlite3 *db, ngx_uint_t n);
static ngx_int_t ngx_http_agent_sql_execute(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_sql_ctx_t *ctx, ngx_str_t *query, ngx_str_t *result,
    ngx_str_t *err);
static ngx_int_t ngx_http_agent_sql_load_csv(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_sql_ctx_t *ctx, ngx_str_t *table, ngx_str_t *result,
    ngx_str_t *err);
static ngx_int_t ngx_http_agent_sql_value(ngx_http_agent_json_t *j,
    sqlite3_stmt *stmt, int col, size_t room);


static ngx_array_t  *ngx_http_agent_sql_handles;


/* the worker's cached handle of a database ("" for none) */

sqlite3 *
ngx_http_agent_sql_handle(ngx_log_t *log, ngx_http_agent_sql_ctx_t *ctx)
{
    char                         *path;
    sqlite3                      *db;
    ngx_str_t                     name;
    ngx_uint_t                    i;
    ngx_http_agent_sql_handle_t  *h;
    ngx_http_agent_database_t    *database;

    if (ctx->db) {
        return ctx->db;
    }

    database = ctx->database;

    if (database) {
        name = database->name;
        path = (char *) database->path.data;

    } else {
        ngx_str_set(&name, "");
        path = ":memory:";
    }

    if (ngx_http_agent_sql_handles == NULL) {
        ngx_http_agent_sql_handles = ngx_array_create(ngx_cycle->pool, 4,
                                        sizeof(ngx_http_agent_sql_handle_t));
        if (ngx_http_agent_sql_handles == NULL) {
            return NULL;
        }
    }

    h = ngx_http_agent_sql_handles->elts;

    for (i = 0; i < ngx_http_agent_sql_handles->nelts; i++) {
        if (h[i].name.len == name.len
            && ngx_strncmp(h[i].name.data, name.data, name.len) == 0)
        {
            return h[i].db;
        }
    }

    db = ngx_http_agent_sql_sandbox_open(log, path);
    if (db == NULL) {
        return NULL;
    }

    h = ngx_array_push(ngx_http_agent_sql_handles);
    if (h == NULL) {
        sqlite3_close(db);
        return NULL;
    }

    h->name = name;
    h->db = db;

    return db;
}


void
ngx_http_agent_sql_exit_process(ngx_cycle_t *cycle)
{
    ngx_uint_t                    i;
    ngx_http_agent_sql_handle_t  *h;

    if (ngx_http_agent_sql_handles == NULL) {
        return;
    }

    h = ngx_http_agent_sql_handles->elts;

    for (i = 0; i < ngx_http_agent_sql_handles->nelts; i++) {
        sqlite3_close(h[i].db);
    }

    ngx_http_agent_sql_handles = NULL;
}


static ngx_int_t
ngx_http_agent_sql_attach(sqlite3 *db, ngx_pool_t *pool,
    ngx_array_t *resources, ngx_uint_t *n)
{
    int                         rc;
    u_char                     *sql, *uri, c, stmt_text[32];
    ngx_uint_t                  i, k;
    sqlite3_stmt               *stmt;
    ngx_http_agent_resource_t  *res;

    *n = 0;

    if (resources == NULL) {
        return NGX_OK;
    }

    res = resources->elts;

    /* the module attaches; the model may not */
    ngx_http_agent_sql_sandbox_allow(db, 1);

    for (i = 0; i < resources->nelts && i < NGX_HTTP_AGENT_SQL_MAX_ATTACHED;
         i++)
    {
        /*
         * the file's name is a bound value, never SQL text; and only a
         * name that is a plain path: a URI's '?', '#' and '%' would be
         * read as its parameters (the turn checked it is one of ours)
         */

        for (k = 0; k < res[i].path.len; k++) {
            c = res[i].path.data[k];

            if (c < 0x20 || c == '?' || c == '#' || c == '%' || c == 0x7f) {
                break;
            }
        }

        sql = ngx_pnalloc(pool, res[i].path.len + 32);
        if (sql == NULL) {
            break;
        }

        if (k < res[i].path.len || res[i].path.data[0] != '/') {
            ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0, "agent: a file "
                          "name that is not a plain path is not attached");
            break;
        }

        uri = ngx_sprintf(sql, "file:%V?mode=ro", &res[i].path);

        ngx_sprintf(stmt_text, "ATTACH ?1 AS r%ui%Z", i);

        if (sqlite3_prepare_v2(db, (char *) stmt_text, -1, &stmt, NULL)
            != SQLITE_OK)
        {
            break;
        }

        sqlite3_bind_text(stmt, 1, (char *) sql, uri - sql, SQLITE_STATIC);
        rc = sqlite3_step(stmt);
        sqlite3_finalize(stmt);

        if (rc != SQLITE_DONE) {
            ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0,
                          "agent: cannot attach \"%V\": %s", &res[i].path,
                          sqlite3_errmsg(db));
            break;
        }

        (*n)++;
    }

    ngx_http_agent_sql_sandbox_allow(db, 0);

    return *n == ngx_min(resources->nelts, NGX_HTTP_AGENT_SQL_MAX_ATTACHED)
           ? NGX_OK : NGX_ERROR;
}


static void
ngx_http_agent_sql_detach(sqlite3 *db, ngx_uint_t n)
{
    u_char      sql[32];
    ngx_uint_t  i;

    ngx_http_agent_sql_sandbox_allow(db, 1);

    for (i = 0; i < n; i++) {
        ngx_sprintf(sql, "DETACH r%ui%Z", i);
        (void) sqlite3_exec(db, (char *) sql, NULL, NULL, NULL);
    }

    ngx_http_agent_sql_sandbox_allow(db, 0);
}


ngx_int_t
ngx_http_agent_sql_tool(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_sql_ctx_t *ctx, ngx_str_t *name, ngx_str_t *args,
    ngx_str_t *result)
{
    yajl_val   v;
    ngx_int_t  rc;
    ngx_str_t  err, arg;

    ngx_str_null(&err);

    v = ngx_http_agent_json_parse(pool, args->data, args->len, &err);

    if (args->len == 0) {
        v = NULL;

    } else if (v == NULL || !YAJL_IS_OBJECT(v)) {
        ngx_str_set(&err, "the tool arguments are not a JSON object");
        return ngx_http_agent_json_error(pool, &err, result);
    }

    if (name->len == 17
        && ngx_strncmp(name->data, "execute_sql_query", 17) == 0)
    {
        if (ngx_http_agent_json_get_str(v, "query", &arg) != NGX_OK
            || arg.len == 0)
        {
            ngx_str_set(&err, "\"query\" must be a non-empty string");
            return ngx_http_agent_json_error(pool, &err, result);
        }

        rc = ngx_http_agent_sql_execute(pool, log, ctx, &arg, result, &err);

    } else if (name->len == 13
               && ngx_strncmp(name->data, "load_csv_data", 13) == 0)
    {
        rc = ngx_http_agent_json_get_str(v, "table", &arg);

        if (rc == NGX_ERROR) {
            ngx_str_set(&err, "\"table\" must be a string");
            return ngx_http_agent_json_error(pool, &err, result);
        }

        rc = ngx_http_agent_sql_load_csv(pool, log, ctx,
                                         rc == NGX_OK ? &arg : NULL,
                                         result, &err);

    } else {
        err.data = ngx_pnalloc(pool, name->len + 32);
        if (err.data == NULL) {
            return NGX_ERROR;
        }

        err.len = ngx_sprintf(err.data, "there is no tool \"%V\"", name)
                  - err.data;
        return ngx_http_agent_json_error(pool, &err, result);
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_json_error(pool, &err, result);
    }

    return rc;
}


static ngx_int_t
ngx_http_agent_sql_execute(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_sql_ctx_t *ctx, ngx_str_t *query, ngx_str_t *result,
    ngx_str_t *err)
{
    sqlite3                *db;
    ngx_int_t               rc;
    ngx_uint_t              attached;
    ngx_http_agent_json_t  *j;

    db = ngx_http_agent_sql_handle(log, ctx);
    if (db == NULL) {
        ngx_str_set(err, "the database cannot be opened");
        return NGX_DECLINED;
    }

    if (ngx_http_agent_sql_attach(db, pool, ctx->resources, &attached)
        != NGX_OK)
    {
        ngx_http_agent_sql_detach(db, attached);
        ngx_str_set(err, "the session's CSV tables cannot be opened");
        return NGX_DECLINED;
    }

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        ngx_http_agent_sql_detach(db, attached);
        return NGX_ERROR;
    }

    rc = ngx_http_agent_sql_run(pool, ctx, db, query, j, err);

    ngx_http_agent_sql_detach(db, attached);

    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_agent_json_done(j, result);
}


ngx_int_t
ngx_http_agent_sql_run(ngx_pool_t *pool, ngx_http_agent_sql_ctx_t *ctx,
    sqlite3 *db, ngx_str_t *query, ngx_http_agent_json_t *j, ngx_str_t *err)
{
    int                          rc, i, ncols;
    u_char                      *p;
    size_t                       used;
    const char                  *tail;
    ngx_uint_t                   rows, truncated;
    sqlite3_stmt                *stmt;
    ngx_http_agent_sql_clock_t   clock;

    rc = sqlite3_prepare_v2(db, (char *) query->data, query->len, &stmt,
                            &tail);

    if (rc != SQLITE_OK || stmt == NULL) {
        if (stmt) {
            sqlite3_finalize(stmt);
        }

        p = (u_char *) (rc == SQLITE_OK ? "the query is empty"
                                        : sqlite3_errmsg(db));

        if (rc == SQLITE_AUTH
            || ngx_strstr(p, "not authorized") != NULL)
        {
            p = (u_char *) "only reading is allowed: the statement would "
                           "write, attach, change a pragma or load an "
                           "extension, and was refused";
        }

        err->len = ngx_strlen(p);
        err->data = ngx_pnalloc(pool, err->len);
        if (err->data == NULL) {
            return NGX_ERROR;
        }

        ngx_memcpy(err->data, p, err->len);
        return NGX_DECLINED;
    }

    for ( /* void */ ; tail < (char *) query->data + query->len; tail++) {
        if (*tail != ' ' && *tail != '\n' && *tail != '\t' && *tail != '\r'
            && *tail != ';')
        {
            sqlite3_finalize(stmt);
            ngx_str_set(err, "run one statement at a time");
            return NGX_DECLINED;
        }
    }

    if (!sqlite3_stmt_readonly(stmt)) {
        sqlite3_finalize(stmt);
        ngx_str_set(err, "only reading is allowed: the statement would "
                    "change the database and was refused");
        return NGX_DECLINED;
    }

    ngx_http_agent_sql_sandbox_start(db, &clock, ctx->timeout);

    ncols = sqlite3_column_count(stmt);

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "columns");
    ngx_http_agent_json_arr(j);

    for (i = 0; i < ncols; i++) {
        ngx_http_agent_json_cstr(j, sqlite3_column_name(stmt, i));
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "rows");
    ngx_http_agent_json_arr(j);

    rows = 0;
    truncated = 0;

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {

        if (rows == ctx->max_rows
            || (size_t) (j->pos - j->start) > ctx->max_bytes)
        {
            truncated = 1;
            break;
        }

        ngx_http_agent_json_arr(j);

        for (i = 0; i < ncols; i++) {
            used = j->pos - j->start;

            if (ngx_http_agent_sql_value(j, stmt, i,
                                         used < ctx->max_bytes
                                         ? ctx->max_bytes - used : 0)
                != NGX_OK)
            {
                truncated = 1;
            }
        }

        ngx_http_agent_json_arr_end(j);
        rows++;
    }

    ngx_http_agent_sql_sandbox_stop(db);

    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        if (clock.expired || rc == SQLITE_INTERRUPT) {
            err->data = ngx_pnalloc(pool, 96);
            if (err->data == NULL) {
                sqlite3_finalize(stmt);
                return NGX_ERROR;
            }

            err->len = ngx_sprintf(err->data, "the query ran longer than "
                                   "%M ms and was stopped", ctx->timeout)
                       - err->data;

        } else {
            p = (u_char *) (rc == SQLITE_NOMEM
                            ? "the query needed more memory than a "
                              "statement may take and was stopped"
                            : rc == SQLITE_TOOBIG
                            ? "the query made a value larger than a "
                              "statement may make and was stopped"
                            : sqlite3_errmsg(db));
            err->len = ngx_strlen(p);
            err->data = ngx_pnalloc(pool, err->len);
            if (err->data == NULL) {
                sqlite3_finalize(stmt);
                return NGX_ERROR;
            }

            ngx_memcpy(err->data, p, err->len);
        }

        sqlite3_finalize(stmt);

        /* leave the generator with a whole object */
        ngx_http_agent_json_arr_end(j);
        ngx_http_agent_json_key(j, "error");
        ngx_http_agent_json_str(j, err);
        ngx_http_agent_json_end(j);

        return NGX_DECLINED;
    }

    sqlite3_finalize(stmt);

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "row_count");
    ngx_http_agent_json_int(j, rows);
    ngx_http_agent_json_key(j, "truncated");
    ngx_http_agent_json_bool(j, truncated);
    ngx_http_agent_json_end(j);

    return NGX_OK;
}


/*
 * One cell; a text longer than the room left in the result (counted as
 * the generator will write it, escapes included) is cut there, at a
 * character's start: NGX_DECLINED says it was cut.
 */

static ngx_int_t
ngx_http_agent_sql_value(ngx_http_agent_json_t *j, sqlite3_stmt *stmt,
    int col, size_t room)
{
    u_char     *p, *last, buf[64];
    size_t      cost;
    ngx_str_t   s;

    switch (sqlite3_column_type(stmt, col)) {

    case SQLITE_INTEGER:
        ngx_http_agent_json_int(j, sqlite3_column_int64(stmt, col));
        return NGX_OK;

    case SQLITE_FLOAT:
        ngx_http_agent_json_double(j, sqlite3_column_double(stmt, col));
        return NGX_OK;

    case SQLITE_NULL:
        ngx_http_agent_json_null(j);
        return NGX_OK;

    case SQLITE_BLOB:
        s.data = buf;
        s.len = ngx_sprintf(buf, "<blob of %d bytes>",
                            sqlite3_column_bytes(stmt, col)) - buf;
        ngx_http_agent_json_str(j, &s);
        return NGX_OK;
    }

    s.data = (u_char *) sqlite3_column_text(stmt, col);
    s.len = sqlite3_column_bytes(stmt, col);

    if (s.data == NULL) {
        ngx_str_set(&s, "");
    }

    /* escaped, a byte takes at most 6: most cells fit without counting */
    if (s.len <= room / 6) {
        ngx_http_agent_json_str(j, &s);
        return NGX_OK;
    }

    cost = 0;
    last = s.data + s.len;

    for (p = s.data; p < last; p++) {
        cost += (*p < 0x20) ? 6 : (*p == '"' || *p == '\\' || *p == '/')
                                  ? 2 : 1;
        if (cost > room) {
            break;
        }
    }

    if (p == last) {
        ngx_http_agent_json_str(j, &s);
        return NGX_OK;
    }

    /* back to the start of a character */
    while (p > s.data && (*p & 0xc0) == 0x80) {
        p--;
    }

    s.len = p - s.data;
    ngx_http_agent_json_str(j, &s);

    return NGX_DECLINED;
}


static ngx_int_t
ngx_http_agent_sql_load_csv(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_sql_ctx_t *ctx, ngx_str_t *table, ngx_str_t *result,
    ngx_str_t *err)
{
    u_char                     *p;
    sqlite3                    *db;
    ngx_int_t                   rc;
    ngx_str_t                   query;
    ngx_uint_t                  i, attached, max_rows;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_resource_t  *res;

    if (ctx->resources == NULL || ctx->resources->nelts == 0) {
        ngx_str_set(err, "this session has no CSV data; upload a file with "
                    "POST /sessions/{id}/resources");
        return NGX_DECLINED;
    }

    res = ctx->resources->elts;

    for (i = 0; table && i < ctx->resources->nelts; i++) {
        if (res[i].table.len == table->len
            && ngx_strncmp(res[i].table.data, table->data, table->len) == 0)
        {
            break;
        }
    }

    if (table && i == ctx->resources->nelts) {
        if (table->len == 8 && ngx_strncmp(table->data, "csv_data", 8) == 0) {
            i = 0;

        } else {
            err->data = ngx_pnalloc(pool, table->len + 64);
            if (err->data == NULL) {
                return NGX_ERROR;
            }

            err->len = ngx_sprintf(err->data, "there is no CSV table \"%V\" "
                                   "in this session", table) - err->data;
            return NGX_DECLINED;
        }
    }

    if (table == NULL) {
        i = 0;
    }

    res = &res[i];

    db = ngx_http_agent_sql_handle(log, ctx);
    if (db == NULL) {
        ngx_str_set(err, "the database cannot be opened");
        return NGX_DECLINED;
    }

    if (ngx_http_agent_sql_attach(db, pool, ctx->resources, &attached)
        != NGX_OK)
    {
        ngx_http_agent_sql_detach(db, attached);
        ngx_str_set(err, "the session's CSV tables cannot be opened");
        return NGX_DECLINED;
    }

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        ngx_http_agent_sql_detach(db, attached);
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "table");
    ngx_http_agent_json_str(j, &res->table);
    ngx_http_agent_json_key(j, "file");
    ngx_http_agent_json_str(j, &res->name);
    ngx_http_agent_json_key(j, "columns");
    ngx_http_agent_json_raw(j, &res->columns);
    ngx_http_agent_json_key(j, "row_count");
    ngx_http_agent_json_int(j, res->row_count);
    ngx_http_agent_json_key(j, "first_rows");

    p = ngx_pnalloc(pool, res->table.len + 64);
    if (p == NULL) {
        ngx_http_agent_sql_detach(db, attached);
        return NGX_ERROR;
    }

    query.data = p;
    query.len = ngx_sprintf(p, "SELECT * FROM r%ui.\"%V\"", i, &res->table)
                - p;

    max_rows = ctx->max_rows;
    ctx->max_rows = NGX_HTTP_AGENT_SQL_SAMPLE_ROWS;

    rc = ngx_http_agent_sql_run(pool, ctx, db, &query, j, err);

    ctx->max_rows = max_rows;
    ngx_http_agent_sql_detach(db, attached);

    if (rc != NGX_OK) {
        return rc;
    }

    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, result);
}


/* the connection endpoint: every table, its columns, up to 3 rows */
