
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>
#include <ngx_sha1.h>

#include "ngx_http_agent_llm_int.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_ops.h"


/*
 * The exact response cache of a model call (an llm node's
 * cache_response=): the same request, byte for byte as we would send it
 * to the same model's URL, for the same owner, is answered by the answer
 * kept for it, and nothing is sent.  What is kept is what the stream
 * parser read, as our generator writes it: the text as the pieces it
 * came in (so a replay streams the same tokens), the tool calls and the
 * finish reason; never the provider's bytes.  A replay goes through the
 * parser's own calls (llm_text, llm_tool, llm_finish), posted after the
 * call has started, as a provider's answer would come; it costs no
 * tokens.  Only the first attempt of the first model looks: a retry sends
 * the same request, a fallback another.  A miss looks for a near
 * question's answer next where the node asks (below).
 */


static void ngx_http_agent_llm_cache_forget(ngx_http_agent_llm_t *llm);
static void ngx_http_agent_llm_cache_replay(ngx_event_t *ev);
static ngx_int_t ngx_http_agent_llm_cache_answer(ngx_http_agent_llm_t *llm,
    yajl_val v);


static ngx_str_t  ngx_http_agent_llm_cache_kind = ngx_string("exact");

/* the worker's puts: they want no answer, and outlive their request */
static ngx_http_agent_store_call_t  ngx_http_agent_llm_cache_puts;


/*
 * The semantic response cache of a model call (an llm node's
 * cache_similar=): where the exact cache has no answer, the request's
 * last user message is embedded as a query, and the nearest answer kept
 * for the same scope (graph and node, model, system prompt, tools) of the
 * same owner is replayed when its question scores at least the node's
 * score, as an exact hit is.  The questions are store items of the owner
 * with their vector, under a namespace of the scope's hash, keyed by
 * their answer's exact key: every worker and host finds them, the store's
 * semantic search ranks them within its bounds, and they expire with
 * cache_response='s TTL.  The answer itself is the exact cache's entry,
 * kept once and bounded by agent_cache_max: one it has let go is a miss.
 * The embedding waits as a store call does (its wake makes the pass
 * again); it lives in the run's pool, as the embeddings job it waits on,
 * so an answer that comes after the call stopped finds it still there.
 */


#define NGX_HTTP_AGENT_LLM_SIMILAR_TEXT  16384


typedef struct {
    ngx_http_agent_store_call_t    sc;      /* first: its wake's */
    ngx_http_agent_store_wake_pt   wake;    /* the call's own (llm.c) */
    ngx_str_t                      text;
    ngx_str_t                      vector;  /* the question's */
    ngx_str_t                      ns;
} ngx_http_agent_llm_similar_t;


static ngx_int_t ngx_http_agent_llm_similar_look(ngx_http_agent_llm_t *llm,
    ngx_http_agent_store_wake_pt wake);
static ngx_int_t ngx_http_agent_llm_similar_pass(ngx_http_agent_llm_t *llm);
static void ngx_http_agent_llm_similar_put(ngx_http_agent_llm_t *llm,
    ngx_http_agent_store_call_t *sc);
static ngx_int_t ngx_http_agent_llm_similar_cancel(ngx_http_agent_llm_t *llm);
static void ngx_http_agent_llm_cache_hit(ngx_http_agent_llm_t *llm,
    ngx_str_t *value);
static ngx_int_t ngx_http_agent_llm_similar_text(ngx_http_agent_llm_t *llm,
    ngx_str_t *text);
static ngx_int_t ngx_http_agent_llm_similar_ns(ngx_http_agent_llm_t *llm,
    ngx_pool_t *pool, ngx_str_t *ns);
static void ngx_http_agent_llm_similar_wake(ngx_http_agent_store_call_t *sc);


static ngx_str_t  ngx_http_agent_llm_similar_kind = ngx_string("similar");


/* NGX_OK: answered from the cache, or to be; NGX_DECLINED: send it */

