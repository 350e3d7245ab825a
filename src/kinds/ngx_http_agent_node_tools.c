
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_ops.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_kinds_int.h"


/*
 * "node NAME tools": every tool call of the last AI message, all at once;
 * one tool message per call, in their order; a failing tool gives an
 * error result, not a failed turn; redact=REGEX rewrites the results.
 *
 * "node NAME tools call=TOOL [query=CHANNEL] output=CHANNEL": one call of
 * TOOL that no model asked for, with {"query": the channel's text} (the
 * turn's input by default); its result goes to the output channel, not
 * to the messages (seed 002's chart: ask_analyst when the plan asks).
 *
 * args=TOOL.ARG:CHANNEL,... sets an argument of TOOL's calls from a
 * channel, whatever the model wrote there (seed 001's postId, passed to
 * search_posts as excludePostId).
 */


typedef struct {
    ngx_http_agent_run_t         *run;
    ngx_http_agent_node_tools_conf_t  *conf;
    ngx_http_agent_tool_call_t   *calls;
    ngx_uint_t                    ncalls;
    ngx_uint_t                    emitted;
    ngx_uint_t                    pending;
    ngx_uint_t                    sql;          /* SQL calls running */
    ngx_uint_t                    sql_max;      /* agent_sql_concurrency */
    ngx_uint_t                    peer_max;     /* agent_tool_concurrency */
    unsigned                      started:1;
} ngx_http_agent_node_tools_ctx_t;


static ngx_int_t ngx_http_agent_node_tools_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);
static ngx_uint_t ngx_http_agent_node_tools_approval(
    ngx_http_agent_node_tools_conf_t *tc, ngx_array_t *calls);
static ngx_int_t ngx_http_agent_node_tools_start(
    ngx_http_agent_node_tools_ctx_t *ctx, ngx_http_agent_tool_call_t *call);
static void ngx_http_agent_node_tools_done(ngx_http_agent_tool_call_t *call);
static ngx_uint_t ngx_http_agent_node_tools_last(
    ngx_http_agent_node_tools_ctx_t *ctx);
static void ngx_http_agent_node_tools_expire(ngx_event_t *ev);
static ngx_int_t ngx_http_agent_node_tools_next(
    ngx_http_agent_node_tools_ctx_t *ctx);
static ngx_uint_t ngx_http_agent_node_tools_room(
    ngx_http_agent_node_tools_ctx_t *ctx, ngx_http_agent_tool_call_t *call);
static ngx_uint_t ngx_http_agent_node_tools_queued(
    ngx_http_agent_node_tools_ctx_t *ctx);
static void ngx_http_agent_node_tools_freed(void *data);
static void ngx_http_agent_node_tools_release(
    ngx_http_agent_node_tools_ctx_t *ctx, ngx_http_agent_tool_call_t *call);
static ngx_int_t ngx_http_agent_node_tools_resolve(
    ngx_http_agent_node_tools_ctx_t *ctx, ngx_http_agent_tool_call_t *call);
static ngx_int_t ngx_http_agent_node_tools_result(
    ngx_http_agent_node_tools_ctx_t *ctx, ngx_http_agent_tool_call_t *call);
static ngx_int_t ngx_http_agent_node_tools_end(
    ngx_http_agent_node_tools_ctx_t *ctx);
static void ngx_http_agent_node_tools_cancel(ngx_http_agent_run_t *run);


ngx_http_agent_kind_t  ngx_http_agent_tools_kind = {
    ngx_string("tools"),
    NULL,
    ngx_http_agent_node_tools_params,
    ngx_http_agent_node_tools_check,
    ngx_http_agent_node_tools_run,
    1,
    NULL,
    sizeof(ngx_http_agent_node_tools_conf_t)
};


