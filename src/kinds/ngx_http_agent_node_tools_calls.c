
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_kinds_int.h"


/*
 * The calls a tools node runs besides the model's as it wrote them:
 * args=TOOL.ARG:CHANNEL set from the state, and call=TOOL, one call no
 * model asked for (node_tools.c runs them); the calls of the client's own
 * tools, which the run waits for.  And what makes a call's effect happen
 * once across take-overs (docs/runs.md, "Exactly once"): its claim, its
 * key, and what a call cut while it ran becomes.
 */


static ngx_uint_t ngx_http_agent_node_tools_clients(ngx_http_agent_run_t *run,
    ngx_http_agent_node_tools_conf_t *tc, ngx_str_t *name);
static ngx_int_t ngx_http_agent_node_tools_ask(ngx_http_agent_run_t *run,
    ngx_http_agent_tool_call_t *calls, ngx_uint_t n);
static ngx_int_t ngx_http_agent_node_tools_told(ngx_http_agent_run_t *run,
    yajl_val asked, ngx_array_t *calls);


/*
 * A call answered before the run's worker died: not run again.  One
 * claimed and never answered (cut while it ran): run again if its tool is
 * idempotent (with the same key), else answered that its outcome is
 * unknown, naming it, so that the graph can ask, check or stop
 */

ngx_int_t
ngx_http_agent_node_tools_kept(ngx_http_agent_run_t *run,
    ngx_http_agent_tool_call_t *c)
{
    u_char                *p;
    ngx_str_t              err;
    ngx_http_agent_env_t  *env;

    env = run->data;

    if (c->answer.len || env->services.kept == NULL
        || env->services.kept(run, &c->id, &c->answer) != NGX_DONE)
    {
        return NGX_OK;
    }

    if (c->tool == NULL || ngx_http_agent_tools_idempotent(c)) {
        ngx_log_error(NGX_LOG_NOTICE, run->log, 0, "agent: tool call \"%V\" "
                      "was cut while it ran, its tool is idempotent: run "
                      "again", &c->id);
        return NGX_OK;
    }

    ngx_log_error(NGX_LOG_WARN, run->log, 0, "agent: tool call \"%V\" of "
                  "tool \"%V\" was cut while it ran and is not idempotent: "
                  "not run again, its outcome unknown", &c->id, &c->name);

    c->unknown = 1;

    p = ngx_pnalloc(run->pool, c->id.len + c->name.len + 256);
    if (p == NULL) {
        return NGX_ERROR;
    }

    err.data = p;
    err.len = ngx_sprintf(p, "outcome unknown: the call \"%V\" of \"%V\" "
                          "was cut while it ran (its worker was lost) and "
                          "is not run again, as the tool is not idempotent; "
                          "it may or may not have taken effect: check "
                          "before calling it again", &c->id, &c->name)
              - p;

    return ngx_http_agent_json_error(run->pool, &err, &c->answer);
}


/*
 * Before a call runs: its key, then its claim.  NGX_DONE: not to run, its
 * result set (the run is another worker's now)
 */

ngx_int_t
ngx_http_agent_node_tools_claim(ngx_http_agent_run_t *run, ngx_uint_t index,
    ngx_http_agent_tool_call_t *c)
{
    ngx_str_t              err;
    ngx_http_agent_env_t  *env;

    env = run->data;

    if (c->key.len == 0 && env->services.key
        && env->services.key(run, &c->id, &c->key) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (c->attempt > 1 || env->services.claim == NULL
        || env->services.claim(run, index, &c->id) != NGX_DECLINED)
    {
        return NGX_OK;
    }

    ngx_str_set(&err, "not run: another worker took this run over");

    return ngx_http_agent_json_error(run->pool, &err, &c->result) == NGX_OK
           ? NGX_DONE : NGX_ERROR;
}


/* the call's arguments, written anew with args= set from their channels */

ngx_int_t
ngx_http_agent_node_tools_args(ngx_http_agent_run_t *run,
    ngx_http_agent_node_tools_conf_t *tc, ngx_http_agent_tool_call_t *c)
{
    size_t                      k;
    yajl_val                    v;
    ngx_str_t                   value, key;
    ngx_uint_t                  i, n, set;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_tool_arg_t  *a;

    a = tc->args->elts;
    n = 0;

    for (i = 0; i < tc->args->nelts; i++) {
        n += (a[i].tool.len == c->name.len
              && ngx_strncmp(a[i].tool.data, c->name.data, c->name.len) == 0);
    }

    if (n == 0 || (c->args && !YAJL_IS_OBJECT(c->args))) {
        return NGX_OK;
    }

    j = ngx_http_agent_json_create_obj(run->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }


    /* the model's arguments but those set here */

    for (k = 0; c->args && k < c->args->u.object.len; k++) {
        key.data = (u_char *) c->args->u.object.keys[k];
        key.len = ngx_strlen(key.data);
        set = 0;

        for (i = 0; i < tc->args->nelts; i++) {
            set |= (a[i].tool.len == c->name.len
                    && ngx_strncmp(a[i].tool.data, c->name.data,
                                   c->name.len) == 0
                    && a[i].arg.len == key.len
                    && ngx_strncmp(a[i].arg.data, key.data, key.len) == 0);
        }

        if (!set) {
            ngx_http_agent_json_str(j, &key);
            ngx_http_agent_json_val(j, c->args->u.object.values[k]);
        }
    }

    for (i = 0; i < tc->args->nelts; i++) {
        if (a[i].tool.len != c->name.len
            || ngx_strncmp(a[i].tool.data, c->name.data, c->name.len) != 0
            || ngx_http_agent_graph_value(run, a[i].channel, &value)
               != NGX_OK
            || (value.len == 4 && ngx_strncmp(value.data, "null", 4) == 0))
        {
            continue;
        }

        ngx_http_agent_json_str(j, &a[i].arg);
        ngx_http_agent_json_raw(j, &value);
    }

    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &c->arguments) != NGX_OK) {
        return NGX_ERROR;
    }

    v = ngx_http_agent_json_parse(run->pool, c->arguments.data,
                                  c->arguments.len, NULL);
    if (v == NULL) {
        return NGX_ERROR;
    }

    c->args = v;

    return NGX_OK;
}


