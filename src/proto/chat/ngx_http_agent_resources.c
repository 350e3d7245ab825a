
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#if (NGX_THREADS)
#include <ngx_thread_pool.h>
#endif

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_chat_int.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sql.h"


#if (NGX_THREADS)

typedef struct {
    ngx_http_request_t             *request;
    ngx_pool_t                     *pool;
    ngx_str_t                       session_id;
    ngx_str_t                       data;
    ngx_uint_t                      first;
    ngx_http_agent_resource_t       res;
    ngx_str_t                       err;
    ngx_int_t                       rc;
} ngx_http_agent_import_t;

#endif


/* a row the store writes later */
typedef struct {
    ngx_http_request_t             *request;
    ngx_str_t                       id;
    ngx_http_agent_resource_t       res;
    ngx_uint_t                      n;         /* the call's answer */
} ngx_http_agent_import_wait_t;


static ngx_int_t ngx_http_agent_resources_read(ngx_http_request_t *r,
    ngx_str_t *id, ngx_array_t *list);
static void ngx_http_agent_resource_json(ngx_http_agent_json_t *j,
    ngx_http_agent_resource_t *res);
static ngx_int_t ngx_http_agent_import_wait(ngx_http_request_t *r,
    ngx_str_t *id, ngx_http_agent_resource_t *res);
static ngx_int_t ngx_http_agent_import_dup(ngx_pool_t *pool, ngx_str_t *to,
    ngx_str_t *from);
static void ngx_http_agent_import_wake(ngx_http_agent_store_call_t *sc);
static ngx_int_t ngx_http_agent_import_finish(ngx_http_request_t *r,
    ngx_str_t *id, ngx_http_agent_resource_t *res, ngx_int_t rc,
    ngx_str_t *err);
static ngx_int_t ngx_http_agent_import_post(ngx_http_request_t *r,
    ngx_str_t *id, ngx_str_t *body, ngx_uint_t first,
    ngx_http_agent_resource_t *res);
static void ngx_http_agent_import_run(void *data, ngx_log_t *log);
static void ngx_http_agent_import_done(ngx_event_t *ev);


/* the session's files: NGX_OK, NGX_AGAIN, or the error answered */

static ngx_int_t
ngx_http_agent_resources_read(ngx_http_request_t *r, ngx_str_t *id,
    ngx_array_t *list)
{
    ngx_int_t  rc;

    if (ngx_array_init(list, r->pool, 4, sizeof(ngx_http_agent_resource_t))
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_agent_store_resource_list(ngx_http_agent_reply_sc(r), id,
                                            list);

    if (rc != NGX_OK && rc != NGX_AGAIN) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the session's files could not be "
                                          "listed");
    }

    return rc;
}


static void
ngx_http_agent_resource_json(ngx_http_agent_json_t *j,
    ngx_http_agent_resource_t *res)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, &res->id);
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, &res->name);
    ngx_http_agent_json_key(j, "table");
    ngx_http_agent_json_str(j, &res->table);
    ngx_http_agent_json_key(j, "columns");
    ngx_http_agent_json_raw(j, &res->columns);
    ngx_http_agent_json_key(j, "row_count");
    ngx_http_agent_json_int(j, res->row_count);
    ngx_http_agent_json_key(j, "size_bytes");
    ngx_http_agent_json_int(j, res->size_bytes);
    ngx_http_agent_json_key(j, "created_at");
    ngx_http_agent_json_str(j, &res->created_at);
    ngx_http_agent_json_end(j);
}


