
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_mcpserver_int.h"
#include "ngx_http_agent_mcpserver.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_store_run.h"


/*
 * MCP's elicitation (2025-06-18 and later).  A tools/call whose run stops
 * at an interrupt, on a session whose client takes elicitation/create
 * (initialize's capabilities, kept in its Mcp-Session-Id), asks the
 * client's user for what the run waits for, on the call's own stream,
 * and holds that stream open (the turn's hold hook).  The elicitation's
 * id, "elicit/THREAD/CHECKPOINT/GRAPH", says what it asks about.
 *
 * The client answers with a POST of its own, a JSON-RPC response of that
 * id.  It is taken (202) and, accepted, resumes the owner's thread at
 * that checkpoint (an answer to an interrupt answered already is 409) as
 * a run of its own, which outlives the POST.  The run is named by the
 * session and the elicitation's id, so that the held call, on whichever
 * worker or host, follows it by the store (turn_follow) and answers with
 * its end: the result, or the next elicitation when it stops again.  A
 * declined or cancelled elicitation is kept as that run's row, ended
 * "interrupted" with no run: the held call then answers what the run
 * waits for, as a client without elicitation is answered.  So is a call
 * whose answer does not come within agent_mcp_server_elicitation.
 */


typedef struct {
    ngx_http_agent_sse_t             *sse;
    ngx_http_agent_mcpserver_out_t   *o;
    ngx_str_t                         thread;
    ngx_str_t                         checkpoint;
    ngx_str_t                         interrupt;   /* JSON {node, value} */
} ngx_http_agent_mcpserver_held_t;


/* the turn of an accepted answer: no stream, the POST answered at once */
typedef struct {
    ngx_http_agent_mcpserver_out_t    out;
    unsigned                          answered:1;
} ngx_http_agent_mcpserver_resume_t;


static ngx_int_t ngx_http_agent_mcpserver_elicit_hold(
    ngx_http_agent_turn_t *turn, ngx_http_agent_sse_t *sse);
static ngx_int_t ngx_http_agent_mcpserver_elicit_follow(ngx_http_request_t *r,
    ngx_http_agent_mcpserver_held_t *h);
static ngx_int_t ngx_http_agent_mcpserver_elicit_end(ngx_http_request_t *r,
    ngx_http_agent_turn_outcome_t *out, void *data);
static ngx_int_t ngx_http_agent_mcpserver_elicit_again(ngx_http_request_t *r,
    ngx_http_agent_mcpserver_held_t *h, ngx_http_agent_turn_outcome_t *out);
static ngx_int_t ngx_http_agent_mcpserver_elicit_declined(
    ngx_http_request_t *r, ngx_http_agent_mcpserver_answer_in_t *e,
    ngx_str_t *run, ngx_http_agent_graph_t *graph);
static void ngx_http_agent_mcpserver_elicit_started(
    ngx_http_agent_turn_t *turn);
static ngx_int_t ngx_http_agent_mcpserver_elicit_taken(
    ngx_http_agent_turn_t *turn, ngx_http_agent_event_t *ev);


/* a tools/call's: its stream held while the client's user answers */

ngx_http_agent_turn_hooks_t  ngx_http_agent_mcpserver_elicit_hooks = {
    NULL, NULL, NULL, NULL, NULL, NULL,
    ngx_http_agent_mcpserver_elicit_hold
};


/* an accepted answer's run: the POST taken at its start */

static ngx_http_agent_turn_hooks_t  ngx_http_agent_mcpserver_resume_hooks = {
    NULL, NULL,
    ngx_http_agent_mcpserver_elicit_started,
    NULL, NULL,
    ngx_http_agent_mcpserver_elicit_taken,
    NULL
};


/* the call's end event was an elicitation: its stream waits for the run */