ngx_int_t
ngx_http_agent_llm_cache_look(ngx_http_agent_llm_t *llm,
    ngx_http_agent_store_wake_pt wake)
{
    ngx_str_t                    *owner;
    ngx_sha1_t                    sha1;
    ngx_http_agent_store_call_t  *sc;

    owner = llm->req->owner;

    ngx_sha1_init(&sha1);
    ngx_sha1_update(&sha1, "exact", sizeof("exact"));

    if (owner) {
        ngx_sha1_update(&sha1, owner->data, owner->len);
    }

    ngx_sha1_update(&sha1, "", 1);
    ngx_sha1_update(&sha1, llm->model->name.data, llm->model->name.len);
    ngx_sha1_update(&sha1, "", 1);
    ngx_sha1_update(&sha1, llm->cache_url.data, llm->cache_url.len);
    ngx_sha1_update(&sha1, "", 1);
    ngx_sha1_update(&sha1, llm->cache_body.data, llm->cache_body.len);

    sc = ngx_palloc(llm->pool, sizeof(ngx_http_agent_store_call_t));

    if (sc == NULL
        || ngx_http_agent_digest_key(llm->pool, "exact:", &sha1,
                                    &llm->cache_key)
           != NGX_OK)
    {
        return ngx_http_agent_llm_fail(llm, "out of memory");
    }

    ngx_http_agent_store_call_init(sc, llm->pool, llm->log, wake, llm);
    llm->cache_sc = sc;

    return ngx_http_agent_llm_cache_pass(llm);
}


/* the lookup's answer: NGX_OK, a hit, or it is to come; NGX_DECLINED */

ngx_int_t
ngx_http_agent_llm_cache_pass(ngx_http_agent_llm_t *llm)
{
    ngx_str_t                      value;
    ngx_int_t                      rc;
    ngx_http_agent_store_call_t   *sc;

    if (llm->similar) {
        return ngx_http_agent_llm_similar_pass(llm);
    }

    sc = llm->cache_sc;

    rc = ngx_http_agent_store_cache_get(sc, &llm->cache_key, &value);

    if (rc == NGX_AGAIN) {
        return NGX_OK;
    }

    llm->cache_sc = NULL;

    if (rc == NGX_OK) {
        ngx_http_agent_llm_cache_hit(llm, &value);

        ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_CACHE_HITS,
                                   &ngx_http_agent_llm_cache_kind, NULL, 1);
        return NGX_OK;
    }

    if (rc == NGX_ERROR) {
        ngx_log_error(NGX_LOG_WARN, llm->log, 0,
                      "agent: the cache could not be read, the model is "
                      "called");
    }

    ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_CACHE_MISSES,
                               &ngx_http_agent_llm_cache_kind, NULL, 1);

    /* the answer's pieces kept as they come, to be put at its end */

    llm->cache_text = ngx_array_create(llm->pool, 16, sizeof(ngx_str_t));
    if (llm->cache_text == NULL) {
        return ngx_http_agent_llm_fail(llm, "out of memory");
    }

    if (llm->req->similar) {
        /* a near question's answer, where the exact one has none */
        return ngx_http_agent_llm_similar_look(llm, sc->wake);
    }

    return NGX_DECLINED;
}


/* a kept answer (the exact one's, or a near question's) replayed */

static void
ngx_http_agent_llm_cache_hit(ngx_http_agent_llm_t *llm, ngx_str_t *value)
{
    ngx_http_agent_llm_cache_forget(llm);

    llm->cache_text = NULL;
    llm->cache_body = *value;
    llm->cache_hit = 1;
    llm->replay.handler = ngx_http_agent_llm_cache_replay;
    llm->replay.data = llm;
    llm->replay.log = llm->log;
    ngx_post_event(&llm->replay, &ngx_posted_events);
}


/* nothing is sent: the headers' key let go, as after curl has copied it */

static void
ngx_http_agent_llm_cache_forget(ngx_http_agent_llm_t *llm)
{
    ngx_str_t   *h;
    ngx_uint_t   i;

    h = llm->cache_headers->elts;

    for (i = 0; i < llm->cache_headers->nelts; i++) {
        ngx_explicit_memzero(h[i].data, h[i].len);
    }
}


/* the kept answer through the parser's calls, as a provider's would come */

static void
ngx_http_agent_llm_cache_replay(ngx_event_t *ev)
{
    ngx_http_agent_llm_t *llm = ev->data;

    yajl_val  v;

    llm->ttft = ngx_max(ngx_current_msec - llm->start, 1);

    v = ngx_http_agent_json_parse(llm->pool, llm->cache_body.data,
                                  llm->cache_body.len, NULL);

    if (v == NULL || !YAJL_IS_OBJECT(v)
        || ngx_http_agent_llm_cache_answer(llm, v) != NGX_OK)
    {
        if (llm->error.len == 0) {
            (void) ngx_http_agent_llm_fail(llm, "the cached answer could "
                                           "not be read");
        }

        llm->on_done(llm->data, NGX_ERROR);
        return;
    }

    llm->on_done(llm->data, NGX_OK);
}


