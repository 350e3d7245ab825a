
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store_run.h"


/*
 * A session's history on PostgreSQL: its messages, checkpoints and forks,
 * each a statement of ngx_http_agent_pg_sql.c.
 */


#define NGX_HTTP_AGENT_PG_PAGE_BYTES   (1024 * 1024)
#define NGX_HTTP_AGENT_PG_PAGE_IMAGES  (4 * 1024 * 1024)


/* the history */

static ngx_int_t
ngx_http_agent_pg_messages_read(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    int                    i;
    ngx_array_t           *rows;
    ngx_http_agent_msg_t  *m;

    if (ngx_http_agent_pg_new_rows(q, a, sizeof(ngx_http_agent_msg_t), &rows)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    for (i = 0; i < PQntuples(res); i++) {
        m = ngx_array_push(rows);

        if (m == NULL
            || ngx_http_agent_pg_row(q->sc->pool, res, i, 0,
                                     &ngx_http_agent_store_message_cols, m)
               != NGX_OK)
        {
            return NGX_ERROR;
        }

        if (m->content.data == NULL
            && q->stmt == NGX_HTTP_AGENT_PG_MESSAGES)
        {
            ngx_str_set(&m->content, "");
        }

        /* the page's last column: whether older messages are left */
        if (q->stmt == NGX_HTTP_AGENT_PG_MESSAGES_PAGE) {
            ((ngx_http_agent_pg_rows_t *) a->value)->more =
                                        ngx_http_agent_pg_int(res, i, 9) > 0;
        }
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_pg_messages(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    int64_t upto, ngx_int_t images_keep, ngx_array_t *messages)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, messages, id, NULL);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, messages);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_MESSAGES,
                                 ngx_http_agent_pg_messages_read, "sii", id,
                                 (int64_t) (upto < 0 ? INT64_MAX : upto),
                                 (int64_t) images_keep);
}


ngx_int_t
ngx_http_agent_pg_messages_page(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t before, ngx_uint_t limit, ngx_uint_t all,
    ngx_uint_t images, ngx_uint_t *more,
    ngx_http_agent_store_message_pt handler, void *data)
{
    ngx_int_t                    rc;
    ngx_uint_t                   i;
    ngx_http_agent_msg_t        *m;
    ngx_http_agent_pg_rows_t    *r;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, messages_page, id, NULL);

    if (a) {
        if (a->rc != NGX_OK) {
            return a->rc;
        }

        r = a->value;
        m = r->rows->elts;
        *more = r->more;

        for (i = 0; i < r->rows->nelts; i++) {
            rc = handler(data, &m[i]);
            if (rc != NGX_OK) {
                return rc;
            }
        }

        return NGX_OK;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_MESSAGES_PAGE,
                                 ngx_http_agent_pg_messages_read, "siiiii", id,
                                 (int64_t) (before < 0 ? INT64_MAX : before),
                                 (int64_t) limit, (int64_t) (all ? 1 : 0),
                                 (int64_t) (images ? 1 : 0),
                                 (int64_t) (images
                                            ? NGX_HTTP_AGENT_PG_PAGE_IMAGES
                                            : NGX_HTTP_AGENT_PG_PAGE_BYTES));
}


