
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_models.h"
#include "ngx_http_agent_reply.h"
#include "ngx_http_agent_images.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_turn_exit.h"
#include "ngx_http_agent_turn_json.h"
#include "ngx_http_agent_variables.h"
#include "ngx_http_agent_checkpoint.h"
#include "ngx_http_agent_env.h"
#include "ngx_http_agent_json.h"
#include "ngx_http_agent_graph.h"
#include "ngx_http_agent_sse.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_metrics.h"


/*
 * A turn: one run of the location's graph bound to one request.  It locks
 * the session, loads its state, makes the input a step of the run, streams
 * what the nodes report in the location's format and saves a checkpoint
 * after each step.  It knows no particular graph.
 */




static ngx_int_t ngx_http_agent_turn_prepare(ngx_http_agent_turn_t *turn);
static ngx_int_t ngx_http_agent_turn_started(ngx_http_agent_turn_t *turn,
    ngx_int_t rc);
static void ngx_http_agent_turn_wake(ngx_http_agent_store_call_t *sc);
static ngx_int_t ngx_http_agent_turn_input(ngx_http_request_t *r,
    ngx_http_agent_turn_t *turn, ngx_http_agent_session_t *session);
static ngx_int_t ngx_http_agent_turn_saved(ngx_http_agent_turn_t *turn,
    ngx_int_t rc);

static ngx_int_t ngx_http_agent_turn_checkpoint(ngx_http_agent_run_t *run,
    ngx_str_t *node, ngx_int_t next);
static ngx_int_t ngx_http_agent_turn_node(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_uint_t start);
static void ngx_http_agent_turn_answer(ngx_http_agent_turn_t *turn,
    ngx_str_t *text);
static ngx_int_t ngx_http_agent_turn_sink(void *data, ngx_str_t *name,
    ngx_str_t *json, ngx_uint_t now);
static void ngx_http_agent_turn_cleanup(void *data);



static ngx_http_agent_run_handlers_t  ngx_http_agent_turn_handlers = {
    ngx_http_agent_turn_checkpoint,
    ngx_http_agent_turn_done,
    ngx_http_agent_turn_node
};


/* a turn of the location's graph; the caller may change what it runs */

ngx_http_agent_turn_t *
ngx_http_agent_turn_create(ngx_http_request_t *r,
    ngx_http_agent_session_t *s, ngx_http_agent_model_t *model)
{
    u_char                     *p;
    ngx_http_cleanup_t         *cln;
    ngx_http_agent_ctx_t       *ctx;
    ngx_http_agent_turn_t      *turn;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    turn = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_turn_t));
    if (turn == NULL) {
        return NULL;
    }

    turn->request = r;
    turn->session_id = s->id;
    turn->graph = alcf->graph;
    turn->format = alcf->format;
    turn->env.model = model;
    turn->env.request = r;
    turn->env.answered_by = model->name;
    turn->env.start = ngx_current_msec;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
    ctx->env = &turn->env;

    p = ngx_pnalloc(r->pool, 36);
    if (p == NULL) {
        return NULL;
    }

    ngx_http_agent_store_new_id(p);
    turn->run_id.data = p;
    turn->run_id.len = 36;

    cln = ngx_http_cleanup_add(r, 0);
    if (cln == NULL) {
        return NULL;
    }

    cln->handler = ngx_http_agent_turn_cleanup;
    cln->data = turn;

    return turn;
}


/*
 * The turn's start: the store's part (the lock, the state, the input step
 * and the hooks' rows) runs again from its start on each answer of an
 * asynchronous store; then the stream starts and the graph runs.  NGX_DONE:
 * the turn has the request.
 */

ngx_int_t
ngx_http_agent_turn_begin(ngx_http_agent_turn_t *turn,
    ngx_http_agent_session_t *s)
{
    ngx_int_t                   rc;
    ngx_http_request_t         *r;
    ngx_http_agent_loc_conf_t  *alcf;

    r = turn->request;
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    /* agent_limit: refused now (429), or counted in until the turn ends */

    rc = ngx_http_agent_limit_acquire(r, alcf->limits, &turn->env.limits);
    if (rc != NGX_OK) {
        return rc;
    }

    turn->session = *s;

    /* each checkpoint renews the lease, the input step's too */
    turn->lease_ms = alcf->turn_lease;

    ngx_http_agent_store_call_init(&turn->sc, r->pool, r->connection->log,
                                   ngx_http_agent_turn_wake, turn);
    ngx_http_agent_store_call_init(&turn->lease_sc, r->pool,
                                   r->connection->log,
                                   ngx_http_agent_turn_lease_wake, turn);
    ngx_http_agent_store_call_init(&turn->wsc, r->pool, r->connection->log,
                                   NULL, turn);

    turn->sc.key = turn->session_id;
    turn->lease_sc.key = turn->session_id;
    turn->wsc.key = turn->session_id;

    rc = ngx_http_agent_turn_prepare(turn);

    if (rc == NGX_AGAIN) {
        /* the body's read holds the request until the turn finalizes it */
        return NGX_DONE;
    }

    return ngx_http_agent_turn_started(turn, rc);
}