static ngx_int_t
ngx_http_agent_mcpserver_elicit_hold(ngx_http_agent_turn_t *turn,
    ngx_http_agent_sse_t *sse)
{
    ngx_http_agent_turn_info_t        info;
    ngx_http_agent_mcpserver_out_t   *o;
    ngx_http_agent_mcpserver_held_t  *h;

    o = ngx_http_agent_turn_in(turn)->format_data;

    if (!o->held) {
        return NGX_OK;
    }

    ngx_http_agent_turn_info(turn, &info);

    h = ngx_pcalloc(info.request->pool,
                    sizeof(ngx_http_agent_mcpserver_held_t));
    if (h == NULL) {
        return NGX_ERROR;
    }

    h->sse = sse;
    h->o = o;
    h->thread = *info.session_id;
    h->checkpoint = o->checkpoint;
    h->interrupt = o->interrupt;

    return ngx_http_agent_mcpserver_elicit_follow(info.request, h);
}


static ngx_int_t
ngx_http_agent_mcpserver_elicit_follow(ngx_http_request_t *r,
    ngx_http_agent_mcpserver_held_t *h)
{
    u_char                           *p;
    ngx_str_t                         id, run;
    ngx_http_agent_loc_conf_t        *alcf;
    ngx_http_agent_mcpserver_conf_t  *mscf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    mscf = alcf->proto_conf;

    p = ngx_pnalloc(r->pool, 36);

    if (p == NULL
        || ngx_http_agent_mcpserver_stream_elicit_id(r->pool, &h->thread,
                                                     &h->checkpoint,
                                                     &h->o->graph, &id)
           != NGX_OK
        || !ngx_http_agent_mcpserver_session_run_id(r, &id, p))
    {
        return NGX_ERROR;
    }

    run.data = p;
    run.len = 36;

    return ngx_http_agent_turn_follow_made(r, &run, mscf->elicitation,
                                           ngx_http_agent_mcpserver_elicit_end,
                                           h);
}


/*
 * the answer's run is over (or never came): the call's result, or the
 * next elicitation when it stopped at another interrupt
 */

