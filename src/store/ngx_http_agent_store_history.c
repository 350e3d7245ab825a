
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_history.h"
#include "ngx_http_agent_util.h"


/*
 * A session's history, read once: each worker keeps, per session, the
 * message rows its last turn's begin read, and the next begin reads only
 * the rows after them.  The rows of a session are only ever appended or
 * cut at a place (a fork, a rollback, a time travel, a delete), never
 * changed, and a row's id is never given again (SQLite's AUTOINCREMENT,
 * PostgreSQL's bigserial): so when the row the worker kept last is still
 * there with its id, every row before it is too, and the read starts
 * there.  Anything else (another worker cut the history, the session was
 * made again under its id) reads the whole history again; what a turn
 * gets never depends on the cache (t/store_history_cache.t).
 *
 * The rows are kept as stored: which images the model still sees
 * (agent_images_keep) moves with each turn, so it is applied as the rows
 * are handed out, from the "shown" column read with them.  A turn reads
 * the rows' text where it is kept, pinned while it runs.  Memory is the
 * worker's own and bounded: NGX_HTTP_AGENT_STORE_HISTORIES sessions, none
 * over NGX_HTTP_AGENT_STORE_HISTORY_MAX bytes (a longer history is read
 * whole each turn), the least recently used let go first.
 */


#define NGX_HTTP_AGENT_STORE_HISTORIES     64
#define NGX_HTTP_AGENT_STORE_HISTORY_MAX   (1024 * 1024)
#define NGX_HTTP_AGENT_STORE_HISTORY_NULL  NGX_MAX_UINT32_VALUE


typedef struct {
    int64_t                          id;
    int64_t                          seq;
    uint32_t                         off[NGX_HTTP_AGENT_STORE_HISTORY_FIELDS];
    uint32_t                         len[NGX_HTTP_AGENT_STORE_HISTORY_FIELDS];
} ngx_http_agent_store_history_row_t;


struct ngx_http_agent_store_history_s {
    ngx_queue_t                          queue;
    ngx_str_t                            session;
    ngx_http_agent_store_history_row_t  *rows;
    ngx_uint_t                           n;
    size_t                               rows_size;   /* bytes */
    u_char                              *text;
    size_t                               used;
    size_t                               size;
};


/*
 * A kept row's column; NULL data: SQL's NULL.  A macro: it runs for each
 * column of each row of a history, each turn
 */
#define ngx_http_agent_store_history_str(text, row, k, s)                   \
    (s)->data = ((row)->len[k] == NGX_HTTP_AGENT_STORE_HISTORY_NULL)         \
                ? NULL : (text) + (row)->off[k];                             \
    (s)->len = ((row)->len[k] == NGX_HTTP_AGENT_STORE_HISTORY_NULL)          \
               ? 0 : (row)->len[k]


static ngx_queue_t   ngx_http_agent_store_histories;
static ngx_uint_t    ngx_http_agent_store_nhistories;


/*
 * The session's entry, made the most recently used (or made): *from is
 * the seq of the row kept last and *last its id, -1 when none is kept; a
 * read is to start at *from and find that id there
 */

ngx_http_agent_store_history_t *
ngx_http_agent_store_history_find(ngx_str_t *session, int64_t upto,
    int64_t *from, int64_t *last)
{
    ngx_queue_t                     *q;
    ngx_http_agent_store_history_t  *h;

    *from = -1;
    *last = -1;

    if (ngx_http_agent_store_nhistories == 0) {
        ngx_queue_init(&ngx_http_agent_store_histories);
    }

    for (q = ngx_queue_head(&ngx_http_agent_store_histories);
         q != ngx_queue_sentinel(&ngx_http_agent_store_histories);
         q = ngx_queue_next(q))
    {
        h = ngx_queue_data(q, ngx_http_agent_store_history_t, queue);

        if (h->session.len != session->len
            || ngx_memcmp(h->session.data, session->data, session->len) != 0)
        {
            continue;
        }

        ngx_queue_remove(q);
        ngx_queue_insert_head(&ngx_http_agent_store_histories, q);

        /* a state before the kept rows' (a time travel): read it all */
        if (h->n && h->rows[h->n - 1].seq >= upto) {
            ngx_http_agent_store_history_reset(h);
        }

        if (h->n) {
            *from = h->rows[h->n - 1].seq;
            *last = h->rows[h->n - 1].id;
        }

        return h;
    }

    if (ngx_http_agent_store_nhistories == NGX_HTTP_AGENT_STORE_HISTORIES) {
        q = ngx_queue_last(&ngx_http_agent_store_histories);
        ngx_http_agent_store_history_drop(
                   ngx_queue_data(q, ngx_http_agent_store_history_t, queue));
    }

    h = ngx_alloc(sizeof(ngx_http_agent_store_history_t) + session->len,
                  ngx_cycle->log);
    if (h == NULL) {
        return NULL;
    }

    ngx_memzero(h, sizeof(ngx_http_agent_store_history_t));

    h->session.data = (u_char *) (h + 1);
    h->session.len = session->len;
    ngx_memcpy(h->session.data, session->data, session->len);

    ngx_queue_insert_head(&ngx_http_agent_store_histories, &h->queue);
    ngx_http_agent_store_nhistories++;

    return h;
}


