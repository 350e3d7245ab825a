
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_a2a_int.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"


/*
 * A turn as an A2A task: its id the turn's run id, its contextId the
 * thread.  SendStreamingMessage's answer is the "a2a" format's events,
 * each a JSON-RPC response: the task (working), a status update at each
 * step, then the answer as one artifact and the last status: completed,
 * input-required (the run waits at an interrupt: the next message on the
 * context answers it) or failed.  SendMessage's answer is the task at its
 * end (the answers hook).  A2A 1.0 writes enums as TASK_STATE_* and a
 * part as {"text"}; 0.3 (message/send, message/stream) as "completed",
 * {"kind": "text", "text"} and a "kind" on every object.
 */


static ngx_int_t ngx_http_agent_a2a_write(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *name);
static void ngx_http_agent_a2a_status(ngx_http_agent_json_t *j,
    ngx_http_agent_a2a_out_t *o, const char *kind, const char *id,
    ngx_str_t *task, ngx_str_t *context, ngx_http_agent_a2a_state_e state,
    ngx_str_t *text);
static void ngx_http_agent_a2a_message(ngx_http_agent_json_t *j,
    ngx_http_agent_a2a_out_t *o, ngx_str_t *task, ngx_str_t *context,
    ngx_str_t *text);
static void ngx_http_agent_a2a_parts(ngx_http_agent_json_t *j,
    ngx_http_agent_a2a_out_t *o, ngx_str_t *text);
static void ngx_http_agent_a2a_artifact(ngx_http_agent_json_t *j,
    ngx_http_agent_a2a_out_t *o, ngx_str_t *text);


ngx_http_agent_format_t  ngx_http_agent_a2a_format = {
    ngx_string("a2a"),
    ngx_http_agent_a2a_write,
    0
};


static const char  *ngx_http_agent_a2a_states[][2] = {
    { "TASK_STATE_WORKING", "working" },
    { "TASK_STATE_COMPLETED", "completed" },
    { "TASK_STATE_INPUT_REQUIRED", "input-required" },
    { "TASK_STATE_FAILED", "failed" },
    { "TASK_STATE_SUBMITTED", "submitted" },
    { "TASK_STATE_CANCELED", "canceled" }
};


/* a state's name: 1.0's, or 0.3's (legacy) */

const char *
ngx_http_agent_a2a_state_name(ngx_uint_t state, ngx_uint_t legacy)
{
    return ngx_http_agent_a2a_states[state][legacy];
}