/*
 * the lock, the state and the input step in one unit of writes: the fewer
 * write transactions a turn has, the less workers wait on each other
 */

static ngx_int_t
ngx_http_agent_turn_prepare(ngx_http_agent_turn_t *turn)
{
    ngx_int_t            rc;
    ngx_array_t         *resources;
    ngx_http_request_t  *r;

    r = turn->request;
    turn->sc.n = 0;

    if (ngx_http_agent_store_begin(&turn->sc) != NGX_OK) {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the session store is not available");
    }

    rc = ngx_http_agent_turn_input(r, turn, &turn->session);

    if (rc == NGX_OK && turn->hooks && turn->hooks->begin) {
        rc = turn->hooks->begin(turn);
    }

    /* the session's CSV tables, for the SQL layer */

    if (rc == NGX_OK) {
        resources = ngx_array_create(r->pool, 4,
                                     sizeof(ngx_http_agent_resource_t));
        if (resources == NULL) {
            rc = NGX_HTTP_INTERNAL_SERVER_ERROR;

        } else {
            rc = ngx_http_agent_store_resource_list(&turn->sc,
                                                    &turn->session_id,
                                                    resources);
            if (rc == NGX_OK) {
                turn->env.sql.resources = resources;

            } else if (rc != NGX_AGAIN) {
                rc = ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the session's CSV files could "
                                          "not be listed");
            }
        }
    }

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        ngx_http_agent_store_rollback(&turn->sc);

        /* a store without transactions: the lock taken is let go */
        if (turn->locked) {
            ngx_http_agent_store_unlock(&turn->sc, &turn->session_id,
                                        &turn->run_id);
            turn->locked = 0;
        }

        return rc;
    }

    if (ngx_http_agent_store_commit(&turn->sc) != NGX_OK) {
        turn->locked = 0;
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the message could not be saved");
    }

    return NGX_OK;
}


/* the input saved: the stream starts and the graph runs (NGX_DONE) */

static ngx_int_t
ngx_http_agent_turn_started(ngx_http_agent_turn_t *turn, ngx_int_t rc)
{
    ngx_http_request_t          *r;
    ngx_http_agent_event_t       ev;
    ngx_http_agent_loc_conf_t   *alcf;
    ngx_http_agent_main_conf_t  *amcf;

    if (rc != NGX_OK) {
        return rc;
    }

    r = turn->request;
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    amcf = ngx_http_get_module_main_conf(r, ngx_http_agent_module);

    turn->started = 1;
    ngx_http_agent_store_call_reset(&turn->sc);

    /* the lease is renewed while the turn runs (and by each checkpoint) */
    turn->lease.handler = ngx_http_agent_turn_lease_handler;
    turn->lease.data = turn;
    turn->lease.log = r->connection->log;
    turn->lease.cancelable = 1;
    ngx_add_timer(&turn->lease, turn->lease_ms / 3);

    ngx_http_agent_turn_exit_add(&turn->queue);

    /* agent_otlp: the turn's span tree, if it is traced */
    turn->env.trace = ngx_http_agent_trace_start(r, amcf->otlp,
                                                 &turn->graph->name,
                                                 &turn->session_id);

    if (turn->hooks == NULL) {
        turn->json = ngx_http_agent_turn_json_wanted(r);
    }

    if (!turn->json
        && ngx_http_agent_sse_start(&turn->sse, r, alcf->heartbeat) != NGX_OK)
    {
        return NGX_ERROR;
    }

    ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));
    ev.type = NGX_HTTP_AGENT_EV_START;
    ev.text = &turn->text;

    if (ngx_http_agent_stream_emit(&turn->stream, &ev) != NGX_OK) {
        return NGX_ERROR;
    }

    /* a client that goes away ends the turn: see the cleanup */
    r->read_event_handler = ngx_http_test_reading;

    if (alcf->turn_timeout) {
        turn->timeout.handler = ngx_http_agent_turn_timeout;
        turn->timeout.data = turn;
        turn->timeout.log = r->connection->log;
        ngx_add_timer(&turn->timeout, alcf->turn_timeout);
    }

    ngx_http_agent_graph_start(turn->run);

    if (turn->hooks && turn->hooks->started) {
        turn->hooks->started(turn);
    }

    return NGX_DONE;
}