/* call=TOOL: the one call, {"query": the query channel's text} */

ngx_int_t
ngx_http_agent_node_tools_own(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_array_t **calls)
{
    ngx_http_agent_node_tools_conf_t *tc = node->conf;

    u_char                 *p;
    yajl_val                v;
    ngx_str_t               text;
    ngx_http_agent_call_t  *call;
    ngx_http_agent_json_t  *j;

    *calls = ngx_array_create(run->pool, 1, sizeof(ngx_http_agent_call_t));
    if (*calls == NULL) {
        return NGX_ERROR;
    }

    call = ngx_array_push(*calls);
    j = ngx_http_agent_json_create(run->pool);
    p = ngx_pnalloc(run->pool, node->name.len + NGX_INT_T_LEN + 1);

    if (call == NULL || j == NULL || p == NULL
        || ngx_http_agent_graph_value(run, tc->query, &text) != NGX_OK)
    {
        return NGX_ERROR;
    }

    ngx_memzero(call, sizeof(ngx_http_agent_call_t));
    call->id.data = p;
    call->id.len = ngx_sprintf(p, "%V-%ui", &node->name, run->step) - p;
    call->name = tc->call;

    /* a string channel (the input) is its text; anything else its JSON */

    v = ngx_http_agent_json_parse(run->pool, text.data, text.len, NULL);

    if (v && YAJL_IS_STRING(v)) {
        text.data = (u_char *) YAJL_GET_STRING(v);
        text.len = ngx_strlen(text.data);
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "query");
    ngx_http_agent_json_str(j, &text);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &call->arguments) != NGX_OK) {
        return NGX_ERROR;
    }

    call->args = ngx_http_agent_json_parse(run->pool, call->arguments.data,
                                           call->arguments.len, NULL);

    return call->args ? NGX_OK : NGX_ERROR;
}


/*
 * The results of a step's calls written in the order of the calls: a tool
 * message each, or with call= the output channel; and the channels the
 * tools write
 */