static ngx_int_t
ngx_http_agent_llm_cache_answer(ngx_http_agent_llm_t *llm, yajl_val v)
{
    size_t     i;
    yajl_val   a, c;
    ngx_str_t  s, id, name, args;

    a = ngx_http_agent_json_get(v, "text");

    for (i = 0; a && YAJL_IS_ARRAY(a) && i < a->u.array.len; i++) {
        c = a->u.array.values[i];

        if (!YAJL_IS_STRING(c)) {
            return NGX_ERROR;
        }

        s.data = (u_char *) c->u.string;
        s.len = ngx_strlen(s.data);

        if (ngx_http_agent_llm_text(llm, &s) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    a = ngx_http_agent_json_get(v, "calls");

    for (i = 0; a && YAJL_IS_ARRAY(a) && i < a->u.array.len; i++) {
        c = a->u.array.values[i];

        if (ngx_http_agent_json_get_str(c, "id", &id) != NGX_OK
            || ngx_http_agent_json_get_str(c, "name", &name) != NGX_OK
            || ngx_http_agent_json_get_str(c, "arguments", &args) != NGX_OK
            || ngx_http_agent_llm_tool(llm, i, &id, &name, &args) != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    if (ngx_http_agent_json_get_str(v, "finish", &s) != NGX_OK) {
        return NGX_ERROR;
    }

    llm->seen_done = 1;

    return ngx_http_agent_llm_finish(llm, &s);
}


/* the answer read whole: kept for the request's TTL */

void
ngx_http_agent_llm_cache_put(ngx_http_agent_llm_t *llm)
{
    ngx_str_t                   value, *piece;
    ngx_uint_t                  i;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_llm_call_t  *c;

    j = ngx_http_agent_json_create(llm->pool);
    if (j == NULL) {
        return;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "text");
    ngx_http_agent_json_arr(j);

    piece = llm->cache_text ? llm->cache_text->elts : NULL;

    for (i = 0; piece && i < llm->cache_text->nelts; i++) {
        ngx_http_agent_json_str(j, &piece[i]);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "calls");
    ngx_http_agent_json_arr(j);

    for (i = 0; i < llm->ncalls; i++) {
        c = &llm->calls[i];

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_bytes(j, c->id.data, c->id.len);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_bytes(j, c->name.data, c->name.len);
        ngx_http_agent_json_key(j, "arguments");
        ngx_http_agent_json_bytes(j, c->arguments.data, c->arguments.len);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "finish");
    ngx_http_agent_json_str(j, &llm->finish_reason);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &value) != NGX_OK) {
        return;
    }

    if (ngx_http_agent_llm_cache_puts.pool == NULL) {
        ngx_http_agent_store_call_init(&ngx_http_agent_llm_cache_puts,
                                       ngx_cycle->pool, ngx_cycle->log,
                                       NULL, NULL);
    }

    ngx_http_agent_store_call_reset(&ngx_http_agent_llm_cache_puts);

    if (ngx_http_agent_store_cache_put(&ngx_http_agent_llm_cache_puts,
                                       &llm->cache_key, &value,
                                       llm->req->cache)
        == NGX_OK
        && llm->similar)
    {
        ngx_http_agent_llm_similar_put(llm, &ngx_http_agent_llm_cache_puts);
    }
}


/* the call stops: a lookup's answer dropped, a replay not made */

void
ngx_http_agent_llm_cache_cancel(ngx_http_agent_llm_t *llm)
{
    if (llm->cache_sc) {
        ngx_http_agent_store_cancel(llm->cache_sc);
        llm->cache_sc = NULL;
        ngx_http_agent_llm_cache_forget(llm);
    }

    if (ngx_http_agent_llm_similar_cancel(llm) == NGX_OK) {
        ngx_http_agent_llm_cache_forget(llm);
    }

    if (llm->replay.posted) {
        ngx_delete_posted_event(&llm->replay);
    }
}


/* after an exact miss: NGX_OK, a hit or to come; NGX_DECLINED, send it */

static ngx_int_t
ngx_http_agent_llm_similar_look(ngx_http_agent_llm_t *llm,
    ngx_http_agent_store_wake_pt wake)
{
    ngx_pool_t                    *pool;
    ngx_http_agent_llm_similar_t  *s;

    pool = llm->req->keep;

    s = ngx_pcalloc(pool, sizeof(ngx_http_agent_llm_similar_t));
    if (s == NULL
        || ngx_http_agent_llm_similar_text(llm, &s->text) != NGX_OK
        || ngx_http_agent_llm_similar_ns(llm, pool, &s->ns) != NGX_OK)
    {
        return ngx_http_agent_llm_fail(llm, "out of memory");
    }

    if (s->text.len == 0 || llm->req->owner == NULL) {
        /* no question to find a near one of */
        return NGX_DECLINED;
    }

    ngx_http_agent_store_call_init(&s->sc, pool, llm->log,
                                   ngx_http_agent_llm_similar_wake, llm);
    s->wake = wake;
    llm->similar = s;

    return ngx_http_agent_llm_similar_pass(llm);
}


/* the pass, made again as the embeddings model or the store answers */

static ngx_int_t
ngx_http_agent_llm_similar_pass(ngx_http_agent_llm_t *llm)
{
    ngx_http_agent_llm_similar_t *s = llm->similar;

    ngx_int_t                     rc;
    ngx_str_t                     err, value;
    ngx_array_t                  *items;
    ngx_http_agent_item_t        *item;
    ngx_http_agent_llm_req_t     *req;
    ngx_http_agent_item_query_t   q;

    req = llm->req;
    s->sc.n = 0;

    if (s->vector.len == 0) {
        rc = req->embed ? req->embed(req->embed_data, &s->sc, &s->text,
                                     &s->vector, &err)
                        : NGX_DECLINED;

        if (rc == NGX_AGAIN) {
            return NGX_OK;
        }

        if (rc != NGX_OK || s->vector.len == 0) {
            /* the cache is a saving, never a failure: the model answers */
            if (rc == NGX_DECLINED) {
                ngx_str_set(&err, "no agent_embeddings at the location");
            }

            ngx_log_error(NGX_LOG_WARN, llm->log, 0, "agent: cache_similar: "
                          "the question could not be embedded (%V), the "
                          "model is called", &err);

            ngx_str_null(&s->vector);
            goto miss;
        }
    }

    items = ngx_array_create(s->sc.pool, 1, sizeof(ngx_http_agent_item_t));
    if (items == NULL) {
        return ngx_http_agent_llm_fail(llm, "out of memory");
    }

    ngx_memzero(&q, sizeof(ngx_http_agent_item_query_t));
    q.owner = *req->owner;
    q.prefix = s->ns;
    q.vector = s->vector;
    q.limit = 1;
    q.now = ngx_time();

    rc = ngx_http_agent_store_item_search(&s->sc, &q, items);

    if (rc == NGX_AGAIN) {
        return NGX_OK;
    }

    item = items->elts;

    if (rc == NGX_OK && items->nelts
        && item->score * 1000 >= (double) req->similar)
    {
        /* the near question's answer, if the exact cache still has it */
        rc = ngx_http_agent_store_cache_get(&s->sc, &item->key, &value);

        if (rc == NGX_AGAIN) {
            return NGX_OK;
        }

        if (rc == NGX_OK) {
            s->sc.data = NULL;
            llm->cache_similar = 1;
            ngx_http_agent_llm_cache_hit(llm, &value);

            ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_CACHE_HITS,
                                       &ngx_http_agent_llm_similar_kind,
                                       NULL, 1);
            return NGX_OK;
        }
    }

    if (rc != NGX_OK && rc != NGX_DECLINED) {
        ngx_log_error(NGX_LOG_WARN, llm->log, 0, "agent: cache_similar: the "
                      "store could not be read, the model is called");
    }

miss:

    s->sc.data = NULL;

    ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_CACHE_MISSES,
                               &ngx_http_agent_llm_similar_kind, NULL, 1);

    return NGX_DECLINED;
}


