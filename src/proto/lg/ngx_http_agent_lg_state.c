
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <ngx_md5.h>

#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_engine.h"


/*
 * A run's state as the LangGraph Agent Server shows it: channels by name,
 * messages as LangChain serializes them with ids, the interrupt the run
 * waits on as "__interrupt__": [{"value", "id"}]; and a checkpoint as a
 * ThreadState.  Shared by the stream (stream_lg.c) and the API (lg.c).
 */


static void ngx_http_agent_lg_hitl(ngx_http_agent_json_t *j,
    yajl_val calls);
static ngx_uint_t ngx_http_agent_lg_shown(ngx_http_agent_run_t *run,
    ngx_uint_t ch, ngx_uint_t output);
static void ngx_http_agent_lg_value(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run, ngx_uint_t ch, ngx_http_agent_value_t *v,
    ngx_uint_t base, ngx_str_t *thread_id);
static void ngx_http_agent_lg_task_subgraph(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_str_t *thread_id, ngx_uint_t subgraphs);


/*
 * A message's id: its place in the thread, the same in every answer;
 * written into buf (NGX_HTTP_AGENT_LG_MSG_ID long): a stream writes many
 */

void
ngx_http_agent_lg_message_id(u_char *buf, ngx_str_t *thread_id,
    ngx_uint_t n, ngx_str_t *id)
{
    id->data = buf;
    id->len = ngx_snprintf(buf, NGX_HTTP_AGENT_LG_MSG_ID, "%*s-%ui",
                           ngx_http_agent_store_id_shown(thread_id),
                           thread_id->data, n)
              - buf;
}


/*
 * The state's values; output: a run's output (values and updates events,
 * a wait's answer), the channels of the graph's "output" statement alone
 */

void
ngx_http_agent_lg_values(ngx_http_agent_json_t *j, ngx_http_agent_run_t *run,
    ngx_str_t *thread_id, ngx_uint_t output)
{
    size_t                     i;
    yajl_val                   extra;
    ngx_http_agent_channel_t  *ch;

    ch = run->graph->channels.elts;

    ngx_http_agent_json_obj(j);

    for (i = 0; i < run->graph->channels.nelts; i++) {
        if (!ngx_http_agent_lg_shown(run, i, output)) {
            continue;
        }

        /*
         * a channel never written, of no default, has no value: LangGraph
         * shows none (one of default=null: null, as its default: () =>
         * null; a null written to one of no default reads back as none)
         */

        if (run->state[i].messages == NULL
            && ch[i].reducer != NGX_HTTP_AGENT_REDUCE_SUM
            && run->state[i].json.len == 0 && ch[i].dflt.len == 0)
        {
            continue;
        }

        ngx_http_agent_json_str(j, &ch[i].name);
        ngx_http_agent_lg_value(j, run, i, &run->state[i], 0, thread_id);
    }

    extra = run->extra.len && !(output && run->graph->outputs)
            ? ngx_http_agent_json_parse(run->pool, run->extra.data,
                                        run->extra.len, NULL)
            : NULL;

    /*
     * the channels of other graphs; not the state's own keys (the
     * interrupt is the tasks', a waiting subgraph's state its own)
     */

    for (i = 0; extra && YAJL_IS_OBJECT(extra) && i < extra->u.object.len;
         i++)
    {
        if (ngx_strncmp(extra->u.object.keys[i], "__", 2) == 0) {
            continue;
        }

        ngx_http_agent_json_cstr(j, extra->u.object.keys[i]);
        ngx_http_agent_json_val(j, extra->u.object.values[i]);
    }

    ngx_http_agent_json_end(j);
}


/*
 * what the step wrote, channel by channel; a subgraph node's messages as
 * LangGraph shows a subgraph's output: all of them, not those it added
 */

