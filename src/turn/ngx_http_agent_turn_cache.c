
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <ngx_sha1.h>

#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_ops.h"


/*
 * A node's cache= for a turn, its subgraphs' nodes too (the engine asks:
 * graph_cache.c; node_subgraph.c hands its runs' asks up).  The key
 * is the SHA-1 of the owner, the graph's and the node's names, the
 * node's version (its statement's CRC) and the state the node reads: every
 * channel but the thread's id, as our generator writes them, messages
 * without their ids and times.  So one owner's threads share the node's
 * answers, another owner's never do (an http node may send the
 * request's credentials, an sql node read the owner's database).  The
 * entry is the update as the "updates" stream shows it, read back as
 * writes of the graph's channels; one the graph no longer has is a miss.
 * The store keeps them (store_bounds.c: agent_cache_max), so every
 * worker and host shares them; a lookup is a store call like any other,
 * answered later on PostgreSQL, and a put wants no answer.
 */


typedef struct {
    ngx_http_agent_store_call_t   sc;
    ngx_http_agent_run_t         *run;
    ngx_str_t                     key;
} ngx_http_agent_turn_cache_t;


static ngx_int_t ngx_http_agent_turn_cache_key(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_str_t *key);
static void ngx_http_agent_turn_cache_message(ngx_http_agent_json_t *j,
    ngx_http_agent_msg_t *m);
static ngx_int_t ngx_http_agent_turn_cache_look(
    ngx_http_agent_turn_cache_t *c);
static ngx_int_t ngx_http_agent_turn_cache_read(ngx_http_agent_run_t *run,
    ngx_str_t *value);
static void ngx_http_agent_turn_cache_wake(ngx_http_agent_store_call_t *sc);
static void ngx_http_agent_turn_cache_cancel(ngx_http_agent_run_t *run);
static void ngx_http_agent_turn_cache_put(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);


static ngx_str_t  ngx_http_agent_turn_cache_kind = ngx_string("node");

/* the worker's puts: they want no answer, and outlive their request */
static ngx_http_agent_store_call_t  ngx_http_agent_turn_cache_puts;


ngx_int_t
ngx_http_agent_turn_cache(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_uint_t put)
{
    ngx_int_t                     rc;
    ngx_http_agent_turn_cache_t  *c;

    if (put) {
        ngx_http_agent_turn_cache_put(run, node);
        return NGX_OK;
    }

    c = ngx_pcalloc(run->pool, sizeof(ngx_http_agent_turn_cache_t));
    if (c == NULL) {
        return NGX_ERROR;
    }

    c->run = run;

    if (ngx_http_agent_turn_cache_key(run, node, &c->key) != NGX_OK) {
        return NGX_ERROR;
    }

    /* the state a put would read has had the node's writes applied */
    run->cache_key = c->key;

    ngx_http_agent_store_call_init(&c->sc, run->pool, run->log,
                                   ngx_http_agent_turn_cache_wake, c);

    rc = ngx_http_agent_turn_cache_look(c);

    if (rc == NGX_AGAIN) {
        run->node_data = c;
        run->cancel = ngx_http_agent_turn_cache_cancel;
    }

    return rc;
}