/*
 * the question: the text of the last message when it is the user's (a
 * round after tool results asks nothing new: its answer is not the
 * question's), cut where a character starts; an earlier conversation is
 * not compared (docs/memory.md)
 */

static ngx_int_t
ngx_http_agent_llm_similar_text(ngx_http_agent_llm_t *llm, ngx_str_t *text)
{
    size_t                 len;
    ngx_uint_t             n;
    ngx_http_agent_msg_t  *m;

    ngx_str_null(text);

    m = llm->req->messages->elts;
    n = llm->req->messages->nelts;

    if (n && m[n - 1].role.len == 4
        && ngx_strncmp(m[n - 1].role.data, "user", 4) == 0)
    {
        *text = m[n - 1].content;
    }

    len = text->len;

    if (len > NGX_HTTP_AGENT_LLM_SIMILAR_TEXT) {
        len = NGX_HTTP_AGENT_LLM_SIMILAR_TEXT;

        while (len && (text->data[len] & 0xc0) == 0x80) {
            len--;
        }
    }

    text->len = len;

    return NGX_OK;
}


/* "agent_cache.HASH": the graph and node, model, system prompt and tools */

static ngx_int_t
ngx_http_agent_llm_similar_ns(ngx_http_agent_llm_t *llm, ngx_pool_t *pool,
    ngx_str_t *ns)
{
    ngx_sha1_t                 sha1;
    ngx_http_agent_llm_req_t  *req;

    req = llm->req;

    ngx_sha1_init(&sha1);
    ngx_sha1_update(&sha1, "similar", sizeof("similar"));

    if (req->scope) {
        ngx_sha1_update(&sha1, req->scope->data, req->scope->len);
    }

    ngx_sha1_update(&sha1, "", 1);
    ngx_sha1_update(&sha1, llm->model->name.data, llm->model->name.len);
    ngx_sha1_update(&sha1, "", 1);
    ngx_sha1_update(&sha1, llm->cache_url.data, llm->cache_url.len);
    ngx_sha1_update(&sha1, "", 1);

    if (req->system) {
        ngx_sha1_update(&sha1, req->system->data, req->system->len);
    }

    ngx_sha1_update(&sha1, req->tools_off ? "\1" : "", 1);

    if (req->tools) {
        ngx_sha1_update(&sha1, req->tools->data, req->tools->len);
    }

    return ngx_http_agent_digest_key(pool, "agent_cache.", &sha1, ns);
}


