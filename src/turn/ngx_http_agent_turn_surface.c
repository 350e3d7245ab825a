
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_http.h"


/*
 * The turn as a protocol sees it: what it asks (ngx_http_agent_turn_in_t),
 * what it reads (ngx_http_agent_turn_info_t), and the few things it does
 * to a running turn.  The checks every protocol gets are here too, made
 * at the begin whoever asks.
 */


ngx_http_agent_turn_in_t *
ngx_http_agent_turn_in(ngx_http_agent_turn_t *turn)
{
    return &turn->in;
}


void
ngx_http_agent_turn_info(ngx_http_agent_turn_t *turn,
    ngx_http_agent_turn_info_t *info)
{
    info->request = turn->request;
    info->run = turn->run;
    info->session_id = &turn->session_id;
    info->run_id = &turn->run_id;
    info->started_from = &turn->started_from;
    info->sc = &turn->sc;
    info->wsc = &turn->wsc;
    info->interrupted = turn->interrupted;
}


/* a message's images, checked as every protocol's are (images.c) */

ngx_int_t
ngx_http_agent_turn_images(ngx_http_request_t *r, yajl_val images,
    ngx_str_t *out)
{
    return ngx_http_agent_images(r, images, out);
}


/* the turn outlives its client: its stream is written to nobody */

void
ngx_http_agent_turn_keep(ngx_http_agent_turn_t *turn)
{
    turn->sse.keep = 1;
}


/*
 * A run that goes on in the background (A2A's returnImmediately, a
 * background response): it outlives its client, whose request reads no
 * more.  NGX_OK: a request answered in one JSON, not answered yet, is to
 * be answered now, while the run runs (turn_background_answer).
 */

ngx_int_t
ngx_http_agent_turn_background(ngx_http_agent_turn_t *turn,
    ngx_uint_t answered)
{
    turn->sse.keep = 1;
    turn->request->read_event_handler = ngx_http_block_reading;

    if (!turn->in.json || answered || !ngx_http_agent_turn_running(turn)) {
        return NGX_DECLINED;
    }

    turn->request->keepalive = 0;

    return NGX_OK;
}


/* that answer, j; the run is stopped when it cannot be made or sent */

void
ngx_http_agent_turn_background_answer(ngx_http_agent_turn_t *turn,
    ngx_http_agent_json_t *j)
{
    ngx_str_t  out;

    if (j == NULL || ngx_http_agent_json_done(j, &out) != NGX_OK
        || ngx_http_agent_reply_send(turn->request, NGX_HTTP_OK, &out)
           != NGX_OK)
    {
        ngx_http_agent_turn_record_stop(turn, 0);
    }
}


/* an event of the protocol's own sink, on the turn's stream */

ngx_int_t
ngx_http_agent_turn_send(ngx_http_agent_turn_t *turn, ngx_uint_t id,
    ngx_str_t *name, ngx_str_t *json, ngx_uint_t now)
{
    if (turn->in.json) {
        return NGX_OK;
    }

    /* the protocol's number of its events: the first is 0 */
    turn->sse.id = id;
    turn->sse.zero = 1;

    return ngx_http_agent_sse_named(&turn->sse, name, json, now);
}


/* before the store: the stream as the protocol asked, the history's bound */

ngx_int_t
ngx_http_agent_turn_ask(ngx_http_agent_turn_t *turn,
    ngx_http_agent_session_t *s)
{
    ngx_http_agent_turn_in_t  *in;

    in = &turn->in;

    if (in->sink) {
        turn->stream.sink = in->sink;
        turn->stream.sink_data = in->data;
    }

    if (in->assistant.len) {
        turn->stream.assistant = in->assistant;
    }

    if (in->modes) {
        turn->stream.modes = in->modes;
    }

    return ngx_http_agent_turn_history(turn, s);
}


/*
 * The stored history is bounded: past agent_history_max_size a turn is
 * refused, unless the graph summarizes what it sends to the model.  Before
 * the store for every protocol, and again with the session read under the
 * lease where the protocol did not read it first (turn_chat.c).
 */

