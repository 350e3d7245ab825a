
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm_int.h"
#include "ngx_http_agent_store_history.h"
#include "ngx_http_agent_util.h"


/*
 * A conversation's history, encoded once: each worker keeps, per session,
 * the JSON of the messages its last model request sent, and the next
 * request of that session (the second call of a turn, the next turn) sends
 * that text again for the messages that have not changed, encodes only
 * the new ones and appends them to the kept text.  The kept messages were
 * sent paired, so the tool-call pairing check starts past them too
 * (prefix_paired()).  docs/performance.md has what it saves at turn 200.
 *
 * The kept text is reused only when the messages are byte for byte the
 * ones it was made from: the fields the encoding reads are kept beside it
 * and compared, so a history that another worker wrote, a state update,
 * a copy or a time travel can never send stale text; a miss encodes all.
 * A message handed out from the store's kept rows (store_history.c) is
 * compared by address: the entry holds that text, which does not change
 * while held, so the same address is the same bytes (prefix_point()).
 * Memory is the worker's own and bounded: NGX_HTTP_AGENT_LLM_PREFIXES
 * sessions, none over NGX_HTTP_AGENT_LLM_PREFIX_MAX bytes, the least
 * recently used let go first.  The kept text is sent from where it is
 * (provider_openai.c): a request pins it while curl reads it, so text
 * that moves or is let go meanwhile stays until then (grow_shared()).
 */


#define NGX_HTTP_AGENT_LLM_PREFIXES     64
#define NGX_HTTP_AGENT_LLM_PREFIX_MAX   (1024 * 1024)
#define NGX_HTTP_AGENT_LLM_FIELDS       5


typedef struct {
    ngx_queue_t                     queue;
    ngx_str_t                       session;
    void                           *provider;   /* whose encoding */
    ngx_uint_t                      stamp;      /* a new one when the
                                                   entry is written again */
    ngx_uint_t                      n;          /* messages kept */
    size_t                         *lens;       /* their fields' lengths */
    size_t                          lens_size;
    u_char                        **ptrs;       /* their fields' addresses
                                                   in text, or NULL */
    size_t                          ptrs_size;
    u_char                         *text;       /* the store's, held */
    u_char                         *fields;     /* the fields, in a row */
    size_t                          fields_len;
    size_t                          fields_size;
    ngx_str_t                       json;       /* "{...},{...}" */
    size_t                          json_size;
} ngx_http_agent_llm_prefix_t;


static ngx_http_agent_llm_prefix_t *ngx_http_agent_llm_prefix_get(
    ngx_http_agent_llm_t *llm);
static ngx_http_agent_llm_prefix_t *ngx_http_agent_llm_prefix_new(
    ngx_http_agent_llm_t *llm);
static void ngx_http_agent_llm_prefix_drop(ngx_http_agent_llm_prefix_t *e);
static size_t ngx_http_agent_llm_prefix_room(ngx_http_agent_llm_prefix_t *e);
static ngx_uint_t ngx_http_agent_llm_prefix_same(
    ngx_http_agent_llm_prefix_t *e, ngx_array_t *messages);
static ngx_int_t ngx_http_agent_llm_prefix_point(
    ngx_http_agent_llm_prefix_t *e, ngx_uint_t i, ngx_str_t *f);
static void ngx_http_agent_llm_prefix_fields(ngx_http_agent_msg_t *m,
    ngx_str_t *f);


static ngx_queue_t   ngx_http_agent_llm_prefixes;
static ngx_uint_t    ngx_http_agent_llm_nprefixes;
static ngx_uint_t    ngx_http_agent_llm_stamps;


/*
 * How many of the call's first messages are known to pair (message_pair()):
 * the kept text was made of a request that was paired, so where the
 * call's messages are its messages they pair up to one that is not a tool
 * result (it closes the calls before it), or all of the kept ones.  What
 * was found the same is remembered for the call's body (prefix_find()).
 */

ngx_uint_t
ngx_http_agent_llm_prefix_paired(ngx_http_agent_llm_t *llm)
{
    ngx_uint_t                    n;
    ngx_http_agent_msg_t         *m;
    ngx_http_agent_llm_prefix_t  *e;

    e = ngx_http_agent_llm_prefix_get(llm);
    if (e == NULL) {
        return 0;
    }

    n = ngx_http_agent_llm_prefix_same(e, llm->req->messages);

    llm->prefix_messages = llm->req->messages;
    llm->prefix_same = n;
    llm->prefix_stamp = e->stamp;

    if (n == e->n) {
        return n;
    }

    m = llm->req->messages->elts;

    while (n-- > 0) {
        if (m[n].role.len != 4 || ngx_strncmp(m[n].role.data, "tool", 4)) {
            return n;
        }
    }

    return 0;
}


