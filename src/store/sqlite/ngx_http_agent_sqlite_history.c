
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store_history.h"


/*
 * The history of a session: messages appended as steps add them, the
 * checkpoints (each holds the channels that are not messages and how many
 * messages belong to it) and the CSV resources.
 */


#define NGX_HTTP_AGENT_STORE_PAGE_BYTES   (1024 * 1024)
#define NGX_HTTP_AGENT_STORE_PAGE_IMAGES  (4 * 1024 * 1024)


typedef struct {
    ngx_str_t                     *session_id;
    ngx_http_agent_checkpoint_t   *cp;
    ngx_array_t                   *added;
} ngx_http_agent_sqlite_cp_args_t;


static void ngx_http_agent_store_text(sqlite3_stmt *stmt, int col,
    ngx_str_t *out);
static ngx_int_t ngx_http_agent_store_checkpoint_row(ngx_pool_t *pool,
    sqlite3_stmt *stmt, ngx_http_agent_checkpoint_t *cp);
static ngx_int_t ngx_http_agent_sqlite_checkpoint_try(
    ngx_http_agent_store_call_t *sc, void *data);
static ngx_int_t ngx_http_agent_sqlite_checkpoint_now(
    ngx_http_agent_store_call_t *sc, ngx_str_t *session_id,
    ngx_http_agent_checkpoint_t *cp, ngx_array_t *added);


ngx_int_t
ngx_http_agent_sqlite_messages(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    int64_t upto, ngx_int_t images_keep, ngx_array_t *messages)
{
    int                    rc;
    sqlite3_stmt          *stmt;
    ngx_http_agent_msg_t  *m;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_MESSAGES, "sii", id,
                                       upto < 0 ? INT64_MAX : upto,
                                       (int64_t) images_keep);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        m = ngx_array_push(messages);

        if (m == NULL
            || ngx_http_agent_sqlite_row(sc->pool, stmt,
                                         &ngx_http_agent_store_message_cols, m)
               != NGX_OK)
        {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }

        if (m->content.data == NULL) {
            ngx_str_set(&m->content, "");
        }
    }

    return ngx_http_agent_sqlite_done(stmt, rc);
}


/*
 * The turn's read: the rows after those the worker kept of the session
 * (store_history.c), the row kept last read again to prove that nothing
 * before it changed; without it the whole history is read again
 */

ngx_int_t
ngx_http_agent_sqlite_messages_kept(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t upto, ngx_int_t images_keep, ngx_array_t *messages)
{
    int                              rc;
    int64_t                          from, last, rid, seq;
    ngx_str_t                        f[NGX_HTTP_AGENT_STORE_HISTORY_FIELDS];
    ngx_uint_t                       k, first;
    sqlite3_stmt                    *stmt;
    ngx_http_agent_store_history_t  *h;

    if (upto < 0) {
        upto = INT64_MAX;
    }

    h = ngx_http_agent_store_history_find(id, upto, &from, &last);
    if (h == NULL) {
        return ngx_http_agent_sqlite_messages(sc, id, upto, images_keep,
                                              messages);
    }

again:

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_MESSAGES_SINCE,
                                       "sii", id, from, upto);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    first = (last >= 0);

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        rid = sqlite3_column_int64(stmt, 0);
        seq = sqlite3_column_int64(stmt, 9);

        if (first) {
            first = 0;

            if (rid == last && seq == from) {
                continue;
            }

            break;
        }

        for (k = 0; k < NGX_HTTP_AGENT_STORE_HISTORY_SHOWN; k++) {
            f[k].data = (u_char *) sqlite3_column_text(stmt, k + 1);
            f[k].len = sqlite3_column_bytes(stmt, k + 1);
        }

        f[NGX_HTTP_AGENT_STORE_HISTORY_SHOWN].data =
                                    (u_char *) sqlite3_column_text(stmt, 10);
        f[NGX_HTTP_AGENT_STORE_HISTORY_SHOWN].len =
                                    sqlite3_column_bytes(stmt, 10);

        if (ngx_http_agent_store_history_add(h, rid, seq, f) != NGX_OK) {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }
    }

    if (rc == SQLITE_ROW || first) {
        /* the row kept last is gone or another: cut since, read it all */
        sqlite3_reset(stmt);
        ngx_http_agent_store_history_reset(h);
        from = -1;
        last = -1;
        goto again;
    }

    if (ngx_http_agent_sqlite_done(stmt, rc) != NGX_OK) {
        ngx_http_agent_store_history_drop(h);
        return NGX_ERROR;
    }

    return ngx_http_agent_store_history_out(h, sc->pool, upto, images_keep,
                                            messages);
}


