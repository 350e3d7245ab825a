
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_a2a.h"
#include "ngx_http_agent_util.h"


/*
 * A2A's message, as A2A 1.0 writes it ({"messageId", "role": "ROLE_USER",
 * "parts": [{"text"}], "contextId"}) and as 0.3 does ({"kind": "message",
 * "role": "user", "parts": [{"kind": "text", "text"}]}): the user's text
 * parts joined; a part of another kind (a file, data) is refused, as this
 * agent's card says (text/plain in).  No I/O: the fuzz target calls it.
 */


ngx_int_t
ngx_http_agent_a2a_message(ngx_pool_t *pool, yajl_val params,
    ngx_http_agent_a2a_message_t *m, ngx_int_t *code, ngx_str_t *why)
{
    u_char     *p;
    size_t      i, size;
    yajl_val    msg, parts, part, meta;
    ngx_str_t   role, text, kind;

    ngx_memzero(m, sizeof(ngx_http_agent_a2a_message_t));
    *code = NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS;

    msg = params ? ngx_http_agent_json_get(params, "message") : NULL;

    if (msg == NULL || !YAJL_IS_OBJECT(msg)) {
        ngx_str_set(why, "Invalid params: \"message\" must be an A2A "
                    "message");
        return NGX_DECLINED;
    }

    if (ngx_http_agent_json_get_str(msg, "role", &role) != NGX_OK
        || !((role.len == 4 && ngx_strncmp(role.data, "user", 4) == 0)
             || (role.len == 9
                 && ngx_strncmp(role.data, "ROLE_USER", 9) == 0)))
    {
        ngx_str_set(why, "Invalid params: the message's \"role\" must be "
                    "the user's");
        return NGX_DECLINED;
    }

    if (ngx_http_agent_a2a_id(msg, "messageId", &m->message_id) == NGX_ERROR
        || ngx_http_agent_a2a_id(msg, "contextId", &m->context_id)
           == NGX_ERROR
        || ngx_http_agent_a2a_id(msg, "taskId", &m->task_id) == NGX_ERROR)
    {
        ngx_str_set(why, "Invalid params: \"messageId\", \"contextId\" and "
                    "\"taskId\" must be strings of 1 to 1024 bytes, no "
                    "control characters");
        return NGX_DECLINED;
    }

    if (m->message_id.len == 0) {
        /* the spec's Message: messageId is REQUIRED */
        ngx_str_set(why, "Invalid params: the message's \"messageId\" is "
                    "required");
        return NGX_DECLINED;
    }

    parts = ngx_http_agent_json_get(msg, "parts");

    if (parts == NULL || !YAJL_IS_ARRAY(parts) || parts->u.array.len == 0) {
        ngx_str_set(why, "Invalid params: the message's \"parts\" must be a "
                    "non-empty array");
        return NGX_DECLINED;
    }

    size = 0;

    for (i = 0; i < parts->u.array.len; i++) {
        part = parts->u.array.values[i];

        if (ngx_http_agent_json_get_str(part, "kind", &kind) == NGX_OK
            && !(kind.len == 4 && ngx_strncmp(kind.data, "text", 4) == 0))
        {
            goto content;
        }

        if (ngx_http_agent_json_get_str(part, "text", &text) != NGX_OK) {
            goto content;
        }

        size += text.len + 1;
    }

    p = ngx_pnalloc(pool, size);
    if (p == NULL) {
        return NGX_ERROR;
    }

    m->text.data = p;

    /* the parts, a line each */

    for (i = 0; i < parts->u.array.len; i++) {
        if (i) {
            *p++ = '\n';
        }

        (void) ngx_http_agent_json_get_str(parts->u.array.values[i], "text",
                                           &text);
        p = ngx_cpymem(p, text.data, text.len);
    }

    m->text.len = p - m->text.data;

    if (m->text.len == 0) {
        ngx_str_set(why, "Invalid params: the message has no text");
        return NGX_DECLINED;
    }

    /* which of the location's graphs: the message's or the request's */

    meta = ngx_http_agent_json_get(msg, "metadata");

    if (meta == NULL || ngx_http_agent_json_get(meta, "skill") == NULL) {
        meta = ngx_http_agent_json_get(params, "metadata");
    }

    if (meta && ngx_http_agent_json_get(meta, "skill")
        && ngx_http_agent_json_get_str(meta, "skill", &m->skill) != NGX_OK)
    {
        ngx_str_set(why, "Invalid params: metadata \"skill\" must name a "
                    "skill of the agent card");
        return NGX_DECLINED;
    }

    return NGX_OK;

content:

    *code = NGX_HTTP_AGENT_A2A_CONTENT_TYPE;
    ngx_str_set(why, "Incompatible content types: this agent takes text "
                "parts only (text/plain)");

    return NGX_DECLINED;
}


/*
 * an id, or none: NGX_ERROR for one of another type or size.  A2A's ids
 * are strings (URNs, prefixed ULIDs, the TCK's own of 67 characters):
 * any UTF-8 the JSON reader let in, bound in SQL and escaped in JSON; a
 * control character is refused, so that no log line can be forged.
 */

ngx_int_t
ngx_http_agent_a2a_id(yajl_val v, const char *key, ngx_str_t *id)
{
    size_t    i;
    yajl_val  s;

    ngx_str_null(id);

    s = ngx_http_agent_json_get(v, key);

    if (s == NULL || YAJL_IS_NULL(s)) {
        return NGX_OK;
    }

    if (ngx_http_agent_json_get_str(v, key, id) != NGX_OK
        || id->len > NGX_HTTP_AGENT_A2A_ID_MAX)
    {
        return NGX_ERROR;
    }

    for (i = 0; i < id->len; i++) {
        if (id->data[i] < 0x20 || id->data[i] == 0x7f) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}

