
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine.h"


/*
 * Messages are stored provider-neutral: text, images as [{"mime_type",
 * "data"}], and tool calls as [{"id", "name", "arguments"}] with the
 * arguments as the parsed JSON value (or, when the model wrote something
 * that does not parse, its text as a string).  Each provider writes them
 * its own way when it builds a request.  Messages stored before this
 * format (OpenAI's {"id", "type", "function": {"name", "arguments"}}) are
 * read as well.
 */


static void ngx_http_agent_message_blocks(ngx_http_agent_json_t *j,
    ngx_pool_t *pool, ngx_http_agent_msg_t *m);
static ngx_int_t ngx_http_agent_message_calls_fast(ngx_pool_t *pool,
    ngx_str_t *json, ngx_array_t **calls);
static u_char *ngx_http_agent_message_string(u_char *p, u_char *last,
    ngx_str_t *s);
static u_char *ngx_http_agent_message_key(u_char *p, u_char *last,
    const char *key);
static ngx_int_t ngx_http_agent_message_copy(ngx_pool_t *pool,
    ngx_array_t *in, ngx_uint_t n, ngx_array_t **res);
static void ngx_http_agent_message_metadata(ngx_http_agent_json_t *j,
    ngx_http_agent_msg_t *m);


/*
 * parse: the arguments are wanted as a parsed value (a tools node), not
 * only as text (a request to the provider, once per stored message and
 * model call: the text is then cut out of the stored JSON, which our own
 * generator wrote, without building a tree)
 */