static ngx_int_t
ngx_http_agent_node_tools_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_tools_conf_t *tc = node->conf;

    u_char                            *p;
    ngx_int_t                          rc;
    ngx_str_t                          reason, err;
    ngx_uint_t                         i, rejected;
    ngx_array_t                       *calls;
    ngx_http_agent_call_t             *call;
    ngx_http_agent_msg_t              *last;
    ngx_http_agent_event_t             ev;
    ngx_http_agent_env_t              *env;
    ngx_http_agent_tool_call_t        *c;
    ngx_http_agent_node_tools_ctx_t   *ctx;

    rejected = 0;

    if (tc->call.len) {
        if (ngx_http_agent_node_tools_own(run, node, &calls) != NGX_OK) {
            return NGX_ERROR;
        }

        goto calls;
    }

    last = ngx_http_agent_graph_last_message(run, NGX_HTTP_AGENT_CH_MESSAGES);

    if (last == NULL || last->role.data[0] != 'a'
        || last->tool_calls.len == 0)
    {
        return NGX_OK;
    }

    if (ngx_http_agent_message_calls(run->pool, &last->tool_calls,
                                     &calls, 1)
        != NGX_OK)
    {
        return ngx_http_agent_graph_fail(run, "internal", "the tool calls "
                                         "of the model could not be read");
    }

    /* the client's calls first: the run waits for their outputs */
    rc = ngx_http_agent_node_tools_client(run, node, calls);
    if (rc != NGX_OK) {
        return rc;
    }

    /* approve=: a human sees the calls first (tools_approve.c) */

    if (tc->approve.len && ngx_http_agent_node_tools_approval(tc, calls)) {
        if (run->resume.len == 0) {
            return ngx_http_agent_tools_approve_ask(run, &node->name, calls);
        }

        rc = ngx_http_agent_tools_approve_answer(run, calls, &reason);

        if (rc == NGX_ERROR) {
            return NGX_ERROR;
        }

        rejected = (rc == NGX_DECLINED);
    }