/* nothing kept: the memory stays for the rows read again */

void
ngx_http_agent_store_history_reset(ngx_http_agent_store_history_t *h)
{
    h->n = 0;
    h->used = 0;

    /* a turn may still read the rows kept: they stay with it */
    ngx_http_agent_grow_reset(&h->text, &h->size);
}


void
ngx_http_agent_store_history_drop(ngx_http_agent_store_history_t *h)
{
    ngx_queue_remove(&h->queue);
    ngx_http_agent_store_nhistories--;

    if (h->rows) {
        ngx_free(h->rows);
    }

    /* freed by the last turn reading it */
    ngx_http_agent_grow_release(h->text);

    ngx_free(h);
}


/*
 * A row read after the kept ones, its columns in f (data NULL: SQL's
 * NULL).  A history past the bound is still taken whole, for the read
 * under way: it is let go once handed out (history_out()).
 */

ngx_int_t
ngx_http_agent_store_history_add(ngx_http_agent_store_history_t *h,
    int64_t id, int64_t seq, ngx_str_t *f)
{
    u_char                              *p;
    size_t                               need;
    ngx_uint_t                           k;
    ngx_http_agent_store_history_row_t  *row;

    need = 0;

    for (k = 0; k < NGX_HTTP_AGENT_STORE_HISTORY_FIELDS; k++) {
        need += f[k].data ? f[k].len + 1 : 0;
    }

    if (ngx_http_agent_grow(&h->rows,
                            h->n * sizeof(ngx_http_agent_store_history_row_t),
                            &h->rows_size,
                            sizeof(ngx_http_agent_store_history_row_t),
                            NGX_MAX_SIZE_T_VALUE, ngx_cycle->log)
        != NGX_OK
        || ngx_http_agent_grow_shared(&h->text, h->used, &h->size, need,
                                      NGX_MAX_SIZE_T_VALUE, ngx_cycle->log)
           != NGX_OK)
    {
        ngx_http_agent_store_history_drop(h);
        return NGX_ERROR;
    }

    row = &h->rows[h->n++];
    row->id = id;
    row->seq = seq;

    p = h->text + h->used;

    for (k = 0; k < NGX_HTTP_AGENT_STORE_HISTORY_FIELDS; k++) {

        if (f[k].data == NULL) {
            row->off[k] = 0;
            row->len[k] = NGX_HTTP_AGENT_STORE_HISTORY_NULL;
            continue;
        }

        /* NUL-terminated as a pool's copy of a column is */
        row->off[k] = p - h->text;
        row->len[k] = f[k].len;
        p = ngx_cpymem(p, f[k].data, f[k].len);
        *p++ = '\0';
    }

    h->used = p - h->text;

    return NGX_OK;
}


/*
 * The kept rows into the turn's messages, their text where it is kept,
 * pinned for as long as the turn's pool (the entry may be appended to,
 * read again or let go while the turn runs: grow_shared()), the images
 * of the messages before the images_keep-th last user message left out
 * as the store's full read leaves them out (the "shown" content)
 */

