
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_mcp_int.h"


/*
 * MCP's Streamable HTTP transport on the curl bridge: a JSON-RPC request
 * POSTed with the session's headers (MCP-Protocol-Version, Mcp-Session-Id),
 * the server's configured headers and its key; the answer, JSON or an
 * event stream, read whole up to max_size and handed over parsed
 * (mcp_rpc.c), the session id of an initialize kept from its header.
 */


static ngx_int_t ngx_http_agent_mcp_data(void *data, u_char *p, size_t len);
static void ngx_http_agent_mcp_done(void *data, ngx_int_t rc, long status,
    ngx_str_t *err);


/*
 * One JSON-RPC request: {"jsonrpc", "id", "method", "params"}, with the
 * session's headers; its answer (JSON or an event stream) is read whole,
 * up to max_size, and handed to handler parsed.
 */

ngx_http_agent_mcp_call_t *
ngx_http_agent_mcp_send(ngx_http_agent_mcp_t *mcp, const char *method,
    ngx_str_t *params, ngx_log_t *log, ngx_http_agent_mcp_call_pt handler,
    void *data)
{
    char                       *key;
    u_char                     *p;
    ngx_str_t                   body, meta, *h, *src;
    ngx_uint_t                  i, initialize, modern;
    ngx_pool_t                 *pool;
    ngx_array_t                *headers;
    ngx_http_agent_mcp_call_t  *rpc;
    ngx_http_agent_mcp_peer_t  *peer;

    peer = mcp->peer;

    /* the stateless revision: asked for in server/discover, then kept */
    modern = peer->modern || ngx_strcmp(method, "server/discover") == 0;

    pool = ngx_create_pool(4096, log);
    if (pool == NULL) {
        return NULL;
    }

    rpc = ngx_pcalloc(pool, sizeof(ngx_http_agent_mcp_call_t));
    headers = ngx_array_create(pool, 8, sizeof(ngx_str_t));
    p = ngx_pnalloc(pool, 256 + ngx_strlen(method) + params->len);

    if (rpc == NULL || headers == NULL || p == NULL) {
        goto failed;
    }

    rpc->mcp = mcp;
    rpc->pool = pool;
    rpc->handler = handler;
    rpc->data = data;
    rpc->id = (ngx_strncmp(method, "notifications/", 14) == 0) ? 0
                                                                : ++peer->id;

    body.data = p;

    if (rpc->id) {
        p = ngx_sprintf(p, "{\"jsonrpc\":\"2.0\",\"id\":%L,\"method\":\"%s\"",
                        rpc->id, method);

    } else {
        p = ngx_sprintf(p, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\"", method);
    }

    if (modern) {
        /*
         * 2026-07-28: each request says who asks and in which version, in
         * params._meta (params are our generator's object: "{" opens it)
         */

        p = ngx_sprintf(p, ",\"params\":{\"_meta\":{"
                        "\"io.modelcontextprotocol/protocolVersion\":"
                        "\"%s\",\"io.modelcontextprotocol/clientInfo\":"
                        "{\"name\":\"ngx_http_agent_module\","
                        "\"version\":\"1\"},"
                        "\"io.modelcontextprotocol/clientCapabilities\":{}}",
                        NGX_HTTP_AGENT_MCP_MODERN);

        ngx_str_set(&meta, "{\"_meta\":{");

        if (params->len > meta.len
            && ngx_strncmp(params->data, meta.data, meta.len) == 0)
        {
            /* the call's own _meta (its idempotency key) joins ours */
            p[-1] = ',';
            p = ngx_cpymem(p, params->data + meta.len,
                           params->len - meta.len);

        } else if (params->len > 2) {
            *p++ = ',';
            p = ngx_cpymem(p, params->data + 1, params->len - 1);

        } else {
            *p++ = '}';
        }

    } else if (params->len) {
        p = ngx_sprintf(p, ",\"params\":%V", params);
    }

    *p++ = '}';
    body.len = p - body.data;

    /* the headers: ours, the session's, the configured ones, the key */

    h = ngx_array_push(headers);
    if (h == NULL) {
        goto failed;
    }

    ngx_str_set(h, "Accept: application/json, text/event-stream");
    h->len++;                             /* the literal's NUL */

    initialize = (ngx_strcmp(method, "initialize") == 0);

    if (modern) {
        h = ngx_array_push_n(headers, 2);
        if (h == NULL) {
            goto failed;
        }

        h[0].data = (u_char *) "MCP-Protocol-Version: "
                               NGX_HTTP_AGENT_MCP_MODERN;
        h[0].len = sizeof("MCP-Protocol-Version: "
                          NGX_HTTP_AGENT_MCP_MODERN);

        h[1].data = ngx_pnalloc(pool, ngx_strlen(method) + 16);
        if (h[1].data == NULL) {
            goto failed;
        }

        h[1].len = ngx_sprintf(h[1].data, "Mcp-Method: %s%Z", method)
                   - h[1].data;

    } else if (peer->version.len && !initialize) {
        h = ngx_array_push(headers);
        if (h == NULL) {
            goto failed;
        }

        h->data = ngx_pnalloc(pool, 64);
        if (h->data == NULL) {
            goto failed;
        }

        h->len = ngx_sprintf(h->data, "MCP-Protocol-Version: %V%Z",
                             &peer->version) - h->data;
    }

    if (peer->session.len && !initialize && !modern) {
        h = ngx_array_push(headers);
        if (h == NULL) {
            goto failed;
        }

        h->data = ngx_pnalloc(pool, peer->session.len + 32);
        if (h->data == NULL) {
            goto failed;
        }

        h->len = ngx_sprintf(h->data, "Mcp-Session-Id: %V%Z",
                             &peer->session) - h->data;
    }

    src = mcp->headers->elts;

    for (i = 0; i < mcp->headers->nelts; i++) {
        h = ngx_array_push(headers);
        if (h == NULL) {
            goto failed;
        }

        *h = src[i];
    }

    if (mcp->key_env.len) {
        key = getenv((char *) mcp->key_env.data);

        if (key && *key) {
            h = ngx_array_push(headers);
            if (h == NULL) {
                goto failed;
            }

            h->data = ngx_pnalloc(pool, ngx_strlen(key) + 32);
            if (h->data == NULL) {
                goto failed;
            }

            h->len = ngx_sprintf(h->data, "Authorization: Bearer %s%Z", key)
                     - h->data;
        }
    }

    rpc->curl = ngx_http_agent_curl_create(pool, log);
    if (rpc->curl == NULL) {
        goto failed;
    }

    rpc->body.data = ngx_pnalloc(pool, mcp->max);
    if (rpc->body.data == NULL) {
        goto failed;
    }

    rpc->curl->on_data = ngx_http_agent_mcp_data;
    rpc->curl->on_done = ngx_http_agent_mcp_done;
    rpc->curl->data = rpc;
    rpc->curl->want_header = "Mcp-Session-Id";

    if (ngx_http_agent_curl_post(rpc->curl, &mcp->url, headers, &body,
                                 ngx_min(mcp->timeout, 10000), mcp->timeout)
        != NGX_OK)
    {
        goto failed;
    }

    return rpc;

failed:

    ngx_destroy_pool(pool);
    return NULL;
}