static ngx_int_t
ngx_http_agent_pg_checkpoint_row(ngx_pool_t *pool, PGresult *res, int row,
    ngx_http_agent_checkpoint_t *cp)
{
    ngx_str_t  sub, sub_id;

    if (ngx_http_agent_pg_row(pool, res, row, 0,
                              &ngx_http_agent_store_checkpoint_cols, cp)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* a subgraph that waits at its next node: its wait, the thread's */
    (void) ngx_http_agent_pg_str(pool, res, row, 9, &sub);
    (void) ngx_http_agent_pg_str(pool, res, row, 10, &sub_id);

    return ngx_http_agent_store_checkpoint_merge(pool, cp, &sub, &sub_id);
}


static ngx_int_t
ngx_http_agent_pg_checkpoint_read(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a)
{
    int                           i;
    ngx_array_t                  *rows;
    ngx_http_agent_checkpoint_t  *cp;

    if (q->stmt == NGX_HTTP_AGENT_PG_CHECKPOINT_GET && PQntuples(res) == 0) {
        return NGX_DECLINED;
    }

    if (ngx_http_agent_pg_new_rows(q, a, sizeof(ngx_http_agent_checkpoint_t),
                                   &rows)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    for (i = 0; i < PQntuples(res); i++) {
        cp = ngx_array_push(rows);
        if (cp == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(cp, sizeof(ngx_http_agent_checkpoint_t));

        if (q->stmt == NGX_HTTP_AGENT_PG_FORK_LATER) {
            (void) ngx_http_agent_pg_str(q->sc->pool, res, i, 0, &cp->id);
            cp->msg_count = ngx_http_agent_pg_int(res, i, 1);
            (void) ngx_http_agent_pg_str(q->sc->pool, res, i, 2,
                                         &cp->channels);
            continue;
        }

        if (ngx_http_agent_pg_checkpoint_row(q->sc->pool, res, i, cp)
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_pg_checkpoint_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_http_agent_checkpoint_t *cp)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, checkpoint_get, id, checkpoint_id);

    if (a) {
        return ngx_http_agent_pg_answered_row(a, cp);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CHECKPOINT_GET,
                                 ngx_http_agent_pg_checkpoint_read, "ss", id,
                                 checkpoint_id);
}


ngx_int_t
ngx_http_agent_pg_checkpoint_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *ns, ngx_array_t *checkpoints)
{
    ngx_str_t                    none;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, checkpoint_list, id, ns);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, checkpoints);
    }

    ngx_str_set(&none, "");

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_CHECKPOINT_LIST,
                                 ngx_http_agent_pg_checkpoint_read, "ss", id,
                                 (ns && ns->len) ? ns : &none);
}


ngx_int_t
ngx_http_agent_pg_fork_later(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_str_t *from, ngx_array_t *later)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, fork_later, id, from);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, later);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_FORK_LATER,
                                 ngx_http_agent_pg_checkpoint_read, "ss", id,
                                 from);
}


ngx_int_t
ngx_http_agent_pg_fork_keep(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_str_t *channels)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, fork_keep, id, checkpoint_id);

    if (a) {
        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_FORK_KEEP,
                                 ngx_http_agent_pg_done, "sss", checkpoint_id,
                                 channels, id);
}


ngx_int_t
ngx_http_agent_pg_fork_cut(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    int64_t msg_count)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, fork_cut, id, NULL);

    if (a) {
        return a->rc;
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_FORK_CUT,
                                 ngx_http_agent_pg_done, "si", id,
                                 (int64_t) msg_count);
}


/* a step: false from the server, the lease is gone (NGX_DECLINED) */

static ngx_int_t
ngx_http_agent_pg_written(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
    if (a) {
        a->value = q->data;
    }

    if (PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 't') {
        return NGX_OK;
    }

    ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0,
                  "agent: the session is no longer held by the run, its "
                  "checkpoint is not written");

    return NGX_DECLINED;
}


