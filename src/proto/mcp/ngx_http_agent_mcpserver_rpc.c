
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_mcpserver.h"
#include "ngx_http_agent_util.h"


/*
 * A graph's tools/call arguments, and the client's answer to an
 * elicitation of ours, read (the JSON-RPC message itself is
 * util/jsonrpc.c's).  No I/O: the fuzz target calls them as they are.
 */


static ngx_int_t ngx_http_agent_mcpserver_rpc_part(ngx_str_t *s,
    ngx_str_t *part, ngx_uint_t max);


/*
 * tools/call's params: {"name", "arguments": {"message", "thread_id",
 * "resume", and channels of the graph}, "_meta": {"progressToken",
 * "io.modelcontextprotocol/logLevel"}}.
 * Channels other than the graph's own (messages, the turn's input and
 * session_id) and names that are no channel are refused: a tool's schema
 * lists what it takes.
 */

ngx_int_t
ngx_http_agent_mcpserver_rpc_call(ngx_pool_t *pool, yajl_val params,
    ngx_http_agent_graph_t *graph, ngx_http_agent_mcpserver_call_t *call,
    ngx_str_t *why)
{
    size_t                  i;
    yajl_val                args, v, meta;
    ngx_int_t               ch;
    ngx_str_t               key, out;
    ngx_uint_t              any;
    ngx_http_agent_json_t  *j;

    ngx_memzero(call, sizeof(ngx_http_agent_mcpserver_call_t));

    meta = ngx_http_agent_json_get(params, "_meta");
    v = meta ? ngx_http_agent_json_get(meta, "progressToken") : NULL;

    if (v && (YAJL_IS_STRING(v) || YAJL_IS_INTEGER(v))
        && ngx_http_agent_json_encode(pool, v, &call->progress)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    v = meta ? ngx_http_agent_json_get(meta,
                                       NGX_HTTP_AGENT_MCPSERVER_LOG_META)
             : NULL;

    if (v) {
        call->log = ngx_http_agent_mcpserver_rpc_level(v);

        if (call->log == 0) {
            ngx_str_set(why, "_meta's \"" NGX_HTTP_AGENT_MCPSERVER_LOG_META
                        "\" must be a log level: debug, info, notice, "
                        "warning, error, critical, alert or emergency");
            return NGX_DECLINED;
        }
    }

    args = ngx_http_agent_json_get(params, "arguments");

    if (args == NULL || !YAJL_IS_OBJECT(args)) {
        ngx_str_set(why, "\"arguments\" must be an object with "
                    "\"message\"");
        return NGX_DECLINED;
    }

    j = ngx_http_agent_json_create_obj(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    any = 0;

    for (i = 0; i < args->u.object.len; i++) {
        key.data = (u_char *) args->u.object.keys[i];
        key.len = ngx_strlen(key.data);
        v = args->u.object.values[i];

        if (key.len == 7 && ngx_strncmp(key.data, "message", 7) == 0) {
            if (!YAJL_IS_STRING(v)) {
                ngx_str_set(why, "\"message\" must be a string");
                return NGX_DECLINED;
            }

            call->message.data = (u_char *) YAJL_GET_STRING(v);
            call->message.len = ngx_strlen(call->message.data);
            continue;
        }

        if (key.len == 9 && ngx_strncmp(key.data, "thread_id", 9) == 0) {
            if (!YAJL_IS_STRING(v)) {
                ngx_str_set(why, "\"thread_id\" must be a string");
                return NGX_DECLINED;
            }

            call->thread_id.data = (u_char *) YAJL_GET_STRING(v);
            call->thread_id.len = ngx_strlen(call->thread_id.data);

            if (!ngx_http_agent_id_valid(&call->thread_id)) {
                ngx_str_set(why, "\"thread_id\" must be an id: 1 to 64 "
                            "letters, digits, - or _");
                return NGX_DECLINED;
            }

            continue;
        }

        if (key.len == 6 && ngx_strncmp(key.data, "resume", 6) == 0) {
            if (ngx_http_agent_json_encode(pool, v, &call->resume)
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            continue;
        }

        ch = graph ? ngx_http_agent_graph_channel(graph, &key) : NGX_ERROR;

        if (ch == NGX_ERROR || ch == NGX_HTTP_AGENT_CH_MESSAGES
            || ch == NGX_HTTP_AGENT_CH_INPUT
            || ch == NGX_HTTP_AGENT_CH_SESSION_ID)
        {
            ngx_str_set(why, "an argument is neither \"message\", "
                        "\"thread_id\", \"resume\" nor an input of the "
                        "graph: see the tool's inputSchema");
            return NGX_DECLINED;
        }

        ngx_http_agent_json_str(j, &key);
        ngx_http_agent_json_val(j, v);
        any = 1;
    }

    ngx_http_agent_json_end(j);

    if (call->resume.len && call->thread_id.len == 0) {
        ngx_str_set(why, "\"resume\" answers a thread's interrupt: "
                    "\"thread_id\" names the thread");
        return NGX_DECLINED;
    }

    if (call->resume.len == 0 && call->message.len == 0) {
        ngx_str_set(why, "\"message\" must be a non-empty string");
        return NGX_DECLINED;
    }

    if (!any) {
        return NGX_OK;
    }

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_ERROR;
    }

    call->values = ngx_http_agent_json_parse(pool, out.data, out.len, NULL);

    return call->values ? NGX_OK : NGX_ERROR;
}


/* a log level's name: its index and one, or 0 if it names none */

ngx_uint_t
ngx_http_agent_mcpserver_rpc_level(yajl_val v)
{
    char        *name;
    ngx_uint_t   i;

    static const char  *levels[] = NGX_HTTP_AGENT_MCPSERVER_LEVELS;

    if (v == NULL || !YAJL_IS_STRING(v)) {
        return 0;
    }

    name = YAJL_GET_STRING(v);

    for (i = 0; levels[i]; i++) {
        if (ngx_strcmp(name, levels[i]) == 0) {
            return i + 1;
        }
    }

    return 0;
}


/*
 * The client's answer, read: its id one of our elicitations', its result
 * {"action": "accept", "content": {"answer": ...}}, or "decline",
 * "cancel", or a JSON-RPC error (declined too).  NGX_DECLINED: why.
 */

ngx_int_t
ngx_http_agent_mcpserver_rpc_answer(ngx_pool_t *pool,
    ngx_http_agent_jsonrpc_t *rpc, ngx_http_agent_mcpserver_answer_in_t *e,
    ngx_str_t *why)
{
    size_t     n;
    yajl_val   id, content, answer;
    ngx_str_t  s, action;

    ngx_memzero(e, sizeof(ngx_http_agent_mcpserver_answer_in_t));

    id = ngx_http_agent_json_parse(pool, rpc->id.data, rpc->id.len, NULL);

    n = sizeof(NGX_HTTP_AGENT_MCPSERVER_ELICIT) - 1;

    if (id == NULL || !YAJL_IS_STRING(id)) {
        goto unknown;
    }

    s.data = (u_char *) YAJL_GET_STRING(id);
    s.len = ngx_strlen(s.data);

    e->id = s;

    if (s.len <= n || ngx_strncmp(s.data, NGX_HTTP_AGENT_MCPSERVER_ELICIT, n)
                      != 0)
    {
        goto unknown;
    }

    s.data += n;
    s.len -= n;

    if (ngx_http_agent_mcpserver_rpc_part(&s, &e->thread, 36) != NGX_OK
        || e->thread.len != 36
        || ngx_http_agent_mcpserver_rpc_part(&s, &e->checkpoint, 64)
           != NGX_OK
        || s.len == 0 || s.len > 128)
    {
        goto unknown;
    }

    e->graph = s;

    if (rpc->result == NULL) {
        /* the client could not ask: as declined */
        return NGX_OK;
    }

    if (ngx_http_agent_json_get_str(rpc->result, "action", &action)
        != NGX_OK)
    {
        ngx_str_set(why, "\"action\" must be a string");
        return NGX_DECLINED;
    }

    if ((action.len == 7 && ngx_strncmp(action.data, "decline", 7) == 0)
        || (action.len == 6 && ngx_strncmp(action.data, "cancel", 6) == 0))
    {
        return NGX_OK;
    }

    if (action.len != 6 || ngx_strncmp(action.data, "accept", 6) != 0) {
        ngx_str_set(why, "\"action\" must be \"accept\", \"decline\" or "
                    "\"cancel\"");
        return NGX_DECLINED;
    }

    content = ngx_http_agent_json_get(rpc->result, "content");
    answer = (content && YAJL_IS_OBJECT(content))
             ? ngx_http_agent_json_get(content, "answer") : NULL;

    if (answer == NULL
        || !(YAJL_IS_STRING(answer) || YAJL_IS_NUMBER(answer)
             || YAJL_IS_TRUE(answer) || YAJL_IS_FALSE(answer)))
    {
        ngx_str_set(why, "an accepted elicitation's \"content\" must hold "
                    "\"answer\", a string, a number or a boolean");
        return NGX_DECLINED;
    }

    /* the answer written anew by our generator */
    return ngx_http_agent_json_encode(pool, answer, &e->resume);

unknown:

    ngx_str_set(why, "the id is none of our elicitations'");
    return NGX_DECLINED;
}


/* the next part of an elicitation id, up to a "/", of safe bytes */

static ngx_int_t
ngx_http_agent_mcpserver_rpc_part(ngx_str_t *s, ngx_str_t *part,
    ngx_uint_t max)
{
    u_char      c;
    ngx_uint_t  i;

    for (i = 0; i < s->len && i <= max; i++) {
        c = s->data[i];

        if (c == '/') {
            if (i == 0) {
                return NGX_ERROR;
            }

            part->data = s->data;
            part->len = i;
            s->data += i + 1;
            s->len -= i + 1;

            return NGX_OK;
        }

        if (!((c >= '0' && c <= '9') || ((c | 0x20) >= 'a'
                                           && (c | 0x20) <= 'z')
              || c == '-' || c == '_' || c == '.'))
        {
            return NGX_ERROR;
        }
    }

    return NGX_ERROR;
}