calls:

    ctx = ngx_pcalloc(run->pool, sizeof(ngx_http_agent_node_tools_ctx_t));
    if (ctx == NULL) {
        return NGX_ERROR;
    }

    ctx->run = run;
    ctx->conf = node->conf;
    ctx->calls = ngx_pcalloc(run->pool, (calls->nelts + 1)
                                        * sizeof(ngx_http_agent_tool_call_t));
    if (ctx->calls == NULL) {
        return NGX_ERROR;
    }

    run->node_data = ctx;
    call = calls->elts;
    env = run->data;

    for (i = 0; i < calls->nelts; i++) {
        c = &ctx->calls[ctx->ncalls++];

        c->id = call[i].id;
        c->name = call[i].name;
        c->arguments = call[i].arguments;
        c->args = call[i].args;
        c->answer = call[i].answer;

        if (ctx->conf->args
            && ngx_http_agent_node_tools_args(run, ctx->conf, c) != NGX_OK)
        {
            return NGX_ERROR;
        }

        c->run = run;
        c->owner = ctx;
        c->timeout = ctx->conf->timeout;
        c->done = ngx_http_agent_node_tools_done;

        /* only what this step's model was offered, as it was offered */

        if (ngx_http_agent_node_tools_resolve(ctx, c) == NGX_ERROR
            || ngx_http_agent_node_tools_kept(run, c) != NGX_OK)
        {
            return NGX_ERROR;
        }

        /*
         * the event carries the arguments as parsed and written anew by
         * our generator, never the model's text: that may hold comments,
         * newlines and "data:" lines.  Text that does not parse is shown
         * as a JSON string; the tool itself answers it with an error.
         */

        ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));
        ev.type = NGX_HTTP_AGENT_EV_TOOL_START;
        ev.id = &c->id;
        ev.name = &c->name;
        ev.value = c->args;

        if (c->args == NULL) {
            ev.json = ngx_palloc(run->pool, sizeof(ngx_str_t));
            if (ev.json == NULL) {
                return NGX_ERROR;
            }

            if (c->arguments.len == 0) {
                ngx_str_set(ev.json, "{}");

            } else if (ngx_http_agent_json_quote(run->pool, &c->arguments,
                                                 ev.json)
                       != NGX_OK)
            {
                return NGX_ERROR;
            }
        }

        if (ngx_http_agent_env_emit(run, &ev) != NGX_OK) {
            return ngx_http_agent_graph_fail(run, "client_gone", "the "
                                             "client went away");
        }
    }

    if (rejected) {

        /* none runs: each answers that a human said no, and why */

        p = ngx_pnalloc(run->pool, reason.len + 64);
        if (p == NULL) {
            return NGX_ERROR;
        }

        err.data = p;
        err.len = ngx_sprintf(p, "not run: a human rejected it (%V)",
                              &reason)
                  - p;

        for (i = 0; i < ctx->ncalls; i++) {
            if (ngx_http_agent_json_error(run->pool, &err,
                                          &ctx->calls[i].result)
                != NGX_OK
                || ngx_http_agent_node_tools_result(ctx, &ctx->calls[i])
                   != NGX_OK)
            {
                return NGX_ERROR;
            }
        }

        return ngx_http_agent_node_tools_write(run, ctx->conf, ctx->calls,
                                               ctx->ncalls);
    }

    run->cancel = ngx_http_agent_node_tools_cancel;
    ctx->sql_max = env->services.sql_concurrency;
    ctx->peer_max = env->services.tool_concurrency;

    /*
     * every call at once, but at most agent_sql_concurrency statements of
     * SQL and agent_tool_concurrency calls of locations and MCP servers in
     * the turn: the others start in order as those end (each with its own
     * timeout from its start), so a model that asks for 32 queries or 32
     * calls of a slow service at once cannot hold 32 threads or 32
     * upstream connections
     */

    env->peer_freed = ngx_http_agent_node_tools_freed;
    env->peer_data = ctx;

    for (i = 0; i < ctx->ncalls; i++) {
        if (!ngx_http_agent_node_tools_room(ctx, &ctx->calls[i])) {
            continue;
        }

        rc = ngx_http_agent_node_tools_start(ctx, &ctx->calls[i]);

        if (rc == NGX_ERROR) {
            env->peer_freed = NULL;
            return NGX_ERROR;
        }
    }

    ctx->started = 1;

    /* places freed by calls that ended before the loop was over */

    if (ngx_http_agent_node_tools_next(ctx) == NGX_ERROR) {
        env->peer_freed = NULL;
        return NGX_ERROR;
    }

    if (ctx->pending || ngx_http_agent_node_tools_queued(ctx)) {
        return NGX_AGAIN;
    }

    return ngx_http_agent_node_tools_end(ctx);
}


/* every call answered: nothing to cancel, no place to wait for */

static ngx_int_t
ngx_http_agent_node_tools_end(ngx_http_agent_node_tools_ctx_t *ctx)
{
    ctx->run->cancel = NULL;
    ((ngx_http_agent_env_t *) ctx->run->data)->peer_freed = NULL;

    return ngx_http_agent_node_tools_write(ctx->run, ctx->conf, ctx->calls,
                                           ctx->ncalls);
}


/* approve=on, or A,B: whether a call of this round needs a human's yes */

static ngx_uint_t
ngx_http_agent_node_tools_approval(ngx_http_agent_node_tools_conf_t *tc,
    ngx_array_t *calls)
{
    ngx_uint_t              i;
    ngx_http_agent_call_t  *c;

    if (tc->approve.len == 2 && ngx_strncmp(tc->approve.data, "on", 2) == 0)
    {
        return 1;
    }

    c = calls->elts;

    for (i = 0; i < calls->nelts; i++) {
        if (ngx_http_agent_tools_allowed(&tc->approve, &c[i].name)) {
            return 1;
        }
    }

    return 0;
}


