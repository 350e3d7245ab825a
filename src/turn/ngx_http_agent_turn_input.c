
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn_int.h"


/*
 * What a turn's input step takes besides its message: the answer a
 * waiting run goes on with, and the channels a run request writes.
 */


/* agent_durability, and a LangGraph run's "durability" (lg_request.c) */
ngx_conf_enum_t  ngx_http_agent_durabilities[] = {
    { ngx_string("sync"), NGX_HTTP_AGENT_DURABILITY_SYNC },
    { ngx_string("async"), NGX_HTTP_AGENT_DURABILITY_ASYNC },
    { ngx_string("exit"), NGX_HTTP_AGENT_DURABILITY_EXIT },
    { ngx_null_string, 0 }
};


/*
 * the other channels a run request's input writes (the LangGraph API);
 * a key that is no channel of the graph is not the graph's (CopilotKit
 * sends its own "tools")
 */

ngx_int_t
ngx_http_agent_turn_values(ngx_http_agent_turn_t *turn,
    ngx_http_agent_run_t *run, ngx_array_t *update)
{
    size_t                     i;
    yajl_val                   v;
    ngx_int_t                  n;
    ngx_str_t                  name, json;
    ngx_http_agent_channel_t  *ch;

    v = turn->in.values;
    ch = run->graph->channels.elts;

    for (i = 0; v && YAJL_IS_OBJECT(v) && i < v->u.object.len; i++) {
        name.data = (u_char *) v->u.object.keys[i];
        name.len = ngx_strlen(name.data);

        n = ngx_http_agent_graph_channel(run->graph, &name);

        if (n == NGX_HTTP_AGENT_CH_MESSAGES) {
            continue;
        }

        if (n == NGX_ERROR) {
            /* not the graph's: dropped, as LangGraph's input schema does */
            ngx_log_debug2(NGX_LOG_DEBUG_HTTP, run->log, 0,
                           "agent: the graph \"%V\" has no channel \"%V\": "
                           "dropped", &run->graph->name, &name);
            continue;
        }

        if (ch[n].reducer == NGX_HTTP_AGENT_REDUCE_SUM) {
            if (!YAJL_IS_NUMBER(v->u.object.values[i])) {
                return ngx_http_agent_reply_error(turn->request,
                                                  NGX_HTTP_BAD_REQUEST,
                                                  "the channel \"%V\" takes a "
                                                  "number", &name);
            }

            if (ngx_http_agent_graph_write_number(update, n,
                                       YAJL_GET_DOUBLE(v->u.object.values[i]))
                != NGX_OK)
            {
                return NGX_HTTP_INTERNAL_SERVER_ERROR;
            }

            continue;
        }

        if (ngx_http_agent_json_encode(run->pool, v->u.object.values[i],
                                       &json)
            != NGX_OK
            || ngx_http_agent_graph_write_value(update, n, &json) != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    return NGX_OK;
}


/*
 * An interrupted run continues where it waits, with the answer, and takes
 * no message; a session that waits for nothing takes no answer, but for a
 * run that asks for none (in.answers: LangGraph's input-less run, a
 * Command): that goes on at the checkpoint's next node (a fork: the node
 * runs again), or with none, only saves what it writes.  NGX_OK: resumed;
 * NGX_DECLINED: a message, as usual; else the error sent.
 */

ngx_int_t
ngx_http_agent_turn_waits(ngx_http_request_t *r, ngx_http_agent_turn_t *turn,
    ngx_http_agent_run_t *run, ngx_str_t *next)
{
    ngx_int_t   n;
    ngx_str_t   node, graph, resume;
    ngx_uint_t  waits;

    waits = (ngx_http_agent_state_interrupt(run, &node) == NGX_OK);

    resume = turn->in.resume;

    if (resume.len == 0 && waits && turn->in.reply) {
        /* the message answers what the run waits for, as a string */
        if (ngx_http_agent_json_quote(r->pool, &turn->in.text, &resume)
            != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    if (resume.len == 0) {
        if (!waits) {
            return NGX_DECLINED;
        }

        if (turn->in.over) {
            /* the input goes over the wait: it runs from the start */
            ngx_str_set(&graph, "null");

            return ngx_http_agent_state_set(run, "__interrupt__", &graph)
                   == NGX_OK ? NGX_DECLINED : NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT,
                                          "the session waits at \"%V\" for an "
                                          "answer: POST /{id}/resume "
                                          "{\"resume\": ...}", &node);
    }

    if (!waits && turn->in.answers) {

        /* "__start__" (the state before an input): the graph again */

        if (next->len == 9 && ngx_strncmp(next->data, "__start__", 9) == 0) {
            n = run->graph->entry;

        } else {
            n = next->len ? ngx_http_agent_graph_node(run->graph, next)
                          : NGX_HTTP_AGENT_END;
        }

        if (n == NGX_ERROR) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT,
                                              "the step \"%V\" the session "
                                              "goes on at is not in this "
                                              "location's graph", next);
        }

        run->current = n;
        run->resuming = 1;

        return NGX_OK;
    }

    if (!waits) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT, "the session "
                                          "waits for no answer: send a "
                                          "message");
    }

    if (turn->in.resume_at.len
        && (turn->in.resume_at.len != turn->started_from.len
            || ngx_strncmp(turn->in.resume_at.data, turn->started_from.data,
                           turn->started_from.len) != 0))
    {
        /* an answer to an interrupt answered already (another tab) */
        return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT,
                                          "the answer is for the interrupt "
                                          "\"%V\", the session waits at "
                                          "\"%V\" of checkpoint \"%V\"",
                                          &turn->in.resume_at, &node,
                                          &turn->started_from);
    }

    if (ngx_http_agent_state_interrupt_graph(run, &graph) == NGX_OK
        && (graph.len != run->graph->name.len
            || ngx_strncmp(graph.data, run->graph->name.data, graph.len)
               != 0))
    {
        return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT,
                                          "the session waits at \"%V\" of the "
                                          "graph \"%V\": answer it where that "
                                          "graph runs", &node, &graph);
    }

    n = ngx_http_agent_graph_node(run->graph, &node);

    if (n == NGX_ERROR) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT,
                                          "the step \"%V\" the session waits "
                                          "at is not in this location's graph",
                                          &node);
    }

    run->current = n;
    run->resume = resume;
    run->resuming = 1;

    return NGX_OK;
}


