
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_engine.h"


/*
 * The checkpoint codec: a run's state to stored rows and back, for any
 * graph.  The messages channel lives in the messages table, one row per
 * message; every other channel is a key of the checkpoint's JSON object.
 * Keys of channels the graph does not declare (a checkpoint written by
 * another graph, before a reload) are kept and written back as they were.
 */


static ngx_int_t ngx_http_agent_checkpoint_load_at(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_str_t *checkpoint_id, ngx_int_t images_keep);
static ngx_int_t ngx_http_agent_checkpoint_apply(
    ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_int_t images_keep);
static void ngx_http_agent_checkpoint_run(ngx_pool_t *pool, yajl_val v,
    ngx_http_agent_checkpoint_t *cp);
static ngx_int_t ngx_http_agent_checkpoint_appended(ngx_pool_t *pool,
    ngx_array_t **added);
static ngx_int_t ngx_http_agent_checkpoint_since(ngx_http_agent_run_t *run,
    int64_t since, ngx_array_t **added);
static void ngx_http_agent_checkpoint_overlay(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run, ngx_uint_t appended);


ngx_int_t
ngx_http_agent_checkpoint_load(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_int_t images_keep)
{
    ngx_int_t  rc;

    ngx_memzero(cp, sizeof(ngx_http_agent_checkpoint_t));
    cp->step = -1;

    rc = ngx_http_agent_store_checkpoint_latest(sc, id, cp);

    if (rc == NGX_DECLINED) {
        return NGX_OK;
    }

    if (rc != NGX_OK) {
        return rc == NGX_AGAIN ? NGX_AGAIN : NGX_ERROR;
    }

    return ngx_http_agent_checkpoint_apply(sc, id, run, cp, images_keep);
}


/* the state at one checkpoint of the session; NGX_DECLINED: no such one */

static ngx_int_t
ngx_http_agent_checkpoint_load_at(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_str_t *checkpoint_id, ngx_int_t images_keep)
{
    ngx_int_t  rc;

    ngx_memzero(cp, sizeof(ngx_http_agent_checkpoint_t));

    rc = ngx_http_agent_store_checkpoint_get(sc, id, checkpoint_id, cp);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_agent_checkpoint_apply(sc, id, run, cp, images_keep);
}


/*
 * A run of the graph, in pool, holding a session's state outside a turn,
 * as the APIs show it: at the checkpoint row cp was read as before (its
 * channels), at the one cp->id names, or at the latest (cp zeroed).
 * NGX_DECLINED: no checkpoint cp->id.
 */

ngx_int_t
ngx_http_agent_checkpoint_open(ngx_http_agent_store_call_t *sc,
    ngx_pool_t *pool, ngx_http_agent_graph_t *graph, ngx_str_t *id,
    ngx_http_agent_checkpoint_t *cp, ngx_http_agent_run_t **runp)
{
    ngx_str_t              at;
    ngx_http_agent_run_t  *run;

    run = ngx_http_agent_graph_run_create(pool, pool->log, graph);
    if (run == NULL) {
        return NGX_ERROR;
    }

    *runp = run;

    if (cp->channels.len) {
        return ngx_http_agent_checkpoint_apply(sc, id, run, cp, -1);
    }

    if (cp->id.len == 0) {
        return ngx_http_agent_checkpoint_load(sc, id, run, cp, -1);
    }

    at = cp->id;

    return ngx_http_agent_checkpoint_load_at(sc, id, run, cp, &at, -1);
}


/* the state of a checkpoint row read before: its channels, its messages */