/* the caller does not want the answer: the transfer stops */

void
ngx_http_agent_mcp_close(ngx_http_agent_mcp_call_t *rpc)
{
    ngx_http_agent_curl_cancel(rpc->curl);
    ngx_destroy_pool(rpc->pool);
}


static ngx_int_t
ngx_http_agent_mcp_data(void *data, u_char *p, size_t len)
{
    ngx_http_agent_mcp_call_t *rpc = data;

    if (len > rpc->mcp->max - rpc->body.len) {
        rpc->truncated = 1;
        return NGX_ERROR;
    }

    rpc->body.len = ngx_cpymem(rpc->body.data + rpc->body.len, p, len)
                    - rpc->body.data;

    return NGX_OK;
}


static void
ngx_http_agent_mcp_done(void *data, ngx_int_t rc, long status, ngx_str_t *err)
{
    ngx_http_agent_mcp_call_t *rpc = data;

    ngx_int_t                     found;
    ngx_http_agent_mcp_answer_t   a;

    ngx_memzero(&a, sizeof(ngx_http_agent_mcp_answer_t));

    if (rpc->truncated) {
        rc = NGX_ERROR;
        a.error.data = ngx_pnalloc(rpc->pool, 96);

        if (a.error.data) {
            a.error.len = ngx_sprintf(a.error.data, "the answer was larger "
                                      "than max_size (%uz bytes) and was "
                                      "cut off", rpc->mcp->max)
                          - a.error.data;

        } else {
            ngx_str_set(&a.error, "the answer was larger than max_size");
        }

    } else if (rc != NGX_OK) {
        if (err) {
            a.error = *err;
        }

    } else if (status >= 300) {
        rc = NGX_ERROR;
        ngx_str_set(&a.error, "an HTTP error status");

    } else if (rpc->id) {
        found = ngx_http_agent_mcp_rpc_answer(rpc->pool, &rpc->body, rpc->id,
                                              &a);
        if (found != NGX_OK) {
            rc = NGX_ERROR;

            if (a.error.len == 0) {
                ngx_str_set(&a.error, "no answer to the request came");
            }
        }

        if (a.list_changed && rpc->mcp->peer) {
            rpc->mcp->peer->stale = 1;
        }
    }

    rpc->handler(rpc, rc, status, &a);

    ngx_destroy_pool(rpc->pool);
}
