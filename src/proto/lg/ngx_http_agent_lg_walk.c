
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store.h"


/*
 * The answers of the LangGraph API that hold a whole state per entry:
 * a thread's history (a state per checkpoint) and a search of threads
 * (each with its values).  A thread of long turns makes each entry
 * megabytes, so the entries are read one at a time, each into a pool of
 * its own that goes once its JSON is in the answer: the worker holds the
 * answer, never the states of all its entries.  The answer stops before
 * the entry that would take it past NGX_HTTP_AGENT_STORE_ANSWER_MAX, with
 * at least one entry: clients page on (history with "before", search with
 * "offset").
 *
 * An entry's store calls answer in the slots that follow the walk's
 * setup (n0): once an entry is in the answer its slots are given back, and
 * a pass woken by a store's answer resumes the walk at the entry it waits
 * for, not from the start.
 */


typedef struct ngx_http_agent_lg_walk_s  ngx_http_agent_lg_walk_t;

typedef ngx_int_t (*ngx_http_agent_lg_entry_pt)(ngx_http_request_t *r,
    ngx_http_agent_lg_walk_t *w, ngx_http_agent_json_t *j);

struct ngx_http_agent_lg_walk_s {
    ngx_array_t                   list;     /* checkpoints or sessions */
    ngx_http_agent_lg_entry_pt    entry;
    ngx_http_agent_graph_t       *graph;
    ngx_str_t                     thread_id;
    ngx_http_agent_json_t        *out;      /* the answer, chained */
    ngx_pool_t                   *pool;     /* the entry being read */
    ngx_uint_t                    next;
    ngx_uint_t                    sent;
    ngx_uint_t                    limit;
    ngx_uint_t                    n0;
    size_t                        size;
};


static ngx_int_t ngx_http_agent_lg_history_filter(ngx_http_request_t *r,
    ngx_array_t *list, yajl_val want);
static ngx_int_t ngx_http_agent_lg_threads_filter(ngx_http_request_t *r,
    yajl_val v, ngx_str_t *meta, ngx_str_t **filter);
static ngx_http_agent_lg_walk_t *ngx_http_agent_lg_walk_create(
    ngx_http_request_t *r, ngx_array_t *list, ngx_uint_t limit,
    ngx_http_agent_lg_entry_pt entry);
static ngx_int_t ngx_http_agent_lg_walk(ngx_http_request_t *r,
    ngx_http_agent_lg_walk_t *w);
static void ngx_http_agent_lg_walk_cleanup(void *data);
static ngx_int_t ngx_http_agent_lg_walk_send(ngx_http_request_t *r,
    ngx_http_agent_lg_walk_t *w);
static ngx_int_t ngx_http_agent_lg_history_entry(ngx_http_request_t *r,
    ngx_http_agent_lg_walk_t *w, ngx_http_agent_json_t *j);
static ngx_int_t ngx_http_agent_lg_threads_entry(ngx_http_request_t *r,
    ngx_http_agent_lg_walk_t *w, ngx_http_agent_json_t *j);


/*
 * POST or GET /threads/{id}/history: newest first, limit, before, and
 * metadata: the checkpoints whose run's metadata holds it; with a
 * checkpoint's "checkpoint_ns", those of that subgraph's namespace
 */

