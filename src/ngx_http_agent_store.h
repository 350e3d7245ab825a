
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_STORE_H_INCLUDED_
#define _NGX_HTTP_AGENT_STORE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_graph.h"


typedef struct {
    ngx_str_t                  id;
    ngx_str_t                  title;
    ngx_str_t                  metadata;
    ngx_str_t                  created_at;
    ngx_str_t                  updated_at;
    ngx_str_t                  model;
    ngx_str_t                  database;
    ngx_str_t                  owner;
    int64_t                    message_count;
    int64_t                    prompt_tokens;
    int64_t                    completion_tokens;
    int64_t                    cached_tokens;
    int64_t                    history_bytes;
} ngx_http_agent_session_t;


typedef struct {
    ngx_str_t                  id;
    ngx_str_t                  parent_id;
    ngx_str_t                  node;
    ngx_str_t                  next;
    ngx_str_t                  channels;
    ngx_str_t                  created_at;
    int64_t                    step;
    int64_t                    msg_count;

    /* the run that holds the session, and the lease a write renews */
    ngx_str_t                  run_id;
    ngx_msec_t                 lease;

    /* tokens spent since the last checkpoint: the session's totals */
    int64_t                    prompt_tokens;
    int64_t                    completion_tokens;
    int64_t                    cached_tokens;
} ngx_http_agent_checkpoint_t;


typedef struct {
    ngx_str_t                  id;
    ngx_str_t                  name;
    ngx_str_t                  table;
    ngx_str_t                  columns;      /* JSON array */
    ngx_str_t                  path;
    ngx_str_t                  created_at;
    int64_t                    row_count;
    int64_t                    size_bytes;
} ngx_http_agent_resource_t;


/* a row of a page of messages, its strings valid until the next one */
typedef ngx_int_t (*ngx_http_agent_store_message_pt)(void *data,
    ngx_http_agent_msg_t *m);


ngx_int_t ngx_http_agent_store_init(ngx_cycle_t *cycle, ngx_str_t *path,
    ngx_str_t *resources_dir, ngx_uid_t user, ngx_gid_t group);
ngx_int_t ngx_http_agent_store_open(ngx_cycle_t *cycle, ngx_str_t *path);
void ngx_http_agent_store_close(ngx_cycle_t *cycle);
ngx_int_t ngx_http_agent_store_begin(void);
ngx_int_t ngx_http_agent_store_commit(void);
void ngx_http_agent_store_rollback(void);

void ngx_http_agent_store_new_id(u_char *buf);
u_char *ngx_http_agent_store_now(u_char *buf);

ngx_int_t ngx_http_agent_store_session_create(ngx_pool_t *pool,
    ngx_str_t *id, ngx_str_t *title, ngx_str_t *metadata, ngx_str_t *owner,
    ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_store_session_get(ngx_pool_t *pool, ngx_str_t *id,
    ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_store_session_list(ngx_pool_t *pool,
    ngx_int_t limit, ngx_int_t offset, ngx_str_t *owner,
    ngx_array_t *sessions);
ngx_int_t ngx_http_agent_store_session_delete(ngx_pool_t *pool,
    ngx_str_t *id);
ngx_int_t ngx_http_agent_store_session_set(ngx_str_t *id, ngx_uint_t field,
    ngx_str_t *value);

#define NGX_HTTP_AGENT_STORE_MODEL     0
#define NGX_HTTP_AGENT_STORE_DATABASE  1

ngx_int_t ngx_http_agent_store_lock(ngx_str_t *id, ngx_str_t *run_id,
    ngx_msec_t lease);
ngx_int_t ngx_http_agent_store_lock_renew(ngx_str_t *id, ngx_str_t *run_id,
    ngx_msec_t lease);
void ngx_http_agent_store_unlock(ngx_str_t *id, ngx_str_t *run_id);

ngx_int_t ngx_http_agent_store_messages(ngx_pool_t *pool, ngx_str_t *id,
    int64_t upto, ngx_int_t images_keep, ngx_array_t *messages);
ngx_int_t ngx_http_agent_store_messages_page(ngx_str_t *id, int64_t before,
    ngx_uint_t limit, ngx_uint_t all, ngx_uint_t images, ngx_uint_t *more,
    ngx_http_agent_store_message_pt handler, void *data);
ngx_int_t ngx_http_agent_store_checkpoint_latest(ngx_pool_t *pool,
    ngx_str_t *id, ngx_http_agent_checkpoint_t *cp);
ngx_int_t ngx_http_agent_store_checkpoint_get(ngx_pool_t *pool,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_http_agent_checkpoint_t *cp);
ngx_int_t ngx_http_agent_store_fork_later(ngx_pool_t *pool, ngx_str_t *id,
    ngx_str_t *from, ngx_array_t *later);
ngx_int_t ngx_http_agent_store_fork_keep(ngx_str_t *checkpoint_id,
    ngx_str_t *channels);
ngx_int_t ngx_http_agent_store_fork_cut(ngx_str_t *id, int64_t msg_count);
ngx_int_t ngx_http_agent_store_checkpoint_list(ngx_pool_t *pool,
    ngx_str_t *id, ngx_array_t *checkpoints);
ngx_int_t ngx_http_agent_store_checkpoint_write(ngx_pool_t *pool,
    ngx_str_t *session_id, ngx_http_agent_checkpoint_t *cp,
    ngx_array_t *added);

ngx_int_t ngx_http_agent_store_resource_add(ngx_str_t *session_id,
    ngx_http_agent_resource_t *res);
ngx_int_t ngx_http_agent_store_resource_list(ngx_pool_t *pool,
    ngx_str_t *session_id, ngx_array_t *resources);


#endif /* _NGX_HTTP_AGENT_STORE_H_INCLUDED_ */