/* an answer of the store: the start goes on, or a checkpoint is saved */

static void
ngx_http_agent_turn_wake(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_turn_t *turn = sc->data;

    ngx_int_t              rc;
    ngx_connection_t      *c;
    ngx_http_request_t    *r;
    ngx_http_agent_ctx_t  *ctx;

    r = turn->request;
    c = r->connection;

    if (turn->started) {
        rc = sc->rc;
        ngx_http_agent_store_call_reset(sc);

        ngx_http_agent_graph_saved(turn->run,
                                   ngx_http_agent_turn_saved(turn, rc));
        return;
    }

    rc = ngx_http_agent_turn_prepare(turn);

    if (rc == NGX_AGAIN) {
        return;
    }

    rc = ngx_http_agent_turn_started(turn, rc);

    if (rc != NGX_DONE) {
        if (rc == NGX_HTTP_AGENT_SENT) {
            ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
            rc = ctx->sent_rc;
        }

        ngx_http_finalize_request(r, rc);
    }

    ngx_http_run_posted_requests(c);
}


/* inside the caller's transaction: the lock, the state, the input step */

static ngx_int_t
ngx_http_agent_turn_input(ngx_http_request_t *r, ngx_http_agent_turn_t *turn,
    ngx_http_agent_session_t *session)
{
    ngx_int_t                     rc;
    ngx_uint_t                    i;
    ngx_str_t                     json, *id;
    ngx_array_t                  *update;
    ngx_http_agent_run_t         *run;
    ngx_http_agent_env_t         *env;
    ngx_http_agent_stream_t      *stream;
    ngx_http_agent_checkpoint_t   cp;
    ngx_http_agent_loc_conf_t    *alcf;
    ngx_http_agent_main_conf_t   *amcf;

    amcf = ngx_http_get_module_main_conf(r, ngx_http_agent_module);
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    id = &session->id;

    rc = ngx_http_agent_store_lock(&turn->sc, id, &turn->run_id,
                                   alcf->turn_lease);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_BUSY) {
        return ngx_http_agent_error(r, NGX_HTTP_CONFLICT,
                                    "a turn is already running on this "
                                    "session; wait for its end event");
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_error(r, NGX_HTTP_NOT_FOUND,
                                    "there is no session \"%V\"", id);
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the session could not be locked");
    }

    turn->locked = 1;

    run = ngx_http_agent_graph_run_create(r->pool, r->connection->log,
                                          turn->graph);
    if (run == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    turn->run = run;
    run->limit = alcf->recursion_limit;
    run->handlers = &ngx_http_agent_turn_handlers;
    run->ctx = turn;
    run->data = &turn->env;

    /* the images of the last agent_images_keep turns go to the model */
    rc = turn->fork.len
         ? ngx_http_agent_state_fork(&turn->sc, id, run, &cp, &turn->fork,
                                     alcf->images_keep - 1)
         : ngx_http_agent_state_load(&turn->sc, id, run, &cp,
                                     alcf->images_keep - 1);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_error(r, NGX_HTTP_NOT_FOUND,
                                    "session \"%V\" has no checkpoint \"%V\"",
                                    id, &turn->fork);
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the session's state could not be "
                                    "read");
    }

    turn->checkpoint_id = cp.id;
    turn->started_from = cp.id;
    turn->step = cp.step;
    run->messages_at_start =
                       run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages->nelts;

    env = &turn->env;
    env->session_id = *id;
    env->amcf = amcf;
    env->alcf = alcf;
    env->stream = &turn->stream;
    env->sql.timeout = alcf->sql_timeout;
    env->sql.max_rows = alcf->sql_max_rows;
    env->sql.max_bytes = alcf->sql_max_bytes;
    env->sql.thread_pool = alcf->thread_pool;
    env->sql.database = session->database.len
                        ? ngx_http_agent_database_find(amcf,
                                                       &session->database)
                        : NULL;

    if (env->sql.database == NULL) {
        env->sql.database = alcf->database;
    }

    stream = &turn->stream;
    stream->format = turn->format;
    stream->pool = r->pool;
    stream->session_id = *id;
    stream->run_id = turn->run_id;
    stream->graph = turn->graph->name;

    if (stream->sink == NULL) {
        stream->sink = ngx_http_agent_turn_sink;
        stream->sink_data = turn;
    }

    /* a run waits on a human: only an answer continues it */

    rc = ngx_http_agent_turn_waits(r, turn, run);

    if (rc == NGX_OK && turn->values) {

        /* a LangGraph command's update: written with the answer */

        update = ngx_http_agent_graph_update_create(r->pool);
        if (update == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        rc = ngx_http_agent_turn_values(turn, run, update);
        if (rc != NGX_OK) {
            return rc;
        }

        if (ngx_http_agent_graph_apply(run, update) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    if (rc != NGX_DECLINED) {
        return rc;
    }

    /* the input: the message, the text, the session, agent_input values */

    update = ngx_http_agent_graph_update_create(r->pool);
    if (update == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    for (i = 0; i < turn->nmsgs; i++) {
        if (ngx_http_agent_graph_write_message(run, update,
                                               NGX_HTTP_AGENT_CH_MESSAGES,
                                               &turn->msgs[i])
            != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    if (ngx_http_agent_json_quote(r->pool, id, &json) != NGX_OK
        || ngx_http_agent_graph_write_value(update,
                                            NGX_HTTP_AGENT_CH_SESSION_ID,
                                            &json) != NGX_OK
        || ngx_http_agent_json_quote(r->pool, &turn->text, &json) != NGX_OK
        || ngx_http_agent_graph_write_value(update, NGX_HTTP_AGENT_CH_INPUT,
                                            &json) != NGX_OK
        || ngx_http_agent_variables_inputs(r, run, update) != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_agent_turn_values(turn, run, update);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_graph_input(run, update);

    if (rc != NGX_OK && rc != NGX_AGAIN) {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the message could not be saved");
    }

    return rc;
}


static ngx_int_t
ngx_http_agent_turn_checkpoint(ngx_http_agent_run_t *run, ngx_str_t *node,
    ngx_int_t next)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_int_t                     rc;
    ngx_str_t                    *name, none;
    ngx_http_agent_node_t        *nodes;
    ngx_http_agent_checkpoint_t  *cp;

    cp = &turn->cp;

    ngx_memzero(cp, sizeof(ngx_http_agent_checkpoint_t));
    cp->id = turn->checkpoint_id;
    cp->step = turn->step;
    cp->run_id = turn->run_id;
    cp->lease = turn->lease_ms;

    /* the tokens of the step's model calls, in the same transaction */
    cp->prompt_tokens = turn->env.prompt_tokens - turn->saved.prompt_tokens;
    cp->completion_tokens = turn->env.completion_tokens
                            - turn->saved.completion_tokens;
    cp->cached_tokens = turn->env.cached_tokens - turn->saved.cached_tokens;

    nodes = run->graph->nodes.elts;
    name = (next == NGX_HTTP_AGENT_END) ? NULL : &nodes[next].name;

    /* the interrupt the run waits on is kept with the state; answered, gone */

    if (run->interrupt.len) {
        rc = ngx_http_agent_state_set(run, "__interrupt__", &run->interrupt);

    } else if (turn->resume.len) {
        ngx_str_set(&none, "null");
        rc = ngx_http_agent_state_set(run, "__interrupt__", &none);

    } else {
        rc = NGX_OK;
    }

    if (rc != NGX_OK) {
        return NGX_ERROR;
    }

    /* the last step lets the session go in the same transaction */
    cp->release = (next == NGX_HTTP_AGENT_END && turn->locked);

    rc = ngx_http_agent_state_save(&turn->sc, run, &turn->session_id, cp,
                                   node, name);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    return ngx_http_agent_turn_saved(turn, rc);
}


static ngx_int_t
ngx_http_agent_turn_saved(ngx_http_agent_turn_t *turn, ngx_int_t rc)
{
    if (rc == NGX_DECLINED) {
        turn->locked = 0;
        return ngx_http_agent_turn_lost(turn->run);
    }

    if (rc != NGX_OK) {
        return NGX_ERROR;
    }

    if (turn->cp.release) {
        turn->locked = 0;
    }

    ngx_str_null(&turn->resume);

    turn->checkpoint_id = turn->cp.id;
    turn->step = turn->cp.step;
    turn->saved.prompt_tokens = turn->env.prompt_tokens;
    turn->saved.completion_tokens = turn->env.completion_tokens;
    turn->saved.cached_tokens = turn->env.cached_tokens;

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_turn_node(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_uint_t start)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_str_t                 update;
    ngx_http_agent_json_t    *j;
    ngx_http_agent_event_t    ev;
    ngx_http_agent_stream_t  *s;

    s = &turn->stream;

    if (start && ngx_http_agent_turn_caps(turn, node) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_http_agent_trace_node(turn->env.trace, &node->name, run->step + 1,
                              start);

    if (start) {
        s->node = node->name;
        s->step = run->step + 1;
        ngx_str_null(&s->model_run_id);

        if (ngx_http_agent_stream_run_id(s, &s->node_run_id) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));

    if (!start && s->format->updates && !turn->json) {

        /*
         * the step's update, for the formats that show it; written as JSON
         * for those that read it so (updates 1; the LangGraph stream's
         * events mode), the others read the run
         */

        if (s->format->updates == 1 || (s->modes & NGX_HTTP_AGENT_MODE_EVENTS))
        {
            j = ngx_http_agent_json_create(run->pool);
            if (j == NULL) {
                return NGX_ERROR;
            }

            ngx_http_agent_state_update(j, run);

            if (ngx_http_agent_json_done(j, &update) != NGX_OK) {
                return NGX_ERROR;
            }

            ev.json = &update;
        }

        ev.type = NGX_HTTP_AGENT_EV_UPDATE;

        if (ngx_http_agent_stream_emit(s, &ev) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    ev.type = start ? NGX_HTTP_AGENT_EV_NODE_START
                    : NGX_HTTP_AGENT_EV_NODE_END;
    ev.json = NULL;

    return ngx_http_agent_stream_emit(s, &ev);
}


static ngx_int_t
ngx_http_agent_turn_sink(void *data, ngx_str_t *name, ngx_str_t *json,
    ngx_uint_t now)
{
    ngx_http_agent_turn_t *turn = data;

    if (turn->json) {
        return NGX_OK;
    }

    return ngx_http_agent_sse_named(&turn->sse, name, json, now);
}


void
ngx_http_agent_turn_done(ngx_http_agent_run_t *run, ngx_int_t rc)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_str_t                text, code;
    ngx_connection_t        *c;
    ngx_http_request_t      *r;
    ngx_http_agent_event_t   ev;

    r = turn->request;
    c = r->connection;

    ngx_http_agent_turn_exit_remove(&turn->queue);
    ngx_http_agent_limit_release(turn->env.limits);

    if (turn->timeout.timer_set) {
        ngx_del_timer(&turn->timeout);
    }

    if (turn->locked) {
        ngx_http_agent_store_unlock(&turn->wsc, &turn->session_id,
                                    &turn->run_id);
        turn->locked = 0;
    }

    if (rc == NGX_HTTP_AGENT_INTERRUPT) {
        ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                      "agent: turn on session \"%V\" waits for an answer "
                      "after %ui steps", &turn->session_id, run->step);

        /* the interrupt, then the turn's end as for any other */

        ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));
        ev.type = NGX_HTTP_AGENT_EV_INTERRUPT;
        ev.json = &run->interrupt;
        ev.checkpoint_id = &turn->checkpoint_id;

        if (!turn->sse.failed
            && ngx_http_agent_stream_emit(&turn->stream, &ev) != NGX_OK)
        {
            goto failed;
        }

        turn->interrupted = 1;
        rc = NGX_OK;

    } else if (rc != NGX_OK) {
        ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                      "agent: turn on session \"%V\" failed after %ui "
                      "steps: %V", &turn->session_id, run->step,
                      &run->error);

    } else {
        ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                      "agent: turn on session \"%V\" ended after %ui steps",
                      &turn->session_id, run->step);
    }

    ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));

    if (rc == NGX_OK) {
        ngx_http_agent_turn_answer(turn, &text);

        ev.type = NGX_HTTP_AGENT_EV_END;
        ev.text = &text;
        ev.checkpoint_id = &turn->checkpoint_id;
        ev.prompt_tokens = turn->env.prompt_tokens;
        ev.completion_tokens = turn->env.completion_tokens;
        ev.cached_tokens = turn->env.cached_tokens;
        ev.cache_write_tokens = turn->env.cache_write_tokens;

    } else {
        code = run->code;

        if (code.len == 0) {
            ngx_str_set(&code, "internal");
        }

        ev.type = NGX_HTTP_AGENT_EV_ERROR;
        ev.text = &run->error;
        ev.code = &code;
    }

    ngx_http_agent_metrics_cstr(NGX_HTTP_AGENT_M_TURNS, &turn->graph->name,
                                turn->interrupted ? "interrupted"
                                : ev.type == NGX_HTTP_AGENT_EV_END ? "ok"
                                : (run->code.len == 9
                                   && ngx_strncmp(run->code.data,
                                                  "cancelled", 9) == 0)
                                  ? "cancelled" : "error", 1);
    ngx_http_agent_metrics_observe(NGX_HTTP_AGENT_M_TURN_SECONDS,
                                   &turn->graph->name,
                                   ngx_current_msec - turn->env.start);
    ngx_http_agent_trace_end(turn->env.trace, ev.code,
                             ev.type == NGX_HTTP_AGENT_EV_ERROR ? ev.text
                                                                : NULL,
                             &turn->text,
                             ev.type == NGX_HTTP_AGENT_EV_END ? ev.text
                                                              : NULL);

    if (turn->hooks && turn->hooks->done) {
        turn->hooks->done(turn, &ev);
    }

    if (turn->sse.failed) {
        goto failed;
    }

    if (turn->json) {
        ngx_http_finalize_request(r,
                             (turn->hooks && turn->hooks->answer)
                             ? turn->hooks->answer(turn, &ev)
                             : ngx_http_agent_turn_json_send(r, run, &ev,
                                                      &turn->session_id,
                                                      &turn->run_id));
        ngx_http_run_posted_requests(c);
        return;
    }

    if (ngx_http_agent_stream_emit(&turn->stream, &ev) != NGX_OK
        || ngx_http_agent_sse_finish(&turn->sse) != NGX_OK)
    {
        goto failed;
    }

    ngx_http_finalize_request(r, NGX_OK);

    /* called from curl, timer and thread events, not a request handler */
    ngx_http_run_posted_requests(c);

    return;

failed:

    ngx_http_finalize_request(r, NGX_ERROR);
    ngx_http_run_posted_requests(c);
}


