
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>

#include "ngx_http_agent_sql.h"
#include "ngx_http_agent_util.h"


/*
 * CSV import: RFC 4180 fields (quotes, doubled quotes, commas and newlines
 * inside quotes, CRLF or LF), a header row, a UTF-8 BOM skipped.  Each
 * column's type is inferred over all its values: INTEGER, REAL, else TEXT;
 * empty fields are NULL.  The table goes into a SQLite file of its own.
 */


#define NGX_HTTP_AGENT_CSV_INTEGER  0
#define NGX_HTTP_AGENT_CSV_REAL     1
#define NGX_HTTP_AGENT_CSV_TEXT     2


typedef struct {
    u_char                    *pos;
    u_char                    *last;
    ngx_uint_t                 line;
} ngx_http_agent_csv_parser_t;


static ngx_int_t ngx_http_agent_csv_row(ngx_pool_t *pool,
    ngx_http_agent_csv_parser_t *p, ngx_array_t *fields);
static ngx_uint_t ngx_http_agent_csv_type(ngx_str_t *v);
static ngx_uint_t ngx_http_agent_csv_taken(ngx_str_t *names, ngx_uint_t n,
    ngx_str_t *hdr, ngx_uint_t ncols, ngx_uint_t self);
static ngx_uint_t ngx_http_agent_csv_same(ngx_str_t *a, ngx_str_t *b);
static ngx_int_t ngx_http_agent_csv_quote_ident(ngx_pool_t *pool,
    ngx_str_t *name, ngx_str_t *out);


static ngx_int_t
ngx_http_agent_csv_row(ngx_pool_t *pool, ngx_http_agent_csv_parser_t *p,
    ngx_array_t *fields)
{
    u_char     *s, *d;
    ngx_str_t  *f;

    fields->nelts = 0;

    for ( ;; ) {
        f = ngx_array_push(fields);
        if (f == NULL) {
            return NGX_ERROR;
        }

        if (p->pos < p->last && *p->pos == '"') {
            /* unescape in place: the text only shrinks */
            s = ++p->pos;
            d = s;

            for ( ;; ) {
                if (p->pos == p->last) {
                    return NGX_DECLINED;
                }

                if (*p->pos == '"') {
                    if (p->pos + 1 < p->last && p->pos[1] == '"') {
                        *d++ = '"';
                        p->pos += 2;
                        continue;
                    }

                    p->pos++;
                    break;
                }

                if (*p->pos == '\n') {
                    p->line++;
                }

                *d++ = *p->pos++;
            }

            f->data = s;
            f->len = d - s;

            /* tolerate spaces before the separator */
            while (p->pos < p->last && *p->pos == ' ') {
                p->pos++;
            }

        } else {
            s = p->pos;

            while (p->pos < p->last && *p->pos != ','
                   && *p->pos != '\n' && *p->pos != '\r')
            {
                p->pos++;
            }

            f->data = s;
            f->len = p->pos - s;
        }

        if (p->pos == p->last) {
            return NGX_OK;
        }

        if (*p->pos == ',') {
            p->pos++;
            continue;
        }

        if (*p->pos == '\r') {
            p->pos++;
        }

        if (p->pos < p->last && *p->pos == '\n') {
            p->pos++;
            p->line++;
            return NGX_OK;
        }

        if (p->pos == p->last) {
            return NGX_OK;
        }

        return NGX_DECLINED;
    }
}


static ngx_uint_t
ngx_http_agent_csv_type(ngx_str_t *v)
{
    u_char  *p, *last;
    ngx_uint_t  digits, dot, exp;

    p = v->data;
    last = p + v->len;

    if (p < last && (*p == '-' || *p == '+')) {
        p++;
    }

    digits = 0;
    dot = 0;
    exp = 0;

    for ( /* void */ ; p < last; p++) {
        if (*p >= '0' && *p <= '9') {
            digits++;
            continue;
        }

        if (*p == '.' && !dot && !exp) {
            dot = 1;
            continue;
        }

        if ((*p == 'e' || *p == 'E') && digits && !exp) {
            exp = 1;
            if (p + 1 < last && (p[1] == '-' || p[1] == '+')) {
                p++;
            }
            continue;
        }

        return NGX_HTTP_AGENT_CSV_TEXT;
    }

    if (digits == 0) {
        return NGX_HTTP_AGENT_CSV_TEXT;
    }

    if (dot || exp || digits > 18) {
        return NGX_HTTP_AGENT_CSV_REAL;
    }

    return NGX_HTTP_AGENT_CSV_INTEGER;
}