/*
 * A page of messages for GET /messages: the newest limit before a message
 * id, oldest first, each handed over as it is read (its strings SQLite's
 * until the next row), so a page is never held twice.  A page also ends
 * where its stored text passes a byte budget (at least one message), so
 * a reader holds at most the budget and one message, whatever the size
 * of the conversation.  Without images the data of each image stays in
 * the file: [{"mime_type", "size"}].
 */

ngx_int_t
ngx_http_agent_sqlite_messages_page(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t before, ngx_uint_t limit, ngx_uint_t all,
    ngx_uint_t images, ngx_uint_t *more,
    ngx_http_agent_store_message_pt handler, void *data)
{
    int                    rc;
    int64_t                from, budget;
    ngx_int_t              hrc;
    sqlite3_stmt          *stmt;
    ngx_http_agent_msg_t   m;

    if (before < 0) {
        before = INT64_MAX;
    }

    budget = images ? NGX_HTTP_AGENT_STORE_PAGE_IMAGES
                    : NGX_HTTP_AGENT_STORE_PAGE_BYTES;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_MESSAGES_FROM,
                                       "siiiii", id, before, (int64_t) limit,
                                       (int64_t) (all ? 1 : 0),
                                       (int64_t) (images ? 1 : 0), budget);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    rc = sqlite3_step(stmt);
    from = (rc == SQLITE_ROW) ? sqlite3_column_int64(stmt, 0) : -1;
    *more = (rc == SQLITE_ROW);

    if (ngx_http_agent_sqlite_done(stmt, rc) != NGX_OK) {
        return NGX_ERROR;
    }

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_MESSAGES_PAGE,
                                       "siiii", id, before, from,
                                       (int64_t) (all ? 1 : 0),
                                       (int64_t) (images ? 1 : 0));
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        ngx_memzero(&m, sizeof(ngx_http_agent_msg_t));

        m.seq = sqlite3_column_int64(stmt, 0);
        ngx_http_agent_store_text(stmt, 1, &m.role);
        ngx_http_agent_store_text(stmt, 2, &m.content);
        ngx_http_agent_store_text(stmt, 3, &m.tool_calls);
        ngx_http_agent_store_text(stmt, 4, &m.tool_call_id);
        ngx_http_agent_store_text(stmt, 5, &m.name);
        ngx_http_agent_store_text(stmt, 6, &m.images);
        ngx_http_agent_store_text(stmt, 7, &m.metadata);
        ngx_http_agent_store_text(stmt, 8, &m.created_at);

        hrc = handler(data, &m);

        if (hrc != NGX_OK) {
            sqlite3_reset(stmt);
            return hrc;
        }
    }

    return ngx_http_agent_sqlite_done(stmt, rc);
}


/* a column's text where SQLite keeps it, "" for NULL: until the next step */

static void
ngx_http_agent_store_text(sqlite3_stmt *stmt, int col, ngx_str_t *out)
{
    out->data = (u_char *) sqlite3_column_text(stmt, col);

    if (out->data == NULL) {
        out->data = (u_char *) "";
        out->len = 0;
        return;
    }

    out->len = sqlite3_column_bytes(stmt, col);
}


