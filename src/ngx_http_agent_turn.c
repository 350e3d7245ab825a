
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


typedef struct {
    ngx_http_request_t             *request;
    ngx_http_agent_run_t           *run;
    ngx_http_agent_react_t          react;
    ngx_http_agent_sse_t            sse;
    ngx_str_t                       session_id;
    ngx_str_t                       run_id;
    ngx_str_t                       checkpoint_id;
    int64_t                         step;
    int64_t                         prompt_at_start;
    int64_t                         completion_at_start;
    ngx_event_t                     lease;
    ngx_msec_t                      lease_ms;
    ngx_queue_t                     queue;     /* the worker's turns */
    unsigned                        locked:1;
    unsigned                        queued:1;
} ngx_http_agent_turn_t;


static ngx_int_t ngx_http_agent_turn_input(ngx_http_request_t *r,
    ngx_http_agent_turn_t *turn, ngx_http_agent_session_t *session,
    ngx_http_agent_msg_t *msg, ngx_str_t *text);
static ngx_int_t ngx_http_agent_turn_images(ngx_http_request_t *r,
    yajl_val images, ngx_str_t *text, ngx_str_t *out);
static ngx_int_t ngx_http_agent_turn_checkpoint(ngx_http_agent_run_t *run,
    ngx_str_t *node, ngx_int_t next);
static ngx_int_t ngx_http_agent_turn_emit(void *data, ngx_str_t *json);
static void ngx_http_agent_turn_done(ngx_http_agent_run_t *run,
    ngx_int_t rc);
static void ngx_http_agent_turn_cleanup(void *data);
static void ngx_http_agent_turn_track(ngx_http_agent_turn_t *turn,
    ngx_uint_t on);
static void ngx_http_agent_turn_exit_watch(ngx_event_t *ev);
static void ngx_http_agent_turn_lease(ngx_event_t *ev);



static ngx_http_agent_run_handlers_t  ngx_http_agent_turn_handlers = {
    ngx_http_agent_turn_checkpoint,
    ngx_http_agent_turn_done
};


/* the worker's running turns, watched while nginx shuts the worker down */
static ngx_queue_t   ngx_http_agent_turns;
static ngx_event_t   ngx_http_agent_exit_watch;
static ngx_msec_t    ngx_http_agent_exit_start;