static ngx_int_t
ngx_http_agent_csv_quote_ident(ngx_pool_t *pool, ngx_str_t *name,
    ngx_str_t *out)
{
    u_char      *p;
    ngx_uint_t   i;

    p = ngx_pnalloc(pool, name->len * 2 + 3);
    if (p == NULL) {
        return NGX_ERROR;
    }

    out->data = p;
    *p++ = '"';

    for (i = 0; i < name->len; i++) {
        if (name->data[i] == '"') {
            *p++ = '"';
        }

        *p++ = name->data[i];
    }

    *p++ = '"';
    out->len = p - out->data;

    return NGX_OK;
}


/* a table name from a file name: lower case letters, digits, "_" */

ngx_int_t
ngx_http_agent_csv_table_name(ngx_pool_t *pool, ngx_str_t *file,
    ngx_array_t *taken, ngx_str_t *table)
{
    u_char      *p, *last, c;
    size_t       len;
    ngx_str_t   *t;
    ngx_uint_t   i, n, clash;

    len = file->len;

    if (len > 4 && ngx_strncasecmp(file->data + len - 4, (u_char *) ".csv", 4)
                   == 0)
    {
        len -= 4;
    }

    len = ngx_min(len, 48);

    p = ngx_pnalloc(pool, len + 16);
    if (p == NULL) {
        return NGX_ERROR;
    }

    table->data = p;

    if (len == 0 || !((file->data[0] | 0x20) >= 'a'
                      && (file->data[0] | 0x20) <= 'z'))
    {
        *p++ = 't';
        *p++ = '_';
    }

    for (i = 0; i < len; i++) {
        c = ngx_tolower(file->data[i]);
        *p++ = ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) ? c : '_';
    }

    last = p;
    n = 1;

    for ( ;; ) {
        table->len = last - table->data;

        if (n > 1) {
            table->len = ngx_sprintf(last, "_%ui", n) - table->data;
        }

        clash = 0;
        t = taken ? taken->elts : NULL;

        for (i = 0; taken && i < taken->nelts; i++) {
            if (t[i].len == table->len
                && ngx_strncmp(t[i].data, table->data, t[i].len) == 0)
            {
                clash = 1;
                break;
            }
        }

        if ((table->len == 8
             && ngx_strncmp(table->data, "csv_data", 8) == 0)
            || (table->len >= 7
                && ngx_strncmp(table->data, "sqlite_", 7) == 0))
        {
            clash = 1;
        }

        if (!clash) {
            return NGX_OK;
        }

        n++;
    }
}


static ngx_uint_t
ngx_http_agent_csv_taken(ngx_str_t *names, ngx_uint_t n, ngx_str_t *hdr,
    ngx_uint_t ncols, ngx_uint_t self)
{
    ngx_uint_t  k;

    /* a column before it has the name already */
    for (k = 0; k < n; k++) {
        if (ngx_http_agent_csv_same(&names[k], &names[n])) {
            return 1;
        }
    }

    /* a generated name may not take a name the header gives later */
    if (names[n].data != hdr[n].data) {
        for (k = self + 1; k < ncols; k++) {
            if (ngx_http_agent_csv_same(&hdr[k], &names[n])) {
                return 1;
            }
        }
    }

    return 0;
}


/* SQLite's names are ASCII case-blind; every byte counts, NULs too */

static ngx_uint_t
ngx_http_agent_csv_same(ngx_str_t *a, ngx_str_t *b)
{
    u_char      c1, c2;
    ngx_uint_t  i;

    if (a->len != b->len) {
        return 0;
    }

    for (i = 0; i < a->len; i++) {
        c1 = ngx_tolower(a->data[i]);
        c2 = ngx_tolower(b->data[i]);

        if (c1 != c2) {
            return 0;
        }
    }

    return 1;
}