static ngx_int_t
ngx_http_agent_store_checkpoint_row(ngx_pool_t *pool, sqlite3_stmt *stmt,
    ngx_http_agent_checkpoint_t *cp)
{
    ngx_str_t  sub, sub_id;

    if (ngx_http_agent_sqlite_row(pool, stmt,
                                  &ngx_http_agent_store_checkpoint_cols, cp)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* a subgraph that waits at its next node: its wait, the thread's */
    (void) ngx_http_agent_sqlite_col(pool, stmt, 9, &sub);
    (void) ngx_http_agent_sqlite_col(pool, stmt, 10, &sub_id);

    return ngx_http_agent_store_checkpoint_merge(pool, cp, &sub, &sub_id);
}


/* a session's checkpoint by its id (NULL: the latest); NGX_DECLINED: none */

ngx_int_t
ngx_http_agent_sqlite_checkpoint_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_http_agent_checkpoint_t *cp)
{
    int            rc;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_CHECKPOINT_LATEST,
                                       "ss", id, checkpoint_id);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    rc = sqlite3_step(stmt);

    if (rc == SQLITE_DONE) {
        sqlite3_reset(stmt);
        return NGX_DECLINED;
    }

    if (rc == SQLITE_ROW
        && ngx_http_agent_store_checkpoint_row(sc->pool, stmt, cp) != NGX_OK)
    {
        sqlite3_reset(stmt);
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_done(stmt, rc);
}


ngx_int_t
ngx_http_agent_sqlite_checkpoint_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *ns, ngx_array_t *checkpoints)
{
    ngx_str_t                     none;
    int                           rc;
    sqlite3_stmt                 *stmt;
    ngx_http_agent_checkpoint_t  *cp;

    ngx_str_set(&none, "");

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_CHECKPOINT_LIST,
                                       "sis", id, (int64_t) 1000,
                                       (ns && ns->len) ? ns : &none);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        cp = ngx_array_push(checkpoints);

        if (cp == NULL
            || ngx_http_agent_store_checkpoint_row(sc->pool, stmt, cp)
               != NGX_OK)
        {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }
    }

    return ngx_http_agent_sqlite_done(stmt, rc);
}


/*
 * One transaction: the messages the step added, the checkpoint row, the
 * session's counters.  cp->msg_count is the count after the step; cp->id
 * and cp->created_at are filled in here.
 */

ngx_int_t
ngx_http_agent_sqlite_checkpoint_write(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_http_agent_checkpoint_t *cp, ngx_array_t *added)
{
    ngx_http_agent_sqlite_cp_args_t  a;

    a.session_id = session_id;
    a.cp = cp;
    a.added = added;

    return ngx_http_agent_sqlite_checkpoint_try(sc, &a);
}


/* a caller that waits for its answer waits out a busy file too */

static ngx_int_t
ngx_http_agent_sqlite_checkpoint_try(ngx_http_agent_store_call_t *sc,
    void *data)
{
    ngx_http_agent_sqlite_cp_args_t *a = data;

    ngx_int_t  rc;

    if (ngx_http_agent_sqlite_tx || !ngx_http_agent_sqlite_can_wait(sc, 0)) {
        return ngx_http_agent_sqlite_checkpoint_now(sc, a->session_id, a->cp,
                                                    a->added);
    }

    rc = ngx_http_agent_sqlite_checkpoint_now(sc, a->session_id, a->cp,
                                              a->added);

    return ngx_http_agent_sqlite_busy(sc, rc,
                                      ngx_http_agent_sqlite_checkpoint_try,
                                      a, sizeof(*a));
}


