
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_store.h"


/*
 * A turn's steps saved (turn_run.c runs them): the checkpoint after each
 * step, as agent_durability says, saved behind the run where the store
 * can, its interrupt kept with it; the step's event once it is stored.
 */


static ngx_int_t ngx_http_agent_turn_interrupt_keep(
    ngx_http_agent_run_t *run);
static int64_t ngx_http_agent_turn_step_start(ngx_http_agent_run_t *run);


/*
 * The interrupt kept with the graph that raised it: an answer through a
 * location of another graph (a same-named step there) is refused
 * (ngx_http_agent_turn_waits); graph names are [A-Za-z0-9_-]
 */

static ngx_int_t
ngx_http_agent_turn_interrupt_keep(ngx_http_agent_run_t *run)
{
    u_char     *p;
    ngx_str_t   json;

    if (run->interrupt.data[0] != '{') {
        return ngx_http_agent_state_set(run, "__interrupt__",
                                        &run->interrupt);
    }

    p = ngx_pnalloc(run->pool, run->interrupt.len + run->graph->name.len
                               + sizeof("{\"graph\":\"\",") - 1);
    if (p == NULL) {
        return NGX_ERROR;
    }

    json.data = p;
    p = ngx_sprintf(p, "{\"graph\":\"%V\"", &run->graph->name);

    if (run->interrupt.len > 2) {
        *p++ = ',';
    }

    p = ngx_cpymem(p, run->interrupt.data + 1, run->interrupt.len - 1);
    json.len = p - json.data;

    return ngx_http_agent_state_set(run, "__interrupt__", &json);
}


ngx_int_t
ngx_http_agent_turn_checkpoint(ngx_http_agent_run_t *run, ngx_str_t *node,
    ngx_int_t next)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_int_t                     rc;
    ngx_str_t                    *name, none;
    ngx_uint_t                    behind, last;
    ngx_http_agent_node_t        *nodes;
    ngx_http_agent_checkpoint_t  *cp;

    cp = &turn->cp;

    /*
     * agent_durability exit: a step the run goes on from is not saved; the
     * run's end, or the step it waits after, is saved with their messages
     */

    if (turn->durability == NGX_HTTP_AGENT_DURABILITY_EXIT && turn->started
        && next != NGX_HTTP_AGENT_END && run->interrupt.len == 0)
    {
        if (!turn->skipping) {
            turn->skipping = 1;
            turn->skip_from = ngx_http_agent_turn_step_start(run);
        }

        turn->step++;
        return NGX_OK;
    }

    if (!turn->started && turn->input_saved) {
        /* the start's pass runs again: its input step is on its way */
        turn->checkpoint_id = cp->id;
        turn->step = cp->step;
        return NGX_OK;
    }

    ngx_memzero(cp, sizeof(ngx_http_agent_checkpoint_t));
    cp->id = turn->checkpoint_id;
    cp->step = turn->step;

    if (!turn->started) {
        /* the begin's: its stream shows it once the stream starts */
        turn->input_step = 1;
    }
    cp->run_id = turn->run_id;
    cp->metadata = turn->in.metadata;
    cp->lease = turn->lease_ms;
    cp->skipped = turn->skipping;
    cp->since = turn->skip_from;

    /* the tokens of the step's model calls, in the same transaction */
    cp->prompt_tokens = turn->env.prompt_tokens - turn->saved.prompt_tokens;
    cp->completion_tokens = turn->env.completion_tokens
                            - turn->saved.completion_tokens;
    cp->cached_tokens = turn->env.cached_tokens - turn->saved.cached_tokens;

    nodes = run->graph->nodes.elts;
    name = (next == NGX_HTTP_AGENT_END) ? NULL : &nodes[next].name;

    /* the interrupt the run waits on is kept with the state; answered, gone */

    if (run->interrupt.len) {
        rc = ngx_http_agent_turn_interrupt_keep(run);

    } else if (turn->in.resume.len) {
        ngx_str_set(&none, "null");
        rc = ngx_http_agent_state_set(run, "__interrupt__", &none);

    } else {
        rc = NGX_OK;
    }

    if (rc != NGX_OK) {
        return NGX_ERROR;
    }

    /* a subgraph that waits inside the node: its namespace's checkpoint */

    if (run->interrupt.len) {
        rc = ngx_http_agent_turn_subgraph_wait(turn, run, &node, &name);

        if (rc == NGX_ERROR) {
            return NGX_ERROR;
        }
    }

    /*
     * the last step lets the session go in the same transaction; a run
     * the runs table keeps lets it go with its end's status instead
     * (turn_record.c): never "running" on a thread it no longer holds,
     * which the take-over check would end as an orphan
     */
    last = (next == NGX_HTTP_AGENT_END && turn->locked);
    cp->release = last && turn->in.record == NULL;

    /*
     * A step the run goes on from is saved behind it: the next node starts
     * while the store writes, in order on the session's connection, and a
     * write that failed (the lease lost) stops the run at its next node.
     * The last step, and one the run waits after, are waited for: the end
     * event follows what is stored.
     */

    behind = (ngx_http_agent_store_has(NGX_HTTP_AGENT_STORE_BEHIND)
              && turn->durability != NGX_HTTP_AGENT_DURABILITY_SYNC
              && turn->locked && !last && run->interrupt.len == 0
              && (turn->started || turn->in.resume.len == 0));

    /* the input step of a run that answers nothing: behind it too */
    turn->input_saved = !turn->started && behind;

    rc = ngx_http_agent_turn_behind(turn);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_checkpoint_save(behind ? &turn->bsc : &turn->sc, run,
                                        &turn->session_id, cp, node, name);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    return ngx_http_agent_turn_saved(turn, rc);
}