/*
 * How many of the request's first messages the kept text holds, the
 * text in *json; 0 when none can be reused
 */

ngx_uint_t
ngx_http_agent_llm_prefix_find(ngx_http_agent_llm_t *llm, ngx_str_t *json)
{
    ngx_uint_t                    n;
    ngx_http_agent_llm_prefix_t  *e;

    e = ngx_http_agent_llm_prefix_get(llm);

    if (e == NULL || e->provider != llm->provider
        || e->n > llm->req->messages->nelts)
    {
        return 0;
    }

    /* compared already as the call began, the entry as it was then */

    if (llm->prefix_messages == llm->req->messages
        && llm->prefix_stamp == e->stamp)
    {
        n = llm->prefix_same;

    } else {
        n = ngx_http_agent_llm_prefix_same(e, llm->req->messages);
    }

    if (n < e->n) {
        return 0;
    }

    *json = e->json;

    return e->n;
}


/* how many of the first messages are the kept ones, byte for byte */

static ngx_uint_t
ngx_http_agent_llm_prefix_same(ngx_http_agent_llm_prefix_t *e,
    ngx_array_t *messages)
{
    u_char                *p, **q;
    size_t                *len;
    ngx_str_t              f[NGX_HTTP_AGENT_LLM_FIELDS];
    ngx_uint_t             i, k, n, bytes, look;
    ngx_http_agent_msg_t  *m;

    m = messages->elts;
    n = ngx_min(e->n, messages->nelts);
    len = e->lens;
    q = e->ptrs;
    p = e->fields;
    look = 1;

    for (i = 0; i < n; i++) {

        /* the store's kept text where it was: each turn, each message */

        if (q[0] == m[i].role.data && q[1] == m[i].content.data
            && q[2] == m[i].tool_calls.data && q[3] == m[i].tool_call_id.data
            && q[4] == m[i].images.data && q[0] != NULL
            && len[0] == m[i].role.len && len[1] == m[i].content.len
            && len[2] == m[i].tool_calls.len
            && len[3] == m[i].tool_call_id.len
            && len[4] == m[i].images.len)
        {
            p += len[0] + len[1] + len[2] + len[3] + len[4];
            len += NGX_HTTP_AGENT_LLM_FIELDS;
            q += NGX_HTTP_AGENT_LLM_FIELDS;
            continue;
        }

        ngx_http_agent_llm_prefix_fields(&m[i], f);
        bytes = 0;

        for (k = 0; k < NGX_HTTP_AGENT_LLM_FIELDS; k++) {
            if (f[k].len != len[k]) {
                return i;
            }

            if (len[k] && f[k].data != q[k]) {
                if (ngx_memcmp(f[k].data, p, len[k]) != 0) {
                    return i;
                }

                bytes = 1;
            }

            p += len[k];
        }

        /*
         * the next time by address, if it is the store's kept text; the
         * store's messages come first: past one that is not, none is
         */
        if (bytes && look
            && ngx_http_agent_llm_prefix_point(e, i, f) != NGX_OK)
        {
            look = 0;
        }

        len += NGX_HTTP_AGENT_LLM_FIELDS;
        q += NGX_HTTP_AGENT_LLM_FIELDS;
    }

    return n;
}


/*
 * The message i's fields by their address, where they are all in a text
 * the store keeps (store_history.c): the entry holds that text, one at
 * a time; another one (the store's text moved as it grew) lets the
 * addresses into the one held before go, to be compared by bytes again
 */

static ngx_int_t
ngx_http_agent_llm_prefix_point(ngx_http_agent_llm_prefix_t *e,
    ngx_uint_t i, ngx_str_t *f)
{
    u_char      *text, *t, **q;
    ngx_uint_t   k;

    text = NULL;

    for (k = 0; k < NGX_HTTP_AGENT_LLM_FIELDS; k++) {
        if (f[k].len == 0) {
            continue;
        }

        t = ngx_http_agent_store_history_text(f[k].data, f[k].len);

        if (t == NULL || (text && t != text)) {
            return NGX_DECLINED;
        }

        text = t;
    }

    if (text == NULL) {
        return NGX_DECLINED;
    }

    if (text != e->text) {
        if (e->text) {
            ngx_http_agent_grow_release(e->text);
            ngx_memzero(e->ptrs, ngx_max(e->n, i) * NGX_HTTP_AGENT_LLM_FIELDS
                                 * sizeof(u_char *));
        }

        ngx_http_agent_grow_ref(text);
        e->text = text;
    }

    q = e->ptrs + i * NGX_HTTP_AGENT_LLM_FIELDS;

    for (k = 0; k < NGX_HTTP_AGENT_LLM_FIELDS; k++) {
        q[k] = f[k].data;
    }

    return NGX_OK;
}