static ngx_int_t
ngx_http_agent_a2a_write(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *name)
{
    ngx_str_t                    text, none;
    ngx_http_agent_a2a_out_t    *o;
    ngx_http_agent_a2a_state_e   state;

    o = s->format_data;

    if (o == NULL || o->over) {
        return NGX_DECLINED;
    }

    switch (ev->type) {

    case NGX_HTTP_AGENT_EV_START:
        ngx_str_null(&none);

        ngx_http_agent_a2a_head(j, o);

        if (!o->legacy) {
            ngx_http_agent_json_key(j, "task");
        }

        ngx_http_agent_a2a_task(j, o, &s->run_id, &s->session_id,
                                NGX_HTTP_AGENT_A2A_WORKING, &none, 0);
        break;

    case NGX_HTTP_AGENT_EV_NODE_START:

        /* working, at this step: its name in the update's metadata */

        ngx_str_null(&none);

        ngx_http_agent_a2a_head(j, o);

        if (!o->legacy) {
            ngx_http_agent_json_key(j, "statusUpdate");
        }

        ngx_http_agent_a2a_status(j, o, "status-update", "taskId",
                                  &s->run_id, &s->session_id,
                                  NGX_HTTP_AGENT_A2A_WORKING, &none);

        if (o->legacy) {
            ngx_http_agent_json_key(j, "final");
            ngx_http_agent_json_bool(j, 0);
        }

        ngx_http_agent_json_key(j, "metadata");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "step");
        ngx_http_agent_json_str(j, &s->node);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
        break;

    case NGX_HTTP_AGENT_EV_INTERRUPT:
        if (ev->json) {
            o->interrupt = *ev->json;
        }

        return NGX_DECLINED;

    case NGX_HTTP_AGENT_EV_END:
    case NGX_HTTP_AGENT_EV_ERROR:
        ngx_http_agent_a2a_end(s->pool, ev, &o->interrupt, &state, &text);

        if (state == NGX_HTTP_AGENT_A2A_COMPLETED) {

            /* the answer, one artifact in one piece */

            ngx_http_agent_a2a_head(j, o);

            if (!o->legacy) {
                ngx_http_agent_json_key(j, "artifactUpdate");
            }

            ngx_http_agent_json_obj(j);

            if (o->legacy) {
                ngx_http_agent_json_key(j, "kind");
                ngx_http_agent_json_cstr(j, "artifact-update");
            }

            ngx_http_agent_json_key(j, "taskId");
            ngx_http_agent_json_str(j, &s->run_id);
            ngx_http_agent_json_key(j, "contextId");
            ngx_http_agent_json_str(j, &s->session_id);
            ngx_http_agent_json_key(j, "artifact");
            ngx_http_agent_a2a_artifact(j, o, &text);
            ngx_http_agent_json_key(j, "lastChunk");
            ngx_http_agent_json_bool(j, 1);
            ngx_http_agent_json_end(j);
            ngx_http_agent_a2a_tail(j, o);

            if (ngx_http_agent_json_scratch(j, &none) != NGX_OK
                || s->sink(s->sink_data, name, &none, 1) != NGX_OK)
            {
                return NGX_ERROR;
            }
        }

        ngx_http_agent_a2a_head(j, o);

        if (!o->legacy) {
            ngx_http_agent_json_key(j, "statusUpdate");
        }

        ngx_http_agent_a2a_status(j, o, "status-update", "taskId",
                                  &s->run_id, &s->session_id, state, &text);

        if (o->legacy) {
            ngx_http_agent_json_key(j, "final");
            ngx_http_agent_json_bool(j, 1);
        }

        ngx_http_agent_json_end(j);
        o->over = 1;
        break;

    default:
        return NGX_DECLINED;
    }

    ngx_http_agent_a2a_tail(j, o);

    return NGX_OK;
}


/*
 * returnImmediately (1.0), blocking false (0.3): the task is the answer
 * as it starts (§3.2.2), the run goes on without its client, as a
 * background response does; GetTask and the push config follow it
 */

void
ngx_http_agent_a2a_started(ngx_http_agent_turn_t *turn)
{
    ngx_str_t                    none;
    ngx_http_agent_json_t       *j;
    ngx_http_agent_a2a_out_t    *o;
    ngx_http_agent_turn_info_t   info;

    o = ngx_http_agent_turn_in(turn)->data;

    /* ended already: the answer hook answers with the task as it ended */

    if (!o->now
        || ngx_http_agent_turn_background(turn, o->answered) != NGX_OK)
    {
        return;
    }

    o->answered = 1;

    ngx_str_null(&none);
    ngx_http_agent_turn_info(turn, &info);

    j = ngx_http_agent_json_create(info.request->pool);
    if (j == NULL) {
        ngx_http_agent_turn_background_answer(turn, NULL);
        return;
    }

    ngx_http_agent_a2a_head(j, o);

    if (!o->legacy) {
        ngx_http_agent_json_key(j, "task");
    }

    ngx_http_agent_a2a_task(j, o, info.run_id, info.session_id,
                            ngx_http_agent_turn_pending(turn)
                            ? NGX_HTTP_AGENT_A2A_SUBMITTED
                            : NGX_HTTP_AGENT_A2A_WORKING,
                            &none, 0);
    ngx_http_agent_a2a_tail(j, o);

    ngx_http_agent_turn_background_answer(turn, j);
}


/* SendMessage: the task at its end, the answer of the JSON-RPC request */