ngx_int_t
ngx_http_agent_csv_import(ngx_pool_t *pool, ngx_log_t *log, u_char *data,
    size_t len, ngx_uint_t first, ngx_http_agent_resource_t *res,
    ngx_str_t *err)
{
    int                           rc;
    u_char                       *sql, *p, *num;
    size_t                        size;
    sqlite3                      *db;
    ngx_int_t                     n;
    ngx_str_t                    *hdr, *f, *names, q;
    ngx_uint_t                    i, ncols, *types, row, seq;
    ngx_array_t                   header, fields, *rows;
    sqlite3_stmt                 *stmt;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_csv_parser_t   parser;

    static const char  *type_names[] = { "INTEGER", "REAL", "TEXT" };

    db = NULL;
    stmt = NULL;

    if (len >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf) {
        data += 3;
        len -= 3;
    }

    parser.pos = data;
    parser.last = data + len;
    parser.line = 1;

    if (ngx_array_init(&header, pool, 16, sizeof(ngx_str_t)) != NGX_OK
        || ngx_array_init(&fields, pool, 16, sizeof(ngx_str_t)) != NGX_OK)
    {
        return NGX_ERROR;
    }

    while (parser.pos < parser.last
           && (*parser.pos == '\n' || *parser.pos == '\r'))
    {
        parser.pos++;
    }

    if (parser.pos == parser.last) {
        ngx_str_set(err, "the CSV file is empty");
        return NGX_DECLINED;
    }

    if (ngx_http_agent_csv_row(pool, &parser, &header) != NGX_OK) {
        ngx_str_set(err, "the CSV header row is malformed");
        return NGX_DECLINED;
    }

    ncols = header.nelts;

    if (ncols > NGX_HTTP_AGENT_CSV_MAX_COLUMNS) {
        ngx_str_set(err, "the CSV file has more than 1000 columns");
        return NGX_DECLINED;
    }

    hdr = header.elts;

    names = ngx_pcalloc(pool, ncols * sizeof(ngx_str_t));
    types = ngx_pcalloc(pool, ncols * sizeof(ngx_uint_t));
    if (names == NULL || types == NULL) {
        return NGX_ERROR;
    }

    /* control bytes (a NUL would end the SQL text) become "_" */
    for (i = 0; i < ncols; i++) {
        for (p = hdr[i].data; p < hdr[i].data + hdr[i].len; p++) {
            if (*p < 0x20 || *p == 0x7f) {
                *p = '_';
            }
        }
    }

    /*
     * An empty or repeated name gets one of its own: "column_N" or
     * "NAME_N", with N counting up until it is taken by no column before
     * it and by no name in the header (SQLite's names are case-blind).
     */

    for (i = 0; i < ncols; i++) {
        names[i] = hdr[i];
        seq = i + 1;

        while (names[i].len == 0
               || ngx_http_agent_csv_taken(names, i, hdr, ncols, i))
        {
            p = ngx_pnalloc(pool, hdr[i].len + 32);
            if (p == NULL) {
                return NGX_ERROR;
            }

            names[i].data = p;
            names[i].len = (hdr[i].len
                             ? ngx_sprintf(p, "%V_%ui", &hdr[i], seq)
                             : ngx_sprintf(p, "column_%ui", seq))
                           - p;
            seq++;
        }
    }

    /* pass 1: parse every row, infer the types */

    rows = ngx_array_create(pool, 256, sizeof(ngx_str_t *));
    if (rows == NULL) {
        return NGX_ERROR;
    }

    while (parser.pos < parser.last) {
        row = parser.line;

        rc = ngx_http_agent_csv_row(pool, &parser, &fields);
        if (rc == NGX_ERROR) {
            return NGX_ERROR;
        }

        if (rc == NGX_DECLINED) {
            err->data = ngx_pnalloc(pool, 96);
            if (err->data == NULL) {
                return NGX_ERROR;
            }

            err->len = ngx_sprintf(err->data, "the CSV row at line %ui is "
                                   "malformed (an unclosed quote?)", row)
                       - err->data;
            return NGX_DECLINED;
        }

        f = fields.elts;

        if (fields.nelts == 1 && f[0].len == 0) {
            continue;
        }

        if (fields.nelts != ncols) {
            err->data = ngx_pnalloc(pool, 128);
            if (err->data == NULL) {
                return NGX_ERROR;
            }

            err->len = ngx_sprintf(err->data, "the CSV row at line %ui has "
                                   "%ui fields, the header has %ui", row,
                                   fields.nelts, ncols)
                       - err->data;
            return NGX_DECLINED;
        }

        hdr = ngx_array_push(rows);
        if (hdr == NULL) {
            return NGX_ERROR;
        }

        *(ngx_str_t **) hdr = ngx_pnalloc(pool, ncols * sizeof(ngx_str_t));
        if (*(ngx_str_t **) hdr == NULL) {
            return NGX_ERROR;
        }

        ngx_memcpy(*(ngx_str_t **) hdr, f, ncols * sizeof(ngx_str_t));

        for (i = 0; i < ncols; i++) {
            if (f[i].len) {
                types[i] = ngx_max(types[i], ngx_http_agent_csv_type(&f[i]));
            }
        }
    }

    /* pass 2: the table */

    /* the session's data: 0600, never through a link */
    if (ngx_http_agent_files_create(log, res->path.data) != NGX_OK) {
        goto failed;
    }

    rc = sqlite3_open_v2((char *) res->path.data, &db,
                         SQLITE_OPEN_READWRITE|SQLITE_OPEN_NOFOLLOW, NULL);
    if (rc != SQLITE_OK) {
        ngx_log_error(NGX_LOG_ERR, log, 0,
                      "agent: cannot create \"%V\": %s", &res->path,
                      sqlite3_errstr(rc));
        goto failed;
    }

    size = 64 + res->table.len * 2;
    for (i = 0; i < ncols; i++) {
        size += names[i].len * 2 + 16;
    }

    sql = ngx_pnalloc(pool, size);
    if (sql == NULL) {
        goto failed;
    }

    if (ngx_http_agent_csv_quote_ident(pool, &res->table, &q) != NGX_OK) {
        goto failed;
    }

    p = ngx_sprintf(sql, "CREATE TABLE %V (", &q);

    for (i = 0; i < ncols; i++) {
        if (ngx_http_agent_csv_quote_ident(pool, &names[i], &q) != NGX_OK) {
            goto failed;
        }

        p = ngx_sprintf(p, "%s%V %s", i ? ", " : "", &q,
                        type_names[types[i]]);
    }

    *p++ = ')';
    *p = '\0';

    if (sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                     " BEGIN", NULL, NULL, NULL) != SQLITE_OK
        || sqlite3_exec(db, (char *) sql, NULL, NULL, NULL) != SQLITE_OK)
    {
        goto sqlite_failed;
    }

    (void) ngx_http_agent_csv_quote_ident(pool, &res->table, &q);
    p = ngx_sprintf(sql, "INSERT INTO %V VALUES (", &q);

    for (i = 0; i < ncols; i++) {
        p = ngx_sprintf(p, "%s?", i ? "," : "");
    }

    *p++ = ')';
    *p = '\0';

    if (sqlite3_prepare_v2(db, (char *) sql, -1, &stmt, NULL) != SQLITE_OK) {
        goto sqlite_failed;
    }

    for (row = 0; row < rows->nelts; row++) {
        f = ((ngx_str_t **) rows->elts)[row];

        for (i = 0; i < ncols; i++) {
            if (f[i].len == 0) {
                sqlite3_bind_null(stmt, i + 1);

            } else if (types[i] == NGX_HTTP_AGENT_CSV_INTEGER) {
                n = (f[i].data[0] == '-' || f[i].data[0] == '+')
                    ? ngx_atoi(f[i].data + 1, f[i].len - 1)
                    : ngx_atoi(f[i].data, f[i].len);
                sqlite3_bind_int64(stmt, i + 1,
                                   f[i].data[0] == '-' ? -n : n);

            } else if (types[i] == NGX_HTTP_AGENT_CSV_REAL) {
                /* strtod() wants the whole number NUL-terminated */
                num = ngx_pnalloc(pool, f[i].len + 1);
                if (num == NULL) {
                    goto failed;
                }

                ngx_cpystrn(num, f[i].data, f[i].len + 1);
                sqlite3_bind_double(stmt, i + 1, strtod((char *) num, NULL));

            } else {
                sqlite3_bind_text(stmt, i + 1, (char *) f[i].data, f[i].len,
                                  SQLITE_STATIC);
            }
        }

        if (sqlite3_step(stmt) != SQLITE_DONE) {
            goto sqlite_failed;
        }

        sqlite3_reset(stmt);
    }

    sqlite3_finalize(stmt);
    stmt = NULL;

    if (first) {
        (void) ngx_http_agent_csv_quote_ident(pool, &res->table, &q);
        ngx_sprintf(sql, "CREATE VIEW csv_data AS SELECT * FROM %V%Z", &q);

        if (sqlite3_exec(db, (char *) sql, NULL, NULL, NULL) != SQLITE_OK) {
            goto sqlite_failed;
        }
    }

    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        goto sqlite_failed;
    }

    sqlite3_close(db);

    res->row_count = rows->nelts;
    res->size_bytes = len;

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_arr(j);

    for (i = 0; i < ncols; i++) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &names[i]);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, type_names[types[i]]);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);

    return ngx_http_agent_json_done(j, &res->columns);

sqlite_failed:

    ngx_log_error(NGX_LOG_ERR, log, 0, "agent: csv import into \"%V\" "
                  "failed: %s", &res->path, sqlite3_errmsg(db));

failed:

    if (stmt) {
        sqlite3_finalize(stmt);
    }

    if (db) {
        sqlite3_close(db);
    }

    (void) ngx_delete_file(res->path.data);

    return NGX_ERROR;
}