static ngx_int_t
ngx_http_agent_mcpserver_elicit_end(ngx_http_request_t *r,
    ngx_http_agent_turn_outcome_t *out, void *data)
{
    ngx_http_agent_mcpserver_held_t *h = data;

    yajl_val                           v;
    ngx_str_t                          text, json, lost;
    ngx_http_agent_json_t             *j;
    ngx_http_agent_run_state_e         state;
    ngx_http_agent_mcpserver_answer_t  a;

    state = out ? ngx_http_agent_turn_record_state(out)
                : NGX_HTTP_AGENT_RUN_ERROR;

    if (state == NGX_HTTP_AGENT_RUN_WAITS && out->checkpoint_id.len) {
        return ngx_http_agent_mcpserver_elicit_again(r, h, out);
    }

    ngx_memzero(&a, sizeof(ngx_http_agent_mcpserver_answer_t));
    a.id = &h->o->id;
    a.thread = &h->thread;
    a.text = &text;

    ngx_str_set(&text, "");
    ngx_str_set(&lost, "lost");

    switch (state) {

    case NGX_HTTP_AGENT_RUN_SUCCESS:
        text = out->answer;
        break;

    case NGX_HTTP_AGENT_RUN_ERROR:
        a.error = 1;

        if (out == NULL) {
            ngx_str_set(&text, "the store failed");

        } else {
            text = out->error;
            a.code = &out->code;
        }

        break;

    case NGX_HTTP_AGENT_RUN_CANCELLED:

        /* declined, or no answer in time: what the run waits for */

        v = ngx_http_agent_json_parse(r->pool, h->interrupt.data,
                                      h->interrupt.len, NULL);

        if (v && YAJL_IS_OBJECT(v)) {
            a.interrupt = v;
            (void) ngx_http_agent_mcpserver_stream_waits(r->pool, v,
                                                         &h->thread, &text);
        }

        break;

    default:
        /* still running long after its lease: its worker is gone */
        a.error = 1;
        a.code = &lost;
        ngx_str_set(&text, "the run that answered the elicitation was "
                    "lost with its worker");
        break;
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_mcpserver_stream_answer(j, &a);

    if (ngx_http_agent_json_done(j, &json) != NGX_OK
        || ngx_http_agent_sse_named(h->sse, NULL, &json, 1) != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_sse_finish(h->sse) == NGX_OK ? NGX_OK : NGX_ERROR;
}


/* the resumed run stopped again: asked again, on the same held stream */

static ngx_int_t
ngx_http_agent_mcpserver_elicit_again(ngx_http_request_t *r,
    ngx_http_agent_mcpserver_held_t *h, ngx_http_agent_turn_outcome_t *out)
{
    yajl_val                v;
    ngx_str_t               json;
    ngx_http_agent_json_t  *j;

    v = ngx_http_agent_json_parse(r->pool, out->interrupt.data,
                                  out->interrupt.len, NULL);
    j = ngx_http_agent_json_create(r->pool);

    if (v == NULL || !YAJL_IS_OBJECT(v) || j == NULL) {
        return NGX_ERROR;
    }

    h->checkpoint = out->checkpoint_id;
    h->interrupt = out->interrupt;

    ngx_http_agent_mcpserver_stream_elicit(j, r->pool, v, &h->thread,
                                           &h->checkpoint, &h->o->graph);

    if (ngx_http_agent_json_done(j, &json) != NGX_OK
        || ngx_http_agent_sse_named(h->sse, NULL, &json, 1) != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_agent_mcpserver_elicit_follow(r, h) == NGX_DONE
           ? NGX_DONE : NGX_ERROR;
}


/*
 * POST {location} with the answer to an elicitation: 202, and accepted,
 * the thread resumed as the run the held call follows
 */

ngx_int_t
ngx_http_agent_mcpserver_elicit_answer(ngx_http_request_t *r,
    ngx_http_agent_jsonrpc_t *rpc)
{
    u_char                              *p;
    ngx_int_t                            rc;
    ngx_str_t                            why, none, run;
    ngx_http_agent_turn_t               *turn;
    ngx_http_agent_model_t              *m;
    ngx_http_agent_graph_t              *graph;
    ngx_http_agent_turn_in_t            *in;
    ngx_http_agent_session_t             s;
    ngx_http_agent_run_row_t             row;
    ngx_http_agent_mcpserver_resume_t   *res;
    ngx_http_agent_mcpserver_answer_in_t  e;

    ngx_str_null(&why);

    rc = ngx_http_agent_mcpserver_rpc_answer(r->pool, rpc, &e, &why);

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_BAD_REQUEST,
                                      NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                      "Invalid params: %V", &why);
    }

    p = ngx_pnalloc(r->pool, 36);

    if (rc != NGX_OK || p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (!ngx_http_agent_mcpserver_session_run_id(r, &e.id, p)) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_BAD_REQUEST,
                                      NGX_HTTP_AGENT_JSONRPC_INVALID_REQUEST,
                                      "Invalid Request: an elicitation is "
                                      "answered in its session "
                                      "(Mcp-Session-Id)");
    }

    run.data = p;
    run.len = 36;

    graph = ngx_http_agent_turn_graph(r, &e.graph);

    if (graph == NULL) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_BAD_REQUEST,
                                      NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                      "Unknown tool: %V", &e.graph);
    }

    rc = ngx_http_agent_reply_rpc_thread(r, &e.thread, 0, &s);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_NOT_FOUND,
                                      NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS,
                                      "Thread with ID %V not found",
                                      &e.thread);
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_rpc_error(r,
                                      NGX_HTTP_INTERNAL_SERVER_ERROR,
                                      NGX_HTTP_AGENT_JSONRPC_INTERNAL_ERROR,
                                      "Internal error: the store failed");
    }

    /* one answer an elicitation: its run made already, it was answered */

    rc = ngx_http_agent_store_run_get(ngx_http_agent_reply_sc(r), &e.thread,
                                      &run, &row);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_OK) {
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_CONFLICT,
                                      NGX_HTTP_AGENT_JSONRPC_INVALID_REQUEST,
                                      "Invalid Request: the elicitation "
                                      "was answered already");
    }

    if (rc != NGX_DECLINED) {
        return ngx_http_agent_reply_rpc_error(r,
                                      NGX_HTTP_INTERNAL_SERVER_ERROR,
                                      NGX_HTTP_AGENT_JSONRPC_INTERNAL_ERROR,
                                      "Internal error: the store failed");
    }

    if (e.resume.len == 0) {
        return ngx_http_agent_mcpserver_elicit_declined(r, &e, &run, graph);
    }

    ngx_str_null(&none);

    rc = ngx_http_agent_turn_model(r, &s, &none, &m);
    if (rc != NGX_OK) {
        return rc;
    }

    turn = ngx_http_agent_turn_create(r, &s, m);
    res = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_mcpserver_resume_t));

    if (turn == NULL || res == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* its stream writes nothing: the held call tells its end */
    res->out.over = 1;
    res->out.record.keep = 1;

    ngx_http_agent_turn_id(turn, p);

    in = ngx_http_agent_turn_in(turn);

    in->graph = graph;
    in->format = &ngx_http_agent_mcpserver_format;
    in->format_data = &res->out;
    in->hooks = &ngx_http_agent_mcpserver_resume_hooks;
    in->data = res;
    in->record = &res->out.record;
    in->resume = e.resume;
    in->resume_at = e.checkpoint;
    in->json = 1;
    in->created = 1;

    return ngx_http_agent_turn_begin(turn, &s);
}