ngx_int_t
ngx_http_agent_message_calls(ngx_pool_t *pool, ngx_str_t *json,
    ngx_array_t **calls, ngx_uint_t parse)
{
    size_t                  i;
    yajl_val                v, c, fn, args;
    ngx_str_t               text;
    ngx_array_t            *a;
    ngx_http_agent_call_t  *call;

    *calls = NULL;

    if (!parse
        && ngx_http_agent_message_calls_fast(pool, json, calls) == NGX_OK)
    {
        return NGX_OK;
    }

    v = ngx_http_agent_json_parse(pool, json->data, json->len, NULL);
    if (v == NULL || !YAJL_IS_ARRAY(v)) {
        return NGX_ERROR;
    }

    a = ngx_array_create(pool, ngx_max(v->u.array.len, 1),
                         sizeof(ngx_http_agent_call_t));
    if (a == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < v->u.array.len; i++) {
        c = v->u.array.values[i];

        call = ngx_array_push(a);
        if (call == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(call, sizeof(ngx_http_agent_call_t));

        if (ngx_http_agent_json_get_str(c, "id", &call->id) != NGX_OK) {
            a->nelts--;
            continue;
        }

        fn = ngx_http_agent_json_get(c, "function");

        if (fn && YAJL_IS_OBJECT(fn)) {
            /* stored before messages were provider-neutral */
            (void) ngx_http_agent_json_get_str(fn, "name", &call->name);
            args = ngx_http_agent_json_get(fn, "arguments");

        } else {
            (void) ngx_http_agent_json_get_str(c, "name", &call->name);
            args = ngx_http_agent_json_get(c, "arguments");
        }

        if (call->name.len == 0) {
            a->nelts--;
            continue;
        }

        if (args == NULL || YAJL_IS_NULL(args)) {
            continue;
        }

        if (!YAJL_IS_STRING(args)) {
            call->args = args;

            if (ngx_http_agent_json_encode(pool, args, &call->arguments)
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            continue;
        }

        /* a string: the model's text, parsed when it is JSON */

        text.data = (u_char *) YAJL_GET_STRING(args);
        text.len = ngx_strlen(text.data);

        call->arguments = text;
        call->args = text.len ? ngx_http_agent_json_parse(pool, text.data,
                                                          text.len, NULL)
                              : NULL;
    }

    *calls = a;

    return NGX_OK;
}


/*
 * [{"id":"...","name":"...","arguments":{...}},...] exactly as written by
 * ngx_http_agent_message_call_json(): anything else (escapes in the id or
 * the name, arguments that are not an object or array, older shapes) is
 * NGX_DECLINED, and the caller parses
 */

static ngx_int_t
ngx_http_agent_message_calls_fast(ngx_pool_t *pool, ngx_str_t *json,
    ngx_array_t **calls)
{
    u_char                 *p, *last, *end;
    ngx_array_t            *a;
    ngx_http_agent_call_t  *c;

    p = json->data;
    last = json->data + json->len;

    if (json->len < 2 || *p++ != '[') {
        return NGX_DECLINED;
    }

    a = ngx_array_create(pool, 2, sizeof(ngx_http_agent_call_t));
    if (a == NULL) {
        return NGX_ERROR;
    }

    while (p < last && *p == '{') {
        c = ngx_array_push(a);
        if (c == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(c, sizeof(ngx_http_agent_call_t));

        p = ngx_http_agent_message_key(p + 1, last, "\"id\":");
        p = ngx_http_agent_message_string(p, last, &c->id);
        p = ngx_http_agent_message_key(p, last, ",\"name\":");
        p = ngx_http_agent_message_string(p, last, &c->name);
        p = ngx_http_agent_message_key(p, last, ",\"arguments\":");

        if (p == NULL || p >= last || (*p != '{' && *p != '[')
            || c->id.len == 0 || c->name.len == 0)
        {
            return NGX_DECLINED;
        }

        end = ngx_http_agent_json_scan(p, last, 1);

        if (end == NULL || end >= last || *end != '}') {
            return NGX_DECLINED;
        }

        c->arguments.data = p;
        c->arguments.len = end - p;

        p = end + 1;

        if (p < last && *p == ',') {
            p++;
        }
    }

    if (p + 1 != last || *p != ']') {
        return NGX_DECLINED;
    }

    *calls = a;

    return NGX_OK;
}


static u_char *
ngx_http_agent_message_key(u_char *p, u_char *last, const char *key)
{
    size_t  len;

    len = ngx_strlen(key);

    if (p == NULL || (size_t) (last - p) < len
        || ngx_strncmp(p, key, len) != 0)
    {
        return NULL;
    }

    return p + len;
}


/* a string without escapes: its bytes */

static u_char *
ngx_http_agent_message_string(u_char *p, u_char *last, ngx_str_t *s)
{
    u_char  *q;

    if (p == NULL || p >= last || *p != '"') {
        return NULL;
    }

    for (q = p + 1; q < last && *q != '"'; q++) {
        if (*q == '\\') {
            return NULL;
        }
    }

    if (q >= last) {
        return NULL;
    }

    s->data = p + 1;
    s->len = q - s->data;

    return q + 1;
}


/* a call as stored: the arguments parsed when they parse, else as text */

void
ngx_http_agent_message_call_json(ngx_http_agent_json_t *j, ngx_str_t *id,
    ngx_str_t *name, ngx_str_t *arguments)
{
    yajl_val  v;

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, id);
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, name);
    ngx_http_agent_json_key(j, "arguments");

    v = arguments->len ? ngx_http_agent_json_parse(j->pool, arguments->data,
                                                   arguments->len, NULL)
                       : NULL;

    if (v) {
        ngx_http_agent_json_val(j, v);

    } else if (arguments->len) {
        ngx_http_agent_json_str(j, arguments);

    } else {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);
}


/*
 * The tool results that answer every call of the assistant message m, each
 * saying why it was not run: a call left open is refused by the providers
 * in the next request.
 */

ngx_int_t
ngx_http_agent_message_unanswered(ngx_pool_t *pool, ngx_http_agent_msg_t *m,
    ngx_str_t *why, ngx_array_t *out)
{
    ngx_uint_t              i;
    ngx_array_t            *calls;
    ngx_http_agent_msg_t   *t;
    ngx_http_agent_call_t  *c;

    if (m->tool_calls.len == 0) {
        return NGX_OK;
    }

    if (ngx_http_agent_message_calls(pool, &m->tool_calls, &calls, 0)
        != NGX_OK)
    {
        return NGX_OK;
    }

    c = calls->elts;

    for (i = 0; i < calls->nelts; i++) {
        t = ngx_array_push(out);
        if (t == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(t, sizeof(ngx_http_agent_msg_t));
        ngx_str_set(&t->role, "tool");
        t->tool_call_id = c[i].id;
        t->name = c[i].name;
        t->content = *why;
    }

    return NGX_OK;
}


/*
 * The messages as every provider takes them: each call of an assistant
 * message answered by a tool result before the next message of another
 * role, and no result that answers no call of the message before it.
 * A history stored before calls were closed, a turn cut between a model
 * and its tools, or a summary that ends between them would otherwise be a
 * 400 from the API at every later turn.  The input is returned as it is
 * when it pairs, which is always the case for histories written now.
 * The first `from` messages are known to pair and the one after them is
 * not a tool result: the check starts there.
 */

ngx_int_t
ngx_http_agent_message_pair(ngx_pool_t *pool, ngx_array_t *in,
    ngx_uint_t from, ngx_array_t **out)
{
    ngx_uint_t              i, k;
    ngx_array_t            *calls, *res;
    ngx_http_agent_msg_t   *m, *t;
    ngx_http_agent_call_t  *c;

    static ngx_str_t  not_run = ngx_string("Not run: the conversation went "
                                           "on without running this tool "
                                           "call.");

    *out = in;
    res = NULL;
    calls = NULL;
    c = NULL;
    m = in->elts;

    for (i = ngx_min(from, in->nelts); i <= in->nelts; i++) {

        if (i < in->nelts
            && m[i].role.len == 4 && ngx_strncmp(m[i].role.data, "tool", 4)
                                     == 0)
        {
            for (k = 0; calls && k < calls->nelts; k++) {
                if (c[k].name.len
                    && c[k].id.len == m[i].tool_call_id.len
                    && ngx_strncmp(c[k].id.data, m[i].tool_call_id.data,
                                   c[k].id.len) == 0)
                {
                    c[k].name.len = 0;        /* answered */
                    break;
                }
            }

            if (calls && k < calls->nelts) {
                if (res) {
                    t = ngx_array_push(res);
                    if (t == NULL) {
                        return NGX_ERROR;
                    }

                    *t = m[i];
                }

                continue;
            }

            /* an answer to no open call: left out */

            if (res == NULL
                && ngx_http_agent_message_copy(pool, in, i, &res) != NGX_OK)
            {
                return NGX_ERROR;
            }

            continue;
        }

        /* any other message, or the end, closes the calls still open */

        for (k = 0; calls && k < calls->nelts; k++) {
            if (c[k].name.len == 0) {
                continue;
            }

            if (res == NULL
                && ngx_http_agent_message_copy(pool, in, i, &res) != NGX_OK)
            {
                return NGX_ERROR;
            }

            t = ngx_array_push(res);
            if (t == NULL) {
                return NGX_ERROR;
            }

            ngx_memzero(t, sizeof(ngx_http_agent_msg_t));
            ngx_str_set(&t->role, "tool");
            t->tool_call_id = c[k].id;
            t->name = c[k].name;
            t->content = not_run;
        }

        calls = NULL;

        if (i == in->nelts) {
            break;
        }

        if (m[i].tool_calls.len
            && ngx_http_agent_message_calls(pool, &m[i].tool_calls, &calls, 0)
               == NGX_OK)
        {
            c = calls->elts;
        }

        if (res) {
            t = ngx_array_push(res);
            if (t == NULL) {
                return NGX_ERROR;
            }

            *t = m[i];
        }
    }

    if (res) {
        *out = res;
    }

    return NGX_OK;
}


/* a new array with the first n messages of in, for the changes to come */

static ngx_int_t
ngx_http_agent_message_copy(ngx_pool_t *pool, ngx_array_t *in, ngx_uint_t n,
    ngx_array_t **res)
{
    ngx_http_agent_msg_t  *m;

    *res = ngx_array_create(pool, in->nelts + 8,
                            sizeof(ngx_http_agent_msg_t));
    if (*res == NULL) {
        return NGX_ERROR;
    }

    m = ngx_array_push_n(*res, n);
    if (m == NULL && n) {
        return NGX_ERROR;
    }

    if (n) {
        ngx_memcpy(m, in->elts, n * sizeof(ngx_http_agent_msg_t));
    }

    return NGX_OK;
}


/* a message's text and images as LangChain's content blocks */

static void
ngx_http_agent_message_blocks(ngx_http_agent_json_t *j, ngx_pool_t *pool,
    ngx_http_agent_msg_t *m)
{
    size_t     i;
    yajl_val   v, img;
    ngx_str_t  mime, data;

    ngx_http_agent_json_arr(j);

    if (m->content.len) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "text");
        ngx_http_agent_json_key(j, "text");
        ngx_http_agent_json_str(j, &m->content);
        ngx_http_agent_json_end(j);
    }

    v = ngx_http_agent_json_parse(pool, m->images.data, m->images.len, NULL);

    for (i = 0; v && YAJL_IS_ARRAY(v) && i < v->u.array.len; i++) {
        img = v->u.array.values[i];

        if (ngx_http_agent_json_get_str(img, "mime_type", &mime) != NGX_OK
            || ngx_http_agent_json_get_str(img, "data", &data) != NGX_OK)
        {
            continue;
        }

        /* a PDF: LangChain's file block */

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, ngx_http_agent_message_document(&mime)
                                    ? "file" : "image");
        ngx_http_agent_json_key(j, "mimeType");
        ngx_http_agent_json_str(j, &mime);
        ngx_http_agent_json_key(j, "data");
        ngx_http_agent_json_str(j, &data);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
}


