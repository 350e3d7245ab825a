
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine_int.h"


/*
 * The engine: channels and their reducers, steps, edges and checkpoints.
 * It knows nothing of HTTP, the providers or SQL: node kinds do the work,
 * the embedder (a turn) persists and streams through run->handlers.
 */


static ngx_int_t ngx_http_agent_graph_waiting(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);
static void ngx_http_agent_graph_loop(ngx_http_agent_run_t *run);
static ngx_int_t ngx_http_agent_graph_close(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_int_t next);
#define NGX_HTTP_AGENT_SAVE_BEFORE     1   /* interrupt_before: then wait */
#define NGX_HTTP_AGENT_SAVE_INTERRUPT  2   /* a node's interrupt: wait */
#define NGX_HTTP_AGENT_SAVE_STEP       3   /* a step: then the next */
#define NGX_HTTP_AGENT_SAVE_END        4   /* nothing to run: then end */
#define NGX_HTTP_AGENT_SAVE_INPUT      5   /* a subgraph's input: then run */


static void ngx_http_agent_graph_end(ngx_http_agent_run_t *run);
static ngx_int_t ngx_http_agent_graph_save_input(ngx_http_agent_run_t *run,
    ngx_uint_t saving, ngx_int_t next);
static ngx_int_t ngx_http_agent_graph_save(ngx_http_agent_run_t *run,
    ngx_uint_t saving, ngx_http_agent_node_t *node, ngx_int_t next,
    ngx_uint_t after);
static ngx_int_t ngx_http_agent_graph_after(ngx_http_agent_run_t *run,
    ngx_int_t rc);
static ngx_int_t ngx_http_agent_graph_step(ngx_http_agent_run_t *run,
    ngx_int_t rc);
static void ngx_http_agent_graph_finish(ngx_http_agent_run_t *run,
    ngx_int_t rc);


ngx_http_agent_run_t *
ngx_http_agent_graph_run_create(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_graph_t *graph)
{
    ngx_uint_t                 i;
    ngx_http_agent_run_t      *run;
    ngx_http_agent_channel_t  *ch;

    run = ngx_pcalloc(pool, sizeof(ngx_http_agent_run_t));
    if (run == NULL) {
        return NULL;
    }

    run->pool = pool;
    run->log = log;
    run->graph = graph;
    run->limit = 25;
    run->current = graph->entry;

    run->state = ngx_pcalloc(pool, graph->channels.nelts
                                   * sizeof(ngx_http_agent_value_t));
    if (run->state == NULL) {
        return NULL;
    }

    run->visits = ngx_pcalloc(pool, graph->nodes.nelts * sizeof(ngx_uint_t));
    if (run->visits == NULL) {
        return NULL;
    }

    ch = graph->channels.elts;

    for (i = 0; i < graph->channels.nelts; i++) {

        if (ch[i].reducer == NGX_HTTP_AGENT_REDUCE_MESSAGES) {
            run->state[i].messages = ngx_array_create(pool, 8,
                                                 sizeof(ngx_http_agent_msg_t));
            if (run->state[i].messages == NULL) {
                return NULL;
            }

            continue;
        }

        if (ch[i].reducer == NGX_HTTP_AGENT_REDUCE_SUM) {
            if (ch[i].dflt.len) {
                run->state[i].number = ngx_http_agent_json_number(&ch[i].dflt);
            }

            continue;
        }

        run->state[i].json = ch[i].dflt;
    }

    return run;
}


/* the turn's input is a step of its own, as LangGraph's "__input__" is */

