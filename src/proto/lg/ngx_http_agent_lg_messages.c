
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_turn.h"


/*
 * Messages as LangGraph's clients send them (a run's input, a state
 * update): one message or a list, each a string or {"type" | "role",
 * "content" (a string, or content blocks whose text is taken), "id",
 * "tool_calls" ([{"name", "args", "id"}]), "tool_call_id", "name"}.  An
 * id of ours in this thread ("{thread_id}-{n}", as we send them) names
 * the message it replaces, as LangGraph's add_messages reducer does; any
 * other id is the client's own, kept with the message, and a later
 * message with it replaces that one.
 */


#define NGX_HTTP_AGENT_LG_MESSAGES_MAX    64
#define NGX_HTTP_AGENT_LG_MESSAGE_ID_MAX  256


static ngx_int_t ngx_http_agent_lg_message(ngx_http_request_t *r,
    ngx_str_t *thread_id, yajl_val m, const char *what, size_t i,
    ngx_http_agent_msg_t *msg);
static ngx_int_t ngx_http_agent_lg_message_calls(ngx_http_request_t *r,
    yajl_val calls, ngx_str_t *out);
static ngx_int_t ngx_http_agent_lg_message_images(ngx_http_request_t *r,
    yajl_val blocks, const char *what, size_t i, ngx_str_t *out);