/* declined: the run's row, ended with no run, for the held call to read */

static ngx_int_t
ngx_http_agent_mcpserver_elicit_declined(ngx_http_request_t *r,
    ngx_http_agent_mcpserver_answer_in_t *e, ngx_str_t *run,
    ngx_http_agent_graph_t *graph)
{
    u_char                     *p;
    ngx_int_t                   rc;
    ngx_http_agent_run_row_t    row;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    p = ngx_pnalloc(r->pool, 32);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_memzero(&row, sizeof(ngx_http_agent_run_row_t));

    row.run_id = *run;
    row.thread_id = e->thread;
    row.assistant_id = graph->name;
    ngx_str_set(&row.status, "interrupted");
    row.checkpoint = e->checkpoint;
    row.origin = alcf->location;
    row.created_at.data = p;
    row.created_at.len = ngx_http_agent_store_now(p) - p;

    rc = ngx_http_agent_store_run_insert(ngx_http_agent_reply_sc(r), &row, 0);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        /* answered already, most likely */
        return ngx_http_agent_reply_rpc_error(r, NGX_HTTP_CONFLICT,
                                      NGX_HTTP_AGENT_JSONRPC_INVALID_REQUEST,
                                      "Invalid Request: the elicitation "
                                      "was answered already");
    }

    return ngx_http_agent_reply_rpc_taken(r, NGX_HTTP_ACCEPTED);
}


/* the run began: the POST is answered, the run outlives it */

static void
ngx_http_agent_mcpserver_elicit_started(ngx_http_agent_turn_t *turn)
{
    ngx_http_request_t                 *r;
    ngx_http_agent_turn_info_t          info;
    ngx_http_agent_mcpserver_resume_t  *res;

    res = ngx_http_agent_turn_in(turn)->data;

    ngx_http_agent_turn_info(turn, &info);
    r = info.request;

    ngx_http_agent_turn_keep(turn);
    r->read_event_handler = ngx_http_block_reading;

    if (res->answered || !ngx_http_agent_turn_running(turn)) {
        return;
    }

    r->keepalive = 0;
    res->answered = 1;

    if (ngx_http_agent_reply_send(r, NGX_HTTP_ACCEPTED, NULL) != NGX_OK) {
        ngx_http_agent_turn_record_stop(turn, 0);
    }
}


/* its end: nothing more to say to the POST (answered when it began) */

static ngx_int_t
ngx_http_agent_mcpserver_elicit_taken(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev)
{
    ngx_http_agent_turn_info_t          info;
    ngx_http_agent_mcpserver_resume_t  *res;

    res = ngx_http_agent_turn_in(turn)->data;

    if (res->answered) {
        return NGX_OK;
    }

    res->answered = 1;

    ngx_http_agent_turn_info(turn, &info);

    return ngx_http_agent_reply_send(info.request, NGX_HTTP_ACCEPTED, NULL);
}