ngx_int_t
ngx_http_agent_resources_add(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body)
{
    u_char                      *p;
    ngx_int_t                    rc;
    ngx_str_t                    name, err, out, *t;
    ngx_uint_t                   i;
    ngx_array_t                  list, taken;
    ngx_http_agent_session_t     s;
    ngx_http_agent_resource_t    res, *prev;
    ngx_http_agent_main_conf_t  *amcf;
#if (NGX_THREADS)
    ngx_http_agent_loc_conf_t   *alcf;
#endif

    amcf = ngx_http_get_module_main_conf(r, ngx_http_agent_module);

    if (amcf->resources_dir.len == 0) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_SERVICE_UNAVAILABLE,
                                          "uploads are off: set "
                                          "agent_resources_dir in nginx.conf");
    }

    if (ngx_http_arg(r, (u_char *) "name", 4, &name) != NGX_OK
        || name.len == 0)
    {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "name the file: ?name=FILE.csv");
    }

    p = ngx_pnalloc(r->pool, name.len);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    out.data = p;
    ngx_unescape_uri(&p, &name.data, name.len, NGX_UNESCAPE_URI);
    name.data = out.data;
    name.len = p - out.data;

    if (name.len == 0 || name.len > 255) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "the file name must have 1 to 255 "
                                          "bytes");
    }

    rc = ngx_http_agent_reply_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    if (body->len == 0) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "the request body must be the CSV "
                                          "file");
    }

    if (ngx_array_init(&taken, r->pool, 4, sizeof(ngx_str_t)) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_agent_resources_read(r, id, &list);
    if (rc != NGX_OK) {
        return rc;
    }

    prev = list.elts;

    for (i = 0; i < list.nelts; i++) {
        t = ngx_array_push(&taken);
        if (t == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        *t = prev[i].table;
    }

    ngx_memzero(&res, sizeof(ngx_http_agent_resource_t));
    res.name = name;

    if (ngx_http_agent_csv_table_name(r->pool, &name, &taken, &res.table)
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    p = ngx_pnalloc(r->pool, 36 + 24 + amcf->resources_dir.len + 48);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_id_uuid(p);
    res.id.data = p;
    res.id.len = 36;
    p += 36;

    res.created_at.data = p;
    p = ngx_http_agent_store_now(p);
    res.created_at.len = p - res.created_at.data;

    res.path.data = p;
    p = ngx_sprintf(p, "%V/%V.sqlite", &amcf->resources_dir, &res.id);
    res.path.len = p - res.path.data;
    *p = '\0';

#if (NGX_THREADS)
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    /* a large file takes a while to import: not on the event loop */
    if (alcf->thread_pool
        && ngx_http_agent_import_post(r, id, body, list.nelts == 0, &res)
           == NGX_OK)
    {
        return NGX_DONE;
    }
#endif

    ngx_str_null(&err);

    rc = ngx_http_agent_csv_import(r->pool, r->connection->log, body->data,
                                   body->len, list.nelts == 0, &res, &err);

    return ngx_http_agent_import_finish(r, id, &res, rc, &err);
}


static ngx_int_t
ngx_http_agent_import_finish(ngx_http_request_t *r, ngx_str_t *id,
    ngx_http_agent_resource_t *res, ngx_int_t rc, ngx_str_t *err)
{
    ngx_http_agent_json_t  *j;

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST, "%V", err);
    }

    if (rc == NGX_OK) {
        rc = ngx_http_agent_store_resource_add(ngx_http_agent_reply_sc(r), id,
                                               res);

        if (rc == NGX_AGAIN) {
            return ngx_http_agent_import_wait(r, id, res);
        }
    }

    if (rc != NGX_OK) {

        /* a session deleted meanwhile keeps nothing of the upload */
        (void) ngx_delete_file(res->path.data);

        if (rc == NGX_DECLINED) {
            return ngx_http_agent_reply_no_session(r, id);
        }

        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the CSV file could not be stored");
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_resource_json(j, res);

    return ngx_http_agent_reply_json(r, NGX_HTTP_CREATED, j);
}


#if (NGX_THREADS)

/* the row is written when the store answers: the finish runs again then */

static ngx_int_t
ngx_http_agent_import_wait(ngx_http_request_t *r, ngx_str_t *id,
    ngx_http_agent_resource_t *res)
{
    ngx_http_agent_ctx_t          *ctx;
    ngx_http_agent_import_wait_t  *w;

    w = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_import_wait_t));
    if (w == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    w->request = r;

    /* the thread's import has its own pool, gone before the answer */

    if (ngx_http_agent_import_dup(r->pool, &w->id, id) != NGX_OK
        || ngx_http_agent_import_dup(r->pool, &w->res.id, &res->id) != NGX_OK
        || ngx_http_agent_import_dup(r->pool, &w->res.name, &res->name)
           != NGX_OK
        || ngx_http_agent_import_dup(r->pool, &w->res.table, &res->table)
           != NGX_OK
        || ngx_http_agent_import_dup(r->pool, &w->res.columns, &res->columns)
           != NGX_OK
        || ngx_http_agent_import_dup(r->pool, &w->res.path, &res->path)
           != NGX_OK
        || ngx_http_agent_import_dup(r->pool, &w->res.created_at,
                                     &res->created_at)
           != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    w->res.row_count = res->row_count;
    w->res.size_bytes = res->size_bytes;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    ctx->store.wake = ngx_http_agent_import_wake;
    ctx->store.data = w;

    /* the row's call: the one made last, made again from there */
    w->n = ctx->store.n - 1;

    if (ngx_http_agent_reply_wait(r) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return NGX_DONE;
}


static ngx_int_t
ngx_http_agent_import_dup(ngx_pool_t *pool, ngx_str_t *to, ngx_str_t *from)
{
    to->len = from->len;
    to->data = ngx_pnalloc(pool, from->len + 1);

    if (to->data == NULL) {
        return NGX_ERROR;
    }

    *ngx_cpymem(to->data, from->data, from->len) = '\0';

    return NGX_OK;
}


static void
ngx_http_agent_import_wake(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_import_wait_t *w = sc->data;

    ngx_int_t              rc;
    ngx_http_request_t    *r;

    r = w->request;

    sc->n = w->n;

    rc = ngx_http_agent_import_finish(r, &w->id, &w->res, NGX_OK, NULL);

    if (rc != NGX_DONE) {
        ngx_http_agent_reply_finish(r, rc);
    }
}


/*
 * The import on nginx's thread pool: the thread reads the body and the
 * names (the request keeps them: nothing finalizes it meanwhile) and
 * allocates only from the job's own pool.
 */

static ngx_int_t
ngx_http_agent_import_post(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body, ngx_uint_t first, ngx_http_agent_resource_t *res)
{
    ngx_pool_t                 *pool;
    ngx_thread_task_t          *task;
    ngx_http_agent_import_t    *imp;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    pool = ngx_create_pool(4096, ngx_cycle->log);
    if (pool == NULL) {
        return NGX_ERROR;
    }

    task = ngx_thread_task_alloc(pool, sizeof(ngx_http_agent_import_t));
    if (task == NULL) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    imp = task->ctx;
    imp->request = r;
    imp->pool = pool;
    imp->session_id = *id;
    imp->data = *body;
    imp->first = first;
    imp->res = *res;
    ngx_str_null(&imp->err);

    task->handler = ngx_http_agent_import_run;
    task->event.handler = ngx_http_agent_import_done;
    task->event.data = imp;
    task->event.log = r->connection->log;

    if (ngx_thread_task_post(alcf->thread_pool, task) != NGX_OK) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    return NGX_OK;
}


static void
ngx_http_agent_import_run(void *data, ngx_log_t *log)
{
    ngx_http_agent_import_t *imp = data;

    imp->rc = ngx_http_agent_csv_import(imp->pool, log, imp->data.data,
                                        imp->data.len, imp->first,
                                        &imp->res, &imp->err);

    /* what the store keeps of the file (its bytes, their SHA-1): here too */

    if (imp->rc == NGX_OK && ngx_http_agent_store->resource_prepare
        && ngx_http_agent_store->resource_prepare(imp->pool, log, &imp->res)
           != NGX_OK)
    {
        imp->rc = NGX_ERROR;
    }
}


static void
ngx_http_agent_import_done(ngx_event_t *ev)
{
    ngx_http_agent_import_t *imp = ev->data;

    ngx_int_t              rc;
    ngx_pool_t            *pool;
    ngx_http_request_t    *r;
    ngx_http_agent_ctx_t  *ctx;

    r = imp->request;
    pool = imp->pool;

    /* the request's pass is over: the row's call starts afresh */
    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    ngx_http_agent_store_call_reset(&ctx->store);

    rc = ngx_http_agent_import_finish(r, &imp->session_id, &imp->res,
                                      imp->rc, &imp->err);

    /* the request may be gone after this: only the pool is used */
    if (rc != NGX_DONE) {
        ngx_http_agent_reply_finish(r, rc);
    }

    ngx_destroy_pool(pool);
}

#endif


ngx_int_t
ngx_http_agent_resources_list(ngx_http_request_t *r, ngx_str_t *id)
{
    ngx_int_t                   rc;
    ngx_uint_t                  i;
    ngx_array_t                 list;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_session_t    s;
    ngx_http_agent_resource_t  *res;

    rc = ngx_http_agent_reply_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_resources_read(r, id, &list);
    if (rc != NGX_OK) {
        return rc;
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_key(j, "resources");
    ngx_http_agent_json_arr(j);

    res = list.elts;

    for (i = 0; i < list.nelts; i++) {
        ngx_http_agent_resource_json(j, &res[i]);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}

