
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


/*
 * The rows both back ends read, column by column in the order their
 * statements select them (sqlite_db.c's and pg_sql.c's *_COLS): one
 * table a row, read here from the cells' text that each back end's
 * reader hands over (sqlite_query.c, pg_query.c).
 */


#define ngx_http_agent_store_col(type, t, field)                              \
    { NGX_HTTP_AGENT_STORE_##type, offsetof(t, field) }

#define ngx_http_agent_store_s(type, field)                                   \
    ngx_http_agent_store_col(type, ngx_http_agent_session_t, field)
#define ngx_http_agent_store_r(field)                                         \
    ngx_http_agent_store_col(STR, ngx_http_agent_run_row_t, field)
#define ngx_http_agent_store_a(type, field)                                   \
    ngx_http_agent_store_col(type, ngx_http_agent_assistant_row_t, field)
#define ngx_http_agent_store_c(type, field)                                   \
    ngx_http_agent_store_col(type, ngx_http_agent_cron_row_t, field)
#define ngx_http_agent_store_i(type, field)                                   \
    ngx_http_agent_store_col(type, ngx_http_agent_item_t, field)
#define ngx_http_agent_store_f(type, field)                                   \
    ngx_http_agent_store_col(type, ngx_http_agent_resource_t, field)


ngx_http_agent_store_table_t  ngx_http_agent_store_sessions = {
    sizeof(ngx_http_agent_session_t), {
        ngx_http_agent_store_s(STR, id),
        ngx_http_agent_store_s(STR, title),
        ngx_http_agent_store_s(STR, metadata),
        ngx_http_agent_store_s(STR, created_at),
        ngx_http_agent_store_s(STR, updated_at),
        ngx_http_agent_store_s(INT, message_count),
        ngx_http_agent_store_s(STR, model),
        ngx_http_agent_store_s(STR, database),
        ngx_http_agent_store_s(STR, owner),
        ngx_http_agent_store_s(INT, prompt_tokens),
        ngx_http_agent_store_s(INT, completion_tokens),
        ngx_http_agent_store_s(INT, cached_tokens),
        ngx_http_agent_store_s(INT, history_bytes)
    }
};


ngx_http_agent_store_table_t  ngx_http_agent_store_runs = {
    sizeof(ngx_http_agent_run_row_t), {
        ngx_http_agent_store_r(run_id),
        ngx_http_agent_store_r(thread_id),
        ngx_http_agent_store_r(assistant_id),
        ngx_http_agent_store_r(status),
        ngx_http_agent_store_r(metadata),
        ngx_http_agent_store_r(kwargs),
        ngx_http_agent_store_r(multitask_strategy),
        ngx_http_agent_store_r(created_at),
        ngx_http_agent_store_r(updated_at)
    }
};


ngx_http_agent_store_table_t  ngx_http_agent_store_assistants = {
    sizeof(ngx_http_agent_assistant_row_t), {
        ngx_http_agent_store_a(STR, assistant_id),
        ngx_http_agent_store_a(STR, owner),
        ngx_http_agent_store_a(STR, graph_id),
        ngx_http_agent_store_a(INT, version),
        ngx_http_agent_store_a(INT, latest),
        ngx_http_agent_store_a(INT, versions),
        ngx_http_agent_store_a(STR, doc),
        ngx_http_agent_store_a(STR, created_at),
        ngx_http_agent_store_a(STR, updated_at)
    }
};


ngx_http_agent_store_table_t  ngx_http_agent_store_crons = {
    sizeof(ngx_http_agent_cron_row_t), {
        ngx_http_agent_store_c(STR, cron_id),
        ngx_http_agent_store_c(STR, owner),
        ngx_http_agent_store_c(STR, assistant_id),
        ngx_http_agent_store_c(STR, thread_id),
        ngx_http_agent_store_c(STR, origin),
        ngx_http_agent_store_c(STR, doc),
        ngx_http_agent_store_c(INT, next_run),
        ngx_http_agent_store_c(FLAG, enabled),
        ngx_http_agent_store_c(STR, created_at),
        ngx_http_agent_store_c(STR, updated_at),
        ngx_http_agent_store_c(STR, limit_keys)
    }
};


/* a search's rank last, where its statement has one */

ngx_http_agent_store_table_t  ngx_http_agent_store_items = {
    sizeof(ngx_http_agent_item_t), {
        ngx_http_agent_store_i(STR, owner),
        ngx_http_agent_store_i(STR, ns),
        ngx_http_agent_store_i(STR, key),
        ngx_http_agent_store_i(STR, value),
        ngx_http_agent_store_i(STR, created_at),
        ngx_http_agent_store_i(STR, updated_at),
        ngx_http_agent_store_i(INT, expires),
        ngx_http_agent_store_i(REAL, score)
    }
};


/* a file's blob (its SHA-1) where the store keeps its bytes (pg_files.c) */

ngx_http_agent_store_table_t  ngx_http_agent_store_resources = {
    sizeof(ngx_http_agent_resource_t), {
        ngx_http_agent_store_f(STR, id),
        ngx_http_agent_store_f(STR, name),
        ngx_http_agent_store_f(STR, table),
        ngx_http_agent_store_f(STR, columns),
        ngx_http_agent_store_f(INT, row_count),
        ngx_http_agent_store_f(INT, size_bytes),
        ngx_http_agent_store_f(STR, path),
        ngx_http_agent_store_f(STR, created_at),
        ngx_http_agent_store_f(STR, blob)
    }
};


/*
 * A row from its cells: each a column's text (both libraries end it with
 * a NUL, a number's too), data NULL for SQL's NULL: an empty string, 0.
 */

ngx_int_t
ngx_http_agent_store_row(ngx_pool_t *pool, ngx_http_agent_store_table_t *t,
    void *row, ngx_str_t *cells, ngx_int_t n)
{
    u_char                      *p;
    ngx_int_t                    i;
    ngx_str_t                   *s;
    ngx_http_agent_store_col_t  *c;

    ngx_memzero(row, t->size);

    for (i = 0, c = t->cols; i < n && c->type; i++, c++) {
        p = (u_char *) row + c->offset;

        if (cells[i].data == NULL) {
            continue;
        }

        switch (c->type) {

        case NGX_HTTP_AGENT_STORE_STR:
            s = (ngx_str_t *) p;

            s->data = ngx_pnalloc(pool, cells[i].len + 1);
            if (s->data == NULL) {
                return NGX_ERROR;
            }

            *ngx_cpymem(s->data, cells[i].data, cells[i].len) = '\0';
            s->len = cells[i].len;
            break;

        case NGX_HTTP_AGENT_STORE_INT:
            *(int64_t *) p = strtoll((char *) cells[i].data, NULL, 10);
            break;

        case NGX_HTTP_AGENT_STORE_FLAG:
            *(ngx_uint_t *) p = strtoll((char *) cells[i].data, NULL, 10)
                                != 0;
            break;

        default: /* NGX_HTTP_AGENT_STORE_REAL */
            *(double *) p = strtod((char *) cells[i].data, NULL);
        }
    }

    return NGX_OK;
}
