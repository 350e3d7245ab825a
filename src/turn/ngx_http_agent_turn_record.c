
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_ops.h"


/*
 * A turn's run, as the runs table keeps it, for any protocol that asks
 * (in.record): its row written in the begin's unit of writes, its status
 * at its end, and a poll that hears a cancel asked on another worker or
 * host (one asked on this worker is heard at once:
 * ngx_http_agent_turn_record_stop).  The LangGraph API's runs, A2A's
 * tasks, Open Responses' responses and MCP's calls are such records.
 */


#define NGX_HTTP_AGENT_TURN_POLL  100

/* a pending run's graph has not started: its cancel is heard less often */
#define NGX_HTTP_AGENT_TURN_POLL_PENDING  1000

#define ngx_http_agent_turn_record_poll_ms(turn)                              \
    ((turn)->in.record->pending && ngx_http_agent_turn_pending(turn)         \
     ? NGX_HTTP_AGENT_TURN_POLL_PENDING : NGX_HTTP_AGENT_TURN_POLL)


static void ngx_http_agent_turn_record_poll(ngx_event_t *ev);
static void ngx_http_agent_turn_record_polled(ngx_http_agent_store_call_t *sc);
static ngx_int_t ngx_http_agent_turn_record_write(ngx_http_agent_turn_t *turn);
static void ngx_http_agent_turn_record_stored(
    ngx_http_agent_store_call_t *sc);
static ngx_int_t ngx_http_agent_turn_record_outcome(
    ngx_http_agent_turn_t *turn, ngx_http_agent_event_t *ev);
static ngx_int_t ngx_http_agent_turn_record_kept(void *data, int64_t seq,
    ngx_str_t *event, ngx_str_t *json);


/* a run's outcome is its event 0: a join reads from event 1 on */
#define NGX_HTTP_AGENT_TURN_OUTCOME  0


/* in the turn's first unit of writes: the run's row */