/* an attachment that is no image (a PDF): a document part to a provider */

ngx_uint_t
ngx_http_agent_message_document(ngx_str_t *mime)
{
    return mime->len < 6 || ngx_strncmp(mime->data, "image/", 6) != 0;
}


/* a message as LangChain serializes it: {"type": "human", ...} */

void
ngx_http_agent_message_lc(ngx_http_agent_json_t *j, ngx_pool_t *pool,
    ngx_http_agent_msg_t *m, ngx_str_t *id)
{
    yajl_val                v;
    ngx_uint_t              i;
    ngx_array_t            *calls;
    ngx_http_agent_call_t  *c;

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");

    switch (m->role.len ? m->role.data[0] : 'u') {

    case 'a':
        ngx_http_agent_json_cstr(j, "ai");
        break;

    case 't':
        ngx_http_agent_json_cstr(j, "tool");
        break;

    case 's':
        ngx_http_agent_json_cstr(j, "system");
        break;

    default:
        ngx_http_agent_json_cstr(j, "human");
    }

    ngx_http_agent_json_key(j, "content");

    /*
     * a tool's result is kept as JSON; one that is text is a string to
     * LangChain, not JSON text ("tool_call__begin", not "\"...\"")
     */

    v = NULL;

    if (m->role.len && m->role.data[0] == 't'
        && m->content.len > 1 && m->content.data[0] == '"')
    {
        v = ngx_http_agent_json_parse(pool, m->content.data, m->content.len,
                                      NULL);
    }

    if (v && YAJL_IS_STRING(v)) {
        ngx_http_agent_json_val(j, v);

    } else if (id && m->images.len) {
        /* the LangGraph API's: LangChain's blocks, the text then images */
        ngx_http_agent_message_blocks(j, pool, m);

    } else {
        ngx_http_agent_json_str(j, &m->content);
    }

    if (id) {
        /* the LangGraph API's: with an id and LangChain's empty fields */
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_str(j, m->id.len ? &m->id : id);
        ngx_http_agent_json_key(j, "additional_kwargs");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_key(j, "response_metadata");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_end(j);

        if (m->role.len && m->role.data[0] == 'a') {
            ngx_http_agent_json_key(j, "invalid_tool_calls");
            ngx_http_agent_json_arr(j);
            ngx_http_agent_json_arr_end(j);

            if (m->tool_calls.len == 0) {
                ngx_http_agent_json_key(j, "tool_calls");
                ngx_http_agent_json_arr(j);
                ngx_http_agent_json_arr_end(j);
            }
        }
    }

    if (m->tool_call_id.len) {
        ngx_http_agent_json_key(j, "tool_call_id");
        ngx_http_agent_json_str(j, &m->tool_call_id);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &m->name);
    }

    if (m->tool_calls.len
        && ngx_http_agent_message_calls(pool, &m->tool_calls, &calls, 1)
           == NGX_OK)
    {
        c = calls->elts;

        ngx_http_agent_json_key(j, "tool_calls");
        ngx_http_agent_json_arr(j);

        for (i = 0; i < calls->nelts; i++) {
            ngx_http_agent_json_obj(j);
            ngx_http_agent_json_key(j, "name");
            ngx_http_agent_json_str(j, &c[i].name);
            ngx_http_agent_json_key(j, "args");

            if (c[i].args && YAJL_IS_OBJECT(c[i].args)) {
                ngx_http_agent_json_val(j, c[i].args);

            } else {
                ngx_http_agent_json_obj(j);
                ngx_http_agent_json_end(j);
            }

            ngx_http_agent_json_key(j, "id");
            ngx_http_agent_json_str(j, &c[i].id);
            ngx_http_agent_json_key(j, "type");
            ngx_http_agent_json_cstr(j, "tool_call");
            ngx_http_agent_json_end(j);
        }

        ngx_http_agent_json_arr_end(j);
    }

    ngx_http_agent_json_end(j);
}