void
ngx_http_agent_lg_update(ngx_http_agent_json_t *j, ngx_http_agent_run_t *run,
    ngx_str_t *thread_id, ngx_uint_t output)
{
    ngx_uint_t                 i, base, whole;
    ngx_http_agent_node_t     *node;
    ngx_http_agent_write_t    *w;
    ngx_http_agent_channel_t  *ch;

    ch = run->graph->channels.elts;
    w = run->update ? run->update->elts : NULL;

    node = run->graph->nodes.elts;
    whole = (run->current >= 0
             && (ngx_uint_t) run->current < run->graph->nodes.nelts
             && node[run->current].subgraph);

    /* the step's messages are the last ones of the state */
    base = run->state[NGX_HTTP_AGENT_CH_MESSAGES].messages->nelts;

    for (i = 0; w && i < run->update->nelts; i++) {
        if (w[i].value.messages) {
            base -= ngx_min(base, w[i].value.messages->nelts);
        }
    }

    ngx_http_agent_json_obj(j);

    for (i = 0; w && i < run->update->nelts; i++) {
        if (ngx_http_agent_lg_shown(run, w[i].channel, output)) {
            ngx_http_agent_json_str(j, &ch[w[i].channel].name);

            if (whole && w[i].value.messages) {
                ngx_http_agent_lg_value(j, run, w[i].channel,
                                        &run->state[w[i].channel], 0,
                                        thread_id);

            } else {
                ngx_http_agent_lg_value(j, run, w[i].channel, &w[i].value,
                                        base, thread_id);
            }
        }

        if (w[i].value.messages) {
            base += w[i].value.messages->nelts;
        }
    }

    ngx_http_agent_json_end(j);
}


static ngx_uint_t
ngx_http_agent_lg_shown(ngx_http_agent_run_t *run, ngx_uint_t ch,
    ngx_uint_t output)
{
    ngx_http_agent_channel_t  *channels;

    if (ch == NGX_HTTP_AGENT_CH_INPUT || ch == NGX_HTTP_AGENT_CH_SESSION_ID) {
        /* ours: the turn's text and session, not the graph's state */
        return 0;
    }

    channels = run->graph->channels.elts;

    return !output || !run->graph->outputs || channels[ch].output;
}


static void
ngx_http_agent_lg_value(ngx_http_agent_json_t *j, ngx_http_agent_run_t *run,
    ngx_uint_t ch, ngx_http_agent_value_t *v, ngx_uint_t base,
    ngx_str_t *thread_id)
{
    u_char                     buf[NGX_HTTP_AGENT_LG_MSG_ID];
    ngx_str_t                  id;
    ngx_uint_t                 n;
    ngx_http_agent_msg_t      *m;
    ngx_http_agent_channel_t  *channels;

    channels = run->graph->channels.elts;

    if (v->messages) {
        m = v->messages->elts;

        ngx_http_agent_json_arr(j);

        for (n = 0; n < v->messages->nelts; n++) {
            ngx_http_agent_lg_message_id(buf, thread_id, base + n, &id);
            ngx_http_agent_message_lc(j, run->pool, &m[n], &id);
        }

        ngx_http_agent_json_arr_end(j);

    } else if (channels[ch].reducer == NGX_HTTP_AGENT_REDUCE_SUM) {
        ngx_http_agent_json_num(j, v->number);

    } else if (v->json.len) {
        ngx_http_agent_json_raw(j, &v->json);

    } else {
        ngx_http_agent_json_null(j);
    }
}


/* a run's error as LangGraph's clients read it: {"error", "message"} */

void
ngx_http_agent_lg_error(ngx_http_agent_json_t *j, ngx_str_t *code,
    ngx_str_t *message)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "error");

    /* the names LangGraph's clients test for */

    if (code->len == 15
        && ngx_strncmp(code->data, "recursion_limit", 15) == 0)
    {
        ngx_http_agent_json_cstr(j, "GraphRecursionError");

    } else {
        ngx_http_agent_json_str(j, code);
    }

    ngx_http_agent_json_key(j, "message");
    ngx_http_agent_json_str(j, message);
    ngx_http_agent_json_end(j);
}