ngx_int_t
ngx_http_agent_turn_start(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body)
{
    u_char                      *p;
    yajl_val                     v, images;
    ngx_int_t                    rc;
    ngx_str_t                    text, name, json;
    ngx_http_cleanup_t          *cln;
    ngx_http_agent_msg_t         msg;
    ngx_http_agent_run_t        *run;
    ngx_http_agent_turn_t       *turn;
    ngx_http_agent_json_t       *j;
    ngx_http_agent_model_t      *model;
    ngx_http_agent_react_t      *react;
    ngx_http_agent_session_t     s;
    ngx_http_agent_loc_conf_t   *alcf;
    ngx_http_agent_main_conf_t  *amcf;

    amcf = ngx_http_get_module_main_conf(r, ngx_http_agent_module);
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    rc = ngx_http_agent_parse_object(r, body, &v, 0);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ngx_http_agent_json_get_str(v, "message", &text) != NGX_OK
        || text.len == 0)
    {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "\"message\" must be a non-empty "
                                    "string");
    }

    ngx_memzero(&msg, sizeof(ngx_http_agent_msg_t));
    ngx_str_set(&msg.role, "user");
    msg.content = text;

    images = ngx_http_agent_json_get(v, "images");

    if (images && !YAJL_IS_NULL(images)) {
        rc = ngx_http_agent_turn_images(r, images, &text, &msg.images);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    rc = ngx_http_agent_json_get_str(v, "model", &name);
    if (rc == NGX_ERROR) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "\"model\" must be a string");
    }

    if (rc == NGX_DECLINED) {
        ngx_str_null(&name);
    }

    rc = ngx_http_agent_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    if (name.len == 0) {
        name = s.model;
    }

    model = name.len ? ngx_http_agent_model_find(amcf, &name)
                     : amcf->models.elts;

    if (model == NULL) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "there is no model \"%V\"", &name);
    }

    turn = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_turn_t));
    if (turn == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    react = &turn->react;

    if (model->key_env.len) {
        p = (u_char *) getenv((char *) model->key_env.data);

        if (p == NULL || *p == '\0') {
            return ngx_http_agent_error(r, NGX_HTTP_SERVICE_UNAVAILABLE,
                                        "the model \"%V\" has no API key: "
                                        "set %V for nginx and add \"env %V;"
                                        "\" to nginx.conf", &model->name,
                                        &model->key_env, &model->key_env);
        }

        react->api_key.data = p;
        react->api_key.len = ngx_strlen(p);
    }

    turn->request = r;
    turn->session_id = s.id;
    react->model = model;

    p = ngx_pnalloc(r->pool, 36);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_store_new_id(p);
    turn->run_id.data = p;
    turn->run_id.len = 36;

    cln = ngx_http_cleanup_add(r, 0);
    if (cln == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    cln->handler = ngx_http_agent_turn_cleanup;
    cln->data = turn;

    /*
     * the lock, the state and the input step in one transaction: the
     * fewer write transactions a turn has, the less workers wait on each
     * other
     */

    if (ngx_http_agent_store_begin() != NGX_OK) {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the session store is not available");
    }

    rc = ngx_http_agent_turn_input(r, turn, &s, &msg, &text);

    if (rc != NGX_OK) {
        ngx_http_agent_store_rollback();
        turn->locked = 0;
        return rc;
    }

    if (ngx_http_agent_store_commit() != NGX_OK) {
        turn->locked = 0;
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the message could not be saved");
    }

    if (ngx_http_agent_sse_start(&turn->sse, r, alcf->heartbeat) != NGX_OK) {
        return NGX_ERROR;
    }

    run = turn->run;

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "start");
    ngx_http_agent_json_key(j, "session_id");
    ngx_http_agent_json_str(j, &s.id);
    ngx_http_agent_json_key(j, "run_id");
    ngx_http_agent_json_str(j, &turn->run_id);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &json) != NGX_OK
        || ngx_http_agent_sse_event(&turn->sse, &json) != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* a client that goes away ends the turn: see the cleanup */
    r->read_event_handler = ngx_http_test_reading;

    ngx_http_agent_graph_start(run);

    return NGX_DONE;
}


/* inside the caller's transaction: the lock, the state, the input step */

