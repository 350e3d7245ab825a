
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_agui.h"
#include "ngx_http_agent_util.h"


/*
 * AG-UI's RunAgentInput read into what a turn takes.  A client sends the
 * whole conversation each run; the thread keeps it already, so the run's
 * input is the last message, the user's, or the answer to the interrupt
 * the thread waits at (resume[0], or CopilotKit's
 * forwardedProps.command.resume).  Of its state, the graph's channels
 * (not the turn's own input and session_id) whose reducer takes the same
 * value twice alike (value, merge): a client
 * sends back the state it was shown, and an append or sum channel would
 * grow by it each run.  No I/O here: the fuzz target calls it as is.
 */


static ngx_int_t ngx_http_agent_agui_id(yajl_val v, const char *key,
    ngx_str_t *id);
static ngx_int_t ngx_http_agent_agui_message(ngx_pool_t *pool, yajl_val m,
    ngx_http_agent_agui_input_t *in, ngx_str_t *why);
static ngx_int_t ngx_http_agent_agui_resume(ngx_pool_t *pool, yajl_val v,
    ngx_http_agent_agui_input_t *in, ngx_str_t *why);
static ngx_int_t ngx_http_agent_agui_state(ngx_pool_t *pool, yajl_val state,
    ngx_http_agent_graph_t *graph, ngx_http_agent_agui_input_t *in);