static ngx_int_t
ngx_http_agent_sqlite_checkpoint_now(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_http_agent_checkpoint_t *cp, ngx_array_t *added)
{
    int64_t                seq, visible, bytes;
    ngx_str_t              ns;
    ngx_uint_t             i, n, own, lost;
    sqlite3_stmt          *stmt;
    ngx_http_agent_msg_t  *m;

#if (NGX_DEBUG)
    struct timespec        start;

    clock_gettime(CLOCK_MONOTONIC, &start);
#endif

    if (ngx_http_agent_store_made(sc->pool, NULL, &cp->id, &cp->created_at)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    own = !ngx_http_agent_sqlite_tx;
    lost = 0;

    /* the thread's own: no namespace */
    ns = cp->ns;

    if (ns.data == NULL) {
        ngx_str_set(&ns, "");
    }

    if (own && ngx_http_agent_sqlite_exec(NGX_HTTP_AGENT_SQL_BEGIN) != NGX_OK) {
        return NGX_ERROR;
    }

    n = added ? added->nelts : 0;
    m = added ? added->elts : NULL;
    seq = cp->msg_count - n;
    visible = 0;
    bytes = 0;

    for (i = 0; i < n; i++) {
        stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_MESSAGE_INSERT);
        if (stmt == NULL) {
            goto failed;
        }

        m[i].created_at = cp->created_at;

        /* agent_history_max_size: each message, its images once */
        bytes += m[i].content.len + m[i].tool_calls.len + m[i].images.len;

        ngx_http_agent_sqlite_bind(stmt, 1, session_id);
        sqlite3_bind_int64(stmt, 2, seq + i);
        ngx_http_agent_sqlite_bind(stmt, 3, &m[i].role);
        ngx_http_agent_sqlite_bind(stmt, 4, &m[i].content);
        ngx_http_agent_sqlite_bind(stmt, 5, m[i].tool_calls.len
                                           ? &m[i].tool_calls : NULL);
        ngx_http_agent_sqlite_bind(stmt, 6, m[i].tool_call_id.len
                                           ? &m[i].tool_call_id : NULL);
        ngx_http_agent_sqlite_bind(stmt, 7, m[i].name.len ? &m[i].name : NULL);
        ngx_http_agent_sqlite_bind(stmt, 8, m[i].images.len
                                           ? &m[i].images : NULL);
        ngx_http_agent_sqlite_bind(stmt, 9, m[i].metadata.len
                                           ? &m[i].metadata : NULL);
        ngx_http_agent_sqlite_bind(stmt, 10, &cp->created_at);

        if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
            goto failed;
        }

        if (m[i].role.data[0] == 'u'
            || (m[i].role.data[0] == 'a'
                && (m[i].content.len || m[i].tool_calls.len == 0)))
        {
            visible++;
        }
    }

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_CHECKPOINT_INSERT);
    if (stmt == NULL) {
        goto failed;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, &cp->id);
    ngx_http_agent_sqlite_bind(stmt, 2, session_id);
    ngx_http_agent_sqlite_bind(stmt, 3, cp->parent_id.len
                                       ? &cp->parent_id : NULL);
    sqlite3_bind_int64(stmt, 4, cp->step);
    ngx_http_agent_sqlite_bind(stmt, 5, &cp->node);
    ngx_http_agent_sqlite_bind(stmt, 6, cp->next.len ? &cp->next : NULL);
    sqlite3_bind_int64(stmt, 7, cp->msg_count);
    ngx_http_agent_sqlite_bind(stmt, 8, &cp->channels);
    ngx_http_agent_sqlite_bind(stmt, 9, &cp->created_at);
    ngx_http_agent_sqlite_bind(stmt, 10, &ns);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        goto failed;
    }

    stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_SESSION_TOUCH);
    if (stmt == NULL) {
        goto failed;
    }

    ngx_http_agent_sqlite_bind(stmt, 1, session_id);
    ngx_http_agent_sqlite_bind(stmt, 2, &cp->created_at);
    sqlite3_bind_int64(stmt, 3, visible);

    /* a checkpoint renews the running turn's own lease */
    sqlite3_bind_int64(stmt, 4, ngx_http_agent_store_ms() + cp->lease);
    sqlite3_bind_int64(stmt, 5, cp->prompt_tokens);
    sqlite3_bind_int64(stmt, 6, cp->completion_tokens);
    sqlite3_bind_int64(stmt, 7, cp->cached_tokens);
    ngx_http_agent_sqlite_bind(stmt, 8, &cp->run_id);
    sqlite3_bind_int64(stmt, 9, bytes);
    sqlite3_bind_int64(stmt, 10, sc->gen);

    if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        goto failed;
    }

    /* the lease ran out and another turn took the session: write nothing */
    if (sqlite3_changes(ngx_http_agent_sqlite_db) != 1) {
        ngx_log_error(NGX_LOG_ERR, ngx_http_agent_sqlite_log, 0,
                      "agent: session \"%V\" is no longer held by run "
                      "\"%V\", its checkpoint is not written", session_id,
                      &cp->run_id);
        lost = 1;
        goto failed;
    }

    /* the turn's last step lets its session go in the same transaction */

    if (cp->release) {
        stmt = ngx_http_agent_sqlite_stmt(NGX_HTTP_AGENT_SQL_UNLOCK);
        if (stmt == NULL) {
            goto failed;
        }

        ngx_http_agent_sqlite_bind(stmt, 1, session_id);
        ngx_http_agent_sqlite_bind(stmt, 2, &cp->run_id);

        if (ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
            goto failed;
        }
    }

    if (own && ngx_http_agent_sqlite_exec(NGX_HTTP_AGENT_SQL_COMMIT) != NGX_OK)
    {
        goto failed;
    }