ngx_int_t
ngx_http_agent_lg_history(ngx_http_request_t *r, ngx_http_agent_lg_req_t *req,
    ngx_str_t *body)
{
    yajl_val                      v, n, b;
    ngx_int_t                     rc, limit;
    ngx_str_t                     before, arg, ns;
    ngx_uint_t                    i;
    ngx_array_t                   list;
    ngx_http_agent_graph_t       *graph;
    ngx_http_agent_session_t      s;
    ngx_http_agent_lg_walk_t     *w;
    ngx_http_agent_checkpoint_t  *c;

    if (req->walk) {
        return ngx_http_agent_lg_walk_send(r, req->walk);
    }

    rc = ngx_http_agent_reply_session_get(r, &req->thread_id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_reply_parse(r, body, &v, 1);
    if (rc != NGX_OK) {
        return rc;
    }

    graph = ngx_http_agent_lg_thread_graph(r, &req->thread_id);
    if (graph == NULL) {
        return NGX_AGAIN;
    }

    limit = 10;
    ngx_str_null(&before);

    n = v ? ngx_http_agent_json_get(v, "limit") : NULL;

    if (n && YAJL_IS_INTEGER(n)) {
        limit = YAJL_GET_INTEGER(n);

    } else if (ngx_http_arg(r, (u_char *) "limit", 5, &arg) == NGX_OK) {
        limit = ngx_atoi(arg.data, arg.len);
    }

    if (limit < 1) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "\"limit\" must be at least 1");
    }

    /* more is a page of 1000 (LangGraph's clients ask for 10000) */
    limit = ngx_min(limit, 1000);

    /* before: a checkpoint id, or a config {"configurable": {...}} */

    b = v ? ngx_http_agent_json_get(v, "before") : NULL;

    if (b && YAJL_IS_OBJECT(b)) {
        b = ngx_http_agent_json_get(b, "configurable");
        b = b ? ngx_http_agent_json_get(b, "checkpoint_id") : NULL;
    }

    if (b && YAJL_IS_STRING(b)) {
        before.data = (u_char *) YAJL_GET_STRING(b);
        before.len = ngx_strlen(before.data);
    }

    /* a subgraph's namespace: its checkpoints */

    ngx_str_null(&ns);
    b = v ? ngx_http_agent_json_get(v, "checkpoint") : NULL;

    if (b && YAJL_IS_OBJECT(b)
        && ngx_http_agent_json_get_str(b, "checkpoint_ns", &ns) != NGX_OK)
    {
        ngx_str_null(&ns);
    }

    rc = ngx_http_agent_lg_history_list(r, &req->thread_id, &ns, &list, 16);
    if (rc != NGX_OK) {
        return rc;
    }

    /* the entries after "before"; none if the thread has no such one */

    c = list.elts;

    for (i = 0; before.len && i < list.nelts; i++) {
        if (c[i].id.len == before.len
            && ngx_strncmp(c[i].id.data, before.data, before.len) == 0)
        {
            break;
        }
    }

    if (before.len) {
        i = ngx_min(i + 1, list.nelts);
        list.elts = c + i;
        list.nelts -= i;
        list.nalloc = list.nelts;
    }

    /* then those whose run's metadata holds "metadata" */

    b = v ? ngx_http_agent_json_get(v, "metadata") : NULL;

    if (b && !YAJL_IS_NULL(b)) {
        if (!YAJL_IS_OBJECT(b)) {
            return ngx_http_agent_reply_error(r, 422, "\"metadata\" must be "
                                              "an object");
        }

        if (ngx_http_agent_lg_history_filter(r, &list, b) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    w = ngx_http_agent_lg_walk_create(r, &list, limit,
                                      ngx_http_agent_lg_history_entry);
    if (w == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    w->graph = graph;
    w->thread_id = req->thread_id;

    req->walk = w;

    return ngx_http_agent_lg_walk_send(r, w);
}


/*
 * The checkpoints whose metadata holds want (as jsonb's @>): the keys a
 * history entry's metadata shows (source, step, run_id, the run's own
 * metadata; thread_id is the thread's), in their order, each read in a
 * pool of its own
 */

static ngx_int_t
ngx_http_agent_lg_history_filter(ngx_http_request_t *r, ngx_array_t *list,
    yajl_val want)
{
    size_t                        k;
    yajl_val                      v, run, meta, have;
    const char                   *key;
    ngx_str_t                     text, id;
    ngx_uint_t                    i, n, keep;
    ngx_pool_t                   *pool;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_checkpoint_t  *c;

    c = list->elts;
    n = 0;

    for (i = 0; i < list->nelts; i++) {
        pool = ngx_create_pool(NGX_DEFAULT_POOL_SIZE, r->connection->log);
        if (pool == NULL) {
            return NGX_ERROR;
        }

        /* the metadata a history entry shows (lg_state.c) */

        v = ngx_strlcasestrn(c[i].channels.data,
                             c[i].channels.data + c[i].channels.len,
                             (u_char *) "__run__", 7 - 1)
            ? ngx_http_agent_json_parse(pool, c[i].channels.data,
                                        c[i].channels.len, NULL)
            : NULL;
        run = v ? ngx_http_agent_json_get(v, "__run__") : NULL;
        meta = run ? ngx_http_agent_json_get(run, "metadata") : NULL;

        j = ngx_http_agent_json_create(pool);
        if (j == NULL) {
            ngx_destroy_pool(pool);
            return NGX_ERROR;
        }

        ngx_http_agent_json_obj(j);

        for (k = 0; meta && YAJL_IS_OBJECT(meta) && k < meta->u.object.len;
             k++)
        {
            key = meta->u.object.keys[k];

            if (ngx_strcmp(key, "source") == 0 || ngx_strcmp(key, "step") == 0
                || ngx_strcmp(key, "run_id") == 0)
            {
                continue;
            }

            ngx_http_agent_json_cstr(j, key);
            ngx_http_agent_json_val(j, meta->u.object.values[k]);
        }

        ngx_http_agent_json_key(j, "source");
        ngx_http_agent_json_cstr(j, (c[i].next.len == 9
                                     && ngx_strncmp(c[i].next.data,
                                                    "__start__", 9) == 0)
                                    ? "input" : "loop");
        ngx_http_agent_json_key(j, "step");
        ngx_http_agent_json_int(j, c[i].step);

        if (run && ngx_http_agent_json_get_str(run, "run_id", &id) == NGX_OK) {
            ngx_http_agent_json_key(j, "run_id");
            ngx_http_agent_json_str(j, &id);
        }

        ngx_http_agent_json_end(j);

        have = (ngx_http_agent_json_done(j, &text) == NGX_OK)
               ? ngx_http_agent_json_parse(pool, text.data, text.len, NULL)
               : NULL;

        keep = (have && ngx_http_agent_json_contains(have, want));

        ngx_destroy_pool(pool);

        if (keep) {
            c[n++] = c[i];
        }
    }

    list->nelts = n;

    return NGX_OK;
}


/* POST /threads/search: the owner's threads, newest first or oldest */

ngx_int_t
ngx_http_agent_lg_threads(ngx_http_request_t *r, ngx_http_agent_lg_req_t *req,
    ngx_str_t *body)
{
    yajl_val                         v, n;
    ngx_int_t                        rc, limit, offset;
    ngx_str_t                        meta, order, *filter;
    ngx_array_t                      sessions;
    ngx_http_agent_ctx_t            *ctx;
    ngx_http_agent_lg_walk_t        *w;
    ngx_http_agent_session_query_t   q;

    if (req->walk) {
        return ngx_http_agent_lg_walk_send(r, req->walk);
    }

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    rc = ngx_http_agent_reply_parse(r, body, &v, 1);
    if (rc != NGX_OK) {
        return rc;
    }

    limit = 10;
    offset = 0;

    n = v ? ngx_http_agent_json_get(v, "limit") : NULL;

    if (n && YAJL_IS_INTEGER(n)) {
        limit = ngx_max(1, ngx_min(YAJL_GET_INTEGER(n), 1000));
    }

    n = v ? ngx_http_agent_json_get(v, "offset") : NULL;

    if (n && YAJL_IS_INTEGER(n) && YAJL_GET_INTEGER(n) >= 0) {
        offset = YAJL_GET_INTEGER(n);
    }

    rc = ngx_http_agent_lg_threads_filter(r, v, &meta, &filter);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ngx_array_init(&sessions, r->pool, 8,
                       sizeof(ngx_http_agent_session_t))
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_memzero(&q, sizeof(ngx_http_agent_session_query_t));
    q.limit = limit;
    q.offset = offset;
    q.owner = ctx->owner;
    q.metadata = filter;

    /* sort_by: created_at (updated_at and the ids are read the same) */
    q.asc = (ngx_http_agent_json_get_str(v, "sort_order", &order) == NGX_OK
             && order.len == 3 && ngx_strncmp(order.data, "asc", 3) == 0);

    rc = ngx_http_agent_store_session_list(ngx_http_agent_reply_sc(r), &q,
                                           &sessions);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the threads could not be read");
    }

    w = ngx_http_agent_lg_walk_create(r, &sessions, limit,
                                      ngx_http_agent_lg_threads_entry);
    if (w == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    req->walk = w;

    return ngx_http_agent_lg_walk_send(r, w);
}


/* POST /threads/count {"metadata"}: how many threads the owner has */

ngx_int_t
ngx_http_agent_lg_threads_count(ngx_http_request_t *r, ngx_str_t *body)
{
    int64_t                          count;
    yajl_val                         v;
    ngx_int_t                        rc;
    ngx_str_t                        meta, out;
    ngx_http_agent_ctx_t            *ctx;
    ngx_http_agent_session_query_t   q;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    rc = ngx_http_agent_reply_parse(r, body, &v, 1);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_memzero(&q, sizeof(ngx_http_agent_session_query_t));
    q.owner = ctx->owner;

    rc = ngx_http_agent_lg_threads_filter(r, v, &meta, &q.metadata);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_store_session_count(ngx_http_agent_reply_sc(r), &q,
                                            &count);
    if (rc != NGX_OK) {
        return rc == NGX_AGAIN ? NGX_AGAIN : NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    out.data = ngx_pnalloc(r->pool, NGX_INT64_LEN);
    if (out.data == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    out.len = ngx_sprintf(out.data, "%L", count) - out.data;

    return ngx_http_agent_reply_send(r, NGX_HTTP_OK, &out);
}


/* the threads whose metadata holds these keys and values: our JSON */

static ngx_int_t
ngx_http_agent_lg_threads_filter(ngx_http_request_t *r, yajl_val v,
    ngx_str_t *meta, ngx_str_t **filter)
{
    yajl_val  n;

    n = ngx_http_agent_json_get(v, "metadata");
    *filter = NULL;

    if (n && YAJL_IS_OBJECT(n) && n->u.object.len) {
        if (ngx_http_agent_json_encode(r->pool, n, meta) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        *filter = meta;

    } else if (n && !YAJL_IS_NULL(n) && !YAJL_IS_OBJECT(n)) {
        return ngx_http_agent_reply_error(r, 422, "\"metadata\" must be an "
                                          "object");
    }

    return NGX_OK;
}


static ngx_http_agent_lg_walk_t *
ngx_http_agent_lg_walk_create(ngx_http_request_t *r, ngx_array_t *list,
    ngx_uint_t limit, ngx_http_agent_lg_entry_pt entry)
{
    ngx_pool_cleanup_t        *cln;
    ngx_http_agent_lg_walk_t  *w;

    w = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_lg_walk_t));
    if (w == NULL) {
        return NULL;
    }

    cln = ngx_pool_cleanup_add(r->pool, 0);
    if (cln == NULL) {
        return NULL;
    }

    cln->handler = ngx_http_agent_lg_walk_cleanup;
    cln->data = w;

    w->out = ngx_http_agent_json_chain(r->pool);
    if (w->out == NULL) {
        return NULL;
    }

    w->list = *list;
    w->entry = entry;
    w->limit = limit;
    w->n0 = ngx_http_agent_reply_sc(r)->n;

    ngx_http_agent_json_arr(w->out);

    return w;
}


/* the entries into the answer, one at a time, each read into its pool */

static ngx_int_t
ngx_http_agent_lg_walk(ngx_http_request_t *r, ngx_http_agent_lg_walk_t *w)
{
    ngx_int_t                     rc;
    ngx_str_t                     text;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_store_call_t  *sc;

    sc = ngx_http_agent_reply_sc(r);

    while (w->next < w->list.nelts && w->sent < w->limit) {

        if (w->pool == NULL) {
            w->pool = ngx_create_pool(NGX_DEFAULT_POOL_SIZE,
                                      r->connection->log);
            if (w->pool == NULL) {
                return NGX_HTTP_INTERNAL_SERVER_ERROR;
            }
        }

        sc->n = w->n0;
        sc->pool = w->pool;

        j = ngx_http_agent_json_create(w->pool);

        rc = j ? w->entry(r, w, j) : NGX_HTTP_INTERNAL_SERVER_ERROR;

        if (rc == NGX_AGAIN && sc->waiting) {
            /* the store's answer is read into the entry's pool */
            return NGX_AGAIN;
        }

        sc->pool = r->pool;

        if (rc == NGX_OK && ngx_http_agent_json_done(j, &text) != NGX_OK) {
            rc = NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        if (rc != NGX_OK) {
            return rc;
        }

        if (w->sent
            && w->size + text.len > NGX_HTTP_AGENT_STORE_ANSWER_MAX)
        {
            ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                           "agent: langgraph answer full at %ui entries, "
                           "%uz bytes", w->sent, w->size);
            break;
        }

        ngx_http_agent_json_raw(w->out, &text);

        w->size += text.len;
        w->sent++;
        w->next++;

        ngx_destroy_pool(w->pool);
        w->pool = NULL;

        if (sc->answers && sc->answers->nelts > w->n0) {
            sc->answers->nelts = w->n0;
        }
    }

    if (w->pool) {
        ngx_destroy_pool(w->pool);
        w->pool = NULL;
    }

    sc->n = w->n0;

    return w->out->failed ? NGX_HTTP_INTERNAL_SERVER_ERROR : NGX_OK;
}


static void
ngx_http_agent_lg_walk_cleanup(void *data)
{
    ngx_http_agent_lg_walk_t *w = data;

    if (w->pool) {
        ngx_destroy_pool(w->pool);
        w->pool = NULL;
    }
}


static ngx_int_t
ngx_http_agent_lg_walk_send(ngx_http_request_t *r,
    ngx_http_agent_lg_walk_t *w)
{
    off_t         size;
    ngx_int_t     rc;
    ngx_chain_t  *out;

    rc = ngx_http_agent_lg_walk(r, w);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_http_agent_json_arr_end(w->out);

    if (ngx_http_agent_json_chain_done(w->out, &out, &size) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_reply_send_chain(r, NGX_HTTP_OK, out, size);
}


static ngx_int_t
ngx_http_agent_lg_history_entry(ngx_http_request_t *r,
    ngx_http_agent_lg_walk_t *w, ngx_http_agent_json_t *j)
{
    ngx_int_t                     rc;
    ngx_http_agent_run_t         *run;
    ngx_http_agent_checkpoint_t  *c;

    c = (ngx_http_agent_checkpoint_t *) w->list.elts + w->next;

    if (c->ns.len) {
        return ngx_http_agent_lg_ns_state(r, w->pool, w->graph,
                                          &w->thread_id, j, c);
    }

    rc = ngx_http_agent_checkpoint_open(ngx_http_agent_reply_sc(r), w->pool,
                                        w->graph, &w->thread_id, c, &run);
    if (rc != NGX_OK) {
        return ngx_http_agent_lg_history_read(r, rc);
    }

    ngx_http_agent_lg_state_json(j, run, c, &w->thread_id, 0);

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_lg_threads_entry(ngx_http_request_t *r,
    ngx_http_agent_lg_walk_t *w, ngx_http_agent_json_t *j)
{
    ngx_http_agent_session_t  *s;

    s = (ngx_http_agent_session_t *) w->list.elts + w->next;

    return ngx_http_agent_lg_thread_json(r, j, s);
}
