
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
#include "ngx_http_agent_chat_int.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sql.h"


#define NGX_HTTP_AGENT_PAGE            100
#define NGX_HTTP_AGENT_PAGE_MAX        1000
#define NGX_HTTP_AGENT_PAGE_IMAGES     10
#define NGX_HTTP_AGENT_PAGE_IMAGES_MAX 20


typedef struct {
    ngx_http_agent_json_t     *json;
    ngx_str_t                 *id;
    int64_t                    first;
    ngx_uint_t                 all;
} ngx_http_agent_page_t;


static ngx_int_t ngx_http_agent_messages_row(void *data,
    ngx_http_agent_msg_t *m);
static ngx_uint_t ngx_http_agent_flag_arg(ngx_http_request_t *r,
    const char *name);


void
ngx_http_agent_sessions_json(ngx_http_agent_json_t *j,
    ngx_http_agent_session_t *s)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, &s->id);
    ngx_http_agent_json_key(j, "title");
    ngx_http_agent_json_str(j, &s->title);
    ngx_http_agent_json_key(j, "created_at");
    ngx_http_agent_json_str(j, &s->created_at);
    ngx_http_agent_json_key(j, "updated_at");
    ngx_http_agent_json_str(j, &s->updated_at);
    ngx_http_agent_json_key(j, "message_count");
    ngx_http_agent_json_int(j, s->message_count);
    ngx_http_agent_json_key(j, "usage");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "prompt_tokens");
    ngx_http_agent_json_int(j, s->prompt_tokens);
    ngx_http_agent_json_key(j, "completion_tokens");
    ngx_http_agent_json_int(j, s->completion_tokens);
    ngx_http_agent_json_key(j, "cached_tokens");
    ngx_http_agent_json_int(j, s->cached_tokens);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "metadata");

    ngx_http_agent_json_raw_obj(j, &s->metadata);

    ngx_http_agent_json_end(j);
}


ngx_int_t
ngx_http_agent_sessions_create(ngx_http_request_t *r, ngx_str_t *body)
{
    yajl_val                   v, meta;
    ngx_int_t                  rc;
    ngx_str_t                  title;
    ngx_http_agent_json_t     *j;
    ngx_http_agent_session_t   s;

    rc = ngx_http_agent_reply_parse(r, body, &v, 1);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_str_set(&title, "");

    rc = ngx_http_agent_json_get_str(v, "title", &title);
    if (rc == NGX_ERROR) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "\"title\" must be a string");
    }

    if (title.len > 1024) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST, "\"title\" "
                                          "is longer than 1024 bytes");
    }

    meta = ngx_http_agent_json_get(v, "metadata");

    rc = ngx_http_agent_reply_session_create(r, NULL, &title, meta, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_sessions_json(j, &s);

    return ngx_http_agent_reply_json(r, NGX_HTTP_CREATED, j);
}


