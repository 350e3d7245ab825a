
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#if (NGX_THREADS)
#include <ngx_thread_pool.h>
#endif

#include "ngx_http_agent_http.h"


/*
 * The request body in one piece of memory.  nginx has read it already,
 * within client_max_body_size; what did not fit in client_body_buffer_size
 * is in a temp file.  Reading that file back is disk I/O: it runs on
 * nginx's thread pool, and the caller goes on from the done callback.
 */


typedef struct {
    u_char                    *dst;
    ngx_fd_t                   fd;
    off_t                      offset;
    size_t                     size;
} ngx_http_agent_body_part_t;


typedef struct {
    ngx_http_request_t        *request;
    ngx_http_agent_body_pt     done;
    ngx_str_t                  body;
    ngx_array_t                parts;       /* ngx_http_agent_body_part_t */
    ngx_err_t                  err;
    ngx_uint_t                 short_read;
} ngx_http_agent_body_read_t;


static ngx_int_t ngx_http_agent_body_read(ngx_http_agent_body_read_t *rd);
#if (NGX_THREADS)
static void ngx_http_agent_body_thread(void *data, ngx_log_t *log);
static void ngx_http_agent_body_thread_done(ngx_event_t *ev);
#endif


ngx_int_t
ngx_http_agent_body_get(ngx_http_request_t *r, void *thread_pool,
    ngx_str_t *body, ngx_http_agent_body_pt done)
{
    off_t                        size;
    u_char                      *p;
    ngx_buf_t                   *b;
    ngx_chain_t                 *cl;
    ngx_http_agent_body_part_t  *part;
    ngx_http_agent_body_read_t  *rd;
#if (NGX_THREADS)
    ngx_thread_task_t           *task;
#endif

    ngx_str_set(body, "");

    if (r->request_body == NULL || r->request_body->bufs == NULL) {
        return NGX_OK;
    }

    size = 0;

    for (cl = r->request_body->bufs; cl; cl = cl->next) {
        b = cl->buf;
        size += b->in_file ? b->file_last - b->file_pos : b->last - b->pos;
    }

#if (NGX_THREADS)
    task = ngx_thread_task_alloc(r->pool, sizeof(ngx_http_agent_body_read_t));
    if (task == NULL) {
        return NGX_ERROR;
    }

    rd = task->ctx;
#else
    rd = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_body_read_t));
    if (rd == NULL) {
        return NGX_ERROR;
    }
#endif

    if (ngx_array_init(&rd->parts, r->pool, 1,
                       sizeof(ngx_http_agent_body_part_t))
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* NUL-terminated: the JSON parser and the CSV importer like it so */
    p = ngx_pnalloc(r->pool, size + 1);
    if (p == NULL) {
        return NGX_ERROR;
    }

    rd->request = r;
    rd->done = done;
    rd->body.data = p;
    rd->body.len = size;
    p[size] = '\0';

    /* memory parts are copied now, file parts only noted */

    for (cl = r->request_body->bufs; cl; cl = cl->next) {
        b = cl->buf;

        if (!b->in_file) {
            /* an empty one (a body's last, say) may have no memory */
            if (b->last != b->pos) {
                p = ngx_cpymem(p, b->pos, b->last - b->pos);
            }

            continue;
        }

        part = ngx_array_push(&rd->parts);
        if (part == NULL) {
            return NGX_ERROR;
        }

        part->dst = p;
        part->fd = b->file->fd;
        part->offset = b->file_pos;
        part->size = b->file_last - b->file_pos;
        p += part->size;
    }

    if (rd->parts.nelts == 0) {
        *body = rd->body;
        return NGX_OK;
    }

#if (NGX_THREADS)
    if (thread_pool) {
        task->handler = ngx_http_agent_body_thread;
        task->event.handler = ngx_http_agent_body_thread_done;
        task->event.data = rd;
        task->event.log = r->connection->log;

        if (ngx_thread_task_post(thread_pool, task) != NGX_OK) {
            return NGX_ERROR;
        }

        /* the request waits: nothing else finalizes it meanwhile */
        return NGX_AGAIN;
    }
#endif

    if (ngx_http_agent_body_read(rd) != NGX_OK) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, rd->err,
                      "agent: the request body's temp file could not be "
                      "read back");
        return NGX_ERROR;
    }

    *body = rd->body;

    return NGX_OK;
}


/* on a thread, or inline without one: no nginx calls, no pool use */

static ngx_int_t
ngx_http_agent_body_read(ngx_http_agent_body_read_t *rd)
{
    ssize_t                      n;
    ngx_uint_t                   i;
    ngx_http_agent_body_part_t  *part;

    part = rd->parts.elts;

    for (i = 0; i < rd->parts.nelts; i++) {

        while (part[i].size) {
            n = pread(part[i].fd, part[i].dst, part[i].size,
                      part[i].offset);

            if (n == -1) {
                if (ngx_errno == NGX_EINTR) {
                    continue;
                }

                rd->err = ngx_errno;
                return NGX_ERROR;
            }

            if (n == 0) {
                rd->short_read = 1;
                return NGX_ERROR;
            }

            part[i].dst += n;
            part[i].offset += n;
            part[i].size -= n;
        }
    }

    return NGX_OK;
}


#if (NGX_THREADS)

static void
ngx_http_agent_body_thread(void *data, ngx_log_t *log)
{
    ngx_http_agent_body_read_t *rd = data;

    (void) ngx_http_agent_body_read(rd);
}


static void
ngx_http_agent_body_thread_done(ngx_event_t *ev)
{
    ngx_http_agent_body_read_t *rd = ev->data;

    ngx_connection_t    *c;
    ngx_http_request_t  *r;

    r = rd->request;
    c = r->connection;

    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, c->log, 0,
                   "agent: request body read back on a thread: %uz bytes",
                   rd->body.len);

    if (rd->err || rd->short_read) {
        ngx_log_error(NGX_LOG_ERR, c->log, rd->err,
                      "agent: the request body's temp file could not be "
                      "read back");
        rd->done(r, &rd->body, NGX_HTTP_INTERNAL_SERVER_ERROR);

    } else {
        rd->done(r, &rd->body, NGX_OK);
    }

    ngx_http_run_posted_requests(c);
}

#endif
