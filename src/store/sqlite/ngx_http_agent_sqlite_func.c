
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <ngx_md5.h>
#include <sqlite3.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"
#include "ngx_http_agent_util.h"


/*
 * The SQL functions the store's statements call, each as PostgreSQL's
 * own operator or function does, so that one statement reads the same on
 * both back ends.
 */


static void ngx_http_agent_sqlite_contains(sqlite3_context *ctx, int argc,
    sqlite3_value **argv);
static void ngx_http_agent_sqlite_copy_id(sqlite3_context *ctx, int argc,
    sqlite3_value **argv);


/*
 * agent_contains(json, want): whether a JSON text holds want, as
 * PostgreSQL's jsonb @> (a session's metadata filtered in the query, not
 * page by page in C).  Both are JSON the module wrote.
 */

static void
ngx_http_agent_sqlite_contains(sqlite3_context *ctx, int argc,
    sqlite3_value **argv)
{
    int                   n;
    yajl_val              have, want;
    const unsigned char  *a, *b;

    a = sqlite3_value_text(argv[0]);
    b = sqlite3_value_text(argv[1]);

    if (a == NULL || b == NULL
        || ngx_http_agent_json_depth((u_char *) a,
                                     sqlite3_value_bytes(argv[0])) != NGX_OK
        || ngx_http_agent_json_depth((u_char *) b,
                                     sqlite3_value_bytes(argv[1])) != NGX_OK)
    {
        sqlite3_result_int(ctx, 0);
        return;
    }

    have = yajl_tree_parse((const char *) a, NULL, 0);
    want = yajl_tree_parse((const char *) b, NULL, 0);

    n = (have && want) ? (int) ngx_http_agent_json_contains(have, want) : 0;

    yajl_tree_free(have);
    yajl_tree_free(want);

    sqlite3_result_int(ctx, n);
}


/* agent_contains on a handle: the worker's, or a pool thread's own */

int
ngx_http_agent_sqlite_contains_add(sqlite3 *db)
{
    return sqlite3_create_function(db, "agent_contains", 2,
                                   SQLITE_UTF8|SQLITE_DETERMINISTIC, NULL,
                                   ngx_http_agent_sqlite_contains, NULL,
                                   NULL);
}


/*
 * agent_copy_id(id, to): a copied session's id for a run's id (runs are
 * known by their id alone), md5(id || to) written as a uuid, as
 * PostgreSQL's md5(id || to)::uuid; NULL stays NULL
 */

static void
ngx_http_agent_sqlite_copy_id(sqlite3_context *ctx, int argc,
    sqlite3_value **argv)
{
    u_char                hash[16], hex[33], out[36], *p;
    ngx_md5_t             md5;
    ngx_uint_t            i;
    const unsigned char  *id, *to;

    id = sqlite3_value_text(argv[0]);
    to = sqlite3_value_text(argv[1]);

    if (id == NULL || to == NULL) {
        sqlite3_result_null(ctx);
        return;
    }

    ngx_md5_init(&md5);
    ngx_md5_update(&md5, id, sqlite3_value_bytes(argv[0]));
    ngx_md5_update(&md5, to, sqlite3_value_bytes(argv[1]));
    ngx_md5_final(hash, &md5);

    ngx_hex_dump(hex, hash, 16);

    for (i = 0, p = out; i < 32; i++) {
        if (i == 8 || i == 12 || i == 16 || i == 20) {
            *p++ = '-';
        }

        *p++ = hex[i];
    }

    sqlite3_result_text(ctx, (char *) out, 36, SQLITE_TRANSIENT);
}


int
ngx_http_agent_sqlite_copy_id_add(sqlite3 *db)
{
    return sqlite3_create_function(db, "agent_copy_id", 2,
                                   SQLITE_UTF8|SQLITE_DETERMINISTIC, NULL,
                                   ngx_http_agent_sqlite_copy_id, NULL,
                                   NULL);
}
