
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store_run.h"


/*
 * The crons searched and counted (lg_crons.c makes and updates them), and
 * a cron as LangGraph answers it.  An owner's crons are few: the store
 * gives them all, the filter, the order and the page are made here.
 */


/* the fields of a cron, as select names them */
static char  *ngx_http_agent_lg_cron_fields[] = {
    "cron_id", "assistant_id", "thread_id", "on_run_completed", "end_time",
    "schedule", "timezone", "created_at", "updated_at", "payload", "user_id",
    "next_run_date", "metadata", "enabled", "now", NULL
};


static ngx_uint_t ngx_http_agent_lg_cron_match(ngx_http_agent_lg_cron_t *c,
    yajl_val v);
static ngx_int_t ngx_http_agent_lg_cron_cmp(const void *one,
    const void *two);


/* the search's order, for ngx_sort's comparison (a worker has one thread) */
static ngx_uint_t  ngx_http_agent_lg_cron_sort;
static ngx_int_t   ngx_http_agent_lg_cron_desc;


/*
 * POST /runs/crons/search {assistant_id, thread_id, enabled, metadata,
 * limit, offset, sort_by, sort_order, select} and /count: the owner's
 */

ngx_int_t
ngx_http_agent_lg_cron_search(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, yajl_val v)
{
    size_t                      k;
    yajl_val                    x;
    ngx_int_t                   rc, limit, offset;
    ngx_str_t                   s;
    ngx_uint_t                  i, n, select;
    ngx_array_t                 rows, found;
    ngx_http_agent_ctx_t       *ctx;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_lg_cron_t   *c;
    ngx_http_agent_lg_filter_t  f;
    ngx_http_agent_cron_row_t  *row;

    static char  *sorts[] = {
        "created_at", "cron_id", "assistant_id", "thread_id", "updated_at",
        "next_run_date", NULL
    };

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    ngx_memzero(&f, sizeof(ngx_http_agent_lg_filter_t));
    ngx_http_agent_lg_page(v, &f, &limit, &offset);

    /* created_at, newest first, unless asked */

    ngx_http_agent_lg_cron_sort = 0;
    ngx_http_agent_lg_cron_desc = 1;

    if (ngx_http_agent_json_get_str(v, "sort_by", &s) == NGX_OK) {
        for (i = 0; sorts[i]; i++) {
            if (s.len == ngx_strlen(sorts[i])
                && ngx_strncmp(s.data, sorts[i], s.len) == 0)
            {
                break;
            }
        }

        if (sorts[i] == NULL) {
            return ngx_http_agent_reply_error(r, 422, "\"sort_by\" is one "
                                              "of cron_id, assistant_id, "
                                              "thread_id, created_at, "
                                              "updated_at, next_run_date");
        }

        ngx_http_agent_lg_cron_sort = i;
    }

    if (ngx_http_agent_json_get_str(v, "sort_order", &s) == NGX_OK) {
        if (s.len == 3 && ngx_strncmp(s.data, "asc", 3) == 0) {
            ngx_http_agent_lg_cron_desc = 0;

        } else if (!(s.len == 4 && ngx_strncmp(s.data, "desc", 4) == 0)) {
            return ngx_http_agent_reply_error(r, 422, "\"sort_order\" is "
                                              "\"asc\" or \"desc\"");
        }
    }

    select = (ngx_uint_t) -1;
    x = ngx_http_agent_json_get(v, "select");

    if (x && YAJL_IS_ARRAY(x)) {
        select = 0;

        for (k = 0; k < x->u.array.len; k++) {
            for (i = 0; ngx_http_agent_lg_cron_fields[i]; i++) {
                if (YAJL_IS_STRING(x->u.array.values[k])
                    && ngx_strcmp(x->u.array.values[k]->u.string,
                                  ngx_http_agent_lg_cron_fields[i])
                       == 0)
                {
                    break;
                }
            }

            if (ngx_http_agent_lg_cron_fields[i] == NULL) {
                return ngx_http_agent_reply_error(r, 422, "\"select\" names "
                                                  "a cron's fields");
            }

            select |= (ngx_uint_t) 1 << i;
        }
    }

    if (ngx_array_init(&rows, r->pool, 8, sizeof(ngx_http_agent_cron_row_t))
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_agent_store_cron_list(ngx_http_agent_reply_sc(r),
                                        ctx->owner, &rows);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_array_init(&found, r->pool, rows.nelts + 1,
                       sizeof(ngx_http_agent_lg_cron_t))
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    row = rows.elts;

    for (i = 0; i < rows.nelts; i++) {
        c = ngx_array_push(&found);
        if (c == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        c->row = &row[i];
        c->doc = ngx_http_agent_json_parse(r->pool, row[i].doc.data,
                                           row[i].doc.len, NULL);

        if (c->doc == NULL || !ngx_http_agent_lg_cron_match(c, v)) {
            found.nelts--;
        }
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (req->route == NGX_HTTP_AGENT_LG_CRONS_COUNT) {
        ngx_http_agent_json_int(j, found.nelts);
        return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
    }

    ngx_sort(found.elts, found.nelts, sizeof(ngx_http_agent_lg_cron_t),
             ngx_http_agent_lg_cron_cmp);

    ngx_http_agent_json_arr(j);

    c = found.elts;

    for (n = (ngx_uint_t) offset;
         n < found.nelts && n < (ngx_uint_t) (offset + limit);
         n++)
    {
        ngx_http_agent_lg_cron_search_json(j, &c[n], select);
    }

    ngx_http_agent_json_arr_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


static ngx_uint_t
ngx_http_agent_lg_cron_match(ngx_http_agent_lg_cron_t *c, yajl_val v)
{
    yajl_val   x, meta;
    ngx_str_t  s;

    if (ngx_http_agent_json_get_str(v, "assistant_id", &s) == NGX_OK
        && (s.len != c->row->assistant_id.len
            || ngx_strncmp(s.data, c->row->assistant_id.data, s.len) != 0))
    {
        return 0;
    }

    if (ngx_http_agent_json_get_str(v, "thread_id", &s) == NGX_OK
        && (s.len != ngx_http_agent_store_id_shown(&c->row->thread_id)
            || ngx_strncmp(s.data, c->row->thread_id.data, s.len) != 0))
    {
        return 0;
    }

    x = ngx_http_agent_json_get(v, "enabled");

    if (x && (YAJL_IS_TRUE(x) || YAJL_IS_FALSE(x))
        && (ngx_uint_t) YAJL_IS_TRUE(x) != c->row->enabled)
    {
        return 0;
    }

    x = ngx_http_agent_json_get(v, "metadata");

    if (x && YAJL_IS_OBJECT(x)) {
        meta = ngx_http_agent_json_get(c->doc, "metadata");

        if (!ngx_http_agent_json_contains(meta, x)) {
            return 0;
        }
    }

    return 1;
}


static ngx_int_t
ngx_http_agent_lg_cron_cmp(const void *one, const void *two)
{
    const ngx_http_agent_lg_cron_t  *a = one;
    const ngx_http_agent_lg_cron_t  *b = two;

    ngx_int_t   rc;
    ngx_str_t  *x, *y;

    switch (ngx_http_agent_lg_cron_sort) {

    case 1:
        x = &a->row->cron_id;
        y = &b->row->cron_id;
        break;

    case 2:
        x = &a->row->assistant_id;
        y = &b->row->assistant_id;
        break;

    case 3:
        x = &a->row->thread_id;
        y = &b->row->thread_id;
        break;

    case 4:
        x = &a->row->updated_at;
        y = &b->row->updated_at;
        break;

    case 5:
        rc = (a->row->next_run > b->row->next_run)
             - (a->row->next_run < b->row->next_run);
        return ngx_http_agent_lg_cron_desc ? -rc : rc;

    default:
        x = &a->row->created_at;
        y = &b->row->created_at;
        break;
    }

    rc = ngx_memn2cmp(x->data, y->data, x->len, y->len);

    if (rc == 0) {
        rc = ngx_memn2cmp(a->row->cron_id.data, b->row->cron_id.data,
                          a->row->cron_id.len, b->row->cron_id.len);
    }

    return ngx_http_agent_lg_cron_desc ? -rc : rc;
}


/* a cron as LangGraph answers it: its fields in select, all when -1 */

void
ngx_http_agent_lg_cron_search_json(ngx_http_agent_json_t *j,
    ngx_http_agent_lg_cron_t *c, ngx_uint_t select)
{
    u_char                     *p;
    yajl_val                    x;
    ngx_str_t                   s;
    ngx_uint_t                  i;
    ngx_http_agent_cron_row_t  *row;
    u_char                      iso[NGX_HTTP_AGENT_CRON_ISO_LEN];

    row = c->row;

    ngx_http_agent_json_obj(j);

    for (i = 0; ngx_http_agent_lg_cron_fields[i]; i++) {
        if (!(select & ((ngx_uint_t) 1 << i))) {
            continue;
        }

        ngx_http_agent_json_cstr(j, ngx_http_agent_lg_cron_fields[i]);

        switch (i) {

        case 0:
            ngx_http_agent_json_str(j, &row->cron_id);
            break;

        case 1:
            ngx_http_agent_json_str(j, &row->assistant_id);
            break;

        case 2:
        case 10:
            s = (i == 2) ? row->thread_id : row->owner;
            s.len = (i == 2) ? ngx_http_agent_store_id_shown(&s) : s.len;

            if (s.len) {
                ngx_http_agent_json_str(j, &s);

            } else {
                ngx_http_agent_json_null(j);
            }

            break;

        case 7:
            ngx_http_agent_json_str(j, &row->created_at);
            break;

        case 8:
            ngx_http_agent_json_str(j, &row->updated_at);
            break;

        case 11:
        case 14:
            if (i == 11 && row->next_run == 0) {
                ngx_http_agent_json_null(j);
                break;
            }

            p = ngx_http_agent_cron_iso(iso, i == 11 ? row->next_run
                                                     : ngx_time());
            s.data = iso;
            s.len = p - iso;
            ngx_http_agent_json_str(j, &s);
            break;

        case 13:
            ngx_http_agent_json_bool(j, row->enabled);
            break;

        default:
            /* on_run_completed, end_time, schedule, timezone, payload,
             * metadata: the document's */

            x = ngx_http_agent_json_get(c->doc,
                                        ngx_http_agent_lg_cron_fields[i]);

            if (x) {
                ngx_http_agent_json_val(j, x);

            } else {
                ngx_http_agent_json_null(j);
            }

            break;
        }
    }

    ngx_http_agent_json_end(j);
}
