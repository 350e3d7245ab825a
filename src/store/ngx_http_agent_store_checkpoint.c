
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_util.h"


/*
 * A subgraph's steps are checkpoints of its namespace, not of the thread
 * (ngx_http_agent_node_subgraph.c; the turn saves them).  One that waits
 * (an interrupt inside, its channels "__subgraph__" and "__interrupt__")
 * is where the thread waits too: LangGraph keeps the wait as the task's
 * pending writes on the checkpoint its node started from, not as a
 * checkpoint of the thread.  Read back, that checkpoint is the thread's
 * with the wait's channels: the one a resume goes on from, and the one
 * whose state the APIs show.  sub, sub_id: the channels and the id of
 * the subgraph's latest checkpoint saved after cp (both stores read them
 * with cp's row).
 */

ngx_int_t
ngx_http_agent_store_checkpoint_merge(ngx_pool_t *pool,
    ngx_http_agent_checkpoint_t *cp, ngx_str_t *sub, ngx_str_t *sub_id)
{
    yajl_val                s, c, w;
    ngx_http_agent_json_t  *j;

    if (sub == NULL || sub->len == 0) {
        return NGX_OK;
    }

    s = ngx_http_agent_json_parse(pool, sub->data, sub->len, NULL);
    w = s ? ngx_http_agent_json_get(s, "__interrupt__") : NULL;

    if (w == NULL || !YAJL_IS_OBJECT(w) || !YAJL_IS_OBJECT(s)) {
        /* the subgraph went on, or ended: it waits no more */
        return NGX_OK;
    }

    c = cp->channels.len
        ? ngx_http_agent_json_parse(pool, cp->channels.data,
                                    cp->channels.len, NULL)
        : NULL;

    j = ngx_http_agent_json_create(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_merge(j, c, s);

    cp->waiting = *sub_id;

    return ngx_http_agent_json_done(j, &cp->channels);
}