static ngx_int_t
ngx_http_agent_turn_cache_key(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_str_t *key)
{
    ngx_http_agent_env_t *env = run->data;

    ngx_str_t                   state;
    ngx_uint_t                  i, n;
    ngx_sha1_t                  sha1;
    ngx_array_t                *msgs;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_channel_t   *ch;

    j = ngx_http_agent_json_create(run->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ch = run->graph->channels.elts;

    ngx_http_agent_json_obj(j);

    for (i = 0; i < run->graph->channels.nelts; i++) {

        if (i == NGX_HTTP_AGENT_CH_SESSION_ID) {
            continue;
        }

        ngx_http_agent_json_str(j, &ch[i].name);

        switch (ch[i].reducer) {

        case NGX_HTTP_AGENT_REDUCE_MESSAGES:
            msgs = run->state[i].messages;

            ngx_http_agent_json_arr(j);

            for (n = 0; n < msgs->nelts; n++) {
                ngx_http_agent_turn_cache_message(j,
                                 (ngx_http_agent_msg_t *) msgs->elts + n);
            }

            ngx_http_agent_json_arr_end(j);
            break;

        case NGX_HTTP_AGENT_REDUCE_SUM:
            ngx_http_agent_json_num(j, run->state[i].number);
            break;

        default:
            if (run->state[i].json.len) {
                ngx_http_agent_json_raw(j, &run->state[i].json);

            } else {
                ngx_http_agent_json_null(j);
            }
        }
    }

    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &state) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_sha1_init(&sha1);
    ngx_sha1_update(&sha1, "node", sizeof("node"));
    ngx_sha1_update(&sha1, env->owner.data, env->owner.len);
    ngx_sha1_update(&sha1, "", 1);
    ngx_sha1_update(&sha1, run->graph->name.data, run->graph->name.len);
    ngx_sha1_update(&sha1, "", 1);
    ngx_sha1_update(&sha1, node->name.data, node->name.len);
    ngx_sha1_update(&sha1, "", 1);
    ngx_sha1_update(&sha1, &node->version, sizeof(uint32_t));
    ngx_sha1_update(&sha1, state.data, state.len);

    return ngx_http_agent_digest_key(run->pool, "node:", &sha1, key);
}


/* what a model reads of a message: no id, no time, no metadata */

static void
ngx_http_agent_turn_cache_message(ngx_http_agent_json_t *j,
    ngx_http_agent_msg_t *m)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "role");
    ngx_http_agent_json_str(j, &m->role);
    ngx_http_agent_json_key(j, "content");
    ngx_http_agent_json_str(j, &m->content);

    if (m->tool_calls.len) {
        ngx_http_agent_json_key(j, "tool_calls");
        ngx_http_agent_json_raw(j, &m->tool_calls);
    }

    if (m->tool_call_id.len) {
        ngx_http_agent_json_key(j, "tool_call_id");
        ngx_http_agent_json_str(j, &m->tool_call_id);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &m->name);
    }

    if (m->images.len) {
        ngx_http_agent_json_key(j, "images");
        ngx_http_agent_json_raw(j, &m->images);
    }

    ngx_http_agent_json_end(j);
}


/* NGX_OK: the update kept is the step's; NGX_DECLINED: the node runs */

static ngx_int_t
ngx_http_agent_turn_cache_look(ngx_http_agent_turn_cache_t *c)
{
    ngx_int_t              rc;
    ngx_str_t              value;
    ngx_http_agent_run_t  *run;

    run = c->run;

    rc = ngx_http_agent_store_cache_get(&c->sc, &c->key, &value);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_OK) {
        rc = ngx_http_agent_turn_cache_read(run, &value);
    }

    if (rc == NGX_OK) {
        run->cached = 1;
        ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_CACHE_HITS,
                                   &ngx_http_agent_turn_cache_kind, NULL, 1);
        return NGX_OK;
    }

    /* a cache that fails is no cache: the node runs */

    if (rc == NGX_ERROR) {
        ngx_log_error(NGX_LOG_WARN, run->log, 0,
                      "agent: the cache could not be read, the node runs");
    }

    ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_CACHE_MISSES,
                               &ngx_http_agent_turn_cache_kind, NULL, 1);

    return NGX_DECLINED;
}


/* {"channel": value, ...} as state_update() wrote it, as writes again */

