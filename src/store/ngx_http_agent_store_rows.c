
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


/* a column of the row type NGX_HTTP_AGENT_STORE_ROW, defined per table */
#define ngx_http_agent_store_col(type, field)                                 \
    { NGX_HTTP_AGENT_STORE_##type, offsetof(NGX_HTTP_AGENT_STORE_ROW, field) }


#define NGX_HTTP_AGENT_STORE_ROW  ngx_http_agent_msg_t

ngx_http_agent_store_table_t  ngx_http_agent_store_message_cols = {
    sizeof(NGX_HTTP_AGENT_STORE_ROW), {
        ngx_http_agent_store_col(INT, seq),
        ngx_http_agent_store_col(STR, role),
        ngx_http_agent_store_col(STR, content),
        ngx_http_agent_store_col(STR, tool_calls),
        ngx_http_agent_store_col(STR, tool_call_id),
        ngx_http_agent_store_col(STR, name),
        ngx_http_agent_store_col(STR, images),
        ngx_http_agent_store_col(STR, metadata),
        ngx_http_agent_store_col(STR, created_at)
    }
};


#undef NGX_HTTP_AGENT_STORE_ROW
#define NGX_HTTP_AGENT_STORE_ROW  ngx_http_agent_checkpoint_t

/* then the channels and id of the subgraph that waits at its next node */

ngx_http_agent_store_table_t  ngx_http_agent_store_checkpoint_cols = {
    sizeof(NGX_HTTP_AGENT_STORE_ROW), {
        ngx_http_agent_store_col(STR, id),
        ngx_http_agent_store_col(STR, parent_id),
        ngx_http_agent_store_col(INT, step),
        ngx_http_agent_store_col(STR, node),
        ngx_http_agent_store_col(STR, next),
        ngx_http_agent_store_col(INT, msg_count),
        ngx_http_agent_store_col(STR, channels),
        ngx_http_agent_store_col(STR, created_at),
        ngx_http_agent_store_col(STR, ns)
    }
};


#undef NGX_HTTP_AGENT_STORE_ROW
#define NGX_HTTP_AGENT_STORE_ROW  ngx_http_agent_session_t

ngx_http_agent_store_table_t  ngx_http_agent_store_session_cols = {
    sizeof(NGX_HTTP_AGENT_STORE_ROW), {
        ngx_http_agent_store_col(STR, id),
        ngx_http_agent_store_col(STR, title),
        ngx_http_agent_store_col(STR, metadata),
        ngx_http_agent_store_col(STR, created_at),
        ngx_http_agent_store_col(STR, updated_at),
        ngx_http_agent_store_col(INT, message_count),
        ngx_http_agent_store_col(STR, model),
        ngx_http_agent_store_col(STR, database),
        ngx_http_agent_store_col(STR, owner),
        ngx_http_agent_store_col(INT, prompt_tokens),
        ngx_http_agent_store_col(INT, completion_tokens),
        ngx_http_agent_store_col(INT, cached_tokens),
        ngx_http_agent_store_col(INT, history_bytes)
    }
};


#undef NGX_HTTP_AGENT_STORE_ROW
#define NGX_HTTP_AGENT_STORE_ROW  ngx_http_agent_run_row_t

/*
 * a run: a list or a get reads the first nine, a run claimed from a
 * worker that is gone the rest too, what its re-drive needs
 */

ngx_http_agent_store_table_t  ngx_http_agent_store_run_cols = {
    sizeof(NGX_HTTP_AGENT_STORE_ROW), {
        ngx_http_agent_store_col(STR, run_id),
        ngx_http_agent_store_col(STR, thread_id),
        ngx_http_agent_store_col(STR, assistant_id),
        ngx_http_agent_store_col(STR, status),
        ngx_http_agent_store_col(STR, metadata),
        ngx_http_agent_store_col(STR, kwargs),
        ngx_http_agent_store_col(STR, multitask_strategy),
        ngx_http_agent_store_col(STR, created_at),
        ngx_http_agent_store_col(STR, updated_at),
        ngx_http_agent_store_col(STR, origin),
        ngx_http_agent_store_col(STR, checkpoint),
        ngx_http_agent_store_col(STR, owner),
        ngx_http_agent_store_col(INT, attempts),
        ngx_http_agent_store_col(INT, last_event),
        ngx_http_agent_store_col(STR, limit_keys),
        ngx_http_agent_store_col(STR, secret)
    }
};


#undef NGX_HTTP_AGENT_STORE_ROW
#define NGX_HTTP_AGENT_STORE_ROW  ngx_http_agent_assistant_row_t

ngx_http_agent_store_table_t  ngx_http_agent_store_assistant_cols = {
    sizeof(NGX_HTTP_AGENT_STORE_ROW), {
        ngx_http_agent_store_col(STR, assistant_id),
        ngx_http_agent_store_col(STR, owner),
        ngx_http_agent_store_col(STR, graph_id),
        ngx_http_agent_store_col(INT, version),
        ngx_http_agent_store_col(INT, latest),
        ngx_http_agent_store_col(INT, versions),
        ngx_http_agent_store_col(STR, doc),
        ngx_http_agent_store_col(STR, created_at),
        ngx_http_agent_store_col(STR, updated_at)
    }
};


#undef NGX_HTTP_AGENT_STORE_ROW
#define NGX_HTTP_AGENT_STORE_ROW  ngx_http_agent_cron_row_t

ngx_http_agent_store_table_t  ngx_http_agent_store_cron_cols = {
    sizeof(NGX_HTTP_AGENT_STORE_ROW), {
        ngx_http_agent_store_col(STR, cron_id),
        ngx_http_agent_store_col(STR, owner),
        ngx_http_agent_store_col(STR, assistant_id),
        ngx_http_agent_store_col(STR, thread_id),
        ngx_http_agent_store_col(STR, origin),
        ngx_http_agent_store_col(STR, doc),
        ngx_http_agent_store_col(INT, next_run),
        ngx_http_agent_store_col(FLAG, enabled),
        ngx_http_agent_store_col(STR, created_at),
        ngx_http_agent_store_col(STR, updated_at),
        ngx_http_agent_store_col(STR, limit_keys)
    }
};


#undef NGX_HTTP_AGENT_STORE_ROW
#define NGX_HTTP_AGENT_STORE_ROW  ngx_http_agent_item_t

/* a search's rank last, where its statement has one */

ngx_http_agent_store_table_t  ngx_http_agent_store_item_cols = {
    sizeof(NGX_HTTP_AGENT_STORE_ROW), {
        ngx_http_agent_store_col(STR, owner),
        ngx_http_agent_store_col(STR, ns),
        ngx_http_agent_store_col(STR, key),
        ngx_http_agent_store_col(STR, value),
        ngx_http_agent_store_col(STR, created_at),
        ngx_http_agent_store_col(STR, updated_at),
        ngx_http_agent_store_col(INT, expires),
        ngx_http_agent_store_col(REAL, score)
    }
};


#undef NGX_HTTP_AGENT_STORE_ROW
#define NGX_HTTP_AGENT_STORE_ROW  ngx_http_agent_resource_t

/* a file's blob (its SHA-1) where the store keeps its bytes (pg_files.c) */

ngx_http_agent_store_table_t  ngx_http_agent_store_resource_cols = {
    sizeof(NGX_HTTP_AGENT_STORE_ROW), {
        ngx_http_agent_store_col(STR, id),
        ngx_http_agent_store_col(STR, name),
        ngx_http_agent_store_col(STR, table),
        ngx_http_agent_store_col(STR, columns),
        ngx_http_agent_store_col(INT, row_count),
        ngx_http_agent_store_col(INT, size_bytes),
        ngx_http_agent_store_col(STR, path),
        ngx_http_agent_store_col(STR, created_at),
        ngx_http_agent_store_col(STR, blob)
    }
};


#undef NGX_HTTP_AGENT_STORE_ROW


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