ngx_int_t
ngx_http_agent_lg_messages(ngx_http_request_t *r, ngx_str_t *thread_id,
    yajl_val msgs, const char *what, ngx_http_agent_msg_t **out,
    ngx_uint_t *n)
{
    size_t     i, len;
    yajl_val   m;
    ngx_int_t  rc;

    if (YAJL_IS_OBJECT(msgs) || YAJL_IS_STRING(msgs)) {
        /* one message as itself */
        len = 1;

    } else if (YAJL_IS_ARRAY(msgs)) {
        len = msgs->u.array.len;

    } else {
        return ngx_http_agent_reply_error(r, 422, "\"%s\" must be a list of "
                                          "messages", what);
    }

    if (len > NGX_HTTP_AGENT_LG_MESSAGES_MAX) {
        return ngx_http_agent_reply_error(r, 422, "\"%s\" has more than %d "
                                          "messages", what,
                                          NGX_HTTP_AGENT_LG_MESSAGES_MAX);
    }

    *n = len;
    *out = ngx_pcalloc(r->pool, ngx_max(len, 1) * sizeof(ngx_http_agent_msg_t));
    if (*out == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    for (i = 0; i < len; i++) {
        m = YAJL_IS_ARRAY(msgs) ? msgs->u.array.values[i] : msgs;

        rc = ngx_http_agent_lg_message(r, thread_id, m, what, i, &(*out)[i]);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_lg_message(ngx_http_request_t *r, ngx_str_t *thread_id,
    yajl_val m, const char *what, size_t i, ngx_http_agent_msg_t *msg)
{
    u_char                 *p, *last;
    size_t                  k;
    yajl_val                c, part, calls;
    ngx_str_t               role, text, id;
    ngx_int_t               seq, rc;
    ngx_http_agent_json_t  *j;

    ngx_str_set(&role, "human");
    ngx_str_null(&id);

    if (YAJL_IS_STRING(m)) {
        c = m;

    } else if (YAJL_IS_OBJECT(m)) {
        if (ngx_http_agent_json_get_str(m, "role", &role) != NGX_OK) {
            (void) ngx_http_agent_json_get_str(m, "type", &role);
        }

        c = ngx_http_agent_json_get(m, "content");
        (void) ngx_http_agent_json_get_str(m, "id", &id);

    } else {
        c = NULL;
    }

    /* content: a string, or LangChain's [{"type": "text", ...}] */

    ngx_str_null(&text);

    if (c && YAJL_IS_STRING(c)) {
        text.data = (u_char *) YAJL_GET_STRING(c);
        text.len = ngx_strlen(text.data);

    } else if (c && YAJL_IS_ARRAY(c)) {
        for (k = 0; k < c->u.array.len; k++) {
            part = c->u.array.values[k];

            if (YAJL_IS_OBJECT(part)
                && ngx_http_agent_json_get_str(part, "text", &text) == NGX_OK)
            {
                break;
            }
        }

        /* image blocks: the message's images, as the chat API's */

        rc = ngx_http_agent_lg_message_images(r, c, what, i, &msg->images);
        if (rc != NGX_OK) {
            return rc;
        }

        if (text.data == NULL && msg->images.len) {
            ngx_str_set(&text, "");
        }
    }

    if (text.data == NULL) {
        return ngx_http_agent_reply_error(r, 422, "message %uz of \"%s\" has "
                                          "no text content", i, what);
    }

    msg->content = text;

    if ((role.len == 4 && ngx_strncmp(role.data, "user", 4) == 0)
        || (role.len == 5 && ngx_strncmp(role.data, "human", 5) == 0))
    {
        ngx_str_set(&msg->role, "user");

    } else if ((role.len == 2 && ngx_strncmp(role.data, "ai", 2) == 0)
               || (role.len == 9
                   && ngx_strncmp(role.data, "assistant", 9) == 0))
    {
        ngx_str_set(&msg->role, "assistant");

        calls = YAJL_IS_OBJECT(m) ? ngx_http_agent_json_get(m, "tool_calls")
                                  : NULL;

        if (calls && YAJL_IS_ARRAY(calls) && calls->u.array.len
            && ngx_http_agent_lg_message_calls(r, calls, &msg->tool_calls)
               != NGX_OK)
        {
            return ngx_http_agent_reply_error(r, 422, "message %uz of \"%s\" "
                                              "has tool calls without a "
                                              "\"name\" and an \"id\"", i,
                                              what);
        }

    } else if (thread_id && role.len == 4
               && ngx_strncmp(role.data, "tool", 4) == 0
               && ngx_http_agent_json_get_str(m, "tool_call_id",
                                              &msg->tool_call_id) == NGX_OK)
    {
        ngx_str_set(&msg->role, "tool");
        (void) ngx_http_agent_json_get_str(m, "name", &msg->name);

    } else {
        return ngx_http_agent_reply_error(r, 422, "message %uz of \"%s\" has "
                                          "the role \"%V\": use \"human\" "
                                          "(\"user\") or \"ai\" "
                                          "(\"assistant\")%s", i, what, &role,
                                          thread_id ? ", or \"tool\" with its "
                                          "\"tool_call_id\"" : "");
    }

    if (id.len == 0) {
        return NGX_OK;
    }

    if (id.len > NGX_HTTP_AGENT_LG_MESSAGE_ID_MAX) {
        return ngx_http_agent_reply_error(r, 422, "message %uz of \"%s\" has "
                                          "an id longer than %d bytes", i,
                                          what,
                                          NGX_HTTP_AGENT_LG_MESSAGE_ID_MAX);
    }

    /* "{thread_id}-{n}": the message n of this thread, replaced */

    if (thread_id && id.len > thread_id->len + 1
        && ngx_strncmp(id.data, thread_id->data, thread_id->len) == 0
        && id.data[thread_id->len] == '-')
    {
        p = id.data + thread_id->len + 1;
        last = id.data + id.len;

        seq = ngx_atoi(p, last - p);

        if (seq != NGX_ERROR) {
            msg->seq = seq;
            msg->replace = 1;
            return NGX_OK;
        }
    }

    /*
     * a client's own id ("initial-message", or another thread's): kept
     * with the message, in its metadata; a message with the same id
     * replaces it (LangGraph's add_messages)
     */

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, &id);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &msg->metadata) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    msg->id = id;

    return NGX_OK;
}


/* LangChain's [{"name", "args", "id"}] as we keep tool calls */

static ngx_int_t
ngx_http_agent_lg_message_calls(ngx_http_request_t *r, yajl_val calls,
    ngx_str_t *out)
{
    size_t                  i;
    yajl_val                call, args;
    ngx_str_t               id, name, json;
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_arr(j);

    for (i = 0; i < calls->u.array.len; i++) {
        call = calls->u.array.values[i];

        if (!YAJL_IS_OBJECT(call)
            || ngx_http_agent_json_get_str(call, "name", &name) != NGX_OK
            || ngx_http_agent_json_get_str(call, "id", &id) != NGX_OK)
        {
            return NGX_ERROR;
        }

        args = ngx_http_agent_json_get(call, "args");
        ngx_str_null(&json);

        if (args && !YAJL_IS_NULL(args)
            && ngx_http_agent_json_encode(r->pool, args, &json) != NGX_OK)
        {
            return NGX_ERROR;
        }

        ngx_http_agent_message_call_json(j, &id, &name, &json);
    }

    ngx_http_agent_json_arr_end(j);

    return ngx_http_agent_json_done(j, out);
}


/*
 * LangChain's image and file blocks of a message's content: {"type":
 * "image" or "file", "mimeType" (or "mime_type"), "data" (or "base64")}
 * (Agent Chat UI adds "source_type": "base64") and {"type": "image_url",
 * "image_url": "data:...;base64,..." (or {"url": ...})}, as the chat API's
 * images [{"mime_type", "data"}], checked alike (images.c: images and
 * PDFs).  One by a remote URL or a provider's file id, audio: 422, nothing
 * is fetched.  Other blocks than text, images and files are left out.
 */

static ngx_int_t
ngx_http_agent_lg_message_images(ngx_http_request_t *r, yajl_val blocks,
    const char *what, size_t i, ngx_str_t *out)
{
    u_char                 *p, *last;
    size_t                  k;
    yajl_val                b, u, arr;
    ngx_str_t               type, mime, data, url;
    ngx_uint_t              n;
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_arr(j);
    n = 0;

    for (k = 0; k < blocks->u.array.len; k++) {
        b = blocks->u.array.values[k];

        if (!YAJL_IS_OBJECT(b)
            || ngx_http_agent_json_get_str(b, "type", &type) != NGX_OK)
        {
            continue;
        }

        ngx_str_null(&mime);
        ngx_str_null(&data);

        if ((type.len == 5 && ngx_strncmp(type.data, "image", 5) == 0)
            || (type.len == 4 && ngx_strncmp(type.data, "file", 4) == 0))
        {
            if (ngx_http_agent_json_get_str(b, "mimeType", &mime) != NGX_OK) {
                (void) ngx_http_agent_json_get_str(b, "mime_type", &mime);
            }

            if (ngx_http_agent_json_get_str(b, "data", &data) != NGX_OK) {
                (void) ngx_http_agent_json_get_str(b, "base64", &data);
            }

        } else if (type.len == 9
                   && ngx_strncmp(type.data, "image_url", 9) == 0)
        {
            u = ngx_http_agent_json_get(b, "image_url");

            if (u && YAJL_IS_OBJECT(u)) {
                u = ngx_http_agent_json_get(u, "url");
            }

            if (u == NULL || !YAJL_IS_STRING(u)) {
                goto bad;
            }

            /* data:MIME;base64,DATA */

            url.data = (u_char *) YAJL_GET_STRING(u);
            url.len = ngx_strlen(url.data);
            last = url.data + url.len;

            if (url.len < 5 || ngx_strncmp(url.data, "data:", 5) != 0) {
                goto bad;
            }

            p = ngx_strlchr(url.data + 5, last, ';');

            if (p == NULL || last - p < 8
                || ngx_strncmp(p, ";base64,", 8) != 0)
            {
                goto bad;
            }

            mime.data = url.data + 5;
            mime.len = p - mime.data;
            data.data = p + 8;
            data.len = last - data.data;

        } else if (type.len == 5 && ngx_strncmp(type.data, "audio", 5) == 0) {
            return ngx_http_agent_reply_error(r, 422, "message %uz of \"%s\" "
                                              "has a %V block: a message "
                                              "takes text, images and PDFs "
                                              "only", i, what, &type);
        } else {
            continue;
        }

        if (data.len == 0 || mime.len == 0) {
            goto bad;
        }

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "mime_type");
        ngx_http_agent_json_str(j, &mime);
        ngx_http_agent_json_key(j, "data");
        ngx_http_agent_json_str(j, &data);
        ngx_http_agent_json_end(j);
        n++;
    }

    ngx_http_agent_json_arr_end(j);

    if (n == 0) {
        return NGX_OK;
    }

    if (ngx_http_agent_json_done(j, &url) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    arr = ngx_http_agent_json_parse(r->pool, url.data, url.len, NULL);
    if (arr == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* the checks of the chat API's images: types, sizes, how many */
    return ngx_http_agent_turn_images(r, arr, out);

bad:

    return ngx_http_agent_reply_error(r, 422, "message %uz of \"%s\" has an "
                                      "image or a file that is not base64 "
                                      "data with its MIME type (a remote URL "
                                      "is not fetched)", i, what);
}

