
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_sql.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_ops.h"


/*
 * A turn's start: the lock, the state and the input step written (again
 * from the start of this pass on each answer of an asynchronous store),
 * the session's files on this host, then the stream and the graph.
 */


static ngx_int_t ngx_http_agent_turn_prepare(ngx_http_agent_turn_t *turn);
static ngx_int_t ngx_http_agent_turn_started(ngx_http_agent_turn_t *turn,
    ngx_int_t rc);
static void ngx_http_agent_turn_wake(ngx_http_agent_store_call_t *sc);
static void ngx_http_agent_turn_go(ngx_http_agent_turn_t *turn);
static void ngx_http_agent_turn_delayed(ngx_event_t *ev);
static ngx_int_t ngx_http_agent_turn_input(ngx_http_request_t *r,
    ngx_http_agent_turn_t *turn, ngx_http_agent_session_t *session);


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
    uint64_t                    t;
    ngx_int_t                   rc;
    ngx_str_t                   why;
    ngx_http_request_t         *r;
    ngx_http_agent_ctx_t       *ctx;
    ngx_http_agent_loc_conf_t  *alcf;

    ngx_str_null(&why);
    r = turn->request;
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    /* from the handler to here: the request read, parsed and routed */
    ngx_http_agent_phase_add(NGX_HTTP_AGENT_PHASE_PARSE, ctx->phase);
    ctx->phase = 0;

    /* every protocol's input checked alike, before its answer starts */

    rc = ngx_http_agent_turn_ask(turn, s);

    if (rc == NGX_OK && turn->in.hooks && turn->in.hooks->ready) {
        rc = turn->in.hooks->ready(turn);
    }

    if (rc != NGX_OK) {
        return rc;
    }

    /* agent_limit: refused now (429), or counted in until the turn ends */

    rc = ngx_http_agent_limit_acquire(r, alcf->limits, &turn->env.limits,
                                      &why);
    if (rc != NGX_OK) {
        return why.len ? ngx_http_agent_reply_error(r, rc, "%V", &why) : rc;
    }

    turn->session = *s;

    /* each checkpoint renews the lease, the input step's too */
    turn->lease_ms = alcf->turn_lease;
    turn->durability = turn->in.durability ? turn->in.durability
                                           : alcf->durability;

    ngx_http_agent_store_call_init(&turn->sc, r->pool, r->connection->log,
                                   ngx_http_agent_turn_wake, turn);
    ngx_http_agent_store_call_init(&turn->wsc, r->pool, r->connection->log,
                                   NULL, turn);
    ngx_http_agent_store_call_init(&turn->bsc, r->pool, r->connection->log,
                                   NULL, turn);
    ngx_http_agent_store_call_init(&turn->usc, r->pool, r->connection->log,
                                   ngx_http_agent_turn_unlocked, turn);
    ngx_http_agent_store_call_init(&turn->nsc, r->pool, r->connection->log,
                                   ngx_http_agent_turn_subgraph_saved, turn);

    /* a document the store refuses is the request's 422 (bounds.c) */
    turn->sc.refusal = &ctx->store.refused;
    turn->nsc.refusal = &ctx->store.refused;

    /*
     * a run answered as created (a background run, a task answered at
     * once) is asked for next on any worker, whose connection to a store
     * that writes behind sees it only once the begin's COMMIT is answered:
     * the turn starts then.  Other turns start with the COMMIT on its way,
     * their model call not a round trip later
     */
    turn->sc.stored = turn->in.created;

    /* its wake reads the answer: a busy SQLite file is waited out */
    turn->usc.once = 1;

    turn->sc.key = turn->session_id;
#if (NGX_THREADS)
    turn->sc.thread_pool = alcf->thread_pool;   /* files fetched */