ngx_int_t
ngx_http_agent_agui_input(ngx_pool_t *pool, yajl_val v,
    ngx_http_agent_graph_t *graph, ngx_http_agent_agui_input_t *in,
    ngx_str_t *why)
{
    yajl_val   msgs, m;
    ngx_int_t  rc;

    ngx_memzero(in, sizeof(ngx_http_agent_agui_input_t));

    if (v == NULL || !YAJL_IS_OBJECT(v)) {
        ngx_str_set(why, "the body must be AG-UI's RunAgentInput, a JSON "
                    "object");
        return NGX_DECLINED;
    }

    if (ngx_http_agent_agui_id(v, "threadId", &in->thread_id) != NGX_OK) {
        ngx_str_set(why, "\"threadId\" must be an id: 1 to 64 letters, "
                    "digits, - or _");
        return NGX_DECLINED;
    }

    if (ngx_http_agent_agui_id(v, "runId", &in->run_id) != NGX_OK) {
        ngx_str_set(why, "\"runId\" must be an id: 1 to 64 letters, "
                    "digits, - or _");
        return NGX_DECLINED;
    }

    msgs = ngx_http_agent_json_get(v, "messages");

    if (msgs && !YAJL_IS_NULL(msgs) && !YAJL_IS_ARRAY(msgs)) {
        ngx_str_set(why, "\"messages\" must be an array of AG-UI messages");
        return NGX_DECLINED;
    }

    rc = ngx_http_agent_agui_resume(pool, v, in, why);
    if (rc != NGX_OK) {
        return rc;
    }

    m = (msgs && YAJL_IS_ARRAY(msgs) && msgs->u.array.len)
        ? msgs->u.array.values[msgs->u.array.len - 1] : NULL;

    if (m) {
        rc = ngx_http_agent_agui_message(pool, m, in, why);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    if (in->resume.len == 0 && in->msg == NULL) {
        ngx_str_set(why, "nothing to run: the last message must be the "
                    "user's (role \"user\"), or \"resume\" must answer the "
                    "interrupt the thread waits at");
        return NGX_DECLINED;
    }

    if (in->resume.len) {
        /* an answer continues the run: the message was the question's */
        in->msg = NULL;
    }

    return ngx_http_agent_agui_state(pool, ngx_http_agent_json_get(v, "state"),
                                     graph, in);
}


static ngx_int_t
ngx_http_agent_agui_id(yajl_val v, const char *key, ngx_str_t *id)
{
    if (ngx_http_agent_json_get_str(v, key, id) != NGX_OK
        || !ngx_http_agent_id_valid(id))
    {
        return NGX_DECLINED;
    }

    return NGX_OK;
}


/* the last message: the user's text (a string, or its "text" parts) */

static ngx_int_t
ngx_http_agent_agui_message(ngx_pool_t *pool, yajl_val m,
    ngx_http_agent_agui_input_t *in, ngx_str_t *why)
{
    u_char                 *p;
    size_t                  i, size;
    yajl_val                content, part;
    ngx_str_t               role, text, type, id;
    ngx_http_agent_json_t  *j;
    ngx_http_agent_msg_t   *msg;

    if (!YAJL_IS_OBJECT(m)
        || ngx_http_agent_json_get_str(m, "role", &role) != NGX_OK)
    {
        ngx_str_set(why, "each message must be an object with a \"role\"");
        return NGX_DECLINED;
    }

    if (role.len != 4 || ngx_strncmp(role.data, "user", 4) != 0) {
        /* an assistant's or a tool's: nothing new to run */
        return NGX_OK;
    }

    content = ngx_http_agent_json_get(m, "content");
    ngx_str_null(&text);

    if (content && YAJL_IS_STRING(content)) {
        text.data = (u_char *) YAJL_GET_STRING(content);
        text.len = ngx_strlen(text.data);

    } else if (content && YAJL_IS_ARRAY(content)) {

        /* the text parts, one after another */

        size = 0;

        for (i = 0; i < content->u.array.len; i++) {
            part = content->u.array.values[i];

            if (ngx_http_agent_json_get_str(part, "type", &type) != NGX_OK
                || type.len != 4 || ngx_strncmp(type.data, "text", 4) != 0
                || ngx_http_agent_json_get_str(part, "text", &id) != NGX_OK)
            {
                ngx_str_set(why, "a user message's content parts must be "
                            "\"text\" parts: images and documents are "
                            "taken by the chat API and the LangGraph API");
                return NGX_DECLINED;
            }

            size += id.len;
        }

        text.data = ngx_pnalloc(pool, size);
        if (text.data == NULL) {
            return NGX_ERROR;
        }

        p = text.data;

        for (i = 0; i < content->u.array.len; i++) {
            (void) ngx_http_agent_json_get_str(content->u.array.values[i],
                                               "text", &id);
            p = ngx_cpymem(p, id.data, id.len);
        }

        text.len = p - text.data;
    }

    if (text.len == 0) {
        ngx_str_set(why, "the user message's \"content\" must be non-empty "
                    "text");
        return NGX_DECLINED;
    }

    msg = ngx_pcalloc(pool, sizeof(ngx_http_agent_msg_t));
    if (msg == NULL) {
        return NGX_ERROR;
    }

    ngx_str_set(&msg->role, "user");
    msg->content = text;

    /* the client's id kept with it, as the LangGraph API keeps one */

    if (ngx_http_agent_json_get_str(m, "id", &id) == NGX_OK && id.len) {
        j = ngx_http_agent_json_create_obj(pool);
        if (j == NULL) {
            return NGX_ERROR;
        }

        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_str(j, &id);
        ngx_http_agent_json_end(j);

        if (ngx_http_agent_json_done(j, &msg->metadata) != NGX_OK) {
            return NGX_ERROR;
        }

        msg->id = id;
    }

    in->msg = msg;

    return NGX_OK;
}


/*
 * resume: [{"interruptId", "status": "resolved" | "cancelled",
 * "payload"}]; one interrupt waits at a time, so the first entry answers
 * it.  Cancelled: the wait is dropped and the message runs.
 */

static ngx_int_t
ngx_http_agent_agui_resume(ngx_pool_t *pool, yajl_val v,
    ngx_http_agent_agui_input_t *in, ngx_str_t *why)
{
    yajl_val   resume, entry, payload, fp;
    ngx_str_t  status;

    resume = ngx_http_agent_json_get(v, "resume");
    payload = NULL;

    if (resume && !YAJL_IS_NULL(resume)) {
        if (!YAJL_IS_ARRAY(resume)) {
            ngx_str_set(why, "\"resume\" must be an array of "
                        "{\"interruptId\", \"status\", \"payload\"}");
            return NGX_DECLINED;
        }

        if (resume->u.array.len == 0) {
            return NGX_OK;
        }

        entry = resume->u.array.values[0];

        if (!YAJL_IS_OBJECT(entry)
            || ngx_http_agent_json_get_str(entry, "status", &status)
               != NGX_OK
            || !((status.len == 8
                  && ngx_strncmp(status.data, "resolved", 8) == 0)
                 || (status.len == 9
                     && ngx_strncmp(status.data, "cancelled", 9) == 0)))
        {
            ngx_str_set(why, "a \"resume\" entry's \"status\" must be "
                        "\"resolved\" or \"cancelled\"");
            return NGX_DECLINED;
        }

        if (status.len == 9) {
            /* the wait dropped: a message goes over it (in.over) */
            return NGX_OK;
        }

        (void) ngx_http_agent_json_get_str(entry, "interruptId",
                                           &in->resume_at);

        payload = ngx_http_agent_json_get(entry, "payload");

        if (payload == NULL) {
            ngx_str_set(&in->resume, "null");
            return NGX_OK;
        }

    } else {
        /* CopilotKit's, through LangGraph's AG-UI adapter */

        fp = ngx_http_agent_json_get(v, "forwardedProps");
        fp = fp ? ngx_http_agent_json_get(fp, "command") : NULL;
        payload = fp ? ngx_http_agent_json_get(fp, "resume") : NULL;

        if (payload == NULL) {
            return NGX_OK;
        }
    }

    return ngx_http_agent_json_encode(pool, payload, &in->resume) == NGX_OK
           ? NGX_OK : NGX_ERROR;
}


static ngx_int_t
ngx_http_agent_agui_state(ngx_pool_t *pool, yajl_val state,
    ngx_http_agent_graph_t *graph, ngx_http_agent_agui_input_t *in)
{
    size_t                     i;
    ngx_int_t                  n;
    ngx_str_t                  key, out;
    ngx_uint_t                 any;
    ngx_http_agent_json_t     *j;
    ngx_http_agent_channel_t  *ch;

    if (state == NULL || !YAJL_IS_OBJECT(state) || graph == NULL) {
        return NGX_OK;
    }

    ch = graph->channels.elts;

    j = ngx_http_agent_json_create_obj(pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    any = 0;

    for (i = 0; i < state->u.object.len; i++) {
        key.data = (u_char *) state->u.object.keys[i];
        key.len = ngx_strlen(key.data);

        n = ngx_http_agent_graph_channel(graph, &key);

        if (n == NGX_ERROR || n == NGX_HTTP_AGENT_CH_MESSAGES
            || n == NGX_HTTP_AGENT_CH_INPUT
            || n == NGX_HTTP_AGENT_CH_SESSION_ID
            || (ch[n].reducer != NGX_HTTP_AGENT_REDUCE_VALUE
                && ch[n].reducer != NGX_HTTP_AGENT_REDUCE_MERGE))
        {
            continue;
        }

        ngx_http_agent_json_str(j, &key);
        ngx_http_agent_json_val(j, state->u.object.values[i]);
        any = 1;
    }

    ngx_http_agent_json_end(j);

    if (!any) {
        return NGX_OK;
    }

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_ERROR;
    }

    in->values = ngx_http_agent_json_parse(pool, out.data, out.len, NULL);

    return in->values ? NGX_OK : NGX_ERROR;
}