/*
 * The state before the input, a checkpoint of its own (LangGraph's "input"
 * step, -1 on a new thread): its next is "__start__", and a run that
 * forks from it starts the graph again with another input (an edited
 * first message).  In the begin's unit of writes, before the input step.
 */

ngx_int_t
ngx_http_agent_turn_before(ngx_http_agent_turn_t *turn,
    ngx_http_agent_run_t *run)
{
    ngx_int_t                    rc;
    ngx_str_t                    node, next;
    ngx_http_agent_checkpoint_t  cp;

    ngx_str_set(&node, "__start__");
    ngx_str_set(&next, "__start__");

    ngx_memzero(&cp, sizeof(ngx_http_agent_checkpoint_t));
    cp.id = turn->checkpoint_id;
    cp.step = cp.id.len ? turn->step : -2;
    cp.run_id = turn->run_id;
    cp.metadata = turn->in.metadata;
    cp.lease = turn->lease_ms;

    /* no step wrote it: no messages of its own */
    run->update = NULL;

    rc = ngx_http_agent_checkpoint_save(&turn->sc, run, &turn->session_id,
                                        &cp, &node, &next);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_error(turn->request, NGX_HTTP_CONFLICT,
                                          "a turn is already running on this "
                                          "session; wait for its end event");
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(turn->request,
                                          NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the session's state could not be "
                                          "saved");
    }

    turn->checkpoint_id = cp.id;
    turn->step = cp.step;

    if (turn->in.modes & (NGX_HTTP_AGENT_MODE_CHECKPOINTS
                          |NGX_HTTP_AGENT_MODE_DEBUG))
    {
        /* its channels are in a text the next save writes over */
        turn->before = cp;
        turn->before.channels.data = ngx_pstrdup(turn->request->pool,
                                                 &cp.channels);
        if (turn->before.channels.data == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    return NGX_OK;
}
