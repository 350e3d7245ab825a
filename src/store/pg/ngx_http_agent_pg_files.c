
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_sha1.h>
#if (NGX_THREADS)
#include <ngx_thread_pool.h>
#endif

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"


/*
 * A session's CSV files with PostgreSQL: an upload becomes an immutable
 * SQLite file on the host that took it, as with SQLite, and its bytes go
 * to the store once by their SHA-1 (two uploads of the same file share
 * them).  Another host that runs a turn of the session fetches the bytes
 * once into its own agent_resources_dir, under the resource's id, so that
 * the SQL tools still read worker-local SQLite files everywhere.  A file
 * is read and written whole: uploads are bounded by client_max_body_size.
 * Its reading and its SHA-1 are done on the thread pool with the import
 * (resource_prepare), where the location has one.
 */


static ngx_int_t ngx_http_agent_pg_file_read(ngx_pool_t *pool,
    ngx_log_t *log, ngx_str_t *path, ngx_str_t *data);
static ngx_int_t ngx_http_agent_pg_fetched(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);
static ngx_int_t ngx_http_agent_pg_file_write(ngx_log_t *log, u_char *path,
    u_char *data, size_t len);


static ngx_atomic_t  ngx_http_agent_pg_writes;

#if (NGX_THREADS)

/* a fetched file written on the thread pool */
typedef struct {
    ngx_http_agent_pg_query_t  *query;
    PGresult                   *res;
    ngx_int_t                   rc;
} ngx_http_agent_pg_write_t;

static void ngx_http_agent_pg_write_run(void *data, ngx_log_t *log);
static void ngx_http_agent_pg_write_done(ngx_event_t *ev);

#endif
static ngx_int_t ngx_http_agent_pg_resources_read(
    ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a);


ngx_int_t
ngx_http_agent_pg_resource_add(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_http_agent_resource_t *res)
{
    ngx_http_agent_resource_t    file;
    ngx_http_agent_pg_query_t   *q;
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, resource_add, session_id, &res->name);

    if (a) {
        return a->rc;
    }

    q = ngx_http_agent_pg_query(sc, NGX_HTTP_AGENT_PG_RESOURCE_INSERT,
                                ngx_http_agent_pg_changed);
    if (q == NULL) {
        return NGX_ERROR;
    }

    file = *res;

    if (file.bytes.data == NULL) {

        /* no thread pool did it */

        ngx_log_error(NGX_LOG_INFO, ngx_cycle->log, 0,
                      "agent: \"%V\" read and hashed on the event loop",
                      &res->path);

        if (ngx_http_agent_pg_resource_prepare(q->pool, ngx_cycle->log,
                                               &file)
            != NGX_OK)
        {
            ngx_destroy_pool(q->pool);
            return NGX_ERROR;
        }
    }

    if (ngx_http_agent_pg_param(q, &res->id) != NGX_OK
        || ngx_http_agent_pg_param(q, session_id) != NGX_OK
        || ngx_http_agent_pg_param(q, &res->name) != NGX_OK
        || ngx_http_agent_pg_param(q, &res->table) != NGX_OK
        || ngx_http_agent_pg_param(q, &res->columns) != NGX_OK
        || ngx_http_agent_pg_param_int(q, res->row_count) != NGX_OK
        || ngx_http_agent_pg_param_int(q, res->size_bytes) != NGX_OK
        || ngx_http_agent_pg_param(q, &res->path) != NGX_OK
        || ngx_http_agent_pg_param(q, &res->created_at) != NGX_OK
        || ngx_http_agent_pg_param(q, &file.blob) != NGX_OK
        || ngx_http_agent_pg_param_bytes(q, file.bytes.data, file.bytes.len)
           != NGX_OK)
    {
        ngx_destroy_pool(q->pool);
        return NGX_ERROR;
    }

    return ngx_http_agent_pg_send(q, 0);
}


/* the file's bytes and their SHA-1: on the thread pool, or just above */