/* our {"node", "value"} as LangGraph's [{"value", "id"}]; none: [] */

void
ngx_http_agent_lg_interrupts(ngx_http_agent_json_t *j, ngx_str_t *json)
{
    u_char     buf[32], h[16], *p;
    yajl_val   v, value;
    ngx_md5_t  md5;
    ngx_str_t  node;

    ngx_http_agent_json_arr(j);

    v = (json && json->len)
        ? ngx_http_agent_json_parse(j->pool, json->data, json->len, NULL)
        : NULL;

    /* a breakpoint has no interrupt of its own: the task waits, empty */

    if (v && YAJL_IS_OBJECT(v)
        && ngx_http_agent_json_get_str(v, "node", &node) == NGX_OK
        && ngx_http_agent_json_get(v, "breakpoint") == NULL)
    {
        value = ngx_http_agent_json_get(v, "value");

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "value");

        if (value && YAJL_IS_ARRAY(value)
            && YAJL_IS_TRUE(ngx_http_agent_json_get(v, "approve")))
        {
            ngx_http_agent_lg_hitl(j, value);

        } else if (value) {
            ngx_http_agent_json_val(j, value);

        } else {
            ngx_http_agent_json_null(j);
        }

        /* one interrupt at a time: its id the md5 of its node's name */
        ngx_md5_init(&md5);
        ngx_md5_update(&md5, node.data, node.len);
        ngx_md5_final(h, &md5);
        p = ngx_hex_dump(buf, h, 16);

        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_bytes(j, buf, p - buf);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
}


/*
 * A tools node's calls to approve as LangChain's HITLRequest, which
 * Agent Chat UI shows with its buttons: an action and a review config per
 * call (its answers: tools_approve.c)
 */

static void
ngx_http_agent_lg_hitl(ngx_http_agent_json_t *j, yajl_val calls)
{
    size_t     i;
    u_char    *p;
    yajl_val   c, args;
    ngx_str_t  name, text, json;

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "action_requests");
    ngx_http_agent_json_arr(j);

    for (i = 0; i < calls->u.array.len; i++) {
        c = calls->u.array.values[i];
        args = ngx_http_agent_json_get(c, "args");

        ngx_str_null(&name);
        (void) ngx_http_agent_json_get_str(c, "name", &name);

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &name);
        ngx_http_agent_json_key(j, "args");

        if (args) {
            ngx_http_agent_json_val(j, args);

        } else {
            ngx_http_agent_json_obj(j);
            ngx_http_agent_json_end(j);
        }

        /* LangChain's own words, with the arguments as JSON */

        ngx_str_set(&json, "{}");

        if (args) {
            (void) ngx_http_agent_json_encode(j->pool, args, &json);
        }

        p = ngx_pnalloc(j->pool, name.len + json.len + 64);

        if (p) {
            text.data = p;
            text.len = ngx_sprintf(p, "Tool execution requires approval\n\n"
                                   "Tool: %V\nArgs: %V", &name, &json)
                       - p;

            ngx_http_agent_json_key(j, "description");
            ngx_http_agent_json_str(j, &text);
        }

        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "review_configs");
    ngx_http_agent_json_arr(j);

    for (i = 0; i < calls->u.array.len; i++) {
        ngx_str_null(&name);
        (void) ngx_http_agent_json_get_str(calls->u.array.values[i], "name",
                                           &name);

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "action_name");
        ngx_http_agent_json_str(j, &name);
        ngx_http_agent_json_key(j, "allowed_decisions");
        ngx_http_agent_json_arr(j);
        ngx_http_agent_json_cstr(j, "approve");
        ngx_http_agent_json_cstr(j, "edit");
        ngx_http_agent_json_cstr(j, "reject");
        ngx_http_agent_json_cstr(j, "respond");
        ngx_http_agent_json_arr_end(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);
}