#endif
    turn->wsc.key = turn->session_id;
    turn->bsc.key = turn->session_id;
    turn->usc.key = turn->session_id;
    turn->nsc.key = turn->session_id;

    ngx_http_agent_turn_generation(turn);

    t = ngx_http_agent_phase_now();

    rc = ngx_http_agent_turn_prepare(turn);

    ngx_http_agent_phase_add(NGX_HTTP_AGENT_PHASE_BEGIN, t);

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
    ngx_int_t            rc, rc2;
    ngx_array_t         *resources;
    ngx_http_request_t  *r;

    r = turn->request;
    turn->sc.n = 0;

    rc = ngx_http_agent_store_begin(&turn->sc);

    if (rc == NGX_AGAIN) {
        /* a busy file: woken to make this pass again */
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the session store is not available");
    }

    /* a refusal (a 400, a 413) is sent once the lease taken is let go */
    ngx_http_agent_reply_hold(r);

    rc = ngx_http_agent_turn_input(r, turn, &turn->session);

    if (rc == NGX_OK) {
        rc = ngx_http_agent_turn_resume(turn);
    }

    if (rc == NGX_OK && turn->in.record) {
        rc = ngx_http_agent_turn_record_begin(turn);
    }

    if (rc == NGX_OK && turn->in.hooks && turn->in.hooks->begin) {
        rc = turn->in.hooks->begin(turn);
    }

    /* the session's CSV tables, for the SQL layer */

    if (rc == NGX_OK && turn->files) {
        rc = ngx_http_agent_turn_files(turn, turn->files);

    } else if (rc == NGX_OK) {
        resources = ngx_array_create(r->pool, 4,
                                     sizeof(ngx_http_agent_resource_t));
        if (resources == NULL) {
            rc = NGX_HTTP_INTERNAL_SERVER_ERROR;

        } else {
            rc = ngx_http_agent_store_resource_list(&turn->sc,
                                                    &turn->session_id,
                                                    resources);
            if (rc == NGX_OK) {
                rc = ngx_http_agent_turn_files(turn, resources);

            } else if (rc != NGX_AGAIN) {
                rc = ngx_http_agent_reply_error(r,
                                                NGX_HTTP_INTERNAL_SERVER_ERROR,
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

        /*
         * a store without transactions: the lock taken is let go, and
         * waited for, so that the client's next request finds the session
         * free on any worker or host
         */

        rc2 = turn->locked
              ? ngx_http_agent_store_unlock(&turn->sc, &turn->session_id,
                                            &turn->run_id)
              : NGX_OK;

        /* on its way: not sent again by the cleanup of a client gone */
        turn->locked = 0;

        if (rc2 == NGX_AGAIN) {
            return NGX_AGAIN;
        }

        return ngx_http_agent_reply_release(r, rc);
    }

    (void) ngx_http_agent_reply_release(r, NGX_OK);

    rc = ngx_http_agent_store_commit(&turn->sc);

    if (rc == NGX_AGAIN) {
        /* on a store that writes behind: woken once it is stored */
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        turn->locked = 0;
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
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
    turn->sc.once = 1;
    ngx_http_agent_store_call_reset(&turn->sc);

    /* the lease is renewed while the turn runs (and by each checkpoint) */
    ngx_http_agent_turn_lease_hold(turn);

    ngx_http_agent_turn_watch(turn);

    /* agent_otlp: the turn's span tree, if it is traced */
    turn->env.trace = ngx_http_agent_trace_start(r, amcf->otlp,
                                                 &turn->in.graph->name,
                                                 &turn->session_id);

    /* a run taken over has no client: its events go to its sink alone */

    if (!turn->in.json && !ngx_http_agent_headless(r)
        && ngx_http_agent_sse_start(&turn->sse, r, alcf->heartbeat) != NGX_OK)
    {
        return NGX_ERROR;
    }

    ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));
    ev.type = NGX_HTTP_AGENT_EV_START;
    ev.text = &turn->in.text;

    if (ngx_http_agent_stream_emit(&turn->stream, &ev) != NGX_OK) {
        return NGX_ERROR;
    }

    /* the steps the begin saved, for a stream that shows them */

    if ((turn->before.id.len
         && ngx_http_agent_turn_checkpoint_event(turn, &turn->before)
            != NGX_OK)
        || (turn->input_step
            && ngx_http_agent_turn_checkpoint_event(turn, &turn->cp)
               != NGX_OK))
    {
        return NGX_ERROR;
    }

    /* a client that goes away ends the turn: see the cleanup */
    r->read_event_handler = ngx_http_test_reading;

    if (turn->in.delay) {
        /*
         * pending: the lease held, a cancel heard, the graph not run; not
         * cancelable, so that a worker that shuts down ends the turn as
         * it ends a running one (turn_stop.c) and the run is not left
         * pending
         */
        turn->delay.handler = ngx_http_agent_turn_delayed;
        turn->delay.data = turn;
        turn->delay.log = r->connection->log;
        ngx_add_timer(&turn->delay, turn->in.delay);

    } else {
        ngx_http_agent_turn_go(turn);
    }

    /*
     * a graph may have run to its end inside graph_start (no step waits):
     * the protocol's answer of the start then went with the end's
     */

    if (turn->in.hooks && turn->in.hooks->started) {
        turn->in.hooks->started(turn);
    }

    if (turn->in.record) {
        ngx_http_agent_turn_record_start(turn);
    }

    return NGX_DONE;
}


/* the graph runs, within agent_turn_timeout */

static void
ngx_http_agent_turn_go(ngx_http_agent_turn_t *turn)
{
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(turn->request, ngx_http_agent_module);

    if (alcf->turn_timeout) {
        turn->timeout.handler = ngx_http_agent_turn_timeout;
        turn->timeout.data = turn;
        turn->timeout.log = turn->request->connection->log;
        ngx_add_timer(&turn->timeout, alcf->turn_timeout);
    }

    ngx_http_agent_graph_start(turn->run);
}


/* a pending turn's time has come, unless it was cancelled meanwhile */

static void
ngx_http_agent_turn_delayed(ngx_event_t *ev)
{
    ngx_http_agent_turn_t *turn = ev->data;

    ngx_connection_t  *c;

    if (!ngx_http_agent_turn_running(turn)) {
        return;
    }

    c = turn->request->connection;

    ngx_http_agent_turn_go(turn);
    ngx_http_run_posted_requests(c);
}


/* an answer of the store: the start goes on, or a checkpoint is saved */

static void
ngx_http_agent_turn_wake(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_turn_t *turn = sc->data;

    ngx_int_t              rc;
    ngx_connection_t      *c;
    ngx_http_request_t    *r;

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
        ngx_http_agent_reply_finish(r, rc);
        return;
    }

    ngx_http_run_posted_requests(c);
}