static ngx_int_t
ngx_http_agent_turn_input(ngx_http_request_t *r, ngx_http_agent_turn_t *turn,
    ngx_http_agent_session_t *session, ngx_http_agent_msg_t *msg,
    ngx_str_t *text)
{
    ngx_int_t                     rc;
    ngx_str_t                     json, node, *id;
    ngx_http_agent_run_t         *run;
    ngx_http_agent_react_t       *react;
    ngx_http_agent_checkpoint_t   cp;
    ngx_http_agent_loc_conf_t    *alcf;
    ngx_http_agent_main_conf_t   *amcf;

    amcf = ngx_http_get_module_main_conf(r, ngx_http_agent_module);
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    id = &session->id;
    react = &turn->react;

    rc = ngx_http_agent_store_lock(id, &turn->run_id, alcf->turn_lease);

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

    /* the lease is renewed while the turn runs (and by each checkpoint) */
    turn->lease_ms = alcf->turn_lease;
    turn->lease.handler = ngx_http_agent_turn_lease;
    turn->lease.data = turn;
    turn->lease.log = r->connection->log;
    turn->lease.cancelable = 1;
    ngx_add_timer(&turn->lease, turn->lease_ms / 3);

    ngx_http_agent_turn_track(turn, 1);

    run = ngx_http_agent_graph_run_create(r->pool, r->connection->log,
                                          &ngx_http_agent_react_graph);
    if (run == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    turn->run = run;
    run->limit = alcf->recursion_limit;
    run->handlers = &ngx_http_agent_turn_handlers;
    run->ctx = turn;
    run->data = react;

    if (ngx_http_agent_state_load(r->pool, id, run, &cp) != NGX_OK) {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the session's state could not be "
                                    "read");
    }

    turn->checkpoint_id = cp.id;
    turn->step = cp.step;
    turn->prompt_at_start =
                     run->state[NGX_HTTP_AGENT_REACT_PROMPT_TOKENS].counter;
    turn->completion_at_start =
                 run->state[NGX_HTTP_AGENT_REACT_COMPLETION_TOKENS].counter;

    react->session_id = *id;
    react->system_prompt = &amcf->system_prompt;
    react->alcf = alcf;
    react->calls_at_start =
                       run->state[NGX_HTTP_AGENT_REACT_MODEL_CALLS].counter;
    react->emit = ngx_http_agent_turn_emit;
    react->emit_data = turn;
    react->sql.timeout = alcf->sql_timeout;
    react->sql.max_rows = alcf->sql_max_rows;
    react->sql.max_bytes = alcf->sql_max_bytes;
    react->sql.thread_pool = alcf->thread_pool;
    react->sql.database = session->database.len
                          ? ngx_http_agent_database_find(amcf,
                                                         &session->database)
                          : NULL;

    if (react->sql.database == NULL) {
        react->sql.database = alcf->database;
    }

    /* the input is a step of its own, as LangGraph's "__input__" is */

    run->update = ngx_http_agent_graph_update_create(r->pool);
    if (run->update == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_agent_graph_write_message(run, run->update,
                                           NGX_HTTP_AGENT_REACT_MESSAGES,
                                           msg)
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_agent_json_quote(r->pool, id, &json) != NGX_OK
        || ngx_http_agent_graph_write_value(run->update,
                                            NGX_HTTP_AGENT_REACT_SESSION_ID,
                                            &json) != NGX_OK
        || ngx_http_agent_json_quote(r->pool, text, &json) != NGX_OK
        || ngx_http_agent_graph_write_value(run->update,
                                         NGX_HTTP_AGENT_REACT_CURRENT_QUERY,
                                         &json) != NGX_OK
        || ngx_http_agent_graph_apply(run, run->update) != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_str_set(&node, "__input__");

    if (ngx_http_agent_turn_checkpoint(run, &node,
                                       ngx_http_agent_react_graph.entry)
        != NGX_OK)
    {
        return ngx_http_agent_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                    "the message could not be saved");
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_turn_images(ngx_http_request_t *r, yajl_val images,
    ngx_str_t *text, ngx_str_t *out)
{
    size_t                  i;
    yajl_val                img;
    ngx_str_t               data, mime, url;
    ngx_http_agent_json_t  *j;

    if (!YAJL_IS_ARRAY(images)) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "\"images\" must be an array");
    }

    if (images->u.array.len == 0) {
        return NGX_OK;
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* the provider's content parts: the text, then each image */

    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "text");
    ngx_http_agent_json_key(j, "text");
    ngx_http_agent_json_str(j, text);
    ngx_http_agent_json_end(j);

    for (i = 0; i < images->u.array.len; i++) {
        img = images->u.array.values[i];

        if (ngx_http_agent_json_get_str(img, "data", &data) != NGX_OK
            || data.len == 0
            || ngx_http_agent_json_get_str(img, "mime_type", &mime) != NGX_OK
            || mime.len < 7 || mime.len > 32
            || ngx_strncmp(mime.data, "image/", 6) != 0)
        {
            return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                        "each image needs \"data\" (base64) "
                                        "and \"mime_type\" (image/...)");
        }

        url.data = ngx_pnalloc(r->pool, data.len + mime.len + 16);
        if (url.data == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        url.len = ngx_sprintf(url.data, "data:%V;base64,%V", &mime, &data)
                  - url.data;

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "image_url");
        ngx_http_agent_json_key(j, "image_url");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "url");
        ngx_http_agent_json_str(j, &url);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);

    if (ngx_http_agent_json_done(j, out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_turn_checkpoint(ngx_http_agent_run_t *run, ngx_str_t *node,
    ngx_int_t next)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_uint_t                   end;
    ngx_http_agent_checkpoint_t  cp;

    ngx_memzero(&cp, sizeof(ngx_http_agent_checkpoint_t));
    cp.id = turn->checkpoint_id;
    cp.step = turn->step;

    /* the last step and the release of the session: one transaction */
    end = (next == NGX_HTTP_AGENT_END && turn->locked);

    if (end && ngx_http_agent_store_begin() != NGX_OK) {
        return NGX_ERROR;
    }

    if (ngx_http_agent_state_save(run, &turn->session_id, &cp, node, next)
        != NGX_OK)
    {
        if (end) {
            ngx_http_agent_store_rollback();
        }

        return NGX_ERROR;
    }

    if (end) {
        ngx_http_agent_store_unlock(&turn->session_id, &turn->run_id);

        if (ngx_http_agent_store_commit() != NGX_OK) {
            return NGX_ERROR;
        }

        turn->locked = 0;
    }

    turn->checkpoint_id = cp.id;
    turn->step = cp.step;

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_turn_emit(void *data, ngx_str_t *json)
{
    ngx_http_agent_turn_t *turn = data;

    return ngx_http_agent_sse_event(&turn->sse, json);
}


static void
ngx_http_agent_turn_done(ngx_http_agent_run_t *run, ngx_int_t rc)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_str_t               json, text;
    ngx_connection_t       *c;
    ngx_http_request_t     *r;
    ngx_http_agent_json_t  *j;

    r = turn->request;
    c = r->connection;

    ngx_http_agent_turn_track(turn, 0);

    if (turn->locked) {
        ngx_http_agent_store_unlock(&turn->session_id, &turn->run_id);
        turn->locked = 0;
    }

    if (rc != NGX_OK) {
        ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                      "agent: turn on session \"%V\" failed after %ui "
                      "steps: %V", &turn->session_id, run->step,
                      &run->error);

    } else {
        ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                      "agent: turn on session \"%V\" ended after %ui steps",
                      &turn->session_id, run->step);
    }

    if (turn->sse.failed) {
        goto failed;
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        goto failed;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");

    if (rc == NGX_OK) {
        text.data = turn->react.text;
        text.len = turn->react.text_len;

        ngx_http_agent_json_cstr(j, "end");
        ngx_http_agent_json_key(j, "full_response");
        ngx_http_agent_json_str(j, &text);
        ngx_http_agent_json_key(j, "usage");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "prompt_tokens");
        ngx_http_agent_json_int(j,
                   run->state[NGX_HTTP_AGENT_REACT_PROMPT_TOKENS].counter
                   - turn->prompt_at_start);
        ngx_http_agent_json_key(j, "completion_tokens");
        ngx_http_agent_json_int(j,
               run->state[NGX_HTTP_AGENT_REACT_COMPLETION_TOKENS].counter
               - turn->completion_at_start);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_key(j, "checkpoint_id");
        ngx_http_agent_json_str(j, &turn->checkpoint_id);

    } else {
        ngx_http_agent_json_cstr(j, "error");
        ngx_http_agent_json_key(j, "error");
        ngx_http_agent_json_str(j, &run->error);
        ngx_http_agent_json_key(j, "code");

        if (run->code.len) {
            ngx_http_agent_json_str(j, &run->code);

        } else {
            ngx_http_agent_json_cstr(j, "internal");
        }
    }

    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &json) != NGX_OK
        || ngx_http_agent_sse_event(&turn->sse, &json) != NGX_OK
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