ngx_int_t
ngx_http_agent_node_tools_write(ngx_http_agent_run_t *run,
    ngx_http_agent_node_tools_conf_t *tc, ngx_http_agent_tool_call_t *calls,
    ngx_uint_t n)
{
    ngx_int_t                    rc;
    ngx_uint_t                   i, k;
    ngx_http_agent_msg_t         msg;
    ngx_http_agent_write_t      *w, *dst;
    ngx_http_agent_tool_call_t  *c;

    if (tc->on_unknown) {
        rc = ngx_http_agent_node_tools_ask(run, calls, n);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    for (i = 0; i < n; i++) {
        c = &calls[i];

        if (tc->call.len) {
            if (ngx_http_agent_graph_write_value(run->update,
                                                 tc->output,
                                                 &c->result)
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            goto writes;
        }

        ngx_memzero(&msg, sizeof(ngx_http_agent_msg_t));
        ngx_str_set(&msg.role, "tool");
        msg.content = c->result;
        msg.tool_call_id = c->id;
        msg.name = c->name;

        if (ngx_http_agent_graph_write_message(run, run->update,
                                               NGX_HTTP_AGENT_CH_MESSAGES,
                                               &msg)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

    writes:

        /* tools may update channels too */

        if (c->writes == NULL) {
            continue;
        }

        w = c->writes->elts;

        for (k = 0; k < c->writes->nelts; k++) {
            dst = ngx_array_push(run->update);
            if (dst == NULL) {
                return NGX_ERROR;
            }

            *dst = w[k];
        }
    }

    return NGX_OK;
}


/*
 * The client's own tools (Open Responses'): a call of one the step's set
 * does not hold is the client's to run.  The run waits for the outputs
 * as at an interrupt, {"node", "value": [{"id", "name", "args"}],
 * "client": true}; the answer, [{"call_id", "output"}] as the protocol
 * read the client's items, gives each call its result, and a call left
 * without one says so to the model.  NGX_OK: the round goes on.
 */

ngx_int_t
ngx_http_agent_node_tools_client(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node, ngx_array_t *calls)
{
    size_t                  k;
    yajl_val                v, o;
    ngx_str_t               id, output, err;
    ngx_uint_t              i, n, found;
    ngx_http_agent_call_t  *c;
    ngx_http_agent_json_t  *j;

    c = calls->elts;

    /* a human's answer to the calls a take-over cut (on_unknown=) */

    v = (run->resume.len && run->extra.len)
        ? ngx_http_agent_json_parse(run->pool, run->extra.data,
                                    run->extra.len, NULL)
        : NULL;
    o = v ? ngx_http_agent_json_get(v, "__interrupt__") : NULL;

    if (o && YAJL_IS_TRUE(ngx_http_agent_json_get(o, "unknown"))) {
        return ngx_http_agent_node_tools_told(run, o, calls);
    }

    j = ngx_http_agent_tools_approve_open(run, &node->name);
    if (j == NULL) {
        return NGX_ERROR;
    }

    for (i = 0, n = 0; i < calls->nelts; i++) {
        if (!ngx_http_agent_node_tools_clients(run, node->conf, &c[i].name)) {
            continue;
        }

        n++;
        ngx_http_agent_tools_approve_call(j, &c[i]);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "client");
    ngx_http_agent_json_bool(j, 1);
    ngx_http_agent_json_end(j);

    if (n == 0) {
        return NGX_OK;
    }

    if (run->resume.len == 0) {
        return ngx_http_agent_tools_approve_wait(run, j);
    }

    /*
     * an answer to another interrupt of the round (approve='s, asked
     * after the client's outputs were read) is not the client's: its
     * calls go without outputs rather than ask the client again
     */

    v = run->extra.len ? ngx_http_agent_json_parse(run->pool,
                                                   run->extra.data,
                                                   run->extra.len, NULL)
                       : NULL;
    o = v ? ngx_http_agent_json_get(v, "__interrupt__") : NULL;
    o = o ? ngx_http_agent_json_get(o, "client") : NULL;

    if (o == NULL || !YAJL_IS_TRUE(o)) {
        return NGX_OK;
    }

    ngx_str_set(&err, "the client gave no output for this call");

    if (ngx_http_agent_tools_approve_resumed(run, &v) != NGX_OK) {
        return NGX_ERROR;
    }

    for (i = 0; i < calls->nelts; i++) {
        if (!ngx_http_agent_node_tools_clients(run, node->conf, &c[i].name)) {
            continue;
        }

        found = 0;

        for (k = 0; v && YAJL_IS_ARRAY(v) && k < v->u.array.len; k++) {
            o = v->u.array.values[k];

            if (ngx_http_agent_json_get_str(o, "call_id", &id) == NGX_OK
                && id.len == c[i].id.len
                && ngx_strncmp(id.data, c[i].id.data, id.len) == 0
                && ngx_http_agent_json_get_str(o, "output", &output)
                   == NGX_OK)
            {
                found = 1;
                break;
            }
        }

        /* JSON written anew by our generator, other text as a string */

        o = found ? ngx_http_agent_json_parse(run->pool, output.data,
                                              output.len, NULL)
                  : NULL;

        if ((o ? ngx_http_agent_json_encode(run->pool, o, &c[i].answer)
             : found ? ngx_http_agent_json_quote(run->pool, &output,
                                                 &c[i].answer)
             : ngx_http_agent_json_error(run->pool, &err, &c[i].answer))
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


static ngx_uint_t
ngx_http_agent_node_tools_clients(ngx_http_agent_run_t *run,
    ngx_http_agent_node_tools_conf_t *tc, ngx_str_t *name)
{
    ngx_uint_t                     i;
    ngx_keyval_t                  *kv;
    ngx_http_agent_env_t          *env;
    ngx_http_agent_toolset_hit_t   hit;

    env = run->data;

    if (env->services.client_tools == NULL
        || ngx_http_agent_toolset_find(run->pool, &tc->offered, name, &hit)
           == NGX_OK)
    {
        return 0;
    }

    kv = env->services.client_tools->elts;

    for (i = 0; i < env->services.client_tools->nelts; i++) {
        if (kv[i].key.len == name->len
            && ngx_strncmp(kv[i].key.data, name->data, name->len) == 0)
        {
            return 1;
        }
    }

    return 0;
}


/*
 * on_unknown=interrupt: the round's calls cut by a take-over (not run
 * again) go to a human instead of the model.  The round ends as an
 * interrupt, {"node", "value": [{"id", "name", "args"}], "unknown": true},
 * that keeps the other calls' results ("results": {ID: result}), so that
 * nothing of the round runs again when it is resumed
 */

static ngx_int_t
ngx_http_agent_node_tools_ask(ngx_http_agent_run_t *run,
    ngx_http_agent_tool_call_t *calls, ngx_uint_t n)
{
    yajl_val                v;
    ngx_uint_t              i, asked;
    ngx_http_agent_call_t   call;
    ngx_http_agent_json_t  *j;
    ngx_http_agent_node_t  *node;

    for (i = 0, asked = 0; i < n; i++) {
        asked += calls[i].unknown;
    }

    if (asked == 0) {
        return NGX_OK;
    }

    node = (ngx_http_agent_node_t *) run->graph->nodes.elts + run->current;

    j = ngx_http_agent_tools_approve_open(run, &node->name);
    if (j == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < n; i++) {
        if (!calls[i].unknown) {
            continue;
        }

        ngx_memzero(&call, sizeof(ngx_http_agent_call_t));
        call.id = calls[i].id;
        call.name = calls[i].name;
        call.arguments = calls[i].arguments;
        call.args = calls[i].args;
        ngx_http_agent_tools_approve_call(j, &call);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "unknown");
    ngx_http_agent_json_bool(j, 1);
    ngx_http_agent_json_key(j, "results");
    ngx_http_agent_json_obj(j);

    for (i = 0; i < n; i++) {
        if (calls[i].unknown) {
            continue;
        }

        /* a result is JSON; text that is not is kept as a string */

        v = ngx_http_agent_json_parse(run->pool, calls[i].result.data,
                                      calls[i].result.len, NULL);

        ngx_http_agent_json_str(j, &calls[i].id);

        if (v) {
            ngx_http_agent_json_val(j, v);

        } else {
            ngx_http_agent_json_str(j, &calls[i].result);
        }
    }

    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    ngx_log_error(NGX_LOG_WARN, run->log, 0, "agent: %ui tool call(s) of "
                  "node \"%V\" cut by a take-over: a human is asked "
                  "(on_unknown=interrupt)", asked, &node->name);

    return ngx_http_agent_tools_approve_wait(run, j);
}


/*
 * The resumed round: each call answered from the interrupt's results, a
 * call asked about from the human's answer (our generator's JSON of it;
 * none, or null, leaves its outcome unknown), none run again
 */

static ngx_int_t
ngx_http_agent_node_tools_told(ngx_http_agent_run_t *run, yajl_val asked,
    ngx_array_t *calls)
{
    u_char                 *id;
    yajl_val                answer, results, v;
    ngx_str_t               err;
    ngx_uint_t              i;
    ngx_http_agent_call_t  *c;

    c = calls->elts;
    results = ngx_http_agent_json_get(asked, "results");
    ngx_str_set(&err, "outcome unknown: no human answered about this call "
                "(cut while it ran, its worker lost); it may or may not "
                "have taken effect: check before calling it again");

    if (ngx_http_agent_tools_approve_resumed(run, &answer) != NGX_OK) {
        return NGX_ERROR;
    }

    /* null: a run without an answer (LangGraph's), or a take-over's */

    if (answer && YAJL_IS_NULL(answer)) {
        answer = NULL;
    }

    for (i = 0; i < calls->nelts; i++) {
        id = ngx_pnalloc(run->pool, c[i].id.len + 1);
        if (id == NULL) {
            return NGX_ERROR;
        }

        (void) ngx_cpystrn(id, c[i].id.data, c[i].id.len + 1);

        v = (results && YAJL_IS_OBJECT(results))
            ? ngx_http_agent_json_get(results, (char *) id) : NULL;

        if (v == NULL) {
            v = answer;
        }

        if ((v ? ngx_http_agent_json_encode(run->pool, v, &c[i].answer)
             : ngx_http_agent_json_error(run->pool, &err, &c[i].answer))
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}