ngx_int_t
ngx_http_agent_a2a_answer(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev)
{
    ngx_str_t                    text, interrupt;
    ngx_http_request_t          *r;
    ngx_http_agent_json_t       *j;
    ngx_http_agent_a2a_out_t    *o;
    ngx_http_agent_turn_info_t   info;
    ngx_http_agent_a2a_state_e   state;

    o = ngx_http_agent_turn_in(turn)->data;
    ngx_http_agent_turn_info(turn, &info);
    r = info.request;

    if (o->answered) {
        /* returnImmediately: answered when it began */
        return NGX_OK;
    }

    ngx_str_null(&interrupt);

    if (info.interrupted && info.run) {
        interrupt = info.run->interrupt;
    }

    ngx_http_agent_a2a_end(r->pool, ev, &interrupt, &state, &text);

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_a2a_head(j, o);

    if (!o->legacy) {
        ngx_http_agent_json_key(j, "task");
    }

    ngx_http_agent_a2a_task(j, o, info.run_id, info.session_id, state,
                            &text, state == NGX_HTTP_AGENT_A2A_COMPLETED);
    ngx_http_agent_a2a_tail(j, o);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/* {"jsonrpc", "id", "result": ... left open for the event */

void
ngx_http_agent_a2a_head(ngx_http_agent_json_t *j, ngx_http_agent_a2a_out_t *o)
{
    if (!o->rest) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "jsonrpc");
        ngx_http_agent_json_cstr(j, "2.0");
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_raw(j, &o->id);
        ngx_http_agent_json_key(j, "result");
    }

    if (!o->legacy && !o->bare) {
        /* 1.0: a StreamResponse or SendMessageResponse, one member */
        ngx_http_agent_json_obj(j);
    }
}


/* the result (1.0's member object) and the response closed */

void
ngx_http_agent_a2a_tail(ngx_http_agent_json_t *j, ngx_http_agent_a2a_out_t *o)
{
    if (!o->legacy && !o->bare) {
        ngx_http_agent_json_end(j);
    }

    if (!o->rest) {
        ngx_http_agent_json_end(j);
    }
}


/* a Task: with artifact, the answer as its artifact */

void
ngx_http_agent_a2a_task(ngx_http_agent_json_t *j,
    ngx_http_agent_a2a_out_t *o, ngx_str_t *task, ngx_str_t *context,
    ngx_http_agent_a2a_state_e state, ngx_str_t *text, ngx_uint_t artifact)
{
    static ngx_str_t  none = ngx_null_string;

    if (o->task.len) {
        /* a run that continues a task: the client knows the task's id */
        task = &o->task;
    }

    /* a completed task's answer is its artifact, not a status message */

    ngx_http_agent_a2a_status(j, o, "task", "id", task, context, state,
                              state != NGX_HTTP_AGENT_A2A_COMPLETED
                              ? text : &none);

    if (o->hist.history) {
        /* what the agent said, within historyLength (the user's input is
           the thread's, not the task's record) */
        ngx_http_agent_json_key(j, "history");
        ngx_http_agent_json_arr(j);

        if (o->hist.history_max && text->len) {
            ngx_http_agent_a2a_message(j, o, task, context, text);
        }

        ngx_http_agent_json_arr_end(j);
    }

    if (artifact) {
        ngx_http_agent_json_key(j, "artifacts");
        ngx_http_agent_json_arr(j);
        ngx_http_agent_a2a_artifact(j, o, text);
        ngx_http_agent_json_arr_end(j);
    }

    ngx_http_agent_json_end(j);
}


/*
 * A Task or a TaskStatusUpdateEvent (kind, its task's id under the key
 * id) up to its status, left open (for the task's history and artifacts,
 * an event's metadata or "final")
 */