static ngx_int_t
ngx_http_agent_turn_cache_read(ngx_http_agent_run_t *run, ngx_str_t *value)
{
    size_t                     i, k;
    yajl_val                   v, c;
    ngx_int_t                  n;
    ngx_str_t                  name, json;
    ngx_array_t               *msgs;
    ngx_http_agent_channel_t  *ch;

    v = ngx_http_agent_json_parse(run->pool, value->data, value->len, NULL);

    if (v == NULL || !YAJL_IS_OBJECT(v)) {
        return NGX_DECLINED;
    }

    ch = run->graph->channels.elts;

    for (i = 0; i < v->u.object.len; i++) {
        name.data = (u_char *) v->u.object.keys[i];
        name.len = ngx_strlen(name.data);
        c = v->u.object.values[i];

        n = ngx_http_agent_graph_channel(run->graph, &name);

        if (n == NGX_ERROR) {
            run->update->nelts = 0;
            return NGX_DECLINED;
        }

        switch (ch[n].reducer) {

        case NGX_HTTP_AGENT_REDUCE_MESSAGES:
            msgs = ngx_array_create(run->pool, 2,
                                    sizeof(ngx_http_agent_msg_t));
            if (msgs == NULL
                || ngx_http_agent_state_messages(run->pool, c, msgs)
                   != NGX_OK)
            {
                return NGX_ERROR;
            }

            for (k = 0; k < msgs->nelts; k++) {
                if (ngx_http_agent_graph_write_message(run, run->update, n,
                                      (ngx_http_agent_msg_t *) msgs->elts + k)
                    != NGX_OK)
                {
                    return NGX_ERROR;
                }
            }

            break;

        case NGX_HTTP_AGENT_REDUCE_SUM:
            if (!YAJL_IS_NUMBER(c)) {
                run->update->nelts = 0;
                return NGX_DECLINED;
            }

            json.data = (u_char *) c->u.number.r;
            json.len = ngx_strlen(json.data);

            if (ngx_http_agent_graph_write_number(run->update, n,
                                            ngx_http_agent_json_number(&json))
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            break;

        default:
            if (YAJL_IS_NULL(c)) {
                ngx_str_null(&json);

            } else if (ngx_http_agent_json_encode(run->pool, c, &json)
                       != NGX_OK)
            {
                return NGX_ERROR;
            }

            if (ngx_http_agent_graph_write_value(run->update, n, &json)
                != NGX_OK)
            {
                return NGX_ERROR;
            }
        }
    }

    return NGX_OK;
}


static void
ngx_http_agent_turn_cache_wake(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_turn_cache_t *c = sc->data;

    ngx_int_t              rc;
    ngx_http_agent_run_t  *run;

    run = c->run;
    sc->n = 0;

    rc = ngx_http_agent_turn_cache_look(c);

    if (rc == NGX_AGAIN) {
        return;
    }

    run->cancel = NULL;

    if (rc == NGX_DECLINED) {
        rc = ngx_http_agent_graph_cache_miss(run);

        if (rc == NGX_AGAIN) {
            return;
        }
    }

    ngx_http_agent_graph_node_done(run, rc);
}


/* the run stops: the store's answer, when it comes, is dropped */

static void
ngx_http_agent_turn_cache_cancel(ngx_http_agent_run_t *run)
{
    ngx_http_agent_turn_cache_t *c = run->node_data;

    ngx_http_agent_store_cancel(&c->sc);
}


static void
ngx_http_agent_turn_cache_put(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_str_t                     value;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_store_call_t  *sc;

    if (run->cache_key.len == 0) {
        return;
    }

    j = ngx_http_agent_json_create(run->pool);
    if (j == NULL) {
        return;
    }

    ngx_http_agent_state_update(j, run);

    if (ngx_http_agent_json_done(j, &value) != NGX_OK) {
        return;
    }

    sc = &ngx_http_agent_turn_cache_puts;

    if (sc->pool == NULL) {
        ngx_http_agent_store_call_init(sc, ngx_cycle->pool, ngx_cycle->log,
                                       NULL, NULL);
    }

    ngx_http_agent_store_call_reset(sc);

    (void) ngx_http_agent_store_cache_put(sc, &run->cache_key, &value,
                                          node->cache);
    ngx_str_null(&run->cache_key);
}
