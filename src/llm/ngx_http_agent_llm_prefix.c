
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_llm.h"


/*
 * A conversation's history, encoded once: each worker keeps, per session,
 * the JSON of the messages its last model request sent, and the next
 * request of that session (the second call of a turn, the next turn) sends
 * that text again for the messages that have not changed, and encodes only
 * the new ones.  Turn 200 of a session then costs about what turn 1 costs
 * (docs/performance.md).
 *
 * The kept text is reused only when the messages are byte for byte the
 * ones it was made from: the fields the encoding reads are kept beside it
 * and compared, so a history that another worker wrote, a state update,
 * a copy or a time travel can never send stale text; a miss encodes all.
 * Memory is the worker's own and bounded: NGX_HTTP_AGENT_LLM_PREFIXES
 * sessions, none over NGX_HTTP_AGENT_LLM_PREFIX_MAX bytes, the least
 * recently used let go first.
 */


#define NGX_HTTP_AGENT_LLM_PREFIXES     64
#define NGX_HTTP_AGENT_LLM_PREFIX_MAX   (1024 * 1024)
#define NGX_HTTP_AGENT_LLM_FIELDS       5


typedef struct {
    ngx_queue_t                     queue;
    ngx_str_t                       session;
    void                           *provider;   /* whose encoding */
    ngx_uint_t                      n;          /* messages kept */
    size_t                         *lens;       /* their fields' lengths */
    u_char                         *fields;     /* the fields, in a row */
    ngx_str_t                       json;       /* "{...},{...}" */
} ngx_http_agent_llm_prefix_t;


static ngx_http_agent_llm_prefix_t *ngx_http_agent_llm_prefix_get(
    ngx_http_agent_llm_t *llm);
static void ngx_http_agent_llm_prefix_fields(ngx_http_agent_msg_t *m,
    ngx_str_t *f);


static ngx_queue_t   ngx_http_agent_llm_prefixes;
static ngx_uint_t    ngx_http_agent_llm_nprefixes;


/*
 * How many of the request's first messages the kept text holds, the
 * text in *json; 0 when none can be reused
 */

ngx_uint_t
ngx_http_agent_llm_prefix_find(ngx_http_agent_llm_t *llm, ngx_str_t *json)
{
    u_char                       *p;
    size_t                       *len;
    ngx_str_t                     f[NGX_HTTP_AGENT_LLM_FIELDS];
    ngx_uint_t                    i, k;
    ngx_http_agent_msg_t         *m;
    ngx_http_agent_llm_prefix_t  *e;

    e = ngx_http_agent_llm_prefix_get(llm);

    if (e == NULL || e->provider != llm->provider
        || e->n > llm->req->messages->nelts)
    {
        return 0;
    }

    m = llm->req->messages->elts;
    len = e->lens;
    p = e->fields;

    for (i = 0; i < e->n; i++) {
        ngx_http_agent_llm_prefix_fields(&m[i], f);

        for (k = 0; k < NGX_HTTP_AGENT_LLM_FIELDS; k++, len++) {
            if (f[k].len != *len
                || (*len && ngx_memcmp(f[k].data, p, *len) != 0))
            {
                return 0;
            }

            p += *len;
        }
    }

    *json = e->json;

    return e->n;
}


/*
 * The text of all the request's messages, kept for the session's next
 * request (the one entry it has is replaced): the part reused, if any,
 * then what the body wrote after it, which starts with the array's comma
 * when something came before (the system prompt, the part reused)
 */

void
ngx_http_agent_llm_prefix_keep(ngx_http_agent_llm_t *llm, ngx_str_t *reused,
    u_char *json, size_t len)
{
    u_char                       *p;
    size_t                        size, *lens;
    ngx_str_t                     f[NGX_HTTP_AGENT_LLM_FIELDS];
    ngx_uint_t                    i, k, n;
    ngx_queue_t                  *q;
    ngx_http_agent_msg_t         *m;
    ngx_http_agent_llm_prefix_t  *e, *old;

    if (llm->req->session == NULL || llm->req->session->len == 0) {
        return;
    }

    /* the old entry goes last: the part reused is its text */
    old = ngx_http_agent_llm_prefix_get(llm);

    n = llm->req->messages->nelts;
    m = llm->req->messages->elts;

    if (reused == NULL && len && json[0] == ',') {
        json++;
        len--;
    }

    size = sizeof(ngx_http_agent_llm_prefix_t) + llm->req->session->len
           + n * NGX_HTTP_AGENT_LLM_FIELDS * sizeof(size_t)
           + (reused ? reused->len : 0) + len;

    for (i = 0; i < n; i++) {
        ngx_http_agent_llm_prefix_fields(&m[i], f);

        for (k = 0; k < NGX_HTTP_AGENT_LLM_FIELDS; k++) {
            size += f[k].len;
        }
    }

    e = (n && size <= NGX_HTTP_AGENT_LLM_PREFIX_MAX)
        ? ngx_alloc(size, llm->log) : NULL;

    if (old) {
        ngx_queue_remove(&old->queue);
        ngx_http_agent_llm_nprefixes--;
    }

    if (e == NULL) {
        ngx_free(old);
        return;
    }

    /* one block: the lengths first, aligned, then the bytes */

    lens = (size_t *) (e + 1);
    p = (u_char *) (lens + n * NGX_HTTP_AGENT_LLM_FIELDS);

    e->lens = lens;
    e->n = n;
    e->provider = llm->provider;

    e->session.data = p;
    e->session.len = llm->req->session->len;
    p = ngx_cpymem(p, llm->req->session->data, e->session.len);

    e->json.data = p;

    if (reused) {
        p = ngx_cpymem(p, reused->data, reused->len);
    }

    if (len) {
        p = ngx_cpymem(p, json, len);
    }

    e->json.len = p - e->json.data;
    e->fields = p;

    for (i = 0; i < n; i++) {
        ngx_http_agent_llm_prefix_fields(&m[i], f);

        for (k = 0; k < NGX_HTTP_AGENT_LLM_FIELDS; k++) {
            *lens++ = f[k].len;

            if (f[k].len) {
                p = ngx_cpymem(p, f[k].data, f[k].len);
            }
        }
    }

    ngx_free(old);

    if (ngx_http_agent_llm_nprefixes == 0) {
        ngx_queue_init(&ngx_http_agent_llm_prefixes);

    } else if (ngx_http_agent_llm_nprefixes == NGX_HTTP_AGENT_LLM_PREFIXES) {
        q = ngx_queue_last(&ngx_http_agent_llm_prefixes);
        ngx_queue_remove(q);
        ngx_free(ngx_queue_data(q, ngx_http_agent_llm_prefix_t, queue));
        ngx_http_agent_llm_nprefixes--;
    }

    ngx_queue_insert_head(&ngx_http_agent_llm_prefixes, &e->queue);
    ngx_http_agent_llm_nprefixes++;
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