ngx_int_t
ngx_http_agent_sessions_list(ngx_http_request_t *r)
{
    ngx_int_t                        rc, limit, offset;
    ngx_str_t                        arg;
    ngx_uint_t                       i;
    ngx_array_t                      sessions;
    ngx_http_agent_json_t           *j;
    ngx_http_agent_ctx_t            *ctx;
    ngx_http_agent_session_t        *s;
    ngx_http_agent_session_query_t   q;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    limit = 50;
    offset = 0;

    if (ngx_http_arg(r, (u_char *) "limit", 5, &arg) == NGX_OK) {
        limit = ngx_atoi(arg.data, arg.len);
        if (limit == NGX_ERROR || limit < 1 || limit > 1000) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                              "\"limit\" must be a number from "
                                              "1 to 1000");
        }
    }

    if (ngx_http_arg(r, (u_char *) "offset", 6, &arg) == NGX_OK) {
        offset = ngx_atoi(arg.data, arg.len);
        if (offset == NGX_ERROR) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                              "\"offset\" must be a number of "
                                              "0 or more");
        }
    }

    if (ngx_array_init(&sessions, r->pool, 16,
                       sizeof(ngx_http_agent_session_t))
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_memzero(&q, sizeof(ngx_http_agent_session_query_t));
    q.limit = limit;
    q.offset = offset;
    q.owner = ctx->owner;

    rc = ngx_http_agent_store_session_list(ngx_http_agent_reply_sc(r), &q,
                                           &sessions);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the sessions could not be listed");
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_key(j, "sessions");
    ngx_http_agent_json_arr(j);

    s = sessions.elts;

    for (i = 0; i < sessions.nelts; i++) {
        ngx_http_agent_sessions_json(j, &s[i]);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/*
 * GET /{id}/messages: a page, the newest "limit" messages before the
 * message id "before", oldest first; image data only with include_images.
 * The answer is printed into a chain of buffers as rows are read.
 */

ngx_int_t
ngx_http_agent_sessions_messages(ngx_http_request_t *r, ngx_str_t *id)
{
    off_t                      size;
    ngx_int_t                  rc, limit, before, max;
    ngx_str_t                  arg;
    ngx_uint_t                 images, more;
    ngx_chain_t               *out;
    ngx_http_agent_page_t      page;
    ngx_http_agent_session_t   s;

    rc = ngx_http_agent_reply_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    page.id = id;
    page.first = -1;
    page.all = ngx_http_agent_flag_arg(r, "include_tools");
    images = ngx_http_agent_flag_arg(r, "include_images");

    limit = images ? NGX_HTTP_AGENT_PAGE_IMAGES : NGX_HTTP_AGENT_PAGE;
    max = images ? NGX_HTTP_AGENT_PAGE_IMAGES_MAX : NGX_HTTP_AGENT_PAGE_MAX;

    if (ngx_http_arg(r, (u_char *) "limit", 5, &arg) == NGX_OK) {
        limit = ngx_atoi(arg.data, arg.len);

        if (limit <= 0 || limit > max) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                              "\"limit\" must be a number from "
                                              "1 to %i", max);
        }
    }

    before = -1;

    if (ngx_http_arg(r, (u_char *) "before", 6, &arg) == NGX_OK) {
        before = ngx_atoi(arg.data, arg.len);

        if (before == NGX_ERROR) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                              "\"before\" must be a message "
                                              "id");
        }
    }

    page.json = ngx_http_agent_json_chain(r->pool);
    if (page.json == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_obj(page.json);
    ngx_http_agent_json_key(page.json, "messages");
    ngx_http_agent_json_arr(page.json);

    rc = ngx_http_agent_store_messages_page(ngx_http_agent_reply_sc(r), id,
                                            before, limit, page.all, images,
                                            &more,
                                            ngx_http_agent_messages_row,
                                            &page);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the messages could not be read");
    }

    ngx_http_agent_json_arr_end(page.json);

    /* the next page: the messages before the first of this one */
    ngx_http_agent_json_key(page.json, "has_more");
    ngx_http_agent_json_bool(page.json, more && page.first >= 0);
    ngx_http_agent_json_key(page.json, "next_before");

    if (more && page.first >= 0) {
        ngx_http_agent_json_int(page.json, page.first);

    } else {
        ngx_http_agent_json_null(page.json);
    }

    ngx_http_agent_json_end(page.json);

    if (ngx_http_agent_json_chain_done(page.json, &out, &size) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_reply_send_chain(r, NGX_HTTP_OK, out, size);
}


static ngx_int_t
ngx_http_agent_messages_row(void *data, ngx_http_agent_msg_t *m)
{
    ngx_http_agent_page_t *page = data;

    if (page->first < 0) {
        page->first = m->seq;
    }

    ngx_http_agent_message_json(page->json, page->id, m, page->all);

    return page->json->failed ? NGX_ERROR : NGX_OK;
}


/* a flag argument: present, not empty, not "0" or "false" */

static ngx_uint_t
ngx_http_agent_flag_arg(ngx_http_request_t *r, const char *name)
{
    ngx_str_t  arg;

    return ngx_http_arg(r, (u_char *) name, ngx_strlen(name), &arg) == NGX_OK
           && arg.len && arg.data[0] != '0' && arg.data[0] != 'f';
}


/* a run's state from the session's latest checkpoint */