/*
 * The text of all the request's messages, kept for the session's next
 * request: the part reused (the entry's own text) stays where it is and
 * what the body wrote after it is appended, which starts with the
 * array's comma when something came before (the system prompt, the part
 * reused); without a part reused the entry is written again.  Appended,
 * a long conversation's request copies its new messages only.
 */

void
ngx_http_agent_llm_prefix_keep(ngx_http_agent_llm_t *llm, ngx_str_t *reused,
    u_char *json, size_t len)
{
    u_char                       *p;
    size_t                        need, *lens;
    ngx_str_t                     f[NGX_HTTP_AGENT_LLM_FIELDS];
    ngx_uint_t                    i, k, n, from, look;
    ngx_http_agent_msg_t         *m;
    ngx_http_agent_llm_prefix_t  *e;

    if (llm->req->session == NULL || llm->req->session->len == 0) {
        return;
    }

    e = ngx_http_agent_llm_prefix_get(llm);

    n = llm->req->messages->nelts;
    m = llm->req->messages->elts;

    if (reused == NULL) {
        if (len && json[0] == ',') {
            json++;
            len--;
        }

        if (e) {
            e->n = 0;
            e->json.len = 0;
            e->fields_len = 0;
            e->stamp = ++ngx_http_agent_llm_stamps;

            if (e->text) {
                ngx_http_agent_grow_release(e->text);
                e->text = NULL;
            }

            /* a request still being sent may read the text written */
            ngx_http_agent_grow_reset(&e->json.data, &e->json_size);
        }
    }

    if (n == 0) {
        if (e) {
            ngx_http_agent_llm_prefix_drop(e);
        }

        return;
    }

    if (e == NULL) {
        e = ngx_http_agent_llm_prefix_new(llm);
        if (e == NULL) {
            return;
        }
    }

    /* the part reused is the first e->n messages' (prefix_find()) */
    from = e->n;
    need = 0;

    for (i = from; i < n; i++) {
        ngx_http_agent_llm_prefix_fields(&m[i], f);

        for (k = 0; k < NGX_HTTP_AGENT_LLM_FIELDS; k++) {
            need += f[k].len;
        }
    }

    /* the four buffers together within the bound */

    if (ngx_http_agent_grow_shared(&e->json.data, e->json.len,
                                   &e->json_size, len,
                                   ngx_http_agent_llm_prefix_room(e)
                                   + e->json_size, llm->log)
        != NGX_OK
        || ngx_http_agent_grow(&e->fields, e->fields_len, &e->fields_size,
                               need, ngx_http_agent_llm_prefix_room(e)
                               + e->fields_size, llm->log)
           != NGX_OK
        || ngx_http_agent_grow(&e->lens,
                               from * NGX_HTTP_AGENT_LLM_FIELDS
                               * sizeof(size_t),
                               &e->lens_size,
                               (n - from) * NGX_HTTP_AGENT_LLM_FIELDS
                               * sizeof(size_t),
                               ngx_http_agent_llm_prefix_room(e)
                               + e->lens_size, llm->log)
           != NGX_OK
        || ngx_http_agent_grow(&e->ptrs,
                               from * NGX_HTTP_AGENT_LLM_FIELDS
                               * sizeof(u_char *),
                               &e->ptrs_size,
                               (n - from) * NGX_HTTP_AGENT_LLM_FIELDS
                               * sizeof(u_char *),
                               ngx_http_agent_llm_prefix_room(e)
                               + e->ptrs_size, llm->log)
           != NGX_OK)
    {
        /* a longer history is encoded whole each time */
        ngx_http_agent_llm_prefix_drop(e);
        return;
    }

    if (len) {
        ngx_memcpy(e->json.data + e->json.len, json, len);
        e->json.len += len;
    }

    lens = e->lens + from * NGX_HTTP_AGENT_LLM_FIELDS;
    p = e->fields + e->fields_len;

    if (n > from) {
        ngx_memzero(e->ptrs + from * NGX_HTTP_AGENT_LLM_FIELDS,
                    (n - from) * NGX_HTTP_AGENT_LLM_FIELDS
                    * sizeof(u_char *));
    }

    look = 1;

    for (i = from; i < n; i++) {
        ngx_http_agent_llm_prefix_fields(&m[i], f);

        for (k = 0; k < NGX_HTTP_AGENT_LLM_FIELDS; k++) {
            *lens++ = f[k].len;

            if (f[k].len) {
                p = ngx_cpymem(p, f[k].data, f[k].len);
            }
        }

        if (look && ngx_http_agent_llm_prefix_point(e, i, f) != NGX_OK) {
            look = 0;
        }
    }

    e->fields_len = p - e->fields;
    e->n = n;
    e->provider = llm->provider;
}