ngx_int_t
ngx_http_agent_graph_input(ngx_http_agent_run_t *run, ngx_array_t *update)
{
    ngx_str_t                  node;
    ngx_uint_t                 i;
    ngx_http_agent_channel_t  *ch;

    run->update = update;

    /* channels of scope=turn start each turn at their defaults */

    ch = run->graph->channels.elts;

    for (i = 0; i < run->graph->channels.nelts; i++) {
        if (!ch[i].turn) {
            continue;
        }

        if (ch[i].reducer == NGX_HTTP_AGENT_REDUCE_SUM) {
            run->state[i].number = ch[i].dflt.len
                                   ? ngx_http_agent_json_number(&ch[i].dflt)
                                   : 0;

        } else if (ch[i].reducer != NGX_HTTP_AGENT_REDUCE_MESSAGES) {
            run->state[i].json = ch[i].dflt;
        }
    }

    if (ngx_http_agent_graph_apply(run, update) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_str_set(&node, "__input__");

    run->current = run->graph->entry;

    return run->handlers->checkpoint(run, &node, run->graph->entry);
}


void
ngx_http_agent_graph_start(ngx_http_agent_run_t *run)
{
    ngx_http_agent_graph_loop(run);
}


/*
 * A run whose state is set (a subgraph's, node_subgraph.c): the state it
 * starts with saved first, as the turn's input step is ("__input__"),
 * then its loop
 */

void
ngx_http_agent_graph_begin(ngx_http_agent_run_t *run)
{
    ngx_int_t  rc;

    rc = ngx_http_agent_graph_save_input(run, NGX_HTTP_AGENT_SAVE_INPUT,
                                         run->graph->entry);

    if (rc != NGX_AGAIN) {
        ngx_http_agent_graph_saved(run, rc);
    }
}


static void
ngx_http_agent_graph_loop(ngx_http_agent_run_t *run)
{
    ngx_int_t               rc;
    ngx_http_agent_node_t  *node;

    while (!run->finished) {

        if (run->current == NGX_HTTP_AGENT_END) {

            /*
             * a run with no node to run (LangGraph's Command on a thread
             * that waits for nothing): what it wrote is a step of its
             * own, then it ends
             */

            ngx_http_agent_graph_end(run);
            return;
        }

        if (run->step >= run->limit) {
            ngx_http_agent_graph_fail(run, "recursion_limit",
                                      "the graph ran %ui steps without "
                                      "reaching its end", run->step);
            ngx_http_agent_graph_finish(run, NGX_ERROR);
            return;
        }

        node = (ngx_http_agent_node_t *) run->graph->nodes.elts
               + run->current;

        run->update = ngx_http_agent_graph_update_create(run->pool);
        if (run->update == NULL) {
            ngx_http_agent_graph_finish(run, NGX_ERROR);
            return;
        }

        rc = run->resuming ? 0 : ngx_http_agent_graph_waiting(run, node);

        if (rc == NGX_ERROR) {
            ngx_http_agent_graph_finish(run, NGX_ERROR);
            return;
        }

        if (rc) {

            /* interrupt_before=on, interrupt_if=: it waits before the node */

            (void) ngx_http_agent_graph_save(run, NGX_HTTP_AGENT_SAVE_BEFORE,
                                             node, run->current, 0);
            return;
        }

        ngx_log_debug2(NGX_LOG_DEBUG_HTTP, run->log, 0,
                       "agent graph: step %ui node \"%V\"",
                       run->step, &node->name);

        if (run->handlers->node
            && run->handlers->node(run, node, 1) != NGX_OK)
        {
            if (run->error.len == 0) {
                ngx_http_agent_graph_fail(run, "client_gone", "the client "
                                          "went away");
            }

            ngx_http_agent_graph_finish(run, NGX_ERROR);
            return;
        }

        /*
         * interrupt_resume=: the answer the node waited for, in the state
         * the node reads (as interrupt() returns it) and in its step's
         * writes
         */

        if (run->resuming && run->resume.len && node->interrupt_resume >= 0
            && ngx_http_agent_graph_wait_answer(run, node) != NGX_OK)
        {
            ngx_http_agent_graph_finish(run, NGX_ERROR);
            return;
        }

        run->visits[run->current]++;
        run->node_data = NULL;
        run->part = 0;
        run->applied = 0;

        run->in_node = 1;
        run->async_done = 0;
        rc = ngx_http_agent_graph_cache_run(run, node);
        run->in_node = 0;

        if (rc == NGX_AGAIN) {
            if (!run->async_done) {
                return;
            }

            rc = run->async_rc;
        }

        ngx_http_agent_graph_cache_keep(run, rc);

        /* then=: the step's other parts */

        rc = ngx_http_agent_graph_parts_run(run, node, rc);

        if (rc == NGX_AGAIN) {
            return;
        }

        if (ngx_http_agent_graph_step(run, rc) != NGX_OK) {
            return;
        }
    }
}


void
ngx_http_agent_graph_node_done(ngx_http_agent_run_t *run, ngx_int_t rc)
{
    run->cancel = NULL;

    if (run->finished) {
        return;
    }

    if (run->in_node) {
        /* completed before the node returned: the loop goes on */
        run->async_done = 1;
        run->async_rc = rc;
        return;
    }

    ngx_http_agent_graph_cache_keep(run, rc);

    rc = ngx_http_agent_graph_parts_run(run, (ngx_http_agent_node_t *)
                                             run->graph->nodes.elts
                                             + run->current, rc);
    if (rc == NGX_AGAIN) {
        return;
    }

    if (ngx_http_agent_graph_step(run, rc) == NGX_OK) {
        ngx_http_agent_graph_loop(run);
    }
}


/* apply the node's update, route, checkpoint */

static ngx_int_t
ngx_http_agent_graph_step(ngx_http_agent_run_t *run, ngx_int_t rc)
{
    ngx_int_t               next;
    ngx_uint_t              after;
    ngx_http_agent_node_t  *node, *to;

    node = (ngx_http_agent_node_t *) run->graph->nodes.elts + run->current;

    if (rc == NGX_HTTP_AGENT_INTERRUPT) {

        /*
         * the node waits for a human: the state is saved with this node
         * next, and a resumed run starts here (run->resume set)
         */

        if (ngx_http_agent_graph_parts_apply(run) != NGX_OK) {
            ngx_http_agent_graph_finish(run, NGX_ERROR);
            return NGX_ERROR;
        }

        return ngx_http_agent_graph_save(run, NGX_HTTP_AGENT_SAVE_INTERRUPT,
                                         node, run->current, 0);
    }

    if (rc != NGX_OK) {
        if (run->error.len == 0) {
            ngx_http_agent_graph_fail(run, "node_failed",
                                      "the step \"%V\" failed", &node->name);
        }

        ngx_http_agent_graph_finish(run, NGX_ERROR);
        return NGX_ERROR;
    }

    if ((node->count >= 0
         && ngx_http_agent_graph_write_number(run->update, node->count, 1)
            != NGX_OK)
        || ngx_http_agent_graph_parts_apply(run) != NGX_OK)
    {
        ngx_http_agent_graph_finish(run, NGX_ERROR);
        return NGX_ERROR;
    }

    next = ngx_http_agent_graph_route(run, node);

    if (next == NGX_ERROR) {
        ngx_http_agent_graph_finish(run, NGX_ERROR);
        return NGX_ERROR;
    }

    if (ngx_http_agent_graph_close(run, node, next) != NGX_OK) {
        ngx_http_agent_graph_finish(run, NGX_ERROR);
        return NGX_ERROR;
    }

    /* the resumed node has had its answer */
    run->resuming = 0;
    ngx_str_null(&run->resume);

    /* interrupt_after=on: the run waits before the next node */

    after = node->interrupt_after
            || (run->waits
                && (run->waits[node - (ngx_http_agent_node_t *)
                                      run->graph->nodes.elts] & 2));

    if (after && next != NGX_HTTP_AGENT_END
        && ngx_http_agent_graph_wait_breakpoint(run,
                          (ngx_http_agent_node_t *) run->graph->nodes.elts
                          + next, node)
           != NGX_OK)
    {
        ngx_http_agent_graph_finish(run, NGX_ERROR);
        return NGX_ERROR;
    }

    /*
     * interrupt_before=on or interrupt_if= of the next node: this step's
     * checkpoint is where the run waits, as LangGraph's is (no checkpoint
     * of its own)
     */

    if (!after && next != NGX_HTTP_AGENT_END) {
        to = (ngx_http_agent_node_t *) run->graph->nodes.elts + next;

        rc = ngx_http_agent_graph_waiting(run, to);

        if (rc == NGX_ERROR) {
            ngx_http_agent_graph_finish(run, NGX_ERROR);
            return NGX_ERROR;
        }

        after = (rc != 0);
    }

    return ngx_http_agent_graph_save(run, NGX_HTTP_AGENT_SAVE_STEP, node,
                                     next, after);
}


/* nothing to run: the state saved as the input's step, then the end */

static void
ngx_http_agent_graph_end(ngx_http_agent_run_t *run)
{
    ngx_int_t  rc;

    rc = ngx_http_agent_graph_save_input(run, NGX_HTTP_AGENT_SAVE_END,
                                         NGX_HTTP_AGENT_END);

    if (rc != NGX_AGAIN) {
        (void) ngx_http_agent_graph_after(run, rc);
    }
}


/* a checkpoint of no node's step ("__input__"): the state as it is */

static ngx_int_t
ngx_http_agent_graph_save_input(ngx_http_agent_run_t *run,
    ngx_uint_t saving, ngx_int_t next)
{
    ngx_str_t  name;

    ngx_str_set(&name, "__input__");

    run->saving = saving;
    run->saving_node = NULL;
    run->saving_next = next;
    run->saving_after = 0;

    return run->handlers->checkpoint(run, &name, next);
}


/* the checkpoint, now or when the embedder has saved it */

static ngx_int_t
ngx_http_agent_graph_save(ngx_http_agent_run_t *run, ngx_uint_t saving,
    ngx_http_agent_node_t *node, ngx_int_t next, ngx_uint_t after)
{
    ngx_int_t  rc;

    run->saving = saving;
    run->saving_node = node;
    run->saving_next = next;
    run->saving_after = after;

    rc = run->handlers->checkpoint(run, &node->name, next);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    return ngx_http_agent_graph_after(run, rc);
}


void
ngx_http_agent_graph_saved(ngx_http_agent_run_t *run, ngx_int_t rc)
{
    if (run->finished) {
        return;
    }

    if (ngx_http_agent_graph_after(run, rc) == NGX_OK) {
        ngx_http_agent_graph_loop(run);
    }
}


/* what follows a checkpoint: NGX_OK, the loop goes on */

static ngx_int_t
ngx_http_agent_graph_after(ngx_http_agent_run_t *run, ngx_int_t rc)
{
    ngx_int_t               next;
    ngx_uint_t              saving;
    ngx_http_agent_node_t  *node;

    node = run->saving_node;
    next = run->saving_next;
    saving = run->saving;
    run->saving = 0;

    if (rc != NGX_OK) {
        if (run->error.len == 0) {
            ngx_http_agent_graph_fail(run, "checkpoint_failed",
                                      "the state could not be saved");
        }

        ngx_http_agent_graph_finish(run, NGX_ERROR);
        return NGX_ERROR;
    }

    if (saving == NGX_HTTP_AGENT_SAVE_INPUT) {
        return NGX_OK;
    }

    if (saving == NGX_HTTP_AGENT_SAVE_BEFORE) {
        ngx_http_agent_graph_finish(run, NGX_HTTP_AGENT_INTERRUPT);
        return NGX_DONE;
    }

    if (saving == NGX_HTTP_AGENT_SAVE_END) {
        ngx_http_agent_graph_finish(run, NGX_OK);
        return NGX_DONE;
    }

    if (saving == NGX_HTTP_AGENT_SAVE_INTERRUPT) {
        if (run->handlers->node) {
            (void) run->handlers->node(run, node, 0);
        }

        ngx_http_agent_graph_finish(run, NGX_HTTP_AGENT_INTERRUPT);
        return NGX_DONE;
    }

    if (run->handlers->node
        && run->handlers->node(run, node, 0) != NGX_OK)
    {
        ngx_http_agent_graph_fail(run, "client_gone", "the client went away");
        ngx_http_agent_graph_finish(run, NGX_ERROR);
        return NGX_ERROR;
    }

    run->step++;

    if (run->interrupt.len && run->saving_after) {
        ngx_http_agent_graph_finish(run, NGX_HTTP_AGENT_INTERRUPT);
        return NGX_DONE;
    }

    if (next == NGX_HTTP_AGENT_END) {
        ngx_http_agent_graph_finish(run, NGX_OK);
        return NGX_DONE;
    }

    run->current = next;

    return NGX_OK;
}


/*
 * Tool calls that the step leaves for a node that does not run them (a
 * capped round, an edge to END) are closed: each gets a result saying it
 * was not run, in this step's update, so that the stored history pairs
 * calls and results as every provider requires of the next request.
 */

static ngx_int_t
ngx_http_agent_graph_close(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_int_t next)
{
    u_char                 *p;
    ngx_str_t               why;
    ngx_uint_t              i;
    ngx_array_t            *closing, *state;
    ngx_http_agent_msg_t   *last, *m, *s;
    ngx_http_agent_node_t  *to;

    last = ngx_http_agent_graph_last_message(run, NGX_HTTP_AGENT_CH_MESSAGES);

    if (last == NULL || last->tool_calls.len == 0) {
        return NGX_OK;
    }

    to = NULL;

    if (next != NGX_HTTP_AGENT_END) {
        to = (ngx_http_agent_node_t *) run->graph->nodes.elts + next;

        if (to->kind->calls || to->answers) {
            return NGX_OK;
        }
    }

    p = ngx_pnalloc(run->pool, 96 + node->name.len
                               + (to ? to->name.len : 0));
    if (p == NULL) {
        return NGX_ERROR;
    }

    why.data = p;
    why.len = (to ? ngx_sprintf(p, "Not run: \"%V\" went on to \"%V\" "
                                "without running tools.", &node->name,
                                &to->name)
                  : ngx_sprintf(p, "Not run: the turn ended after \"%V\" "
                                "without running tools.", &node->name))
              - p;

    closing = ngx_array_create(run->pool, 2, sizeof(ngx_http_agent_msg_t));
    if (closing == NULL
        || ngx_http_agent_message_unanswered(run->pool, last, &why, closing)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    state = run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages;
    m = closing->elts;

    for (i = 0; i < closing->nelts; i++) {
        if (ngx_http_agent_graph_write_message(run, run->update,
                                               NGX_HTTP_AGENT_CH_MESSAGES,
                                               &m[i])
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        s = ngx_array_push(state);
        if (s == NULL) {
            return NGX_ERROR;
        }

        *s = m[i];
    }

    return NGX_OK;
}


/* whether the run waits before node (graph_wait.c); an error said */

static ngx_int_t
ngx_http_agent_graph_waiting(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_int_t  rc;

    rc = ngx_http_agent_graph_wait_before(run, node);

    if (rc == NGX_ABORT) {
        return ngx_http_agent_graph_fail(run, "bad_route", "the condition "
                                         "\"%V\" of the step \"%V\" could "
                                         "not be evaluated",
                                         &node->interrupt_if_text,
                                         &node->name);
    }

    return rc;
}


/* the first edge whose condition holds; the last edge has none */

ngx_int_t
ngx_http_agent_graph_route(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_int_t               rc;
    ngx_uint_t              i;
    ngx_http_agent_edge_t  *e;

    if (node->edges.nelts == 0) {
        /* a fail node written as (a state update): it leads nowhere */
        return NGX_HTTP_AGENT_END;
    }

    e = node->edges.elts;

    for (i = 0; i < node->edges.nelts; i++) {
        if (e[i].cond == NULL) {
            return e[i].to;
        }

        rc = ngx_http_agent_expr_test(run, e[i].cond);

        if (rc == NGX_ERROR) {
            return ngx_http_agent_graph_fail(run, "bad_route", "the "
                                             "condition \"%V\" of the step "
                                             "\"%V\" could not be evaluated",
                                             &e[i].text, &node->name);
        }

        if (rc == NGX_OK) {
            return e[i].to;
        }
    }

    return ngx_http_agent_graph_fail(run, "bad_route", "the step \"%V\" "
                                     "routed to no node", &node->name);
}


static void
ngx_http_agent_graph_finish(ngx_http_agent_run_t *run, ngx_int_t rc)
{
    if (run->finished) {
        return;
    }

    run->finished = 1;
    run->handlers->done(run, rc);
}


/* the embedder stops the run: the client is gone; no callbacks follow */

void
ngx_http_agent_graph_cancel(ngx_http_agent_run_t *run)
{
    if (run->finished) {
        return;
    }

    run->finished = 1;

    if (run->cancel) {
        run->cancel(run);
        run->cancel = NULL;
    }
}


ngx_int_t
ngx_http_agent_graph_fail(ngx_http_agent_run_t *run, const char *code,
    const char *fmt, ...)
{
    u_char   *p, buf[512];
    va_list   args;

    va_start(args, fmt);
    p = ngx_vslprintf(buf, buf + sizeof(buf), fmt, args);
    va_end(args);

    run->error.data = ngx_pnalloc(run->pool, p - buf);
    if (run->error.data == NULL) {
        run->error.len = 0;
        return NGX_ERROR;
    }

    run->error.len = p - buf;
    ngx_memcpy(run->error.data, buf, p - buf);

    run->code.data = (u_char *) code;
    run->code.len = ngx_strlen(code);

    return NGX_ERROR;
}
