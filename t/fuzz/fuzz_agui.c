
/*
 * Copyright (C) ngx_http_agent_module authors
 */


/*
 * AG-UI's RunAgentInput (agent_agui): any bytes that parse as JSON are
 * read into a run's input or refused with a sentence; an input read has
 * its ids, a user message with text or an answer, and state only of the
 * graph's value and merge channels.
 */


#include "fuzz_common.h"
#include "ngx_http_agent_agui.h"
#include "ngx_http_agent_util.h"


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t                        i;
    yajl_val                      v;
    ngx_int_t                     rc;
    ngx_str_t                     why, key;
    ngx_pool_t                   *pool;
    ngx_http_agent_graph_t        graph;
    ngx_http_agent_channel_t     *ch;
    ngx_http_agent_agui_input_t   in;

    pool = ngx_create_pool(4096, &ngx_fuzz_log);

    ngx_memzero(&graph, sizeof(ngx_http_agent_graph_t));
    ngx_str_set(&graph.name, "fuzz");

    if (ngx_array_init(&graph.channels, pool, 4,
                       sizeof(ngx_http_agent_channel_t))
        != NGX_OK)
    {
        ngx_destroy_pool(pool);
        return 0;
    }

    ch = ngx_array_push_n(&graph.channels, 4);
    ngx_memzero(ch, 4 * sizeof(ngx_http_agent_channel_t));
    ngx_str_set(&ch[0].name, "messages");
    ch[0].reducer = NGX_HTTP_AGENT_REDUCE_MESSAGES;
    ngx_str_set(&ch[1].name, "topic");
    ch[1].reducer = NGX_HTTP_AGENT_REDUCE_VALUE;
    ngx_str_set(&ch[2].name, "count");
    ch[2].reducer = NGX_HTTP_AGENT_REDUCE_SUM;
    ngx_str_set(&ch[3].name, "notes");
    ch[3].reducer = NGX_HTTP_AGENT_REDUCE_MERGE;

    v = ngx_http_agent_json_parse(pool, (u_char *) data, size, NULL);

    if (v == NULL) {
        ngx_destroy_pool(pool);
        return 0;
    }

    ngx_str_null(&why);

    rc = ngx_http_agent_agui_input(pool, v, &graph, &in, &why);

    ngx_fuzz_check(rc == NGX_OK || rc == NGX_DECLINED || rc == NGX_ERROR);

    if (rc == NGX_DECLINED) {
        ngx_fuzz_check(why.len > 0);
    }

    if (rc == NGX_OK) {
        ngx_fuzz_check(in.thread_id.len > 0 && in.run_id.len > 0);
        ngx_fuzz_check(in.msg != NULL || in.resume.len > 0);
        ngx_fuzz_check(in.msg == NULL || in.msg->content.len > 0);

        for (i = 0; in.values && i < in.values->u.object.len; i++) {
            key.data = (u_char *) in.values->u.object.keys[i];
            key.len = ngx_strlen(key.data);

            ngx_fuzz_check((key.len == 5
                            && ngx_strncmp(key.data, "topic", 5) == 0)
                           || (key.len == 5
                               && ngx_strncmp(key.data, "notes", 5) == 0));
        }
    }

    ngx_destroy_pool(pool);

    return 0;
}