static void
ngx_http_agent_turn_cleanup(void *data)
{
    ngx_http_agent_turn_t *turn = data;

    if (turn->run && !turn->run->finished) {
        ngx_log_error(NGX_LOG_INFO, turn->request->connection->log, 0,
                      "agent: client gone, turn on session \"%V\" cancelled",
                      &turn->session_id);
        ngx_http_agent_graph_cancel(turn->run);
    }

    if (turn->locked) {
        ngx_http_agent_store_unlock(&turn->session_id, &turn->run_id);
        turn->locked = 0;
    }

    if (turn->lease.timer_set) {
        ngx_del_timer(&turn->lease);
    }

    ngx_http_agent_turn_track(turn, 0);

    ngx_http_agent_sse_stop(&turn->sse);
}


static void
ngx_http_agent_turn_track(ngx_http_agent_turn_t *turn, ngx_uint_t on)
{
    if (ngx_http_agent_turns.next == NULL) {
        ngx_queue_init(&ngx_http_agent_turns);
    }

    if (!on) {
        if (turn->queued) {
            ngx_queue_remove(&turn->queue);
            turn->queued = 0;
        }

        return;
    }

    ngx_queue_insert_tail(&ngx_http_agent_turns, &turn->queue);
    turn->queued = 1;

    if (!ngx_http_agent_exit_watch.timer_set) {
        ngx_http_agent_exit_watch.handler = ngx_http_agent_turn_exit_watch;
        ngx_http_agent_exit_watch.log = ngx_cycle->log;
        ngx_http_agent_exit_watch.cancelable = 1;
        ngx_add_timer(&ngx_http_agent_exit_watch, 1000);
    }
}


