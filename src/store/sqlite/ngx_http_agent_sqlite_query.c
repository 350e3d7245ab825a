
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"


/*
 * A statement of the SQLite store with its parameters, and its rows read
 * (pg_query.c for PostgreSQL): a row through its table (store_rows.c),
 * one row, a list within the answer budget, a text column.
 */


static sqlite3_stmt *ngx_http_agent_sqlite_vbound(ngx_uint_t n,
    const char *fmt, va_list args);
static ngx_uint_t ngx_http_agent_sqlite_room(sqlite3_stmt *stmt,
    size_t *used);


void
ngx_http_agent_sqlite_bind(sqlite3_stmt *stmt, int n, ngx_str_t *s)
{
    if (s == NULL || s->data == NULL) {
        sqlite3_bind_null(stmt, n);
        return;
    }

    sqlite3_bind_text(stmt, n, (char *) s->data, s->len, SQLITE_STATIC);
}


ngx_int_t
ngx_http_agent_sqlite_col(ngx_pool_t *pool, sqlite3_stmt *stmt, int col,
    ngx_str_t *out)
{
    size_t          len;
    const u_char   *p;

    p = sqlite3_column_text(stmt, col);

    if (p == NULL) {
        ngx_str_null(out);
        return NGX_OK;
    }

    len = sqlite3_column_bytes(stmt, col);

    out->data = ngx_pnalloc(pool, len + 1);
    if (out->data == NULL) {
        out->len = 0;
        return NGX_ERROR;
    }

    ngx_memcpy(out->data, p, len);
    out->data[len] = '\0';
    out->len = len;

    return NGX_OK;
}


/*
 * statement n with its parameters bound in order, as pg_ask() takes them:
 * 's' an ngx_str_t * (NULL: SQL's NULL), 'n' the same with an empty
 * string NULL too, 'i' an int64_t
 */

sqlite3_stmt *
ngx_http_agent_sqlite_bound(ngx_uint_t n, const char *fmt, ...)
{
    va_list        args;
    sqlite3_stmt  *stmt;

    va_start(args, fmt);
    stmt = ngx_http_agent_sqlite_vbound(n, fmt, args);
    va_end(args);

    return stmt;
}


/* a statement that returns no rows, bound and run to its end */

ngx_int_t
ngx_http_agent_sqlite_do(ngx_uint_t n, const char *fmt, ...)
{
    va_list        args;
    sqlite3_stmt  *stmt;

    va_start(args, fmt);
    stmt = ngx_http_agent_sqlite_vbound(n, fmt, args);
    va_end(args);

    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt));
}


static sqlite3_stmt *
ngx_http_agent_sqlite_vbound(ngx_uint_t n, const char *fmt, va_list args)
{
    int            i;
    ngx_str_t     *s;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(n);
    if (stmt == NULL) {
        return NULL;
    }

    for (i = 1; *fmt; i++, fmt++) {
        if (*fmt == 'i') {
            sqlite3_bind_int64(stmt, i, va_arg(args, int64_t));
            continue;
        }

        s = va_arg(args, ngx_str_t *);

        ngx_http_agent_sqlite_bind(stmt, i, (*fmt == 'n' && s && s->len == 0)
                                            ? NULL : s);
    }

    return stmt;
}


/* a row read through its table (store_rows.c), as far as it has columns */

ngx_int_t
ngx_http_agent_sqlite_row(ngx_pool_t *pool, sqlite3_stmt *stmt,
    ngx_http_agent_store_table_t *t, void *row)
{
    int                          i, n;
    ngx_str_t                    cells[NGX_HTTP_AGENT_STORE_COLS];
    ngx_http_agent_store_col_t  *c;

    n = ngx_min(sqlite3_column_count(stmt), NGX_HTTP_AGENT_STORE_COLS);

    for (i = 0; i < n; i++) {
        cells[i].data = (u_char *) sqlite3_column_text(stmt, i);
        cells[i].len = sqlite3_column_bytes(stmt, i);
    }

    if (ngx_http_agent_store_row(pool, t, row, cells, n) != NGX_OK) {
        return NGX_ERROR;
    }

    /* a real as it is: SQLite's text of it keeps 15 digits only */

    for (i = 0, c = t->cols; i < n && c->type; i++, c++) {
        if (c->type == NGX_HTTP_AGENT_STORE_REAL) {
            *(double *) ((u_char *) row + c->offset) =
                                              sqlite3_column_double(stmt, i);
        }
    }

    return NGX_OK;
}


/* the statement's one row; NGX_DECLINED: none */

ngx_int_t
ngx_http_agent_sqlite_one(ngx_pool_t *pool, sqlite3_stmt *stmt,
    ngx_http_agent_store_table_t *t, void *row)
{
    int  rc;

    rc = sqlite3_step(stmt);

    if (rc == SQLITE_ROW
        && ngx_http_agent_sqlite_row(pool, stmt, t, row) != NGX_OK)
    {
        sqlite3_reset(stmt);
        return NGX_ERROR;
    }

    if (ngx_http_agent_sqlite_done(stmt, rc) != NGX_OK) {
        return NGX_ERROR;
    }

    return rc == SQLITE_ROW ? NGX_OK : NGX_DECLINED;
}


/* the statement's rows added to rows, within the answer budget */

ngx_int_t
ngx_http_agent_sqlite_rows(ngx_pool_t *pool, sqlite3_stmt *stmt,
    ngx_http_agent_store_table_t *t, ngx_array_t *rows)
{
    int      rc;
    void    *row;
    size_t   used;

    used = 0;

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW
           && ngx_http_agent_sqlite_room(stmt, &used))
    {
        row = ngx_array_push(rows);

        if (row == NULL
            || ngx_http_agent_sqlite_row(pool, stmt, t, row) != NGX_OK)
        {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }
    }

    return ngx_http_agent_sqlite_done(stmt, rc);
}


/* the first column of the one row; NGX_DECLINED: no row, or NULL */

ngx_int_t
ngx_http_agent_sqlite_text(ngx_pool_t *pool, sqlite3_stmt *stmt,
    ngx_str_t *out)
{
    int  rc;

    rc = sqlite3_step(stmt);

    if (rc == SQLITE_ROW && sqlite3_column_type(stmt, 0) != SQLITE_NULL) {
        rc = ngx_http_agent_sqlite_col(pool, stmt, 0, out);
        sqlite3_reset(stmt);
        return rc == NGX_OK ? NGX_OK : NGX_ERROR;
    }

    return ngx_http_agent_sqlite_done(stmt, rc) == NGX_OK ? NGX_DECLINED
                                                         : NGX_ERROR;
}


/* a list's row within the answer budget (ngx_http_agent_store_room) */

static ngx_uint_t
ngx_http_agent_sqlite_room(sqlite3_stmt *stmt, size_t *used)
{
    int     i;
    size_t  size;

    size = 0;

    for (i = 0; i < sqlite3_column_count(stmt); i++) {
        size += sqlite3_column_bytes(stmt, i);
    }

    return ngx_http_agent_store_room(used, size);
}