/* the interrupt a run waits on, as our JSON; NGX_DECLINED: none */

ngx_int_t
ngx_http_agent_lg_interrupt_of(ngx_http_agent_run_t *run, ngx_str_t *json)
{
    yajl_val  extra, v;

    extra = run->extra.len
            ? ngx_http_agent_json_parse(run->pool, run->extra.data,
                                        run->extra.len, NULL)
            : NULL;

    v = extra ? ngx_http_agent_json_get(extra, "__interrupt__") : NULL;

    if (v == NULL || !YAJL_IS_OBJECT(v)
        || ngx_http_agent_json_encode(run->pool, v, json) != NGX_OK)
    {
        return NGX_DECLINED;
    }

    return NGX_OK;
}


void
ngx_http_agent_lg_checkpoint(ngx_http_agent_json_t *j, ngx_str_t *thread_id,
    ngx_str_t *ns, ngx_str_t *checkpoint_id)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "thread_id");
    ngx_http_agent_json_bytes(j, thread_id->data,
                              ngx_http_agent_store_id_shown(thread_id));
    ngx_http_agent_json_key(j, "checkpoint_ns");

    if (ns && ns->len) {
        ngx_http_agent_json_str(j, ns);

    } else {
        ngx_http_agent_json_cstr(j, "");
    }

    ngx_http_agent_json_key(j, "checkpoint_id");
    ngx_http_agent_json_str(j, checkpoint_id);
    ngx_http_agent_json_key(j, "checkpoint_map");
    ngx_http_agent_json_null(j);
    ngx_http_agent_json_end(j);
}


/*
 * A task's "checkpoint" and "state": for a node whose subgraph waits
 * inside it, the subgraph's namespace ("node:task id", LangGraph's), or
 * with subgraphs its state where it waits (node_subgraph.c keeps it)
 */

static void
ngx_http_agent_lg_task_subgraph(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_str_t *thread_id, ngx_uint_t subgraphs)
{
    u_char                *p;
    ngx_str_t              ns;
    ngx_http_agent_run_t  *inner;

    inner = ngx_http_agent_lg_subgraph_run(run, &cp->next);

    ngx_http_agent_json_key(j, "checkpoint");

    p = (inner && !subgraphs)
        ? ngx_pnalloc(j->pool, cp->next.len + 1 + cp->id.len) : NULL;

    if (p) {
        ns.data = p;
        p = ngx_cpymem(p, cp->next.data, cp->next.len);
        *p++ = ':';
        ns.len = ngx_cpymem(p, cp->id.data, cp->id.len) - ns.data;

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "checkpoint_ns");
        ngx_http_agent_json_str(j, &ns);
        ngx_http_agent_json_key(j, "thread_id");
        ngx_http_agent_json_bytes(j, thread_id->data,
                                  ngx_http_agent_store_id_shown(thread_id));
        ngx_http_agent_json_end(j);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_key(j, "state");

    if (inner == NULL || !subgraphs) {
        ngx_http_agent_json_null(j);
        return;
    }

    ngx_http_agent_lg_subgraph_state(j, inner, cp, thread_id, subgraphs);
}


/* the run of the subgraph that waits at the node, as it waits, or NULL */

ngx_http_agent_run_t *
ngx_http_agent_lg_subgraph_run(ngx_http_agent_run_t *run, ngx_str_t *name)
{
    ngx_int_t               n;
    ngx_http_agent_run_t   *inner;
    ngx_http_agent_node_t  *node;

    n = ngx_http_agent_graph_node(run->graph, name);

    if (n < 0) {
        return NULL;
    }

    node = (ngx_http_agent_node_t *) run->graph->nodes.elts + n;

    inner = node->subgraph
            ? ngx_http_agent_graph_run_create(run->pool, run->log,
                                              node->subgraph)
            : NULL;

    if (inner == NULL || ngx_http_agent_state_subgraph(run, node, inner)
                         != NGX_OK)
    {
        return NULL;
    }

    return inner;
}