/* inside the caller's transaction: the lock, the state, the input step */

static ngx_int_t
ngx_http_agent_turn_input(ngx_http_request_t *r, ngx_http_agent_turn_t *turn,
    ngx_http_agent_session_t *session)
{
    ngx_int_t                     rc, checked;
    ngx_uint_t                    i;
    ngx_str_t                     json, *id;
    ngx_array_t                  *update;
    ngx_http_agent_run_t         *run;
    ngx_http_agent_env_t         *env;
    ngx_http_agent_stream_t      *stream;
    ngx_http_agent_ctx_t         *ctx;
    ngx_http_agent_checkpoint_t   cp;
    ngx_http_agent_loc_conf_t    *alcf;
    ngx_http_agent_main_conf_t   *amcf;

    amcf = ngx_http_get_module_main_conf(r, ngx_http_agent_module);
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    /* not the session's: with turn->check, the open reads the session */
    id = &turn->session_id;

    run = ngx_http_agent_graph_run_create(r->pool, r->connection->log,
                                          turn->in.graph);
    if (run == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    turn->run = run;
    run->limit = alcf->recursion_limit;

    if (turn->in.recursion && turn->in.recursion < run->limit) {
        /* a run may ask for fewer steps, not more */
        run->limit = turn->in.recursion;
    }

    run->handlers = &ngx_http_agent_turn_handlers;
    run->ctx = turn;
    run->data = &turn->env;

    ngx_memzero(&cp, sizeof(ngx_http_agent_checkpoint_t));
    cp.step = -1;

    /*
     * the lease, the state and the session's files at once; the images of
     * the last agent_images_keep turns go to the model
     */

    if (turn->in.fork.len == 0) {
        turn->files = ngx_array_create(r->pool, 2,
                                       sizeof(ngx_http_agent_resource_t));
        if (turn->files == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

        rc = ngx_http_agent_store_session_open(&turn->sc, id,
                            turn->check ? ctx->owner : NULL,
                            turn->check ? session : NULL, &turn->run_id,
                            alcf->turn_lease, alcf->images_keep - 1, &cp,
                            run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages,
                            turn->files);

    } else {
        rc = ngx_http_agent_store_lock(&turn->sc, id, &turn->run_id,
                                       alcf->turn_lease);
    }

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_BUSY) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT,
                                          "a turn is already running on this "
                                          "session; wait for its end event");
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_no_session(r, id);
    }

    if (rc != NGX_OK && rc != NGX_ABORT) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the session could not be locked");
    }

    turn->locked = 1;
    turn->renewed = ngx_current_msec;

    /* the session read with the lease: the caller's checks, now */

    if (turn->check) {
        checked = turn->check(turn);
        if (checked != NGX_OK) {
            return checked;
        }
    }

    if (turn->in.fork.len) {
        rc = ngx_http_agent_checkpoint_fork(&turn->sc, id, run, &cp,
                                            &turn->in.fork,
                                            alcf->images_keep - 1);

    } else if (rc == NGX_ABORT) {
        /* taken over from a process that is gone: the state read apart */
        turn->files = NULL;
        rc = ngx_http_agent_checkpoint_load(&turn->sc, id, run, &cp,
                                            alcf->images_keep - 1);

    } else if (cp.id.len) {
        rc = ngx_http_agent_checkpoint_read(r->pool, run, &cp);

        if (rc == NGX_OK) {
            /* the messages came with the session: replaced ones now */
            rc = ngx_http_agent_checkpoint_replaced(r->pool, run, &cp);
        }
    }

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "session \"%V\" has no checkpoint "
                                          "\"%V\"%V", id, &turn->in.fork,
                                          ngx_http_agent_store_keep_said(r));
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the session's state could not be "
                                          "read");
    }

    turn->checkpoint_id = cp.id;
    turn->started_from = cp.id;
    turn->waiting = cp.waiting;
    turn->step = cp.step;

    if (turn->in.modes & (NGX_HTTP_AGENT_MODE_CHECKPOINTS
                          |NGX_HTTP_AGENT_MODE_DEBUG))
    {
        /* a resumed run's stream shows first where it starts from */
        turn->before = cp;
    }
    run->messages_at_start =
                       run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages->nelts;

    env = &turn->env;
    env->session_id = *id;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);

    if (ctx->owner) {
        env->owner = *ctx->owner;
    }

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
    stream->format = turn->in.format;
    stream->format_data = turn->in.format_data;
    stream->pool = r->pool;
    stream->session_id = *id;
    /* the protocol's own id of the run in its events (AG-UI's runId) */
    stream->run_id = turn->in.run_id.len ? turn->in.run_id : turn->run_id;
    stream->graph = turn->in.graph->name;
    stream->again = turn->in.again;

    if (stream->sink == NULL) {
        stream->sink = ngx_http_agent_turn_sink;
        stream->sink_data = turn;
    }

    /* a run waits on a human: only an answer continues it */

    rc = ngx_http_agent_turn_waits(r, turn, run, &cp.next);

    if (rc == NGX_OK && turn->in.values) {

        /* a LangGraph command's update: written with the answer */

        update = ngx_http_agent_graph_update_create(r->pool);
        if (update == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        rc = ngx_http_agent_turn_values(turn, run, update);
        if (rc != NGX_OK) {
            return rc;
        }

        /* a command's update cannot undo agent_input either */

        if (turn->in.values
            && ngx_http_agent_variables_inputs(r, run, update) != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
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

    for (i = 0; i < turn->in.nmsgs; i++) {
        if (ngx_http_agent_graph_write_message(run, update,
                                               NGX_HTTP_AGENT_CH_MESSAGES,
                                               &turn->in.msgs[i])
            != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    if (ngx_http_agent_json_quote(r->pool, id, &json) != NGX_OK
        || ngx_http_agent_graph_write_value(update,
                                            NGX_HTTP_AGENT_CH_SESSION_ID,
                                            &json) != NGX_OK
        || ngx_http_agent_json_quote(r->pool, &turn->in.text, &json) != NGX_OK
        || ngx_http_agent_graph_write_value(update, NGX_HTTP_AGENT_CH_INPUT,
                                            &json) != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* agent_input last: what the server sets wins over the client's */

    rc = ngx_http_agent_turn_values(turn, run, update);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ngx_http_agent_variables_inputs(r, run, update) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (turn->in.before) {
        rc = ngx_http_agent_turn_before(turn, run);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    rc = ngx_http_agent_graph_input(run, update);

    if (rc != NGX_OK && rc != NGX_AGAIN) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the message could not be saved");
    }

    return rc;
}