/*
 * A message as JSON: its role and content; full: its tool calls and the
 * call a tool message answers too (NGX_HTTP_AGENT_MESSAGE_KEPT: and its
 * metadata, a checkpoint's copy); with a session_id: as our API lists a
 * session's messages (its id, times, metadata with its images)
 */

void
ngx_http_agent_message_json(ngx_http_agent_json_t *j, ngx_str_t *session_id,
    ngx_http_agent_msg_t *m, ngx_uint_t full)
{
    ngx_http_agent_json_obj(j);

    if (session_id) {
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_int(j, m->seq);
        ngx_http_agent_json_key(j, "session_id");
        ngx_http_agent_json_str(j, session_id);
        /* seed 000's names too: its clients read them */
        ngx_http_agent_json_key(j, "sessionId");
        ngx_http_agent_json_str(j, session_id);
    }

    ngx_http_agent_json_key(j, "role");
    ngx_http_agent_json_str(j, &m->role);
    ngx_http_agent_json_key(j, "content");
    ngx_http_agent_json_str(j, &m->content);

    if (full && m->tool_calls.len) {
        ngx_http_agent_json_key(j, "tool_calls");
        ngx_http_agent_json_raw(j, &m->tool_calls);
    }

    if (full && m->tool_call_id.len) {
        ngx_http_agent_json_key(j, "tool_call_id");
        ngx_http_agent_json_str(j, &m->tool_call_id);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &m->name);
    }

    if (full == NGX_HTTP_AGENT_MESSAGE_KEPT && m->metadata.len) {
        /* a checkpoint's copy: with the client's id it may hold */
        ngx_http_agent_json_key(j, "metadata");
        ngx_http_agent_json_raw(j, &m->metadata);
    }

    if (session_id) {
        ngx_http_agent_json_key(j, "created_at");
        ngx_http_agent_json_str(j, &m->created_at);
        ngx_http_agent_json_key(j, "createdAt");
        ngx_http_agent_json_str(j, &m->created_at);
        ngx_http_agent_json_key(j, "metadata");

        if (m->images.len) {
            ngx_http_agent_message_metadata(j, m);

        } else if (m->metadata.len) {
            ngx_http_agent_json_raw(j, &m->metadata);

        } else {
            ngx_http_agent_json_obj(j);
            ngx_http_agent_json_end(j);
        }
    }

    ngx_http_agent_json_end(j);
}


/* the stored metadata with the message's images: [{"mime_type", "data"}] */

static void
ngx_http_agent_message_metadata(ngx_http_agent_json_t *j,
    ngx_http_agent_msg_t *m)
{
    size_t    i;
    yajl_val  v;

    v = m->metadata.len ? ngx_http_agent_json_parse(j->pool, m->metadata.data,
                                                    m->metadata.len, NULL)
                        : NULL;

    ngx_http_agent_json_obj(j);

    for (i = 0; v && YAJL_IS_OBJECT(v) && i < v->u.object.len; i++) {
        if (ngx_strcmp(v->u.object.keys[i], "images") == 0) {
            continue;
        }

        ngx_http_agent_json_cstr(j, v->u.object.keys[i]);
        ngx_http_agent_json_val(j, v->u.object.values[i]);
    }

    ngx_http_agent_json_key(j, "images");
    ngx_http_agent_json_raw(j, &m->images);
    ngx_http_agent_json_end(j);
}
