
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"


/*
 * GET /threads/{id}/storage, as LangGraph's Agent Server 0.16 has it: the
 * bytes a thread holds in the store as stored, its checkpoints', each
 * channel's within them, and its pending writes'.  Our messages are rows
 * of their own, not a channel of each checkpoint: "messages" counts them
 * once (docs/langgraph-api.md).
 */


static void ngx_http_agent_lg_storage_part(ngx_http_agent_json_t *j,
    int64_t count, int64_t bytes);


ngx_int_t
ngx_http_agent_lg_storage(ngx_http_request_t *r, ngx_http_agent_lg_req_t *req)
{
    ngx_int_t                          rc;
    ngx_uint_t                         i;
    ngx_http_agent_json_t             *j;
    ngx_http_agent_session_t           s;
    ngx_http_agent_storage_t           st;
    ngx_http_agent_storage_channel_t  *ch;

    rc = ngx_http_agent_reply_session_get(r, &req->thread_id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_memzero(&st, sizeof(ngx_http_agent_storage_t));

    st.channels = ngx_array_create(r->pool, 8,
                                   sizeof(ngx_http_agent_storage_channel_t));
    if (st.channels == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_agent_store_storage(ngx_http_agent_reply_sc(r),
                                      &req->thread_id, &st);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the thread's storage could not "
                                          "be read");
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }


    ngx_http_agent_json_key(j, "thread_id");
    ngx_http_agent_json_str(j, &req->asked);

    ngx_http_agent_json_key(j, "total_bytes");
    ngx_http_agent_json_int(j, st.checkpoint_bytes + st.message_bytes
                               + st.write_bytes);

    ngx_http_agent_json_key(j, "checkpoints");
    ngx_http_agent_lg_storage_part(j, st.checkpoints, st.checkpoint_bytes);

    ngx_http_agent_json_key(j, "channel_values");
    ngx_http_agent_json_obj(j);

    ngx_http_agent_json_key(j, "messages");
    ngx_http_agent_lg_storage_part(j, st.messages, st.message_bytes);

    ch = st.channels->elts;

    for (i = 0; i < st.channels->nelts; i++) {
        if (ch[i].name.len == 8
            && ngx_strncmp(ch[i].name.data, "messages", 8) == 0)
        {
            continue;
        }

        ngx_http_agent_json_str(j, &ch[i].name);
        ngx_http_agent_lg_storage_part(j, ch[i].count, ch[i].bytes);
    }

    ngx_http_agent_json_end(j);

    ngx_http_agent_json_key(j, "pending_writes");
    ngx_http_agent_lg_storage_part(j, st.writes, st.write_bytes);

    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


static void
ngx_http_agent_lg_storage_part(ngx_http_agent_json_t *j, int64_t count,
    int64_t bytes)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "count");
    ngx_http_agent_json_int(j, count);
    ngx_http_agent_json_key(j, "bytes");
    ngx_http_agent_json_int(j, bytes);
    ngx_http_agent_json_end(j);
}