/* a new entry, the most recently used; the least recently used let go */

static ngx_http_agent_llm_prefix_t *
ngx_http_agent_llm_prefix_new(ngx_http_agent_llm_t *llm)
{
    ngx_queue_t                  *q;
    ngx_http_agent_llm_prefix_t  *e;

    if (ngx_http_agent_llm_nprefixes == 0) {
        ngx_queue_init(&ngx_http_agent_llm_prefixes);

    } else if (ngx_http_agent_llm_nprefixes == NGX_HTTP_AGENT_LLM_PREFIXES) {
        q = ngx_queue_last(&ngx_http_agent_llm_prefixes);
        ngx_http_agent_llm_prefix_drop(
                      ngx_queue_data(q, ngx_http_agent_llm_prefix_t, queue));
    }

    e = ngx_alloc(sizeof(ngx_http_agent_llm_prefix_t)
                  + llm->req->session->len, llm->log);
    if (e == NULL) {
        return NULL;
    }

    ngx_memzero(e, sizeof(ngx_http_agent_llm_prefix_t));

    e->stamp = ++ngx_http_agent_llm_stamps;
    e->session.data = (u_char *) (e + 1);
    e->session.len = llm->req->session->len;
    ngx_memcpy(e->session.data, llm->req->session->data, e->session.len);

    ngx_queue_insert_head(&ngx_http_agent_llm_prefixes, &e->queue);
    ngx_http_agent_llm_nprefixes++;

    return e;
}


static void
ngx_http_agent_llm_prefix_drop(ngx_http_agent_llm_prefix_t *e)
{
    ngx_queue_remove(&e->queue);
    ngx_http_agent_llm_nprefixes--;

    if (e->lens) {
        ngx_free(e->lens);
    }

    if (e->fields) {
        ngx_free(e->fields);
    }

    if (e->ptrs) {
        ngx_free(e->ptrs);
    }

    ngx_http_agent_grow_release(e->text);

    /* freed by the last request sending it */
    ngx_http_agent_grow_release(e->json.data);

    ngx_free(e);
}


/* what the entry's buffers may still take */

static size_t
ngx_http_agent_llm_prefix_room(ngx_http_agent_llm_prefix_t *e)
{
    return NGX_HTTP_AGENT_LLM_PREFIX_MAX - e->json_size - e->fields_size
           - e->lens_size - e->ptrs_size;
}


/* the session's entry, made the most recently used */

static ngx_http_agent_llm_prefix_t *
ngx_http_agent_llm_prefix_get(ngx_http_agent_llm_t *llm)
{
    ngx_str_t                    *s;
    ngx_queue_t                  *q;
    ngx_http_agent_llm_prefix_t  *e;

    s = llm->req->session;

    if (s == NULL || ngx_http_agent_llm_nprefixes == 0) {
        return NULL;
    }

    for (q = ngx_queue_head(&ngx_http_agent_llm_prefixes);
         q != ngx_queue_sentinel(&ngx_http_agent_llm_prefixes);
         q = ngx_queue_next(q))
    {
        e = ngx_queue_data(q, ngx_http_agent_llm_prefix_t, queue);

        if (e->session.len == s->len
            && ngx_memcmp(e->session.data, s->data, s->len) == 0)
        {
            ngx_queue_remove(q);
            ngx_queue_insert_head(&ngx_http_agent_llm_prefixes, q);

            return e;
        }
    }

    return NULL;
}


/* what a message's encoding reads (ngx_http_agent_llm_message_json) */

static void
ngx_http_agent_llm_prefix_fields(ngx_http_agent_msg_t *m, ngx_str_t *f)
{
    f[0] = m->role;
    f[1] = m->content;
    f[2] = m->tool_calls;
    f[3] = m->tool_call_id;
    f[4] = m->images;
}