ngx_int_t
ngx_http_agent_turn_record_begin(ngx_http_agent_turn_t *turn)
{
    u_char                        *p;
    ngx_int_t                      rc;
    ngx_http_request_t            *r;
    ngx_http_agent_run_row_t       row;
    ngx_http_agent_loc_conf_t     *alcf;
    ngx_http_agent_turn_record_t  *rec;

    rec = turn->in.record;
    r = turn->request;

    p = rec->row.created_at.data;

    if (p == NULL) {
        /* the same time in each pass of the turn's start */
        p = ngx_pnalloc(r->pool, 32);
        if (p == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        (void) ngx_http_agent_store_now(p);
    }

    rec->turn = turn;
    rec->pending = (turn->in.delay > 0);

    rec->row.run_id = turn->run_id;
    rec->row.thread_id = turn->session_id;

    /* no assistant: the graph's name, which LangGraph takes as one too */
    rec->row.assistant_id = turn->in.assistant.len ? turn->in.assistant
                                                   : turn->in.graph->name;
    if (rec->pending) {
        ngx_str_set(&rec->row.status, "pending");

    } else {
        ngx_str_set(&rec->row.status, "running");
    }

    rec->row.checkpoint = turn->started_from;
    rec->row.created_at.data = p;
    rec->row.created_at.len = 24;

    if (rec->claimed) {
        /* its row is the lost worker's, "running" still */
        return NGX_OK;
    }

    /* where it runs: a worker that takes it over runs it there */
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    rec->row.origin = alcf->location;

    row = rec->row;

    /* its limits' keys: a worker that takes it over counts under them */

    if (ngx_http_agent_limit_keys(r, alcf->limits, &row.limit_keys)
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /*
     * the kept events of runs ended before the join window go now, as a
     * run that may keep some starts (not our API's turns: one more write
     * a turn for nothing of theirs)
     */

    if (!rec->quiet) {
        row.expire.data = ngx_pnalloc(r->pool, 32);
        if (row.expire.data == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        row.expire.len = ngx_http_agent_store_ago(row.expire.data,
                                                  alcf->run_events_keep)
                         - row.expire.data;
    }

    /* a run that fails keeps its error too: its end marks it then */
    rc = ngx_http_agent_store_run_insert(&turn->sc, &row, rec->events);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the run could not be saved");
    }

    return NGX_OK;
}


/* the graph started (or is pending): the poll begins, unless it ended */

void
ngx_http_agent_turn_record_start(ngx_http_agent_turn_t *turn)
{
    ngx_http_agent_turn_record_t  *rec;

    rec = turn->in.record;

    if (rec->finished || rec->quiet || !ngx_http_agent_turn_running(turn)) {
        return;
    }

    rec->poll.handler = ngx_http_agent_turn_record_poll;
    rec->poll.data = turn;
    rec->poll.log = turn->request->connection->log;
    rec->poll.cancelable = 1;
    ngx_add_timer(&rec->poll, ngx_http_agent_turn_record_poll_ms(turn));
}


static void
ngx_http_agent_turn_record_poll(ngx_event_t *ev)
{
    ngx_http_agent_turn_t *turn = ev->data;

    ngx_http_agent_turn_record_t  *rec;

    rec = turn->in.record;

    if (rec->finished || !ngx_http_agent_turn_running(turn)) {
        return;
    }

    if (turn->in.hooks && turn->in.hooks->poll) {
        turn->in.hooks->poll(turn);
    }

    if (rec->poll_sc.waiting) {
        ngx_add_timer(ev, ngx_http_agent_turn_record_poll_ms(turn));
        return;
    }

    if (rec->poll_sc.pool == NULL) {
        ngx_http_agent_store_call_init(&rec->poll_sc, turn->request->pool,
                                       ev->log,
                                       ngx_http_agent_turn_record_polled,
                                       turn);
        rec->poll_sc.key = turn->session_id;
        rec->poll_sc.gen = turn->wsc.gen;
    }

    /* what this poll asks, kept for its answer: not asked again then */
    rec->poll_status = (rec->pending && !ngx_http_agent_turn_pending(turn));

    ngx_http_agent_turn_record_polled(&rec->poll_sc);
}


/* the cancel flag read: now, or when the store answers */

static void
ngx_http_agent_turn_record_polled(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_turn_t *turn = sc->data;

    ngx_int_t                      rc;
    ngx_str_t                      action;
    ngx_connection_t              *c;
    ngx_http_agent_turn_record_t  *rec;

    rec = turn->in.record;
    sc->n = 0;

    if (rec->poll_status) {

        /* a pending run's time came: its graph runs, its row says so */

        rc = ngx_http_agent_store_run_status(sc, &turn->run_id, "running");

        if (rc == NGX_AGAIN) {
            return;
        }

        ngx_http_agent_store_call_reset(sc);
        rec->pending = 0;
        rec->poll_status = 0;

    } else {
        rc = ngx_http_agent_store_run_cancelled(sc, &turn->run_id, &action);

        if (rc == NGX_AGAIN) {
            return;
        }

        ngx_http_agent_store_call_reset(sc);

        if (rc == NGX_OK && !rec->finished
            && ngx_http_agent_turn_running(turn))
        {
            c = turn->request->connection;
            ngx_http_agent_turn_record_stop(turn, action.len == 8
                                   && ngx_strncmp(action.data, "rollback", 8)
                                      == 0);
            ngx_http_run_posted_requests(c);
            return;
        }
    }

    if (rec->finished || !ngx_http_agent_turn_running(turn)) {
        return;
    }

    if (!rec->poll.timer_set) {
        ngx_add_timer(&rec->poll, ngx_http_agent_turn_record_poll_ms(turn));
    }
}


/*
 * stop the run now, a protocol's cancel (its API, another worker's flag):
 * its model call and tools too; no tokens after this
 */

void
ngx_http_agent_turn_record_stop(ngx_http_agent_turn_t *turn,
    ngx_uint_t rollback)
{
    ngx_http_agent_turn_record_t  *rec;

    rec = turn->in.record;

    if (!ngx_http_agent_turn_running(turn)) {
        return;
    }

    ngx_log_error(NGX_LOG_INFO, turn->request->connection->log, 0,
                  "agent: run \"%V\" on thread \"%V\" cancelled",
                  &turn->run_id, &turn->session_id);

    if (rec) {
        rec->cancelled = 1;
        rec->rollback = rollback;
    }

    ngx_http_agent_graph_cancel(turn->run);
    (void) ngx_http_agent_graph_fail(turn->run, "cancelled", "the run was "
                                     "cancelled; the steps it completed are "
                                     "saved");
    turn->finalize(turn, NGX_ERROR);
}


/*
 * A run asked to stop, wherever it runs: at once on this worker, else by
 * its row (NGX_DECLINED: it is not running).  The protocols answer the
 * cancel as done (cancelled, canceled): its row says "interrupted" before
 * the answer, so that a read through any worker right after it finds it
 * so, not running until its worker's poll, or its end (written behind on
 * PostgreSQL) when it runs here; that end does not undo it (run_status)
 */

ngx_int_t
ngx_http_agent_turn_record_cancel(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_uint_t rollback)
{
    ngx_str_t               action;
    ngx_http_agent_turn_t  *turn;

    turn = ngx_http_agent_turn_find(run_id);

    if (turn && turn->in.record && ngx_http_agent_turn_running(turn)) {
        ngx_http_agent_turn_record_stop(turn, rollback);
    }

    if (rollback) {
        ngx_str_set(&action, "rollback");

    } else {
        ngx_str_set(&action, "interrupt");
    }

    return ngx_http_agent_store_run_cancel(sc, run_id, &action,
                                           rollback
                                           ? NGX_HTTP_AGENT_STORE_CANCEL_ASK
                                           : NGX_HTTP_AGENT_STORE_CANCEL_NOW);
}


/*
 * The run's end, after the protocol's (its kept events): its status, its
 * steps undone when a cancel asked it, a thread made for it alone gone.
 * The turn's answer ends after they are stored: a client that asks for
 * the run next finds it ended.
 */

ngx_int_t
ngx_http_agent_turn_record_end(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev)
{
    ngx_http_agent_turn_record_t  *rec;

    rec = turn->in.record;

    if (rec->poll.timer_set) {
        ngx_del_timer(&rec->poll);
    }

    if (rec->cancelled) {
        rec->status = "interrupted";

    } else if (ev->type == NGX_HTTP_AGENT_EV_ERROR) {
        rec->status = "error";

    } else if (turn->interrupted) {
        rec->status = "interrupted";

    } else {
        rec->status = "success";
    }

    rec->finished = 1;

    if (rec->keep && ngx_http_agent_turn_record_outcome(turn, ev) != NGX_OK) {
        ngx_log_error(NGX_LOG_ERR, turn->request->connection->log, 0,
                      "agent: the outcome of run \"%V\" could not be kept",
                      &turn->run_id);
    }

    ngx_http_agent_store_call_init(&rec->end_sc, turn->request->pool,
                                   turn->request->connection->log,
                                   ngx_http_agent_turn_record_stored, turn);
    rec->end_sc.key = turn->session_id;
    rec->end_sc.gen = turn->wsc.gen;

    return ngx_http_agent_turn_record_write(turn);
}


/* the end's writes, sent together; NGX_AGAIN until all are answered */

static ngx_int_t
ngx_http_agent_turn_record_write(ngx_http_agent_turn_t *turn)
{
    ngx_str_t                      name;
    ngx_int_t                      rc, status, rollback, gone, kept;
    ngx_uint_t                     tx;
    ngx_log_t                     *log;
    ngx_http_agent_store_call_t   *sc;
    ngx_http_agent_turn_record_t  *rec;

    rec = turn->in.record;
    log = turn->request->connection->log;
    sc = &rec->end_sc;
    sc->n = 0;

    ngx_str_set(&name, "outcome");

    /*
     * A store that answers at once (SQLite): the outcome and the status in
     * one transaction, whose begin waits out a file another process holds
     * (the pass is made again); without it, a busy file would leave the
     * run "running"
     */

    tx = 0;

    if (!ngx_http_agent_store_has(NGX_HTTP_AGENT_STORE_BEHIND)) {
        rc = ngx_http_agent_store_begin(sc);
        if (rc == NGX_AGAIN) {
            return NGX_AGAIN;
        }

        tx = (rc == NGX_OK);
    }

    kept = rec->outcome.len
           ? ngx_http_agent_store_run_event(sc, &turn->run_id,
                                            NGX_HTTP_AGENT_TURN_OUTCOME,
                                            &name, &rec->outcome)
           : NGX_OK;

    /*
     * after the outcome: a run seen over has its outcome there; the
     * status lets the thread go with it (the store's run_status)
     */
    status = ngx_http_agent_store_run_status(sc, &turn->run_id, rec->status);

    if (tx) {
        if (kept == NGX_OK && status == NGX_OK) {
            if (ngx_http_agent_store_commit(sc) != NGX_OK) {
                status = NGX_ERROR;
            }

        } else {
            ngx_http_agent_store_rollback(sc);
        }
    }

    rollback = rec->rollback
               ? ngx_http_agent_store_run_rollback(sc, &turn->session_id,
                                                   &turn->run_id,
                                                   &turn->started_from)
               : NGX_OK;

    gone = rec->stateless
           ? ngx_http_agent_store_session_delete(sc, &turn->session_id)
           : NGX_OK;

    if (status == NGX_AGAIN || rollback == NGX_AGAIN || gone == NGX_AGAIN
        || kept == NGX_AGAIN)
    {
        return NGX_AGAIN;
    }

    if (status == NGX_ERROR) {
        /*
         * the store failed (a connection cut): the status, which lets the
         * thread go with it, is written again once the store is back
         */
        turn->locked = 0;
        ngx_http_agent_store_run_end_later(&turn->session_id, &turn->run_id,
                                           sc->gen, rec->status, log);
    }

    if (turn->locked) {
        turn->locked = 0;

        /* a status not written (fenced): the thread let go all the same */
        if (status != NGX_OK) {
            (void) ngx_http_agent_store_unlock(&turn->wsc, &turn->session_id,
                                               &turn->run_id);
        }
    }

    if (kept != NGX_OK) {
        ngx_log_error(NGX_LOG_ERR, log, 0,
                      "agent: the outcome of run \"%V\" could not be saved",
                      &turn->run_id);
    }

    if (rollback != NGX_OK) {
        ngx_log_error(NGX_LOG_ERR, log, 0,
                      "agent: run \"%V\" could not be rolled back",
                      &turn->run_id);
    }

    ngx_http_agent_store_call_reset(sc);

    return NGX_OK;
}


static void
ngx_http_agent_turn_record_stored(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_turn_t *turn = sc->data;

    if (ngx_http_agent_turn_record_write(turn) == NGX_AGAIN) {
        return;
    }

    turn->finalize(turn, NGX_DONE);
}


/* the request ends: a run its client left, unfinished, is marked so */

void
ngx_http_agent_turn_record_cleanup(ngx_http_agent_turn_t *turn)
{
    ngx_http_agent_turn_record_t  *rec;

    rec = turn->in.record;

    if (rec->poll.timer_set) {
        ngx_del_timer(&rec->poll);
    }

    /* answers still to come are not this request's any more */

    if (rec->poll_sc.pool) {
        ngx_http_agent_store_cancel(&rec->poll_sc);
    }

    if (rec->end_sc.pool) {
        ngx_http_agent_store_cancel(&rec->end_sc);
    }

    if (!rec->finished && rec->turn) {
        /* the client went away and the run with it */
        (void) ngx_http_agent_store_run_status(&turn->wsc, &turn->run_id,
                                               "interrupted");
    }
}


/*
 * how the run ended, in our words: {"answer"}, {"error": {"code",
 * "message"}} or {"interrupt"}, and its last checkpoint
 */

static ngx_int_t
ngx_http_agent_turn_record_outcome(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev)
{
    ngx_http_agent_json_t         *j;
    ngx_http_agent_turn_record_t  *rec;

    rec = turn->in.record;

    j = ngx_http_agent_json_create(turn->request->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);

    if (ev->type == NGX_HTTP_AGENT_EV_ERROR) {
        ngx_http_agent_json_key(j, "error");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "code");
        ngx_http_agent_json_str(j, ev->code);
        ngx_http_agent_json_key(j, "message");
        ngx_http_agent_json_str(j, ev->text);
        ngx_http_agent_json_end(j);

    } else if (turn->interrupted && turn->run->interrupt.len) {
        /* our generator's JSON, kept with the state too */
        ngx_http_agent_json_key(j, "interrupt");
        ngx_http_agent_json_raw(j, &turn->run->interrupt);

    } else if (ev->text) {
        ngx_http_agent_json_key(j, "answer");
        ngx_http_agent_json_str(j, ev->text);
    }

    if (turn->checkpoint_id.len) {
        ngx_http_agent_json_key(j, "checkpoint_id");
        ngx_http_agent_json_str(j, &turn->checkpoint_id);
    }

    ngx_http_agent_json_end(j);

    return ngx_http_agent_json_done(j, &rec->outcome);
}


/*
 * A run looked up by its id, whoever's thread it is on (the protocol
 * checks the thread's owner): its row, and how it ended where that was
 * kept.  NGX_DECLINED: no such run.  Two calls of the request's pass.
 */

ngx_int_t
ngx_http_agent_turn_record_read(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_http_agent_turn_outcome_t *out)
{
    ngx_int_t  rc, rc2;

    rc = ngx_http_agent_store_run_get(sc, NULL, run_id, &out->row);
    rc2 = ngx_http_agent_turn_record_ended(sc, run_id, out);

    if (rc == NGX_AGAIN || rc2 == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_OK && rc2 != NGX_OK) {
        return NGX_ERROR;
    }

    return rc;
}


/* how a run ended, where that was kept (out->ended): one call of a pass */

ngx_int_t
ngx_http_agent_turn_record_ended(ngx_http_agent_store_call_t *sc,
    ngx_str_t *run_id, ngx_http_agent_turn_outcome_t *out)
{
    out->pool = sc->pool;

    return ngx_http_agent_store_run_events(sc, run_id,
                                           NGX_HTTP_AGENT_TURN_OUTCOME - 1, 1,
                                           ngx_http_agent_turn_record_kept,
                                           out);
}


static ngx_int_t
ngx_http_agent_turn_record_kept(void *data, int64_t seq, ngx_str_t *event,
    ngx_str_t *json)
{
    ngx_http_agent_turn_outcome_t *out = data;

    yajl_val  v, e;

    if (seq != NGX_HTTP_AGENT_TURN_OUTCOME) {
        return NGX_OK;
    }

    /* the store's JSON is ours, read as any other: parsed, checked */

    v = ngx_http_agent_json_parse(out->pool, json->data, json->len, NULL);
    if (v == NULL || !YAJL_IS_OBJECT(v)) {
        return NGX_OK;
    }

    out->ended = 1;

    (void) ngx_http_agent_json_get_str(v, "answer", &out->answer);
    (void) ngx_http_agent_json_get_str(v, "checkpoint_id", &out->checkpoint_id);

    e = ngx_http_agent_json_get(v, "error");

    if (e && YAJL_IS_OBJECT(e)) {
        (void) ngx_http_agent_json_get_str(e, "code", &out->code);
        (void) ngx_http_agent_json_get_str(e, "message", &out->error);
    }

    e = ngx_http_agent_json_get(v, "interrupt");

    if (e && YAJL_IS_OBJECT(e)
        && ngx_http_agent_json_encode(out->pool, e, &out->interrupt) != NGX_OK)
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * Where a run looked up stands: its row's status, an "interrupted" one
 * told apart by its outcome (it waits at an interrupt, or it was stopped)
 */

ngx_http_agent_run_state_e
ngx_http_agent_turn_record_state(ngx_http_agent_turn_outcome_t *out)
{
    ngx_uint_t  i;
    ngx_str_t  *st;

    static ngx_str_t  names[] = {
        ngx_string("pending"), ngx_string("running"),
        ngx_string("success"), ngx_string("error")
    };

    st = &out->row.status;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (st->len == names[i].len
            && ngx_strncmp(st->data, names[i].data, st->len) == 0)
        {
            return (ngx_http_agent_run_state_e) i;
        }
    }

    return out->interrupt.len ? NGX_HTTP_AGENT_RUN_WAITS
                              : NGX_HTTP_AGENT_RUN_CANCELLED;
}

