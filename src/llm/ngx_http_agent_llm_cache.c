
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>
#include <ngx_sha1.h>

#include "ngx_http_agent_llm_int.h"
#include "ngx_http_agent_store.h"
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
 * question's answer next where the node asks (llm_similar.c).
 */


static void ngx_http_agent_llm_cache_forget(ngx_http_agent_llm_t *llm);
static void ngx_http_agent_llm_cache_replay(ngx_event_t *ev);
static ngx_int_t ngx_http_agent_llm_cache_answer(ngx_http_agent_llm_t *llm,
    yajl_val v);


static ngx_str_t  ngx_http_agent_llm_cache_kind = ngx_string("exact");

/* the worker's puts: they want no answer, and outlive their request */
static ngx_http_agent_store_call_t  ngx_http_agent_llm_cache_puts;


/* NGX_OK: answered from the cache, or to be; NGX_DECLINED: send it */

ngx_int_t
ngx_http_agent_llm_cache_look(ngx_http_agent_llm_t *llm,
    ngx_http_agent_store_wake_pt wake)
{
    u_char                       *p, hash[20];
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
    ngx_sha1_final(hash, &sha1);

    p = ngx_pnalloc(llm->pool, sizeof("exact:") - 1 + 40);
    sc = ngx_palloc(llm->pool, sizeof(ngx_http_agent_store_call_t));

    if (p == NULL || sc == NULL) {
        return ngx_http_agent_llm_fail(llm, "out of memory");
    }

    llm->cache_key.data = p;
    p = ngx_cpymem(p, "exact:", sizeof("exact:") - 1);
    llm->cache_key.len = ngx_hex_dump(p, hash, 20) - llm->cache_key.data;

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

void
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
