
/*
 * Copyright (C) ngx_http_agent_module authors
 */


/*
 * What an MCP client sends to agent_mcp_server: any bytes are one
 * JSON-RPC request, a notification, or an error to answer with a
 * sentence; a request's params, read as tools/call's arguments for a
 * graph, give a message or an answer, or are refused with a sentence.
 */


#include "fuzz_common.h"
#include "ngx_http_agent_mcpserver.h"
#include "ngx_http_agent_util.h"


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ngx_int_t                              rc;
    ngx_str_t                              body, why;
    ngx_pool_t                            *pool;
    ngx_http_agent_graph_t                 graph;
    ngx_http_agent_channel_t              *ch;
    ngx_http_agent_jsonrpc_t               rpc;
    ngx_http_agent_mcpserver_call_t        call;
    ngx_http_agent_mcpserver_answer_in_t   answer;

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
    ngx_str_set(&ch[1].name, "input");
    ngx_str_set(&ch[2].name, "session_id");
    ngx_str_set(&ch[3].name, "topic");

    body.data = (u_char *) data;
    body.len = size;

    ngx_http_agent_jsonrpc_read(pool, &body, &rpc);

    if (rpc.code) {
        ngx_fuzz_check(rpc.error.len > 0);
        ngx_destroy_pool(pool);
        return 0;
    }

    if (rpc.response) {
        /* the client's answer to an elicitation of ours */
        ngx_fuzz_check(rpc.method.len == 0 && rpc.id.len > 0);
        ngx_fuzz_check(rpc.result == NULL || YAJL_IS_OBJECT(rpc.result));

        ngx_str_null(&why);

        rc = ngx_http_agent_mcpserver_rpc_answer(pool, &rpc, &answer, &why);

        ngx_fuzz_check(rc == NGX_OK || rc == NGX_DECLINED
                       || rc == NGX_ERROR);

        if (rc == NGX_DECLINED) {
            ngx_fuzz_check(why.len > 0);
        }

        if (rc == NGX_OK) {
            ngx_fuzz_check(answer.thread.len == 36
                           && answer.checkpoint.len > 0
                           && answer.graph.len > 0
                           && ngx_strlchr(answer.thread.data,
                                          answer.thread.data + 36, '/')
                              == NULL);
        }

        ngx_destroy_pool(pool);
        return 0;
    }

    ngx_fuzz_check(rpc.method.len > 0);
    ngx_fuzz_check(rpc.params == NULL || YAJL_IS_OBJECT(rpc.params));

    if (rpc.params) {
        ngx_str_null(&why);

        rc = ngx_http_agent_mcpserver_rpc_call(pool, rpc.params, &graph,
                                               &call, &why);

        ngx_fuzz_check(rc == NGX_OK || rc == NGX_DECLINED
                       || rc == NGX_ERROR);

        if (rc == NGX_DECLINED) {
            ngx_fuzz_check(why.len > 0);
        }

        if (rc == NGX_OK) {
            ngx_fuzz_check(call.message.len > 0
                           || (call.resume.len > 0
                               && call.thread_id.len > 0));
            ngx_fuzz_check(call.values == NULL
                           || (YAJL_IS_OBJECT(call.values)
                               && call.values->u.object.len > 0));

            /* none, or one of MCP's eight levels */
            ngx_fuzz_check(call.log <= 8);
        }
    }

    ngx_destroy_pool(pool);

    return 0;
}