/* the answer: the text of the last AI message this turn appended */

static void
ngx_http_agent_turn_answer(ngx_http_agent_turn_t *turn, ngx_str_t *text)
{
    ngx_uint_t             i;
    ngx_array_t           *msgs;
    ngx_http_agent_msg_t  *m;

    ngx_str_set(text, "");

    msgs = turn->run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages;
    m = msgs->elts;

    for (i = msgs->nelts; i > turn->run->messages_at_start; i--) {
        if (m[i - 1].role.len && m[i - 1].role.data[0] == 'a') {
            *text = m[i - 1].content;
            return;
        }
    }
}


static void
ngx_http_agent_turn_cleanup(void *data)
{
    ngx_http_agent_turn_t *turn = data;

    if (turn->run && !turn->run->finished) {
        ngx_log_error(NGX_LOG_INFO, turn->request->connection->log, 0,
                      "agent: client gone, turn on session \"%V\" cancelled",
                      &turn->session_id);
        ngx_http_agent_graph_cancel(turn->run);
        ngx_http_agent_metrics_cstr(NGX_HTTP_AGENT_M_TURNS,
                                    &turn->graph->name, "cancelled", 1);
    }

    /* answers still to come are not the turn's any more; writes go on */
    ngx_http_agent_store_cancel(&turn->sc);
    ngx_http_agent_store_cancel(&turn->lease_sc);

    if (turn->locked) {
        ngx_http_agent_store_unlock(&turn->wsc, &turn->session_id,
                                    &turn->run_id);
        turn->locked = 0;
    }

    if (turn->lease.timer_set) {
        ngx_del_timer(&turn->lease);
    }

    if (turn->timeout.timer_set) {
        ngx_del_timer(&turn->timeout);
    }

    ngx_http_agent_limit_release(turn->env.limits);
    ngx_http_agent_turn_exit_remove(&turn->queue);

    ngx_http_agent_sse_stop(&turn->sse);
}