static void
ngx_http_agent_a2a_status(ngx_http_agent_json_t *j,
    ngx_http_agent_a2a_out_t *o, const char *kind, const char *id,
    ngx_str_t *task, ngx_str_t *context, ngx_http_agent_a2a_state_e state,
    ngx_str_t *text)
{
    if (o->task.len) {
        task = &o->task;
    }

    ngx_http_agent_json_obj(j);

    if (o->legacy) {
        ngx_http_agent_json_key(j, "kind");
        ngx_http_agent_json_cstr(j, kind);
    }

    ngx_http_agent_json_cstr(j, id);      /* a key: json_key() takes literals */
    ngx_http_agent_json_str(j, task);
    ngx_http_agent_json_key(j, "contextId");
    ngx_http_agent_json_str(j, context);
    ngx_http_agent_json_key(j, "status");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "state");
    ngx_http_agent_json_cstr(j, ngx_http_agent_a2a_states[state][o->legacy]);

    if (text->len) {
        ngx_http_agent_json_key(j, "message");
        ngx_http_agent_a2a_message(j, o, task, context, text);
    }

    ngx_http_agent_json_end(j);
}


/* the answer as the task's one artifact, "answer" */

static void
ngx_http_agent_a2a_artifact(ngx_http_agent_json_t *j,
    ngx_http_agent_a2a_out_t *o, ngx_str_t *text)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "artifactId");
    ngx_http_agent_json_cstr(j, "answer");
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_cstr(j, "answer");
    ngx_http_agent_json_key(j, "parts");
    ngx_http_agent_a2a_parts(j, o, text);
    ngx_http_agent_json_end(j);
}


/* the agent's message: a new id each, in its task and context */

static void
ngx_http_agent_a2a_message(ngx_http_agent_json_t *j,
    ngx_http_agent_a2a_out_t *o, ngx_str_t *task, ngx_str_t *context,
    ngx_str_t *text)
{
    u_char     buf[36];
    ngx_str_t  id;

    ngx_http_agent_id_uuid(buf);
    id.data = buf;
    id.len = 36;

    ngx_http_agent_json_obj(j);

    if (o->legacy) {
        ngx_http_agent_json_key(j, "kind");
        ngx_http_agent_json_cstr(j, "message");
    }

    ngx_http_agent_json_key(j, "messageId");
    ngx_http_agent_json_str(j, &id);
    ngx_http_agent_json_key(j, "taskId");
    ngx_http_agent_json_str(j, task);
    ngx_http_agent_json_key(j, "contextId");
    ngx_http_agent_json_str(j, context);
    ngx_http_agent_json_key(j, "role");
    ngx_http_agent_json_cstr(j, o->legacy ? "agent" : "ROLE_AGENT");
    ngx_http_agent_json_key(j, "parts");
    ngx_http_agent_a2a_parts(j, o, text);
    ngx_http_agent_json_end(j);
}


static void
ngx_http_agent_a2a_parts(ngx_http_agent_json_t *j,
    ngx_http_agent_a2a_out_t *o, ngx_str_t *text)
{
    ngx_http_agent_json_arr(j);
    ngx_http_agent_json_obj(j);

    if (o->legacy) {
        ngx_http_agent_json_key(j, "kind");
        ngx_http_agent_json_cstr(j, "text");
    }

    ngx_http_agent_json_key(j, "text");
    ngx_http_agent_json_str(j, text);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_arr_end(j);
}


/*
 * The task's last state and its text: the answer, what the run waits for
 * (the interrupt's value: a string as it is, else its JSON), or the error
 */

void
ngx_http_agent_a2a_end(ngx_pool_t *pool, ngx_http_agent_event_t *ev,
    ngx_str_t *interrupt, ngx_http_agent_a2a_state_e *state,
    ngx_str_t *text)
{
    ngx_str_set(text, "");

    if (ev->type == NGX_HTTP_AGENT_EV_ERROR) {
        *state = NGX_HTTP_AGENT_A2A_FAILED;

        if (ev->text) {
            *text = *ev->text;
        }

        return;
    }

    if (interrupt->len == 0) {
        *state = NGX_HTTP_AGENT_A2A_COMPLETED;

        if (ev->text) {
            *text = *ev->text;
        }

        return;
    }

    *state = NGX_HTTP_AGENT_A2A_INPUT_REQUIRED;

    (void) ngx_http_agent_turn_asks(pool, interrupt, text);
}