ngx_int_t
ngx_http_agent_turn_history(ngx_http_agent_turn_t *turn,
    ngx_http_agent_session_t *s)
{
    size_t                      size;
    ngx_uint_t                  i;
    ngx_http_agent_turn_in_t   *in;
    ngx_http_agent_loc_conf_t  *alcf;

    in = &turn->in;
    alcf = ngx_http_get_module_loc_conf(turn->request, ngx_http_agent_module);

    size = (size_t) s->history_bytes + (in->msgs ? 0 : in->text.len);

    /* the input's messages (the text among them), or none ("messages": []) */

    for (i = 0; in->msgs && i < in->nmsgs; i++) {
        size += in->msgs[i].content.len + in->msgs[i].tool_calls.len
                + in->msgs[i].images.len;
    }

    if (size > alcf->history_max_size
        && !ngx_http_agent_graph_has_kind(in->graph, "summarize"))
    {
        return ngx_http_agent_reply_error(turn->request,
                                          NGX_HTTP_REQUEST_ENTITY_TOO_LARGE,
                                          "this conversation has reached its "
                                          "size limit (%L bytes stored, "
                                          "agent_history_max_size is %uz); "
                                          "start a new session",
                                          s->history_bytes,
                                          alcf->history_max_size);
    }

    return NGX_OK;
}


/*
 * In the begin's unit of writes, the state loaded: a resume's goto and
 * the interrupts asked, refused when an answer finds nothing waiting
 */

ngx_int_t
ngx_http_agent_turn_resume(ngx_http_agent_turn_t *turn)
{
    ngx_int_t                  n;
    ngx_http_agent_run_t      *run;
    ngx_http_agent_turn_in_t  *in;

    in = &turn->in;
    run = turn->run;

    /* the run, for the formats that show its state */
    turn->stream.state = run;

    if (in->waits) {
        run->waits = in->waits;
    }

    turn->env.services.client_tools = in->tools;

    if (in->go.len && run->resuming) {
        /* goto: the run continues at that node instead, or ends */
        n = ngx_http_agent_graph_step_node(in->graph, &in->go);
        run->current = (n == NGX_ERROR) ? NGX_HTTP_AGENT_END : n;
    }

    if (in->answers && !run->resuming) {
        return ngx_http_agent_reply_error(turn->request, NGX_HTTP_CONFLICT,
                                          "thread \"%V\" waits for nothing: "
                                          "send an input", &turn->session_id);
    }

    return NGX_OK;
}


/*
 * A graph this location runs, by name: its own for none, or one that
 * agent_assistants names; NULL for any other, whatever a client sends
 */

ngx_http_agent_graph_t *
ngx_http_agent_turn_graph(ngx_http_request_t *r, ngx_str_t *name)
{
    ngx_uint_t                  i;
    ngx_http_agent_graph_t    **g;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    if (name->len == 0) {
        return alcf->graph;
    }

    g = alcf->assistant_graphs ? alcf->assistant_graphs->elts : NULL;

    for (i = 0; g && i < alcf->assistant_graphs->nelts; i++) {
        if (g[i]->name.len == name->len
            && ngx_strncmp(g[i]->name.data, name->data, name->len) == 0)
        {
            return g[i];
        }
    }

    return NULL;
}


/*
 * What an interrupt asks, as text for a protocol that has only text: its
 * value, a string as it is, else its JSON; empty when it has none
 */

ngx_int_t
ngx_http_agent_turn_asks(ngx_pool_t *pool, ngx_str_t *interrupt,
    ngx_str_t *text)
{
    yajl_val  v, value;

    ngx_str_set(text, "");

    v = ngx_http_agent_json_parse(pool, interrupt->data, interrupt->len,
                                  NULL);
    value = v ? ngx_http_agent_json_get(v, "value") : NULL;

    if (value && YAJL_IS_STRING(value)) {
        text->data = (u_char *) YAJL_GET_STRING(value);
        text->len = ngx_strlen(text->data);
        return NGX_OK;
    }

    if (value) {
        return ngx_http_agent_json_encode(pool, value, text);
    }

    return NGX_OK;
}


/*
 * The run's id made by the protocol, before the begin: one its client can
 * name the run by later (MCP's cancel of a request); 36 bytes
 */

void
ngx_http_agent_turn_id(ngx_http_agent_turn_t *turn, u_char *id)
{
    ngx_memcpy(turn->run_id.data, id, 36);
}