static ngx_int_t
ngx_http_agent_node_tools_start(ngx_http_agent_node_tools_ctx_t *ctx,
    ngx_http_agent_tool_call_t *call)
{
    ngx_int_t              rc;
    ngx_str_t              err;
    ngx_http_agent_env_t  *env;

    env = ctx->run->data;

    if (call->attempt++ == 0) {
        call->started = ngx_current_msec;
    }

    if (call->answer.len) {
        /* a human answered it instead (a decision of approve=) */
        call->result = call->answer;
        return ngx_http_agent_node_tools_result(ctx, call);
    }

    if (call->tool == NULL) {
        ngx_str_set(&err, "not a tool of this step");

        if (ngx_http_agent_json_error(ctx->run->pool, &err, &call->result)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        return ngx_http_agent_node_tools_result(ctx, call);
    }

    /* claimed before it runs; a run taken over meanwhile runs it not */
    rc = ngx_http_agent_node_tools_claim(ctx->run, call - ctx->calls, call);
    if (rc != NGX_OK) {
        return rc == NGX_DONE ? ngx_http_agent_node_tools_result(ctx, call)
                              : NGX_ERROR;
    }

    env->tool_calls++;
    call->orphan = 0;

    rc = call->tool->run(call);

    if (rc == NGX_AGAIN) {
        ctx->pending++;
        ctx->sql += call->tool->sql;

        if (call->tool->peer) {
            env->peer_calls++;
            call->counted = 1;
        }

        /*
         * timeout= holds for every tool, whatever it waits on; SQL ends
         * itself at the same time with a better error (this deadline is
         * its backstop: grace), ask_database (a model first) has none
         */

        if (ctx->conf->timeout) {
            call->deadline.handler = ngx_http_agent_node_tools_expire;
            call->deadline.data = call;
            call->deadline.log = ctx->run->log;

            ngx_add_timer(&call->deadline,
                          ctx->conf->timeout + call->tool->grace);
        }

        return NGX_AGAIN;
    }

    if (rc != NGX_OK || call->result.len == 0) {
        ngx_str_set(&err, "the tool failed");

        if (ngx_http_agent_json_error(ctx->run->pool, &err, &call->result)
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return ngx_http_agent_node_tools_result(ctx, call);
}


static void
ngx_http_agent_node_tools_done(ngx_http_agent_tool_call_t *call)
{
    ngx_http_agent_node_tools_ctx_t *ctx = call->owner;

    ngx_int_t              rc;
    ngx_http_agent_run_t  *run;

    run = ctx->run;
    ctx->pending--;
    ctx->sql -= call->tool->sql;
    ngx_http_agent_node_tools_release(ctx, call);

    if (call->deadline.timer_set) {
        ngx_del_timer(&call->deadline);
    }

    rc = ngx_http_agent_node_tools_result(ctx, call);

    if (rc != NGX_ERROR && ctx->started
        && ngx_http_agent_node_tools_next(ctx) == NGX_ERROR)
    {
        rc = NGX_ERROR;
    }

    if (rc == NGX_ERROR) {
        ngx_http_agent_node_tools_cancel(run);
        ngx_http_agent_graph_node_done(run, NGX_ERROR);
        return;
    }

    if (rc == NGX_AGAIN || ctx->pending || !ctx->started
        || ngx_http_agent_node_tools_queued(ctx))
    {
        /* tried again, others still run, or wait for a place */
        return;
    }

    ngx_http_agent_graph_node_done(run, ngx_http_agent_node_tools_end(ctx));
}


/* a call that outlives timeout=: stopped, and an error result */

static void
ngx_http_agent_node_tools_expire(ngx_event_t *ev)
{
    ngx_http_agent_tool_call_t *call = ev->data;

    ngx_http_agent_node_tools_ctx_t *ctx = call->owner;

    u_char  *p;

    ngx_log_error(NGX_LOG_INFO, ev->log, 0, "agent: tool \"%V\" timed out",
                  &call->name);

    if (call->cancel) {
        call->cancel(call);
        call->cancel = NULL;
    }

    p = ngx_pnalloc(ctx->run->pool, call->name.len + 96);

    if (p) {
        call->result.data = p;
        call->result.len = ngx_sprintf(p, "{\"error\":\"the tool \\\"%V\\\" "
                                       "did not answer within %M ms\"}",
                                       &call->name, ctx->conf->timeout)
                           - p;
    } else {
        ngx_str_set(&call->result, "{\"error\":\"timed out\"}");
    }

    ngx_http_agent_node_tools_done(call);
}


/* the next calls that waited for a place (never started: attempt 0) */

static ngx_int_t
ngx_http_agent_node_tools_next(ngx_http_agent_node_tools_ctx_t *ctx)
{
    ngx_uint_t                   i;
    ngx_http_agent_tool_call_t  *c;

    for (i = 0; i < ctx->ncalls; i++) {
        c = &ctx->calls[i];

        if (c->attempt == 0 && ngx_http_agent_node_tools_room(ctx, c)) {
            if (ngx_http_agent_node_tools_start(ctx, c) == NGX_ERROR) {
                return NGX_ERROR;
            }
        }
    }

    return NGX_OK;
}


/* whether a call may start now, under the SQL and the peers' caps */

static ngx_uint_t
ngx_http_agent_node_tools_room(ngx_http_agent_node_tools_ctx_t *ctx,
    ngx_http_agent_tool_call_t *call)
{
    ngx_http_agent_env_t  *env;

    if (call->tool == NULL || call->answer.len) {
        return 1;
    }

    env = ctx->run->data;

    if (call->tool->sql && ctx->sql >= ctx->sql_max) {
        return 0;
    }

    if (call->tool->peer && env->peer_calls >= ctx->peer_max) {
        return 0;
    }

    return 1;
}


static ngx_uint_t
ngx_http_agent_node_tools_queued(ngx_http_agent_node_tools_ctx_t *ctx)
{
    ngx_uint_t  i;

    for (i = 0; i < ctx->ncalls; i++) {
        if (ctx->calls[i].attempt == 0) {
            return 1;
        }
    }

    return 0;
}


/* the round's last call has ended: its step ends with it */

static ngx_uint_t
ngx_http_agent_node_tools_last(ngx_http_agent_node_tools_ctx_t *ctx)
{
    ngx_http_agent_node_t  *nodes;

    nodes = ctx->run->graph->nodes.elts;

    return ctx->started && ctx->pending == 0
           && !ngx_http_agent_node_tools_queued(ctx)
           && ctx->run->parent == NULL
           && nodes[ctx->run->current].parts == NULL;
}


/*
 * A place of agent_tool_concurrency is free: a location subrequest that
 * outlived its call has ended.  The calls that wait for it start; when
 * none waits and none runs, the step is over.
 */

static void
ngx_http_agent_node_tools_freed(void *data)
{
    ngx_http_agent_node_tools_ctx_t *ctx = data;

    ngx_http_agent_run_t  *run;

    run = ctx->run;

    if (!ctx->started) {
        /* the first loop starts them */
        return;
    }

    if (ngx_http_agent_node_tools_next(ctx) == NGX_ERROR) {
        ngx_http_agent_node_tools_cancel(run);
        ngx_http_agent_graph_node_done(run, NGX_ERROR);
        return;
    }

    if (ctx->pending || ngx_http_agent_node_tools_queued(ctx)) {
        return;
    }

    ngx_http_agent_graph_node_done(run, ngx_http_agent_node_tools_end(ctx));
}


/* a call of a location or an MCP server gives its place back */

static void
ngx_http_agent_node_tools_release(ngx_http_agent_node_tools_ctx_t *ctx,
    ngx_http_agent_tool_call_t *call)
{
    ngx_http_agent_env_t  *env;

    if (!call->counted) {
        return;
    }

    env = ctx->run->data;
    call->counted = 0;

    /* an orphan's subrequest gives it back as it ends (tool_location.c) */

    if (!call->orphan && env->peer_calls) {
        env->peer_calls--;
    }
}


/*
 * A call's tool, by the name the model called, among the tools offered
 * (and tools= of this node, when it names some): NGX_DECLINED if none
 */

static ngx_int_t
ngx_http_agent_node_tools_resolve(ngx_http_agent_node_tools_ctx_t *ctx,
    ngx_http_agent_tool_call_t *call)
{
    ngx_int_t                      rc;
    ngx_http_agent_toolset_hit_t   hit;

    rc = ngx_http_agent_toolset_find(ctx->run->pool, &ctx->conf->offered,
                                     &call->name, &hit);
    if (rc != NGX_OK) {
        return rc;
    }

    if (!ngx_http_agent_toolset_empty(&ctx->conf->own)
        && !ngx_http_agent_toolset_holds(&ctx->conf->own, &hit))
    {
        return NGX_DECLINED;
    }

    call->tool = hit.tool;
    call->tool_name = hit.name;

    return NGX_OK;
}


/* a call's result: tried again while it fails and retries are left */

static ngx_int_t
ngx_http_agent_node_tools_result(ngx_http_agent_node_tools_ctx_t *ctx,
    ngx_http_agent_tool_call_t *call)
{
    ngx_uint_t              error;
    ngx_http_agent_env_t   *env;
    ngx_http_agent_event_t  ev;

    static ngx_str_t  other = ngx_string("other");

    env = ctx->run->data;

    /* only a call that ran is tried again: not one a human rejected */

    if (call->tool && call->answer.len == 0 && call->attempt
        && call->attempt <= ctx->conf->retries
        && call->result.len > 9
        && ngx_strncmp(call->result.data, "{\"error\":", 9) == 0)
    {
        ngx_log_error(NGX_LOG_INFO, ctx->run->log, 0, "agent: tool \"%V\" "
                      "failed, tried again", &call->name);
        ngx_str_null(&call->result);

        return ngx_http_agent_node_tools_start(ctx, call);
    }

    if (ctx->conf->redact
        && ngx_http_agent_redact(ctx->run->pool, ctx->conf->redact,
                                 &call->result)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    call->finished = 1;

    /*
     * kept before the step is: a run taken over does not run it again;
     * not the last of a round whose step is saved next (no then= parts,
     * not a subgraph's, whose steps are not the thread's): nothing comes
     * between, so a write more per round would keep nothing
     */

    if (call->tool && call->answer.len == 0 && env->services.write
        && !ngx_http_agent_node_tools_last(ctx))
    {
        env->services.write(ctx->run, call - ctx->calls, &call->id,
                            &call->result);
    }

    /* results in the calls' order: a stream the same whichever ends first */

    while (ctx->emitted < ctx->ncalls && ctx->calls[ctx->emitted].finished) {
        call = &ctx->calls[ctx->emitted++];

        error = (call->result.len > 9
                 && ngx_strncmp(call->result.data, "{\"error\":", 9) == 0);

        /* a series per bound tool: a name the model made up is "other" */

        ngx_http_agent_metrics_cstr(NGX_HTTP_AGENT_M_TOOL_CALLS,
                                    call->tool ? &call->name : &other,
                                    error ? "error" : "ok", 1);
        ngx_http_agent_trace_tool(((ngx_http_agent_env_t *)
                                   ctx->run->data)->trace,
                                  &call->name, &call->id, call->started,
                                  error);

        ngx_memzero(&ev, sizeof(ngx_http_agent_event_t));
        ev.type = NGX_HTTP_AGENT_EV_TOOL_END;
        ev.id = &call->id;
        ev.name = &call->name;
        ev.json = &call->result;
        ev.input = call->args;

        if (ngx_http_agent_env_emit(ctx->run, &ev) != NGX_OK) {
            return ngx_http_agent_graph_fail(ctx->run, "client_gone", "the "
                                             "client went away");
        }
    }

    return NGX_OK;
}


static void
ngx_http_agent_node_tools_cancel(ngx_http_agent_run_t *run)
{
    ngx_http_agent_node_tools_ctx_t *ctx = run->node_data;

    ngx_uint_t                   i;
    ngx_http_agent_tool_call_t  *c;

    if (ctx == NULL) {
        return;
    }

    ((ngx_http_agent_env_t *) run->data)->peer_freed = NULL;

    for (i = 0; i < ctx->ncalls; i++) {
        c = &ctx->calls[i];

        if (c->deadline.timer_set) {
            ngx_del_timer(&c->deadline);
        }

        if (!c->finished && c->cancel) {
            c->cancel(c);
            c->cancel = NULL;
        }

        ngx_http_agent_node_tools_release(ctx, c);
    }
}