/*
 * A graceful shutdown (nginx -s quit, reload) lets running turns finish;
 * with worker_shutdown_timeout set, a turn still running half a second
 * before it ends with an error event, the steps it completed saved,
 * rather than be cut off without a word when nginx closes its connection.
 */

static void
ngx_http_agent_turn_exit_watch(ngx_event_t *ev)
{
    ngx_msec_t              timeout;
    ngx_queue_t            *q;
    ngx_core_conf_t        *ccf;
    ngx_http_agent_run_t   *run;
    ngx_http_agent_turn_t  *turn;

    if (ngx_queue_empty(&ngx_http_agent_turns)) {
        return;
    }

    if (!ngx_exiting) {
        ngx_add_timer(ev, 1000);
        return;
    }

    ccf = (ngx_core_conf_t *) ngx_get_conf(ngx_cycle->conf_ctx,
                                           ngx_core_module);
    timeout = ccf->shutdown_timeout;

    if (timeout == 0) {
        /* nginx waits for the turns: so do they */
        return;
    }

    if (ngx_http_agent_exit_start == 0) {
        ngx_http_agent_exit_start = ngx_current_msec;
    }

    if (ngx_current_msec - ngx_http_agent_exit_start + 500 < timeout) {
        ngx_add_timer(ev, 100);
        return;
    }

    while (!ngx_queue_empty(&ngx_http_agent_turns)) {
        q = ngx_queue_head(&ngx_http_agent_turns);
        turn = ngx_queue_data(q, ngx_http_agent_turn_t, queue);

        ngx_queue_remove(q);
        turn->queued = 0;

        run = turn->run;

        if (run == NULL || run->finished) {
            continue;
        }

        ngx_log_error(NGX_LOG_NOTICE, ev->log, 0, "agent: the worker is "
                      "shutting down, turn on session \"%V\" ends",
                      &turn->session_id);

        ngx_http_agent_graph_cancel(run);
        (void) ngx_http_agent_graph_fail(run, "shutdown", "the server is "
                                         "shutting down; the steps of this "
                                         "turn that completed are saved, "
                                         "send the message again");
        ngx_http_agent_turn_done(run, NGX_ERROR);
    }
}


static void
ngx_http_agent_turn_lease(ngx_event_t *ev)
{
    ngx_http_agent_turn_t *turn = ev->data;

    if (!turn->locked) {
        return;
    }

    if (ngx_http_agent_store_lock_renew(&turn->session_id, &turn->run_id,
                                        turn->lease_ms)
        != NGX_OK)
    {
        ngx_log_error(NGX_LOG_WARN, ev->log, 0, "agent: the lease of "
                      "session \"%V\" could not be renewed",
                      &turn->session_id);
    }

    ngx_add_timer(ev, turn->lease_ms / 3);
}
