
/*
 * Copyright (C) ngx_http_agent_module authors
 */


/*
 * The providers' stream parser: the input fed whole and fed in pieces
 * (cut where the input's own bytes say) gives the same content, tool
 * calls, finish reason, usage and failure, for each provider's events
 * (the first byte picks the provider).
 */


#include "fuzz_common.h"
#include "ngx_http_agent_llm.h"


extern ngx_http_agent_provider_t  ngx_http_agent_provider_openai;
extern ngx_http_agent_provider_t  ngx_http_agent_provider_anthropic;
extern ngx_http_agent_provider_t  ngx_http_agent_provider_gemini;

static ngx_http_agent_provider_t  *ngx_fuzz_providers[] = {
    &ngx_http_agent_provider_openai,
    &ngx_http_agent_provider_anthropic,
    &ngx_http_agent_provider_gemini
};


/* the store's kept rows are not linked in: no text is the store's */

u_char *
ngx_http_agent_store_history_text(u_char *p, size_t len)
{
    return NULL;
}


typedef struct {
    u_char     text[65536];
    size_t     len;
} ngx_fuzz_text_t;


static ngx_int_t
ngx_fuzz_chunk(void *data, ngx_str_t *s)
{
    ngx_fuzz_text_t *t = data;

    size_t  n;

    n = ngx_min(s->len, sizeof(t->text) - t->len);
    memcpy(t->text + t->len, s->data, n);
    t->len += n;

    return NGX_OK;
}


static ngx_http_agent_llm_t *
ngx_fuzz_feed(ngx_pool_t *pool, ngx_http_agent_provider_t *provider,
    const uint8_t *data, size_t size, const uint8_t *cuts, size_t ncuts,
    ngx_fuzz_text_t *t)
{
    size_t                 off, n, i;
    ngx_http_agent_llm_t  *llm;

    /* the parser alone: the call and its timers are not linked in */
    llm = ngx_pcalloc(pool, sizeof(ngx_http_agent_llm_t));
    ngx_fuzz_check(llm != NULL);

    llm->pool = pool;
    llm->log = &ngx_fuzz_log;
    ngx_http_agent_llm_reset(llm);
    llm->provider = provider;
    llm->status = 200;
    llm->on_chunk = ngx_fuzz_chunk;
    llm->data = t;

    off = 0;
    i = 0;

    while (off < size) {
        n = ncuts ? (size_t) cuts[i++ % ncuts] % 17 + 1 : size - off;
        n = ngx_min(n, size - off);

        if (ngx_http_agent_llm_parse(llm, (u_char *) data + off, n)
            != NGX_OK)
        {
            break;
        }

        off += n;
    }

    return llm;
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t                      i, ncuts;
    ngx_pool_t                 *pool;
    ngx_http_agent_provider_t  *provider;
    const uint8_t         *cuts;
    ngx_fuzz_text_t       *t1, *t2;
    ngx_http_agent_llm_t  *a, *b;

    if (size == 0) {
        return 0;
    }

    provider = ngx_fuzz_providers[data[0] % 3];
    data++;
    size--;

    /* the next bytes up to a NUL say where to cut, the rest is fed */
    cuts = data;
    for (ncuts = 0; ncuts < size && ncuts < 64 && data[ncuts]; ncuts++) {
        /* void */
    }

    if (ncuts < size) {
        data += ncuts + 1;
        size -= ncuts + 1;

    } else {
        ncuts = 0;
    }

    pool = ngx_create_pool(4096, &ngx_fuzz_log);
    t1 = calloc(1, sizeof(ngx_fuzz_text_t));
    t2 = calloc(1, sizeof(ngx_fuzz_text_t));

    a = ngx_fuzz_feed(pool, provider, data, size, NULL, 0, t1);
    b = ngx_fuzz_feed(pool, provider, data, size, cuts, ncuts, t2);

    ngx_fuzz_check(a->failed == b->failed);

    if (!a->failed) {
        ngx_fuzz_check(t1->len == t2->len
                       && memcmp(t1->text, t2->text, t1->len) == 0);
        ngx_fuzz_check(a->ncalls == b->ncalls);
        ngx_fuzz_check(a->seen_done == b->seen_done);
        ngx_fuzz_check(a->prompt_tokens == b->prompt_tokens
                       && a->completion_tokens == b->completion_tokens
                       && a->cached_tokens == b->cached_tokens);
        ngx_fuzz_check(a->finish_reason.len == b->finish_reason.len);

        for (i = 0; i < a->ncalls; i++) {
            ngx_fuzz_check(a->calls[i].arguments.len
                           == b->calls[i].arguments.len
                           && (a->calls[i].arguments.len == 0
                               || memcmp(a->calls[i].arguments.data,
                                         b->calls[i].arguments.data,
                                         a->calls[i].arguments.len) == 0));
            ngx_fuzz_check(a->calls[i].name.len == b->calls[i].name.len);
        }
    }

    free(t1);
    free(t2);

    ngx_destroy_pool(pool);

    return 0;
}
