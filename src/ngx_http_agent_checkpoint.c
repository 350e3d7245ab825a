
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
#include "ngx_http_agent_handler.h"
#include "ngx_http_agent_sessions.h"
#include "ngx_http_agent_checkpoint.h"
#include "ngx_http_agent_resources.h"
#include "ngx_http_agent_chat.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_body.h"
#include "ngx_http_agent_json.h"
#include "ngx_http_agent_graph.h"
#include "ngx_http_agent_react.h"
#include "ngx_http_agent_sse.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_csv.h"
#include "ngx_http_agent_sql.h"




ngx_int_t
ngx_http_agent_state_load(ngx_pool_t *pool, ngx_str_t *id,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp)
{
    size_t                   i;
    yajl_val                 v, c;
    ngx_int_t                rc, ch;
    ngx_http_agent_graph_t  *graph;

    ngx_memzero(cp, sizeof(ngx_http_agent_checkpoint_t));
    cp->step = -1;

    rc = ngx_http_agent_store_checkpoint_latest(pool, id, cp);

    if (rc == NGX_DECLINED) {
        return NGX_OK;
    }

    if (rc != NGX_OK) {
        return NGX_ERROR;
    }

    graph = run->graph;

    v = ngx_http_agent_json_parse(pool, cp->channels.data, cp->channels.len,
                                  NULL);
    if (v == NULL || !YAJL_IS_OBJECT(v)) {
        return NGX_ERROR;
    }

    for (i = 0; i < v->u.object.len; i++) {
        ch = ngx_http_agent_graph_channel(graph, v->u.object.keys[i]);
        if (ch == NGX_ERROR) {
            continue;
        }

        c = v->u.object.values[i];

        if (graph->channels[ch].kind == NGX_HTTP_AGENT_CHANNEL_COUNTER) {
            run->state[ch].counter = YAJL_IS_INTEGER(c) ? YAJL_GET_INTEGER(c)
                                                        : 0;

        } else if (graph->channels[ch].kind == NGX_HTTP_AGENT_CHANNEL_VALUE
                   && !YAJL_IS_NULL(c))
        {
            if (ngx_http_agent_json_encode(pool, c, &run->state[ch].json)
                != NGX_OK)
            {
                return NGX_ERROR;
            }
        }
    }

    return ngx_http_agent_store_messages(pool, id, cp->msg_count, 1,
                            run->state[NGX_HTTP_AGENT_REACT_MESSAGES].messages);
}


/* a checkpoint of the run's state after node; cp: the parent, then this */

ngx_int_t
ngx_http_agent_state_save(ngx_http_agent_run_t *run, ngx_str_t *id,
    ngx_http_agent_checkpoint_t *cp, ngx_str_t *node, ngx_int_t next)
{
    ngx_uint_t                   i;
    ngx_array_t                 *added;
    ngx_http_agent_json_t       *j;
    ngx_http_agent_write_t      *w;
    ngx_http_agent_graph_t      *graph;
    ngx_http_agent_checkpoint_t  parent;

    graph = run->graph;
    parent = *cp;

    /* the channels are bound to the insert and forgotten: a scratch text */
    if (run->scratch == NULL) {
        run->scratch = ngx_http_agent_json_create(run->pool);
        if (run->scratch == NULL) {
            return NGX_ERROR;
        }
    }

    j = run->scratch;

    ngx_http_agent_json_obj(j);

    for (i = 0; i < graph->nchannels; i++) {
        if (graph->channels[i].kind == NGX_HTTP_AGENT_CHANNEL_MESSAGES) {
            continue;
        }

        ngx_http_agent_json_ok(j, yajl_gen_string(j->gen,
                                       graph->channels[i].name.data,
                                       graph->channels[i].name.len));

        if (graph->channels[i].kind == NGX_HTTP_AGENT_CHANNEL_COUNTER) {
            ngx_http_agent_json_int(j, run->state[i].counter);

        } else {
            ngx_http_agent_json_raw(j, &run->state[i].json);
        }
    }

    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_scratch(j, &cp->channels) != NGX_OK) {
        return NGX_ERROR;
    }

    /* only what this step added goes to the messages table */

    added = NULL;
    w = run->update->elts;

    for (i = 0; i < run->update->nelts; i++) {
        if (w[i].channel == NGX_HTTP_AGENT_REACT_MESSAGES) {
            added = w[i].value.messages;
        }
    }

    cp->parent_id = parent.id;
    cp->step = parent.step + 1;
    cp->node = *node;
    cp->msg_count =
                run->state[NGX_HTTP_AGENT_REACT_MESSAGES].messages->nelts;

    if (next == NGX_HTTP_AGENT_END) {
        ngx_str_null(&cp->next);

    } else {
        cp->next = graph->nodes[next].name;
    }

    return ngx_http_agent_store_checkpoint_write(run->pool, id, cp, added);
}