ngx_int_t
ngx_http_agent_store_history_out(ngx_http_agent_store_history_t *h,
    ngx_pool_t *pool, int64_t upto, ngx_int_t images_keep,
    ngx_array_t *messages)
{
    u_char                              *text;
    int64_t                              keep;
    ngx_int_t                            users;
    ngx_uint_t                           i;
    ngx_http_agent_msg_t                *m;
    ngx_http_agent_store_history_row_t  *row;

    if (h->n == 0) {
        return NGX_OK;
    }

    text = h->text;
    m = ngx_array_push_n(messages, h->n);

    if (m == NULL || ngx_http_agent_grow_pin(pool, text) != NGX_OK) {
        return NGX_ERROR;
    }

    keep = (images_keep < 0) ? -1 : (images_keep == 0) ? upto : -1;
    users = images_keep;

    for (i = h->n; users > 0 && i > 0; i--) {
        row = &h->rows[i - 1];

        if (row->len[NGX_HTTP_AGENT_STORE_HISTORY_ROLE] == 4
            && ngx_strncmp(text + row->off[NGX_HTTP_AGENT_STORE_HISTORY_ROLE],
                           "user", 4) == 0
            && --users == 0)
        {
            keep = row->seq;
        }
    }

    for (i = 0; i < h->n; i++, m++) {
        row = &h->rows[i];

        ngx_memzero(m, sizeof(ngx_http_agent_msg_t));

        m->seq = row->id;

        ngx_http_agent_store_history_str(text, row,
                                         NGX_HTTP_AGENT_STORE_HISTORY_ROLE,
                                         &m->role);
        ngx_http_agent_store_history_str(text, row,
                                         NGX_HTTP_AGENT_STORE_HISTORY_CONTENT,
                                         &m->content);
        ngx_http_agent_store_history_str(text, row,
                                      NGX_HTTP_AGENT_STORE_HISTORY_TOOL_CALLS,
                                      &m->tool_calls);
        ngx_http_agent_store_history_str(text, row,
                                    NGX_HTTP_AGENT_STORE_HISTORY_TOOL_CALL_ID,
                                    &m->tool_call_id);
        ngx_http_agent_store_history_str(text, row,
                                         NGX_HTTP_AGENT_STORE_HISTORY_NAME,
                                         &m->name);
        ngx_http_agent_store_history_str(text, row,
                                         NGX_HTTP_AGENT_STORE_HISTORY_IMAGES,
                                         &m->images);
        ngx_http_agent_store_history_str(text, row,
                                        NGX_HTTP_AGENT_STORE_HISTORY_METADATA,
                                        &m->metadata);
        ngx_http_agent_store_history_str(text, row,
                                      NGX_HTTP_AGENT_STORE_HISTORY_CREATED_AT,
                                      &m->created_at);

        if (row->seq < keep) {
            if (m->images.data) {
                ngx_http_agent_store_history_str(text, row,
                                           NGX_HTTP_AGENT_STORE_HISTORY_SHOWN,
                                           &m->content);
            }

            ngx_str_null(&m->images);
        }

        if (m->content.data == NULL) {
            ngx_str_set(&m->content, "");
        }
    }

    /* a longer history is read whole each turn */
    if (h->rows_size + h->size > NGX_HTTP_AGENT_STORE_HISTORY_MAX) {
        ngx_http_agent_store_history_drop(h);
    }

    return NGX_OK;
}


/*
 * The kept text that len bytes at p were handed out from, or NULL: text
 * that stays as it is for as long as it is referenced (grow_ref()), so
 * that the same address is the same bytes (llm_prefix.c)
 */

u_char *
ngx_http_agent_store_history_text(u_char *p, size_t len)
{
    ngx_queue_t                     *q;
    ngx_http_agent_store_history_t  *h;

    if (ngx_http_agent_store_nhistories == 0) {
        return NULL;
    }

    for (q = ngx_queue_head(&ngx_http_agent_store_histories);
         q != ngx_queue_sentinel(&ngx_http_agent_store_histories);
         q = ngx_queue_next(q))
    {
        h = ngx_queue_data(q, ngx_http_agent_store_history_t, queue);

        if (h->text && p >= h->text && p + len <= h->text + h->used) {
            return h->text;
        }
    }

    return NULL;
}
