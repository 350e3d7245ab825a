
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_SQLITE_HISTORY_H_INCLUDED_
#define _NGX_HTTP_AGENT_SQLITE_HISTORY_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


/*
 * The SQLite store's history: messages, checkpoints, forks, resources
 * added (sqlite_history.c), for its table and the session's open.
 */
#pragma GCC visibility push(hidden)


ngx_int_t ngx_http_agent_sqlite_messages(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t upto, ngx_int_t images_keep, ngx_array_t *messages);
ngx_int_t ngx_http_agent_sqlite_messages_kept(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t upto, ngx_int_t images_keep, ngx_array_t *messages);
ngx_int_t ngx_http_agent_sqlite_messages_page(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t before, ngx_uint_t limit, ngx_uint_t all,
    ngx_uint_t images, ngx_uint_t *more,
    ngx_http_agent_store_message_pt handler, void *data);
ngx_int_t ngx_http_agent_sqlite_checkpoint_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_http_agent_checkpoint_t *cp);
ngx_int_t ngx_http_agent_sqlite_checkpoint_list(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id, ngx_str_t *ns,
    ngx_array_t *checkpoints);
ngx_int_t ngx_http_agent_sqlite_checkpoint_write(
    ngx_http_agent_store_call_t *sc, ngx_str_t *session_id,
    ngx_http_agent_checkpoint_t *cp, ngx_array_t *added);
ngx_int_t ngx_http_agent_sqlite_resource_add(ngx_http_agent_store_call_t *sc,
    ngx_str_t *session_id, ngx_http_agent_resource_t *res);
ngx_int_t ngx_http_agent_sqlite_fork_later(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *from, ngx_array_t *later);
ngx_int_t ngx_http_agent_sqlite_fork_keep(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_str_t *channels);
ngx_int_t ngx_http_agent_sqlite_fork_cut(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, int64_t msg_count);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_SQLITE_HISTORY_H_INCLUDED_ */
