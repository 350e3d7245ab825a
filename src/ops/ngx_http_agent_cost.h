
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_COST_H_INCLUDED_
#define _NGX_HTTP_AGENT_COST_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"


/* dollars, a point and nine decimals: what cost_print may write */
#define NGX_HTTP_AGENT_COST_LEN  (NGX_INT64_LEN + 10)


/*
 * agent_model price=IN/OUT[/CACHED[/WRITE]]: US dollars a million tokens,
 * kept as micro-dollars a million tokens (picodollars a token)
 */
typedef struct {
    int64_t                    in;
    int64_t                    out;
    int64_t                    cached;      /* input read from a cache */
    int64_t                    write;       /* input written to one */
    ngx_uint_t                 set;
} ngx_http_agent_price_t;


char *ngx_http_agent_cost_price(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf);
int64_t ngx_http_agent_cost_of(ngx_http_agent_price_t *price, int64_t input,
    int64_t output, int64_t cached, int64_t write);
u_char *ngx_http_agent_cost_print(u_char *p, u_char *last, int64_t nano);


#endif /* _NGX_HTTP_AGENT_COST_H_INCLUDED_ */
