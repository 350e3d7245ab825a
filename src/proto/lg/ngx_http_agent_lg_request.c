
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_ops.h"


/*
 * A LangGraph run request, checked and read into the turn: its input
 * (messages and other channels), command (resume, update, goto), stream
 * modes, what to do when the client goes, the multitask strategy and
 * interrupt_before / interrupt_after.  Errors are 422, as LangGraph's.
 */


static ngx_int_t ngx_http_agent_lg_run_waits(ngx_http_request_t *r,
    ngx_http_agent_lg_run_t *lr, yajl_val v);
static ngx_int_t ngx_http_agent_lg_run_input(ngx_http_request_t *r,
    ngx_str_t *thread_id, yajl_val input, ngx_http_agent_turn_in_t *in);
static ngx_int_t ngx_http_agent_lg_run_modes(ngx_http_request_t *r,
    yajl_val v, ngx_uint_t *modes);


/* the run request's fields, into the turn */

ngx_int_t
ngx_http_agent_lg_run_parse(ngx_http_request_t *r, ngx_http_agent_lg_run_t *lr,
    yajl_val v, ngx_http_agent_turn_in_t *in)
{
    yajl_val                    input, command, x, meta;
    ngx_int_t                   rc;
    ngx_str_t                   s;
    ngx_conf_enum_t            *e;
    ngx_http_agent_lg_conf_t   *llcf;
    ngx_http_agent_loc_conf_t  *alcf;

    input = ngx_http_agent_json_get(v, "input");
    command = ngx_http_agent_json_get(v, "command");

    if (command && !YAJL_IS_NULL(command)) {
        if (!YAJL_IS_OBJECT(command)) {
            return ngx_http_agent_reply_error(r, 422, "\"command\" must be an "
                                              "object: {\"resume\": ...}");
        }

        x = ngx_http_agent_json_get(command, "resume");

        if (x && ngx_http_agent_json_encode(r->pool, x, &in->resume)
                 != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        x = ngx_http_agent_json_get(command, "update");

        if (x && !YAJL_IS_NULL(x)) {
            if (!YAJL_IS_OBJECT(x)) {
                return ngx_http_agent_reply_error(r, 422, "\"command.update\" "
                                                  "must be an object");
            }

            /* written with the answer, as the input's channels are */
            in->values = x;
        }

        x = ngx_http_agent_json_get(command, "goto");

        if (x && !YAJL_IS_NULL(x)) {
            if (!YAJL_IS_STRING(x)) {
                return ngx_http_agent_reply_error(r, 422, "\"command.goto\" "
                                                  "must be a node's name");
            }

            lr->go.data = (u_char *) YAJL_GET_STRING(x);
            lr->go.len = ngx_strlen(lr->go.data);

            /* "__end__": the run ends there (Agent Chat UI's resolve) */

            if (!(lr->go.len == 7
                  && ngx_strncmp(lr->go.data, "__end__", 7) == 0)
                && ngx_http_agent_graph_step_node(lr->graph, &lr->go)
                   == NGX_ERROR)
            {
                return ngx_http_agent_reply_error(r, 422, "the graph \"%V\" "
                                                  "has no node \"%V\"",
                                                  &lr->graph->name, &lr->go);
            }
        }

        if (in->resume.len == 0 && lr->go.len == 0 && in->values == NULL)
        {
            return ngx_http_agent_reply_error(r, 422, "\"command\" needs "
                                              "\"resume\", \"update\" or "
                                              "\"goto\"");
        }

        if (in->resume.len == 0) {
            /* an update or a goto alone answers a wait with null */
            ngx_str_set(&in->resume, "null");
            lr->answers = 1;
        }

    } else if (input == NULL || YAJL_IS_NULL(input)) {

        /* no input: continue a run that waits, as LangGraph does */
        ngx_str_set(&in->resume, "null");
        lr->answers = 1;

    } else {
        rc = ngx_http_agent_lg_run_input(r, lr->info.session_id, input, in);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    rc = ngx_http_agent_lg_run_modes(r, ngx_http_agent_json_get(v,
                                                              "stream_mode"),
                                     &lr->modes);
    if (rc != NGX_OK) {
        return rc;
    }

    x = ngx_http_agent_json_get(v, "stream_subgraphs");

    if (x && YAJL_IS_TRUE(x)) {
        lr->modes |= NGX_HTTP_AGENT_MODE_SUBGRAPHS;
    }

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    llcf = alcf->proto_conf;
    lr->modes |= llcf->server;

    x = ngx_http_agent_json_get(v, "stream_resumable");
    lr->resumable = (x && YAJL_IS_TRUE(x));
    lr->record.events = lr->resumable;

    /* durability: how its steps are saved (agent_durability's words) */

    x = ngx_http_agent_json_get(v, "durability");

    if (x && !YAJL_IS_NULL(x)) {
        s.data = YAJL_IS_STRING(x) ? (u_char *) x->u.string : NULL;
        s.len = s.data ? ngx_strlen(s.data) : 0;

        for (e = ngx_http_agent_durabilities; e->name.len; e++) {
            if (e->name.len == s.len
                && ngx_strncmp(e->name.data, s.data, s.len) == 0)
            {
                break;
            }
        }

        if (e->name.len == 0) {
            return ngx_http_agent_reply_error(r, 422, "\"durability\" is "
                                              "\"sync\", \"async\" or "
                                              "\"exit\"");
        }

        in->durability = e->value;
    }

    if (ngx_http_agent_json_get_str(v, "on_disconnect", &s) == NGX_OK) {
        if (s.len == 8 && ngx_strncmp(s.data, "continue", 8) == 0) {
            lr->keep = 1;

        } else if (!(s.len == 6 && ngx_strncmp(s.data, "cancel", 6) == 0)) {
            return ngx_http_agent_reply_error(r, 422, "\"on_disconnect\" is "
                                              "\"cancel\" or \"continue\"");
        }
    }

    /* after_seconds: a pending run, the thread held until it runs */

    x = ngx_http_agent_json_get(v, "after_seconds");

    if (x && !YAJL_IS_NULL(x)) {
        if (!YAJL_IS_DOUBLE(x) || YAJL_GET_DOUBLE(x) < 0
            || YAJL_GET_DOUBLE(x) > NGX_HTTP_AGENT_LG_AFTER_MAX)
        {
            return ngx_http_agent_reply_error(r, 422, "\"after_seconds\" "
                                              "must be a number of seconds "
                                              "from 0 to %d",
                                              NGX_HTTP_AGENT_LG_AFTER_MAX);
        }

        in->delay = (ngx_msec_t) (YAJL_GET_DOUBLE(x) * 1000);
    }

    ngx_str_set(&lr->record.row.multitask_strategy, "reject");

    if (ngx_http_agent_json_get_str(v, "multitask_strategy", &s) == NGX_OK) {
        if (!((s.len == 6 && ngx_strncmp(s.data, "reject", 6) == 0)
              || (s.len == 9 && ngx_strncmp(s.data, "interrupt", 9) == 0)
              || (s.len == 8 && ngx_strncmp(s.data, "rollback", 8) == 0)
              || (s.len == 7 && ngx_strncmp(s.data, "enqueue", 7) == 0)))
        {
            return ngx_http_agent_reply_error(r, 422, "\"multitask_strategy\" "
                                              "is \"reject\", \"interrupt\", "
                                              "\"rollback\" or \"enqueue\"");
        }

        lr->record.row.multitask_strategy = s;
    }

    /* time travel: checkpoint_id, or checkpoint {"checkpoint_id"} */

    x = ngx_http_agent_json_get(v, "checkpoint");
    x = (x && YAJL_IS_OBJECT(x)) ? ngx_http_agent_json_get(x, "checkpoint_id")
                                 : ngx_http_agent_json_get(v,
                                                           "checkpoint_id");

    if (x && YAJL_IS_STRING(x) && x->u.string[0]) {
        in->fork.data = (u_char *) x->u.string;
        in->fork.len = ngx_strlen(x->u.string);

    } else if (x && !YAJL_IS_NULL(x)) {
        return ngx_http_agent_reply_error(r, 422, "\"checkpoint_id\" must be a "
                                          "checkpoint's id");
    }

    rc = ngx_http_agent_lg_run_waits(r, lr, v);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_lg_webhook(r, v, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    if (s.data) {
        lr->webhook = s;
    }

    meta = ngx_http_agent_json_get(v, "metadata");

    if (meta && YAJL_IS_OBJECT(meta)
        && ngx_http_agent_json_encode(r->pool, meta,
                                      &lr->record.row.metadata)
           != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_json_encode(r->pool, v, &lr->record.row.kwargs);
}


/*
 * "webhook": a URL agent_webhooks allows, or none (url->data NULL):
 * NGX_OK, or a run or a cron refused with 422
 */

ngx_int_t
ngx_http_agent_lg_webhook(ngx_http_request_t *r, yajl_val v, ngx_str_t *url)
{
    yajl_val                    x;
    ngx_http_agent_loc_conf_t  *alcf;

    ngx_str_null(url);

    x = ngx_http_agent_json_get(v, "webhook");

    if (x == NULL || YAJL_IS_NULL(x)) {
        return NGX_OK;
    }

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    if (YAJL_IS_STRING(x)) {
        url->data = (u_char *) YAJL_GET_STRING(x);
        url->len = ngx_strlen(url->data);

        if (ngx_http_agent_webhook_allowed(alcf->webhooks, url)) {
            return NGX_OK;
        }
    }

    return ngx_http_agent_reply_error(r, 422, "\"webhook\" is not a URL "
                                      "agent_webhooks allows here");
}


/*
 * input {"messages": [...], "channel": value, ...}: messages as a state
 * update takes them (a tool message answering a call, an id of one in the
 * thread replacing it)
 */

static ngx_int_t
ngx_http_agent_lg_run_input(ngx_http_request_t *r, ngx_str_t *thread_id,
    yajl_val input, ngx_http_agent_turn_in_t *in)
{
    yajl_val    msgs;
    ngx_int_t   rc;
    ngx_uint_t  i;

    if (!YAJL_IS_OBJECT(input)) {
        return ngx_http_agent_reply_error(r, 422, "\"input\" must be an object "
                                          "of channels, or null");
    }

    in->values = input;

    msgs = ngx_http_agent_json_get(input, "messages");

    if (msgs == NULL || YAJL_IS_NULL(msgs)) {
        return NGX_OK;
    }

    rc = ngx_http_agent_lg_messages(r, thread_id, msgs, "input.messages",
                                    &in->msgs, &in->nmsgs);
    if (rc != NGX_OK) {
        return rc;
    }

    /* the turn's text: its last human message's */

    for (i = 0; i < in->nmsgs; i++) {
        if (in->msgs[i].role.data[0] == 'u') {
            in->text = in->msgs[i].content;
        }
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_lg_run_modes(ngx_http_request_t *r, yajl_val v,
    ngx_uint_t *modes)
{
    size_t      i, n;
    yajl_val    m;
    ngx_str_t   s;
    ngx_uint_t  k;

    static struct {
        ngx_str_t   name;
        ngx_uint_t  mode;
    }  names[] = {
        { ngx_string("values"), NGX_HTTP_AGENT_MODE_VALUES },
        { ngx_string("updates"), NGX_HTTP_AGENT_MODE_UPDATES },
        { ngx_string("messages-tuple"), NGX_HTTP_AGENT_MODE_MESSAGES },
        { ngx_string("messages"), NGX_HTTP_AGENT_MODE_PARTIAL },
        { ngx_string("custom"), NGX_HTTP_AGENT_MODE_CUSTOM },
        { ngx_string("events"), NGX_HTTP_AGENT_MODE_EVENTS },
        { ngx_string("debug"), NGX_HTTP_AGENT_MODE_DEBUG },
        { ngx_string("tasks"), NGX_HTTP_AGENT_MODE_TASKS },
        { ngx_string("checkpoints"), NGX_HTTP_AGENT_MODE_CHECKPOINTS },
        { ngx_null_string, 0 }
    };

    if (v == NULL || YAJL_IS_NULL(v)) {
        return NGX_OK;
    }

    n = YAJL_IS_ARRAY(v) ? v->u.array.len : 1;
    *modes = 0;

    for (i = 0; i < n; i++) {
        m = YAJL_IS_ARRAY(v) ? v->u.array.values[i] : v;

        if (!YAJL_IS_STRING(m)) {
            goto invalid;
        }

        s.data = (u_char *) YAJL_GET_STRING(m);
        s.len = ngx_strlen(s.data);

        for (k = 0; names[k].name.len; k++) {
            if (names[k].name.len == s.len
                && ngx_strncmp(names[k].name.data, s.data, s.len) == 0)
            {
                *modes |= names[k].mode;
                break;
            }
        }

        if (names[k].name.len == 0) {
            goto invalid;
        }
    }

    return NGX_OK;

invalid:

    return ngx_http_agent_reply_error(r, 422, "\"stream_mode\" takes "
                                      "\"values\", \"updates\", "
                                      "\"messages-tuple\", \"messages\", "
                                      "\"custom\", \"events\", \"debug\", "
                                      "\"tasks\" or \"checkpoints\"");
}


/* interrupt_before / interrupt_after: "*" or a list of the graph's nodes */

static ngx_int_t
ngx_http_agent_lg_run_waits(ngx_http_request_t *r, ngx_http_agent_lg_run_t *lr,
    yajl_val v)
{
    size_t       i, k;
    yajl_val     x, n;
    ngx_int_t    node;
    ngx_str_t    name;
    ngx_uint_t   nodes;

    static const char  *keys[] = { "interrupt_before", "interrupt_after" };

    nodes = lr->graph->nodes.nelts;

    for (k = 0; k < 2; k++) {
        x = ngx_http_agent_json_get(v, keys[k]);

        if (x == NULL || YAJL_IS_NULL(x)) {
            continue;
        }

        if (lr->waits == NULL) {
            lr->waits = ngx_pcalloc(r->pool, nodes);
            if (lr->waits == NULL) {
                return NGX_HTTP_INTERNAL_SERVER_ERROR;
            }
        }

        if (YAJL_IS_STRING(x) && x->u.string[0] == '*'
            && x->u.string[1] == '\0')
        {
            for (i = 0; i < nodes; i++) {
                lr->waits[i] |= (u_char) (1 << k);
            }

            continue;
        }

        if (!YAJL_IS_ARRAY(x)) {
            goto invalid;
        }

        for (i = 0; i < x->u.array.len; i++) {
            n = x->u.array.values[i];

            if (!YAJL_IS_STRING(n)) {
                goto invalid;
            }

            name.data = (u_char *) YAJL_GET_STRING(n);
            name.len = ngx_strlen(name.data);

            node = ngx_http_agent_graph_step_node(lr->graph, &name);

            if (node == NGX_ERROR
                && ngx_http_agent_graph_node(lr->graph, &name) == NGX_ERROR)
            {
                /* a node the graph lacks never waits, as in LangGraph */
                ngx_log_debug3(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                               "agent lg: %s names no node of \"%V\": %V",
                               keys[k], &lr->graph->name, &name);
                continue;
            }

            if (node == NGX_ERROR) {
                /* a part of a step: it cannot wait alone */
                return ngx_http_agent_reply_error(r, 422, "the graph \"%V\" "
                                                  "has no node \"%V\" (%s)",
                                                  &lr->graph->name, &name,
                                                  keys[k]);
            }

            lr->waits[node] |= (u_char) (1 << k);
        }
    }

    return NGX_OK;

invalid:

    return ngx_http_agent_reply_error(r, 422, "\"interrupt_before\" and "
                                      "\"interrupt_after\" are \"*\" or a list "
                                      "of node names");
}