/* the message count before the step just run: the state's less its own */

static int64_t
ngx_http_agent_turn_step_start(ngx_http_agent_run_t *run)
{
    ngx_uint_t               i, k, n;
    ngx_http_agent_msg_t    *m;
    ngx_http_agent_write_t  *w;

    n = 0;
    w = run->update ? run->update->elts : NULL;

    for (i = 0; w && i < run->update->nelts; i++) {
        if (w[i].channel != NGX_HTTP_AGENT_CH_MESSAGES) {
            continue;
        }

        m = w[i].value.messages->elts;

        for (k = 0; k < w[i].value.messages->nelts; k++) {
            n += !m[k].replace;
        }
    }

    return (int64_t) run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages->nelts
           - (int64_t) n;
}


/* a step saved behind that failed: the run stops here */

ngx_int_t
ngx_http_agent_turn_behind(ngx_http_agent_turn_t *turn)
{
    ngx_int_t  rc;

    rc = turn->bsc.failed;

    if (rc == NGX_OK || turn->run == NULL) {
        return NGX_OK;
    }

    turn->bsc.failed = NGX_OK;

    if (rc == NGX_DECLINED) {
        turn->locked = 0;
        return ngx_http_agent_turn_lost(turn->run);
    }

    (void) ngx_http_agent_graph_fail(turn->run, "checkpoint_failed",
                                     "the state could not be saved");
    return NGX_ERROR;
}


ngx_int_t
ngx_http_agent_turn_saved(ngx_http_agent_turn_t *turn, ngx_int_t rc)
{
    /* the steps saved behind came first on the connection */
    if (rc == NGX_OK && ngx_http_agent_turn_behind(turn) != NGX_OK) {
        return NGX_ERROR;
    }

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

    turn->skipping = 0;

    ngx_str_null(&turn->in.resume);

    turn->saved.prompt_tokens = turn->env.prompt_tokens;
    turn->saved.completion_tokens = turn->env.completion_tokens;
    turn->saved.cached_tokens = turn->env.cached_tokens;

    if (turn->cp.ns.len) {
        /* a subgraph's wait: the thread's steps go on from where it was */
        return NGX_OK;
    }

    turn->checkpoint_id = turn->cp.id;
    turn->step = turn->cp.step;

    /* its event after the step's own, as LangGraph's: turn_node */
    turn->cp_pending = turn->started;

    return NGX_OK;
}


/* a step saved whose event waits: now (a client gone is the stream's) */

void
ngx_http_agent_turn_checkpoint_pending(ngx_http_agent_turn_t *turn)
{
    if (turn->cp_pending) {
        turn->cp_pending = 0;
        (void) ngx_http_agent_turn_checkpoint_event(turn, &turn->cp);
    }
}


/*
 * A step saved, for a stream that shows checkpoints (the LangGraph API's
 * "checkpoints" and "debug" modes): its channels are those saved, read
 * before another save reuses the text
 */

ngx_int_t
ngx_http_agent_turn_checkpoint_event(ngx_http_agent_turn_t *turn,
    ngx_http_agent_checkpoint_t *cp)
{
    ngx_http_agent_event_t  ev;

    if (turn->in.json
        || !(turn->stream.modes & (NGX_HTTP_AGENT_MODE_CHECKPOINTS
                                   |NGX_HTTP_AGENT_MODE_DEBUG)))
    {
        return NGX_OK;
    }

    ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));
    ev.type = NGX_HTTP_AGENT_EV_CHECKPOINT;
    ev.checkpoint_id = &cp->id;
    ev.checkpoint = cp;

    return ngx_http_agent_stream_emit(&turn->stream, &ev);
}