/*
 * the answer put in the exact cache: its question kept beside it, by the
 * exact key, with its vector, for the TTL ({"question"}: the owner's API
 * shows what it is)
 */

static void
ngx_http_agent_llm_similar_put(ngx_http_agent_llm_t *llm,
    ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_llm_similar_t *s = llm->similar;

    u_char                 *p;
    ngx_http_agent_json_t  *j;
    ngx_http_agent_item_t   item;

    if (s->vector.len == 0) {
        return;
    }

    p = ngx_pnalloc(llm->pool, 32);
    j = ngx_http_agent_json_create(llm->pool);
    if (p == NULL || j == NULL) {
        return;
    }

    ngx_memzero(&item, sizeof(ngx_http_agent_item_t));

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "question");
    ngx_http_agent_json_str(j, &s->text);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &item.value) != NGX_OK) {
        return;
    }

    item.owner = *llm->req->owner;
    item.ns = s->ns;
    item.key = llm->cache_key;
    item.vector = s->vector;
    item.expires = ngx_time() + (llm->req->cache + 999) / 1000;
    item.updated_at.data = p;
    item.updated_at.len = ngx_http_agent_store_now(p) - p;
    item.created_at = item.updated_at;

    ngx_http_agent_store_call_reset(sc);

    if (ngx_http_agent_store_item_put(sc, &item, ngx_time()) == NGX_ERROR) {
        ngx_log_error(NGX_LOG_INFO, llm->log, 0, "agent: cache_similar: the "
                      "answer could not be kept");
    }
}


static void
ngx_http_agent_llm_similar_wake(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_llm_similar_t *s = (ngx_http_agent_llm_similar_t *) sc;

    if (sc->data == NULL) {
        /* the call stopped while the model or the store answered */
        return;
    }

    s->wake(sc);
}


/* the call stops while it looks: NGX_OK, the lookup's answer dropped */

static ngx_int_t
ngx_http_agent_llm_similar_cancel(ngx_http_agent_llm_t *llm)
{
    ngx_http_agent_llm_similar_t *s = llm->similar;

    if (s == NULL || s->sc.data == NULL) {
        return NGX_DECLINED;
    }

    s->sc.data = NULL;
    ngx_http_agent_store_cancel(&s->sc);

    return NGX_OK;
}