ngx_int_t
ngx_http_agent_sessions_state(ngx_http_request_t *r, ngx_str_t *id)
{
    ngx_int_t                     rc;
    ngx_http_agent_run_t         *run;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_session_t      s;
    ngx_http_agent_loc_conf_t    *alcf;
    ngx_http_agent_checkpoint_t   cp;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    rc = ngx_http_agent_reply_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    /* the channels of the location's graph (agent_use_graph) */

    ngx_memzero(&cp, sizeof(ngx_http_agent_checkpoint_t));

    rc = ngx_http_agent_checkpoint_open(ngx_http_agent_reply_sc(r), r->pool,
                                        alcf->graph, id, &cp, &run);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the state could not be read");
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_key(j, "checkpoint_id");

    if (cp.id.len) {
        ngx_http_agent_json_str(j, &cp.id);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_key(j, "step");
    ngx_http_agent_json_int(j, cp.step);
    ngx_http_agent_json_key(j, "next");
    ngx_http_agent_json_arr(j);

    if (cp.next.len) {
        ngx_http_agent_json_str(j, &cp.next);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "graph");
    ngx_http_agent_json_str(j, &alcf->graph->name);
    ngx_http_agent_json_key(j, "values");
    ngx_http_agent_state_json(j, run);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


ngx_int_t
ngx_http_agent_sessions_history(ngx_http_request_t *r, ngx_str_t *id)
{
    ngx_int_t                     rc;
    ngx_uint_t                    i;
    ngx_array_t                   list;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_session_t      s;
    ngx_http_agent_checkpoint_t  *cp;

    rc = ngx_http_agent_reply_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ngx_array_init(&list, r->pool, 16,
                       sizeof(ngx_http_agent_checkpoint_t))
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_agent_store_checkpoint_list(ngx_http_agent_reply_sc(r), id,
                                              NULL, &list);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the checkpoints could not be read");
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_key(j, "checkpoints");
    ngx_http_agent_json_arr(j);

    cp = list.elts;

    for (i = 0; i < list.nelts; i++) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "checkpoint_id");
        ngx_http_agent_json_str(j, &cp[i].id);
        ngx_http_agent_json_key(j, "parent_checkpoint_id");

        if (cp[i].parent_id.len) {
            ngx_http_agent_json_str(j, &cp[i].parent_id);

        } else {
            ngx_http_agent_json_null(j);
        }

        ngx_http_agent_json_key(j, "step");
        ngx_http_agent_json_int(j, cp[i].step);
        ngx_http_agent_json_key(j, "node");
        ngx_http_agent_json_str(j, &cp[i].node);
        ngx_http_agent_json_key(j, "next");

        if (cp[i].next.len) {
            ngx_http_agent_json_str(j, &cp[i].next);

        } else {
            ngx_http_agent_json_null(j);
        }

        ngx_http_agent_json_key(j, "created_at");
        ngx_http_agent_json_str(j, &cp[i].created_at);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/* GET /_graph: the location's graph, its channels, nodes and picture */

ngx_int_t
ngx_http_agent_sessions_graph_answer(ngx_http_request_t *r)
{
    ngx_str_t                   mermaid;
    ngx_uint_t                  i;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_node_t      *n;
    ngx_http_agent_graph_t     *graph;
    ngx_http_agent_channel_t   *ch;
    ngx_http_agent_loc_conf_t  *alcf;

    static const char  *reducers[] = {
        "messages", "append", "sum", "value", "merge"
    };

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    graph = alcf->graph;

    if (ngx_http_agent_mermaid(r->pool, graph, &mermaid) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, &graph->name);

    ngx_http_agent_json_key(j, "channels");
    ngx_http_agent_json_arr(j);

    ch = graph->channels.elts;

    for (i = 0; i < graph->channels.nelts; i++) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &ch[i].name);
        ngx_http_agent_json_key(j, "reducer");
        ngx_http_agent_json_cstr(j, reducers[ch[i].reducer]);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);

    ngx_http_agent_json_key(j, "nodes");
    ngx_http_agent_json_arr(j);

    n = graph->nodes.elts;

    for (i = 0; i < graph->nodes.nelts; i++) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &n[i].name);
        ngx_http_agent_json_key(j, "kind");
        ngx_http_agent_json_str(j, &n[i].kind->name);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);

    ngx_http_agent_json_key(j, "mermaid");
    ngx_http_agent_json_str(j, &mermaid);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}