static ngx_int_t
ngx_http_agent_checkpoint_apply(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_int_t images_keep)
{
    ngx_int_t  rc;

    if (ngx_http_agent_checkpoint_read(sc->pool, run, cp) != NGX_OK) {
        return NGX_ERROR;
    }

    rc = ngx_http_agent_store_messages(sc, id, cp->msg_count,
                       images_keep,
                       run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_agent_checkpoint_replaced(sc->pool, run, cp);
}


/* "__run__": the run that saved the checkpoint, and its metadata */

static void
ngx_http_agent_checkpoint_run(ngx_pool_t *pool, yajl_val v,
    ngx_http_agent_checkpoint_t *cp)
{
    yajl_val  m;

    if (!YAJL_IS_OBJECT(v)) {
        return;
    }

    (void) ngx_http_agent_json_get_str(v, "run_id", &cp->saved_by);

    m = ngx_http_agent_json_get(v, "metadata");

    if (m && YAJL_IS_OBJECT(m)) {
        (void) ngx_http_agent_json_encode(pool, m, &cp->metadata);
    }
}


/* a checkpoint's channels into the run (its messages are read apart) */

ngx_int_t
ngx_http_agent_checkpoint_read(ngx_pool_t *pool, ngx_http_agent_run_t *run,
    ngx_http_agent_checkpoint_t *cp)
{
    size_t                  i;
    yajl_val                v;
    ngx_int_t               ch;
    ngx_str_t               name;
    ngx_uint_t              extra;
    ngx_array_t            *msgs;
    ngx_http_agent_json_t  *j;

    /* a row of a list has none of these: "__run__" sets them */
    ngx_str_null(&cp->metadata);
    ngx_str_null(&cp->saved_by);

    v = ngx_http_agent_json_parse(pool, cp->channels.data,
                                  cp->channels.len, NULL);
    if (v == NULL || !YAJL_IS_OBJECT(v)) {
        return NGX_ERROR;
    }

    extra = 0;

    for (i = 0; i < v->u.object.len; i++) {
        name.data = (u_char *) v->u.object.keys[i];
        name.len = ngx_strlen(name.data);

        ch = ngx_http_agent_graph_channel(run->graph, &name);

        if (ch == NGX_HTTP_AGENT_CH_MESSAGES && cp->msg_count == 0) {

            /* a checkpoint of a branch left by a fork: its own messages */

            msgs = run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages;

            if (ngx_http_agent_state_messages(pool, v->u.object.values[i],
                                              msgs)
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            continue;
        }

        if (ch == NGX_ERROR && ngx_strcmp(name.data, "__run__") == 0) {
            ngx_http_agent_checkpoint_run(pool, v->u.object.values[i], cp);
            continue;
        }

        if (ch == NGX_ERROR || ch == NGX_HTTP_AGENT_CH_MESSAGES) {
            /* the replaced messages: ours, read with the rows */
            extra += (ch == NGX_ERROR
                      && ngx_strcmp(name.data, "__replaced__") != 0);
            continue;
        }

        if (ngx_http_agent_state_read(pool, run, ch, v->u.object.values[i])
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    if (extra) {
        /* another graph's channels: kept for when it runs again */

        j = ngx_http_agent_json_create(pool);
        if (j == NULL) {
            return NGX_ERROR;
        }

        ngx_http_agent_json_obj(j);

        for (i = 0; i < v->u.object.len; i++) {
            name.data = (u_char *) v->u.object.keys[i];
            name.len = ngx_strlen(name.data);

            if (ngx_http_agent_graph_channel(run->graph, &name) != NGX_ERROR
                || ngx_strcmp(name.data, "__replaced__") == 0
                || ngx_strcmp(name.data, "__run__") == 0)
            {
                continue;
            }

            ngx_http_agent_json_str(j, &name);
            ngx_http_agent_json_val(j, v->u.object.values[i]);
        }

        ngx_http_agent_json_end(j);

        if (ngx_http_agent_json_done(j, &run->extra) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/*
 * The state at the checkpoint checkpoint_id, for a run that forks from it
 * (LangGraph's time travel).  The messages table holds one line, the
 * current branch's: when the checkpoint is not the latest, the later ones
 * get their messages written into their channels first (they stay
 * readable in the history), and the table is cut back to the fork's.  In
 * the caller's transaction.  NGX_DECLINED: no such checkpoint.
 */

ngx_int_t
ngx_http_agent_checkpoint_fork(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_str_t *checkpoint_id, ngx_int_t images_keep)
{
    size_t                        k;
    yajl_val                      v;
    ngx_int_t                     rc;
    ngx_str_t                     json;
    ngx_uint_t                    i, n;
    ngx_array_t                   later, msgs;
    ngx_http_agent_msg_t         *m;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_checkpoint_t  *c;

    ngx_memzero(cp, sizeof(ngx_http_agent_checkpoint_t));

    rc = ngx_http_agent_store_checkpoint_get(sc, id, checkpoint_id, cp);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ngx_array_init(&later, sc->pool, 8,
                       sizeof(ngx_http_agent_checkpoint_t))
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    rc = ngx_http_agent_store_fork_later(sc, id, &cp->id, &later);
    if (rc != NGX_OK) {
        return rc == NGX_AGAIN ? NGX_AGAIN : NGX_ERROR;
    }

    c = later.elts;

    for (i = 0; i < later.nelts; i++) {
        if (ngx_array_init(&msgs, sc->pool, 16, sizeof(ngx_http_agent_msg_t))
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        rc = ngx_http_agent_store_messages(sc, id, c[i].msg_count, -1, &msgs);
        if (rc != NGX_OK) {
            return rc == NGX_AGAIN ? NGX_AGAIN : NGX_ERROR;
        }

        v = ngx_http_agent_json_parse(sc->pool, c[i].channels.data,
                                      c[i].channels.len, NULL);
        j = ngx_http_agent_json_create(sc->pool);

        if (v == NULL || !YAJL_IS_OBJECT(v) || j == NULL) {
            return NGX_ERROR;
        }

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "messages");
        ngx_http_agent_json_arr(j);

        m = msgs.elts;

        for (n = 0; n < msgs.nelts; n++) {
            ngx_http_agent_message_json(j, NULL, &m[n],
                                        NGX_HTTP_AGENT_MESSAGE_KEPT);
        }

        ngx_http_agent_json_arr_end(j);

        for (k = 0; k < v->u.object.len; k++) {
            if (ngx_strcmp(v->u.object.keys[k], "messages") != 0) {
                ngx_http_agent_json_cstr(j, v->u.object.keys[k]);
                ngx_http_agent_json_val(j, v->u.object.values[k]);
            }
        }

        ngx_http_agent_json_end(j);

        if (ngx_http_agent_json_done(j, &json) != NGX_OK) {
            return NGX_ERROR;
        }

        rc = ngx_http_agent_store_fork_keep(sc, id, &c[i].id, &json);
        if (rc != NGX_OK) {
            return rc == NGX_AGAIN ? NGX_AGAIN : NGX_ERROR;
        }
    }

    if (later.nelts) {
        rc = ngx_http_agent_store_fork_cut(sc, id, cp->msg_count);
        if (rc != NGX_OK) {
            return rc == NGX_AGAIN ? NGX_AGAIN : NGX_ERROR;
        }
    }

    return ngx_http_agent_checkpoint_apply(sc, id, run, cp, images_keep);
}


/* a checkpoint of the run's state after node; cp: the parent, then this */

ngx_int_t
ngx_http_agent_checkpoint_save(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_t *run, ngx_str_t *id, ngx_http_agent_checkpoint_t *cp,
    ngx_str_t *node, ngx_str_t *next)
{
    ngx_uint_t                   i;
    ngx_array_t                 *added;
    ngx_http_agent_json_t       *j;
    ngx_http_agent_write_t      *w;
    ngx_http_agent_checkpoint_t  parent;

    parent = *cp;

    /*
     * only what this step added goes to the messages table; a subgraph's
     * checkpoint (a namespace's) adds none: its messages are not yet the
     * thread's
     */

    added = NULL;
    w = (run->update && cp->ns.len == 0) ? run->update->elts : NULL;

    for (i = 0; w && i < run->update->nelts; i++) {
        if (w[i].channel == NGX_HTTP_AGENT_CH_MESSAGES) {
            added = w[i].value.messages;
        }
    }

    if (added && ngx_http_agent_checkpoint_appended(run->pool, &added)
                 != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (cp->skipped
        && ngx_http_agent_checkpoint_since(run, cp->since, &added) != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* the channels are bound to the insert and forgotten: a scratch text */
    if (run->scratch == NULL) {
        run->scratch = ngx_http_agent_json_create(run->pool);
        if (run->scratch == NULL) {
            return NGX_ERROR;
        }
    }

    j = run->scratch;

    ngx_http_agent_json_obj(j);
    ngx_http_agent_state_channels(j, run, 2);
    ngx_http_agent_checkpoint_overlay(j, run, added ? added->nelts : 0);

    /* the run that saved it, with its metadata (LangGraph's has them) */

    if (cp->run_id.len) {
        ngx_http_agent_json_key(j, "__run__");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "run_id");
        ngx_http_agent_json_str(j, &cp->run_id);

        if (cp->metadata.len) {
            ngx_http_agent_json_key(j, "metadata");
            ngx_http_agent_json_raw(j, &cp->metadata);
        }

        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_scratch(j, &cp->channels) != NGX_OK) {
        return NGX_ERROR;
    }

    cp->parent_id = parent.id;
    cp->step = parent.step + 1;
    cp->node = *node;
    cp->msg_count = cp->ns.len
                 ? 0 : run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages->nelts;

    if (next) {
        cp->next = *next;

    } else {
        ngx_str_null(&cp->next);
    }

    return ngx_http_agent_store_checkpoint_write(sc, id, cp, added);
}


/*
 * A step's messages that replaced others in place (an id of ours): not
 * rows of their own.  The array is the update's: a copy without them.
 */

static ngx_int_t
ngx_http_agent_checkpoint_appended(ngx_pool_t *pool, ngx_array_t **added)
{
    ngx_uint_t             i, n;
    ngx_array_t           *a;
    ngx_http_agent_msg_t  *m, *to;

    m = (*added)->elts;
    n = 0;

    for (i = 0; i < (*added)->nelts; i++) {
        n += m[i].replace;
    }

    if (n == 0) {
        return NGX_OK;
    }

    a = ngx_array_create(pool, ngx_max((*added)->nelts - n, 1),
                         sizeof(ngx_http_agent_msg_t));
    if (a == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < (*added)->nelts; i++) {
        if (m[i].replace) {
            continue;
        }

        to = ngx_array_push(a);
        if (to == NULL) {
            return NGX_ERROR;
        }

        *to = m[i];
    }

    *added = a;

    return NGX_OK;
}


/*
 * The messages of the steps not saved before this one, and its own: the
 * state's since the count they started at (a message of theirs replaced
 * since is written as it is now; one stored before, by the overlay)
 */

static ngx_int_t
ngx_http_agent_checkpoint_since(ngx_http_agent_run_t *run, int64_t since,
    ngx_array_t **added)
{
    ngx_uint_t    n;
    ngx_array_t  *msgs, *a;

    msgs = run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages;

    if (since < 0 || (ngx_uint_t) since >= msgs->nelts) {
        *added = NULL;
        return NGX_OK;
    }

    n = msgs->nelts - (ngx_uint_t) since;

    a = ngx_array_create(run->pool, n, sizeof(ngx_http_agent_msg_t));
    if (a == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(a->elts, (ngx_http_agent_msg_t *) msgs->elts + since,
               n * sizeof(ngx_http_agent_msg_t));
    a->nelts = n;

    *added = a;

    return NGX_OK;
}


/*
 * "__replaced__": the messages of stored rows that the line replaced,
 * {"seq": [...], "messages": [...]}, carried by each checkpoint after
 * (the rows stay as they were written: earlier checkpoints read them so)
 */

static void
ngx_http_agent_checkpoint_overlay(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run, ngx_uint_t appended)
{
    ngx_uint_t             i, n, any;
    ngx_array_t           *msgs;
    ngx_http_agent_msg_t  *m;

    msgs = run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages;
    m = msgs->elts;
    n = msgs->nelts - ngx_min(appended, msgs->nelts);

    for (i = 0, any = 0; i < n; i++) {
        any |= m[i].replaced;
    }

    if (!any) {
        return;
    }

    ngx_http_agent_json_key(j, "__replaced__");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "seq");
    ngx_http_agent_json_arr(j);

    for (i = 0; i < n; i++) {
        if (m[i].replaced) {
            ngx_http_agent_json_int(j, i);
        }
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "messages");
    ngx_http_agent_json_arr(j);

    for (i = 0; i < n; i++) {
        if (m[i].replaced) {
            ngx_http_agent_message_json(j, NULL, &m[i],
                                            NGX_HTTP_AGENT_MESSAGE_KEPT);
        }
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);
}


/*
 * A checkpoint's replaced messages over those read from their rows; the
 * ids clients gave their messages, from the rows' metadata
 */

ngx_int_t
ngx_http_agent_checkpoint_replaced(ngx_pool_t *pool,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp)
{
    size_t                 i;
    int64_t                seq;
    yajl_val               v, o, seqs, msgs;
    ngx_array_t            got, *state;
    ngx_http_agent_msg_t  *m, *to;

    state = run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages;
    m = state->elts;

    for (i = 0; i < state->nelts; i++) {
        if (m[i].metadata.len == 0 || m[i].id.len) {
            continue;
        }

        v = ngx_http_agent_json_parse(pool, m[i].metadata.data,
                                      m[i].metadata.len, NULL);

        if (v && YAJL_IS_OBJECT(v)) {
            (void) ngx_http_agent_json_get_str(v, "id", &m[i].id);
        }
    }

    if (cp->channels.len == 0
        || ngx_strlcasestrn(cp->channels.data,
                            cp->channels.data + cp->channels.len,
                            (u_char *) "__replaced__", 12 - 1) == NULL)
    {
        return NGX_OK;
    }

    v = ngx_http_agent_json_parse(pool, cp->channels.data, cp->channels.len,
                                  NULL);
    o = v ? ngx_http_agent_json_get(v, "__replaced__") : NULL;

    if (o == NULL || !YAJL_IS_OBJECT(o)) {
        return NGX_OK;
    }

    seqs = ngx_http_agent_json_get(o, "seq");
    msgs = ngx_http_agent_json_get(o, "messages");

    if (seqs == NULL || msgs == NULL || !YAJL_IS_ARRAY(seqs)
        || !YAJL_IS_ARRAY(msgs) || seqs->u.array.len != msgs->u.array.len)
    {
        return NGX_ERROR;
    }

    if (ngx_array_init(&got, pool, ngx_max(msgs->u.array.len, 1),
                       sizeof(ngx_http_agent_msg_t))
        != NGX_OK
        || ngx_http_agent_state_messages(pool, msgs, &got) != NGX_OK
        || got.nelts != seqs->u.array.len)
    {
        return NGX_ERROR;
    }

    state = run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages;
    to = state->elts;
    m = got.elts;

    for (i = 0; i < got.nelts; i++) {
        if (!YAJL_IS_INTEGER(seqs->u.array.values[i])) {
            return NGX_ERROR;
        }

        seq = YAJL_GET_INTEGER(seqs->u.array.values[i]);

        if (seq >= 0 && (ngx_uint_t) seq < state->nelts) {
            m[i].seq = seq;
            m[i].created_at = to[seq].created_at;
            m[i].replaced = 1;
            to[seq] = m[i];
        }
    }

    return NGX_OK;
}


/*
 * The state at a checkpoint the run saved, as a run of its own in pool:
 * its channels as saved, the run's first messages as many as it had (read,
 * never written: the run's own)
 */

ngx_http_agent_run_t *
ngx_http_agent_checkpoint_state(ngx_pool_t *pool, ngx_http_agent_run_t *run,
    ngx_http_agent_checkpoint_t *cp)
{
    ngx_array_t           *msgs, *live;
    ngx_http_agent_run_t  *at;

    at = ngx_http_agent_graph_run_create(pool, pool->log, run->graph);
    if (at == NULL) {
        return NULL;
    }

    live = run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages;
    msgs = at->state[NGX_HTTP_AGENT_CH_MESSAGES].messages;

    /*
     * a checkpoint with rows: the run's first ones, borrowed; with none
     * (a fork's old branch), its messages are in its channels: read into
     * the array of its own, never pushed onto the borrowed one
     */

    if (cp->msg_count > 0) {
        msgs->elts = live->elts;
        msgs->nelts = ngx_min(live->nelts, (ngx_uint_t) cp->msg_count);
        msgs->nalloc = msgs->nelts;
    }

    if (ngx_http_agent_checkpoint_read(pool, at, cp) != NGX_OK) {
        return NULL;
    }

    return at;
}