ngx_int_t
ngx_http_agent_pg_resource_prepare(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_resource_t *res)
{
    u_char      digest[20], *hex;
    ngx_sha1_t  sha1;

    if (ngx_http_agent_pg_file_read(pool, log, &res->path, &res->bytes)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    hex = ngx_pnalloc(pool, 2 * sizeof(digest));
    if (hex == NULL) {
        return NGX_ERROR;
    }

    ngx_sha1_init(&sha1);
    ngx_sha1_update(&sha1, res->bytes.data, res->bytes.len);
    ngx_sha1_final(digest, &sha1);

    res->blob.data = hex;
    res->blob.len = ngx_hex_dump(hex, digest, sizeof(digest)) - hex;

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_pg_file_read(ngx_pool_t *pool, ngx_log_t *log,
    ngx_str_t *path, ngx_str_t *data)
{
    ssize_t          n;
    ngx_fd_t         fd;
    ngx_file_t       file;
    ngx_file_info_t  fi;

    fd = ngx_open_file(path->data, NGX_FILE_RDONLY, NGX_FILE_OPEN, 0);

    if (fd == NGX_INVALID_FILE) {
        ngx_log_error(NGX_LOG_ERR, log, ngx_errno,
                      "agent: cannot open \"%V\"", path);
        return NGX_ERROR;
    }

    ngx_memzero(&file, sizeof(ngx_file_t));
    file.fd = fd;
    file.name = *path;
    file.log = log;

    n = NGX_ERROR;

    if (ngx_fd_info(fd, &fi) != NGX_FILE_ERROR) {
        data->len = ngx_file_size(&fi);
        data->data = ngx_pnalloc(pool, data->len + 1);

        if (data->data) {
            n = ngx_read_file(&file, data->data, data->len, 0);
        }
    }

    (void) ngx_close_file(fd);

    if (n == NGX_ERROR || (size_t) n != data->len) {
        ngx_log_error(NGX_LOG_ERR, log, 0,
                      "agent: cannot read \"%V\"", path);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* the rows of the session's files; their paths this host's own */

static ngx_int_t
ngx_http_agent_pg_resources_read(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a)
{
    int                         i;
    ngx_pool_t                 *pool;
    ngx_array_t                *rows;
    ngx_http_agent_resource_t  *r;

    if (ngx_http_agent_pg_new_rows(q, a, sizeof(ngx_http_agent_resource_t),
                                   &rows)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    pool = q->sc->pool;

    /* all of them, past the answer budget: a delete removes their files */

    for (i = 0; i < PQntuples(res); i++) {
        r = ngx_array_push(rows);

        if (r == NULL
            || ngx_http_agent_pg_row(pool, res, i, 0,
                                     &ngx_http_agent_store_resource_cols, r)
               != NGX_OK
            || ngx_http_agent_pg_local_path(pool, r) != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* where this host keeps a file, whichever host took the upload */

ngx_int_t
ngx_http_agent_pg_local_path(ngx_pool_t *pool, ngx_http_agent_resource_t *r)
{
    u_char     *p;
    ngx_str_t  *dir;

    dir = &ngx_http_agent_pg_resources_dir;

    if (r->blob.len == 0 || dir->len == 0) {
        return NGX_OK;
    }

    p = ngx_pnalloc(pool, dir->len + 1 + r->id.len + sizeof(".sqlite"));
    if (p == NULL) {
        return NGX_ERROR;
    }

    r->path.data = p;
    p = ngx_sprintf(p, "%V/%V.sqlite", dir, &r->id);
    r->path.len = p - r->path.data;
    *p = '\0';

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_pg_resource_list(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_array_t *resources)
{
    ngx_http_agent_pg_answer_t  *a;

    a = ngx_http_agent_pg_answered(sc, resource_list, session_id, NULL);

    if (a) {
        return ngx_http_agent_pg_answered_rows(a, resources);
    }

    return ngx_http_agent_pg_ask(sc, NGX_HTTP_AGENT_PG_RESOURCE_LIST,
                                 ngx_http_agent_pg_resources_read, "s",
                                 session_id);
}


/* a file another host took: its bytes from the store, once */

ngx_int_t
ngx_http_agent_pg_resource_fetch(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_resource_t *res)
{
    ngx_file_info_t              fi;
    ngx_http_agent_pg_query_t   *q;
    ngx_http_agent_pg_answer_t  *a;

    if (res->blob.len == 0) {
        return NGX_OK;
    }

    a = ngx_http_agent_pg_answered(sc, resource_fetch, &res->id, NULL);

    if (a) {
        return a->rc;
    }

    if (ngx_file_info(res->path.data, &fi) != NGX_FILE_ERROR) {
        /* taken here, or fetched before: a call kept as answered */
        return ngx_http_agent_pg_keep(sc, NGX_OK);
    }

    q = ngx_http_agent_pg_query(sc, NGX_HTTP_AGENT_PG_BLOB_GET,
                                ngx_http_agent_pg_fetched);
    if (q == NULL || ngx_http_agent_pg_param(q, &res->blob) != NGX_OK) {
        return NGX_ERROR;
    }

    q->binary = 1;
    q->data = ngx_pnalloc(q->pool, res->path.len + 1);

    if (q->data == NULL) {
        return NGX_ERROR;
    }

    *ngx_cpymem(q->data, res->path.data, res->path.len) = '\0';

    return ngx_http_agent_pg_send(q, 0);
}


/*
 * The bytes from the store: written on the thread pool when the call has
 * one (the query and the result are kept until then), here otherwise.
 */

static ngx_int_t
ngx_http_agent_pg_fetched(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a)
{
#if (NGX_THREADS)
    ngx_thread_task_t          *task;
    ngx_http_agent_pg_write_t  *w;
#endif

    if (PQntuples(res) != 1) {
        ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0,
                      "agent: the store has no bytes for \"%s\"", q->data);
        return NGX_ERROR;
    }

#if (NGX_THREADS)

    if (q->sc && q->sc->thread_pool) {
        task = ngx_thread_task_alloc(q->pool,
                                     sizeof(ngx_http_agent_pg_write_t));
        if (task == NULL) {
            return NGX_ERROR;
        }

        w = task->ctx;
        w->query = q;
        w->res = res;
        w->rc = NGX_ERROR;

        task->handler = ngx_http_agent_pg_write_run;
        task->event.handler = ngx_http_agent_pg_write_done;
        task->event.data = w;
        task->event.log = ngx_cycle->log;

        if (ngx_thread_task_post(q->sc->thread_pool, task) == NGX_OK) {
            ngx_http_agent_pg_hold(q);
            return NGX_DONE;
        }
    }

#endif

    if (ngx_http_agent_pg_file_write(ngx_cycle->log, q->data,
                                     (u_char *) PQgetvalue(res, 0, 0),
                                     PQgetlength(res, 0, 0))
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    ngx_log_error(NGX_LOG_INFO, ngx_cycle->log, 0,
                  "agent: \"%s\" fetched from the store, written on the "
                  "event loop", q->data);

    return NGX_OK;
}


#if (NGX_THREADS)

static void
ngx_http_agent_pg_write_run(void *data, ngx_log_t *log)
{
    ngx_http_agent_pg_write_t *w = data;

    w->rc = ngx_http_agent_pg_file_write(log, w->query->data,
                                         (u_char *) PQgetvalue(w->res, 0, 0),
                                         PQgetlength(w->res, 0, 0));
}


static void
ngx_http_agent_pg_write_done(ngx_event_t *ev)
{
    ngx_http_agent_pg_write_t *w = ev->data;

    PQclear(w->res);

    if (w->rc == NGX_OK) {
        ngx_log_error(NGX_LOG_INFO, ev->log, 0,
                      "agent: \"%s\" fetched from the store, written on the "
                      "thread pool", w->query->data);
    }

    /* the query's pool holds the task: told last */
    ngx_http_agent_pg_answer_later(w->query, w->rc);
}

#endif


/* written under another name and renamed: a reader sees all or nothing */

static ngx_int_t
ngx_http_agent_pg_file_write(ngx_log_t *log, u_char *path, u_char *data,
    size_t len)
{
    u_char      tmp[NGX_MAX_PATH];
    ssize_t     n;
    ngx_fd_t    fd;
    ngx_file_t  file;

    if (ngx_strlen(path) + 48 >= NGX_MAX_PATH) {
        return NGX_ERROR;
    }

    /* a name of its own: two writes of one file may run at once */
    ngx_sprintf(tmp, "%s.%P.%uA.tmp%Z", path, ngx_pid,
                ngx_atomic_fetch_add(&ngx_http_agent_pg_writes, 1));

    fd = ngx_open_file(tmp, NGX_FILE_WRONLY, NGX_FILE_TRUNCATE, 0600);

    if (fd == NGX_INVALID_FILE) {
        ngx_log_error(NGX_LOG_ERR, log, ngx_errno,
                      "agent: cannot create \"%s\"", tmp);
        return NGX_ERROR;
    }

    ngx_memzero(&file, sizeof(ngx_file_t));
    file.fd = fd;
    file.name.data = tmp;
    file.name.len = ngx_strlen(tmp);
    file.log = log;

    n = ngx_write_file(&file, data, len, 0);

    (void) ngx_close_file(fd);

    if (n != (ssize_t) len || ngx_rename_file(tmp, path) == NGX_FILE_ERROR) {
        ngx_log_error(NGX_LOG_ERR, log, ngx_errno,
                      "agent: cannot write \"%s\"", path);
        (void) ngx_delete_file(tmp);
        return NGX_ERROR;
    }

    return NGX_OK;
}