ngx_int_t
ngx_http_agent_pg_checkpoint_write(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_http_agent_checkpoint_t *cp,
    ngx_array_t *added)
{
    int64_t                       seq, visible, bytes;
    ngx_str_t                     msgs, *kept;
    ngx_uint_t                    i, n;
    ngx_http_agent_msg_t         *m;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_pg_query_t    *q;
    ngx_http_agent_pg_answer_t   *a;

    a = ngx_http_agent_pg_answered(sc, checkpoint_write, session_id, &cp->node);

    if (a) {
        if (a->value) {
            kept = a->value;
            cp->id = kept[0];
            cp->created_at = kept[1];
        }

        return a->rc;
    }

    kept = ngx_palloc(sc->pool, 2 * sizeof(ngx_str_t));
    j = ngx_http_agent_json_create(sc->pool);

    if (kept == NULL || j == NULL
        || ngx_http_agent_store_made(sc->pool, NULL, &cp->id, &cp->created_at)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    kept[0] = cp->id;
    kept[1] = cp->created_at;

    /* the step's messages as one JSON array, read by json_to_recordset() */

    n = added ? added->nelts : 0;
    m = added ? added->elts : NULL;
    seq = cp->msg_count - n;
    visible = 0;
    bytes = 0;

    ngx_http_agent_json_arr(j);

    for (i = 0; i < n; i++) {
        m[i].created_at = cp->created_at;

        bytes += m[i].content.len + m[i].tool_calls.len + m[i].images.len;

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "seq");
        ngx_http_agent_json_int(j, seq + i);
        ngx_http_agent_json_key(j, "role");
        ngx_http_agent_json_str(j, &m[i].role);
        ngx_http_agent_json_key(j, "content");

        if (m[i].content.data) {
            ngx_http_agent_json_str(j, &m[i].content);

        } else {
            ngx_http_agent_json_null(j);
        }

        if (m[i].tool_calls.len) {
            ngx_http_agent_json_key(j, "tool_calls");
            ngx_http_agent_json_str(j, &m[i].tool_calls);
        }

        if (m[i].tool_call_id.len) {
            ngx_http_agent_json_key(j, "tool_call_id");
            ngx_http_agent_json_str(j, &m[i].tool_call_id);
        }

        if (m[i].name.len) {
            ngx_http_agent_json_key(j, "name");
            ngx_http_agent_json_str(j, &m[i].name);
        }

        if (m[i].images.len) {
            ngx_http_agent_json_key(j, "images");
            ngx_http_agent_json_str(j, &m[i].images);
        }

        if (m[i].metadata.len) {
            ngx_http_agent_json_key(j, "metadata");
            ngx_http_agent_json_str(j, &m[i].metadata);
        }

        ngx_http_agent_json_end(j);

        if (m[i].role.data[0] == 'u'
            || (m[i].role.data[0] == 'a'
                && (m[i].content.len || m[i].tool_calls.len == 0)))
        {
            visible++;
        }
    }

    ngx_http_agent_json_arr_end(j);

    if (ngx_http_agent_json_done(j, &msgs) != NGX_OK) {
        return NGX_ERROR;
    }

    q = ngx_http_agent_pg_query(sc, cp->ns.len
                                    ? NGX_HTTP_AGENT_PG_CHECKPOINT_WRITE_NS
                                    : NGX_HTTP_AGENT_PG_CHECKPOINT_WRITE,
                                ngx_http_agent_pg_written);
    if (q == NULL
        || ngx_http_agent_pg_param(q, session_id) != NGX_OK
        || ngx_http_agent_pg_param(q, &cp->run_id) != NGX_OK
        || ngx_http_agent_pg_param(q, &cp->id) != NGX_OK
        || ngx_http_agent_pg_param(q, cp->parent_id.len ? &cp->parent_id
                                                        : NULL)
           != NGX_OK
        || ngx_http_agent_pg_param_int(q, cp->step) != NGX_OK
        || ngx_http_agent_pg_param(q, &cp->node) != NGX_OK
        || ngx_http_agent_pg_param(q, cp->next.len ? &cp->next : NULL)
           != NGX_OK
        || ngx_http_agent_pg_param_int(q, cp->msg_count) != NGX_OK
        || ngx_http_agent_pg_param(q, &cp->channels) != NGX_OK
        || ngx_http_agent_pg_param(q, &cp->created_at) != NGX_OK
        || ngx_http_agent_pg_param_int(q, visible) != NGX_OK
        || ngx_http_agent_pg_param_int(q, ngx_http_agent_store_ms()
                                          + cp->lease)
           != NGX_OK
        || ngx_http_agent_pg_param_int(q, cp->prompt_tokens) != NGX_OK
        || ngx_http_agent_pg_param_int(q, cp->completion_tokens) != NGX_OK
        || ngx_http_agent_pg_param_int(q, cp->cached_tokens) != NGX_OK
        || ngx_http_agent_pg_param_int(q, bytes) != NGX_OK
        || ngx_http_agent_pg_param_int(q, cp->release ? 1 : 0) != NGX_OK
        || ngx_http_agent_pg_param(q, &msgs) != NGX_OK
        || ngx_http_agent_pg_param_int(q, sc->gen) != NGX_OK
        || (cp->ns.len && ngx_http_agent_pg_param(q, &cp->ns) != NGX_OK))
    {
        return NGX_ERROR;
    }

    q->data = kept;

    return ngx_http_agent_pg_send(q, 0);
}
