
/*
 * Copyright (C) ngx_http_agent_module authors
 */


/*
 * The conditions of edges (if=EXPR): the input's first line is an
 * expression, the rest values for its channels (plan, n, tags, note, one
 * per line, as JSON).  Any expression parses or is refused with a message;
 * one that parses tests as true, false or an error, and never crashes.
 */


#include "fuzz_common.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_util.h"


static const char  *ngx_fuzz_channels[] = { "plan", "n", "tags", "note" };


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    u_char                    *p, *last, *nl, err[256];
    yajl_val                   v;
    ngx_int_t                  rc;
    ngx_str_t                  text, line;
    ngx_uint_t                 i;
    ngx_pool_t                *pool;
    ngx_http_agent_run_t      *run;
    ngx_http_agent_graph_t     graph;
    ngx_http_agent_channel_t  *ch;

    pool = ngx_create_pool(4096, &ngx_fuzz_log);

    ngx_memzero(&graph, sizeof(ngx_http_agent_graph_t));
    ngx_str_set(&graph.name, "fuzz");

    if (ngx_array_init(&graph.channels, pool, 8,
                       sizeof(ngx_http_agent_channel_t))
        != NGX_OK
        || ngx_array_init(&graph.nodes, pool, 1,
                          sizeof(ngx_http_agent_node_t))
           != NGX_OK)
    {
        ngx_destroy_pool(pool);
        return 0;
    }

    ch = ngx_array_push_n(&graph.channels, 7);
    ngx_memzero(ch, 7 * sizeof(ngx_http_agent_channel_t));
    ngx_str_set(&ch[0].name, "messages");
    ch[0].reducer = NGX_HTTP_AGENT_REDUCE_MESSAGES;
    ngx_str_set(&ch[1].name, "input");
    ch[1].reducer = NGX_HTTP_AGENT_REDUCE_VALUE;
    ngx_str_set(&ch[2].name, "session_id");
    ch[2].reducer = NGX_HTTP_AGENT_REDUCE_VALUE;

    for (i = 0; i < 4; i++) {
        ch[3 + i].name.data = (u_char *) ngx_fuzz_channels[i];
        ch[3 + i].name.len = ngx_strlen(ngx_fuzz_channels[i]);
        ch[3 + i].reducer = (i == 1) ? NGX_HTTP_AGENT_REDUCE_SUM
                                     : NGX_HTTP_AGENT_REDUCE_VALUE;
    }

    p = (u_char *) data;
    last = p + size;

    nl = ngx_strlchr(p, last, '\n');
    text.data = p;
    text.len = (nl ? nl : last) - p;

    err[0] = '\0';

    {
        ngx_http_agent_expr_t  *e;

        e = ngx_http_agent_expr_parse(pool, &graph, &text, err, sizeof(err));

        if (e == NULL) {
            ngx_fuzz_check(err[0] != '\0');
            ngx_destroy_pool(pool);
            return 0;
        }

        run = ngx_http_agent_graph_run_create(pool, &ngx_fuzz_log, &graph);
        ngx_fuzz_check(run != NULL);

        /* the channels' values: one JSON text a line, as stored */

        p = nl ? nl + 1 : last;

        for (i = 0; i < 4 && p < last; i++) {
            nl = ngx_strlchr(p, last, '\n');
            line.data = p;
            line.len = (nl ? nl : last) - p;
            p = nl ? nl + 1 : last;

            v = ngx_http_agent_json_parse(pool, line.data, line.len, NULL);
            if (v == NULL) {
                continue;
            }

            if (i == 1) {
                run->state[3 + i].number = YAJL_IS_DOUBLE(v)
                                           ? YAJL_GET_DOUBLE(v) : 0;
                continue;
            }

            (void) ngx_http_agent_json_encode(pool, v,
                                              &run->state[3 + i].json);
        }

        rc = ngx_http_agent_expr_test(run, e);
        ngx_fuzz_check(rc == NGX_OK || rc == NGX_DECLINED
                       || rc == NGX_ERROR);
    }

    ngx_destroy_pool(pool);

    return 0;
}
