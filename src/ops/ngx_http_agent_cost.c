
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_ops.h"


/*
 * What model calls cost, in integers only: prices in micro-dollars a
 * million tokens (2.50 is 2500000), a call's cost and every sum of costs
 * in nanodollars.  A price has six decimals and a sum nine, so a call of
 * ten tokens at a few cents a million still counts, and a budget in
 * int64_t holds nine billion dollars.  Floats never count: a sum of
 * thousands of calls would drift.
 */


/*
 * price=IN/OUT[/CACHED[/WRITE]]: input tokens read from the provider's
 * cache (OpenAI's and Gemini's cached tokens, Anthropic's cache reads) at
 * CACHED, those written to it (Anthropic's cache writes) at WRITE; each
 * is priced as input when not given, the most it may cost
 */

char *
ngx_http_agent_cost_price(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    u_char                  *s, *last, *slash;
    int64_t                  n[4];
    ngx_uint_t               i;
    ngx_http_agent_price_t  *price;

    price = (ngx_http_agent_price_t *) ((u_char *) conf + p->offset);

    s = value->data;
    last = s + value->len;

    for (i = 0; i < 4 && s <= last; i++) {
        slash = ngx_strlchr(s, last, '/');
        if (slash == NULL) {
            slash = last;
        }

        n[i] = ngx_atofp(s, slash - s, 6);

        if (n[i] == NGX_ERROR) {
            return "IN/OUT[/CACHED[/WRITE]] in dollars a million tokens";
        }

        s = slash + 1;
    }

    if (i < 2 || s <= last) {
        return "IN/OUT[/CACHED[/WRITE]] in dollars a million tokens";
    }

    price->in = n[0];
    price->out = n[1];
    price->cached = (i > 2) ? n[2] : n[0];
    price->write = (i > 3) ? n[3] : n[0];
    price->set = 1;

    return NGX_CONF_OK;
}


/*
 * A call's cost in nanodollars, rounded up: input counts every input
 * token, the cached and written ones too, as the providers are read
 */

int64_t
ngx_http_agent_cost_of(ngx_http_agent_price_t *price, int64_t input,
    int64_t output, int64_t cached, int64_t write)
{
    int64_t  plain, pico;

    if (price == NULL || !price->set) {
        return 0;
    }

    plain = ngx_max(input - cached - write, 0);

    pico = plain * price->in + output * price->out
           + cached * price->cached + write * price->write;

    return (pico + 999) / 1000;
}


/* dollars: at least six decimals, nine when a nanodollar needs them */

u_char *
ngx_http_agent_cost_print(u_char *p, u_char *last, int64_t nano)
{
    int64_t  frac;

    nano = ngx_max(nano, 0);
    frac = nano % 1000000000;

    p = ngx_slprintf(p, last, "%L.%06L", nano / 1000000000, frac / 1000);

    for (frac %= 1000; frac && p < last; frac = frac % 100 * 10) {
        *p++ = (u_char) ('0' + frac / 100);
    }

    return p;
}