#if (NGX_DEBUG)
    {
    struct timespec  done;

    /* the benchmark reads this line: the cost of one checkpoint */
    clock_gettime(CLOCK_MONOTONIC, &done);
    ngx_log_debug3(NGX_LOG_DEBUG_HTTP, ngx_cycle->log, 0,
                   "agent store: checkpoint of %L messages (%ui new) "
                   "written in %L us", cp->msg_count, n,
                   (int64_t) (done.tv_sec - start.tv_sec) * 1000000
                   + (done.tv_nsec - start.tv_nsec) / 1000);
    }
#endif

    return NGX_OK;

failed:

    /* the caller's transaction is the caller's to roll back */
    if (own) {
        (void) ngx_http_agent_sqlite_exec(NGX_HTTP_AGENT_SQL_ROLLBACK);
    }

    return lost ? NGX_DECLINED : NGX_ERROR;
}


ngx_int_t
ngx_http_agent_sqlite_resource_add(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_http_agent_resource_t *res)
{
    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_RESOURCE_INSERT,
                                 "sssssiiss", &res->id, session_id,
                                 &res->name, &res->table, &res->columns,
                                 res->row_count, res->size_bytes, &res->path,
                                 &res->created_at)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* the session was deleted while its upload was imported */
    return sqlite3_changes(ngx_http_agent_sqlite_db) == 1 ? NGX_OK
                                                         : NGX_DECLINED;
}


/*
 * A fork (state_fork in checkpoint.c): the checkpoints after `from` that
 * read messages from the table; one of them kept with its messages in its
 * channels; the table's messages after `from`'s removed and the session's
 * counters recounted.  In the caller's transaction.
 */

ngx_int_t
ngx_http_agent_sqlite_fork_later(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *from, ngx_array_t *later)
{
    int                           rc;
    sqlite3_stmt                 *stmt;
    ngx_http_agent_checkpoint_t  *c;

    stmt = ngx_http_agent_sqlite_bound(NGX_HTTP_AGENT_SQL_FORK_LATER, "ss", id,
                                       from);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        c = ngx_array_push(later);
        if (c == NULL) {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }

        ngx_memzero(c, sizeof(ngx_http_agent_checkpoint_t));
        (void) ngx_http_agent_sqlite_col(sc->pool, stmt, 0, &c->id);
        c->msg_count = sqlite3_column_int64(stmt, 1);
        (void) ngx_http_agent_sqlite_col(sc->pool, stmt, 2, &c->channels);
    }

    return ngx_http_agent_sqlite_done(stmt, rc);
}


ngx_int_t
ngx_http_agent_sqlite_fork_keep(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_str_t *channels)
{
    return ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_FORK_KEEP, "sss",
                                    checkpoint_id, channels, id);
}


ngx_int_t
ngx_http_agent_sqlite_fork_cut(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    int64_t msg_count)
{
    if (ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_FORK_MESSAGES, "si", id,
                                 msg_count)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_do(NGX_HTTP_AGENT_SQL_ROLLBACK_COUNTS, "s",
                                    id);
}