/* a waiting subgraph's ThreadState, in the checkpoint of its node's */

void
ngx_http_agent_lg_subgraph_state(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *inner, ngx_http_agent_checkpoint_t *cp,
    ngx_str_t *thread_id, ngx_uint_t subgraphs)
{
    ngx_http_agent_checkpoint_t  icp;

    ngx_memzero(&icp, sizeof(ngx_http_agent_checkpoint_t));

    icp.id = cp->id;
    icp.created_at = cp->created_at;
    icp.step = inner->step;

    if (inner->current >= 0) {
        icp.next = ((ngx_http_agent_node_t *) inner->graph->nodes.elts
                    + inner->current)->name;
    }

    ngx_http_agent_lg_state_json(j, inner, &icp, thread_id, subgraphs);
}


/* a ThreadState: values, next, tasks with their interrupts, checkpoints */

void
ngx_http_agent_lg_state_json(ngx_http_agent_json_t *j,
    ngx_http_agent_run_t *run, ngx_http_agent_checkpoint_t *cp,
    ngx_str_t *thread_id, ngx_uint_t subgraphs)
{
    const char  *key;
    size_t       i;
    yajl_val     meta;
    ngx_str_t    interrupt;
    ngx_uint_t   waits;

    waits = (ngx_http_agent_lg_interrupt_of(run, &interrupt) == NGX_OK);

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "values");
    ngx_http_agent_lg_values(j, run, thread_id, 0);

    ngx_http_agent_json_key(j, "next");
    ngx_http_agent_json_arr(j);

    if (cp->next.len) {
        ngx_http_agent_json_str(j, &cp->next);
    }

    ngx_http_agent_json_arr_end(j);

    ngx_http_agent_json_key(j, "tasks");
    ngx_http_agent_json_arr(j);

    if (cp->next.len) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_str(j, &cp->id);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &cp->next);
        ngx_http_agent_json_key(j, "path");
        ngx_http_agent_json_arr(j);
        ngx_http_agent_json_cstr(j, "__pregel_pull");
        ngx_http_agent_json_str(j, &cp->next);
        ngx_http_agent_json_arr_end(j);
        ngx_http_agent_json_key(j, "error");
        ngx_http_agent_json_null(j);
        ngx_http_agent_json_key(j, "interrupts");
        ngx_http_agent_lg_interrupts(j, waits ? &interrupt : NULL);
        ngx_http_agent_lg_task_subgraph(j, run, cp, thread_id, subgraphs);
        ngx_http_agent_json_key(j, "result");
        ngx_http_agent_json_null(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);

    ngx_http_agent_json_key(j, "metadata");
    ngx_http_agent_json_obj(j);
    /* the state before a run's input (turn_before) is its "input" step */
    ngx_http_agent_json_key(j, "source");

    if (cp->next.len == 9 && ngx_strncmp(cp->next.data, "__start__", 9) == 0)
    {
        ngx_http_agent_json_cstr(j, "input");

    } else {
        ngx_http_agent_json_cstr(j, "loop");
    }

    ngx_http_agent_json_key(j, "step");
    ngx_http_agent_json_int(j, cp->step);
    ngx_http_agent_json_key(j, "parents");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_key(j, "thread_id");
    ngx_http_agent_json_bytes(j, thread_id->data,
                              ngx_http_agent_store_id_shown(thread_id));

    /* the run that saved it: its id and its metadata, as LangGraph's */

    if (cp->saved_by.len) {
        ngx_http_agent_json_key(j, "run_id");
        ngx_http_agent_json_str(j, &cp->saved_by);
    }

    meta = cp->metadata.len
           ? ngx_http_agent_json_parse(j->pool, cp->metadata.data,
                                       cp->metadata.len, NULL)
           : NULL;

    for (i = 0; meta && YAJL_IS_OBJECT(meta) && i < meta->u.object.len; i++) {
        key = meta->u.object.keys[i];

        if (ngx_strcmp(key, "source") == 0 || ngx_strcmp(key, "step") == 0
            || ngx_strcmp(key, "parents") == 0
            || ngx_strcmp(key, "thread_id") == 0
            || ngx_strcmp(key, "run_id") == 0)
        {
            continue;
        }

        ngx_http_agent_json_cstr(j, key);
        ngx_http_agent_json_val(j, meta->u.object.values[i]);
    }

    ngx_http_agent_json_end(j);

    ngx_http_agent_json_key(j, "created_at");

    if (cp->created_at.len) {
        ngx_http_agent_json_str(j, &cp->created_at);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_key(j, "checkpoint");

    if (cp->id.len) {
        ngx_http_agent_lg_checkpoint(j, thread_id, &cp->ns, &cp->id);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_key(j, "parent_checkpoint");

    if (cp->parent_id.len) {
        ngx_http_agent_lg_checkpoint(j, thread_id, &cp->ns, &cp->parent_id);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_end(j);
}


/*
 * POST /threads/{id}/state with a subgraph's namespace (a task's
 * "checkpoint"): the values written to the state of the subgraph that
 * waits at that node, through its reducers, kept for its resume.
 * NGX_DECLINED: no subgraph waits there; NGX_ABORT: a value of no
 * channel of its, or messages (not written so).
 */

ngx_int_t
ngx_http_agent_lg_subgraph_values(ngx_http_agent_run_t *run,
    ngx_http_agent_lg_subgraph_t *sw)
{
    size_t                  i;
    yajl_val                c;
    ngx_int_t               n, ch;
    ngx_str_t               name, json;
    ngx_array_t            *update;
    ngx_http_agent_run_t   *inner;

    inner = ngx_http_agent_lg_subgraph_run(run, &sw->node);
    update = ngx_http_agent_graph_update_create(run->pool);

    if (inner == NULL || update == NULL) {
        /* none waits there (or no memory: as none) */
        return NGX_DECLINED;
    }

    for (i = 0; sw->values && i < sw->values->u.object.len; i++) {
        name.data = (u_char *) sw->values->u.object.keys[i];
        name.len = ngx_strlen(name.data);
        c = sw->values->u.object.values[i];

        ch = ngx_http_agent_graph_channel(inner->graph, &name);

        if (ch == NGX_ERROR || ch == NGX_HTTP_AGENT_CH_MESSAGES) {
            return NGX_ABORT;
        }

        if (YAJL_IS_NUMBER(c) && ((ngx_http_agent_channel_t *)
                                  inner->graph->channels.elts)[ch].reducer
                                 == NGX_HTTP_AGENT_REDUCE_SUM)
        {
            n = ngx_http_agent_graph_write_number(update, ch,
                                                  YAJL_GET_DOUBLE(c));

        } else if (ngx_http_agent_json_encode(run->pool, c, &json) == NGX_OK) {
            n = ngx_http_agent_graph_write_value(update, ch, &json);

        } else {
            n = NGX_ERROR;
        }

        if (n != NGX_OK) {
            return NGX_ERROR;
        }
    }

    if (ngx_http_agent_graph_apply(inner, update) != NGX_OK) {
        return NGX_ABORT;
    }

    /* the write is a step of the subgraph's: its checkpoint's */

    inner->step++;
    sw->step = inner->step;

    c = ngx_http_agent_json_parse(run->pool, inner->interrupt.data,
                                  inner->interrupt.len, NULL);

    if (c == NULL
        || ngx_http_agent_json_get_str(c, "node", &sw->next) != NGX_OK)
    {
        ngx_str_null(&sw->next);
    }

    return ngx_http_agent_state_subgraph_keep(run, &sw->node, inner);
}
