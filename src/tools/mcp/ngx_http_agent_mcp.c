
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_mcp_int.h"
#include "ngx_http_agent_util.h"


/*
 * MCP servers as tool sources: a client of the Streamable HTTP transport on
 * the curl bridge, never blocking.  Each worker keeps, per server, one
 * session: initialize (the protocol version negotiated, the Mcp-Session-Id
 * kept), notifications/initialized, then tools/list page by page; the
 * tools become tools of the registry with the server's inputSchema as the
 * model's parameters.  The list is kept until its TTL passes or the server
 * says it changed, then listed again while the old one serves; a session
 * the server forgot (404) is started again once.  Nodes wait for a server's
 * first list before their first model call (ngx_http_agent_mcp_ready), at
 * most the server's timeout=.  A start or a list that fails is logged and
 * the next start waits, 1 s after the first failure, doubling to 60 s: a
 * server that always fails costs a worker a few requests a minute, and
 * the turns meanwhile go on without its tools at once.
 * tools/call is mcp_tool.c, reached through the tool the directive made
 * for the server (mcp->tool): this file does not call it.
 */


#define NGX_HTTP_AGENT_MCP_IDLE      0
#define NGX_HTTP_AGENT_MCP_STARTING  1
#define NGX_HTTP_AGENT_MCP_READY     2

#define NGX_HTTP_AGENT_MCP_PAGES     64

#define NGX_HTTP_AGENT_MCP_BACKOFF      1000
#define NGX_HTTP_AGENT_MCP_BACKOFF_MAX  60000


static ngx_uint_t ngx_http_agent_mcp_resting(ngx_http_agent_mcp_peer_t *peer);
static void ngx_http_agent_mcp_waited(ngx_event_t *ev);
static void ngx_http_agent_mcp_start(ngx_http_agent_mcp_t *mcp,
    ngx_log_t *log);
static void ngx_http_agent_mcp_discovered(ngx_http_agent_mcp_call_t *rpc,
    ngx_int_t rc, long status, ngx_http_agent_mcp_answer_t *a);
static void ngx_http_agent_mcp_initialize(ngx_http_agent_mcp_t *mcp,
    ngx_log_t *log);
static void ngx_http_agent_mcp_initialized(ngx_http_agent_mcp_call_t *rpc,
    ngx_int_t rc, long status, ngx_http_agent_mcp_answer_t *a);
static void ngx_http_agent_mcp_notified(ngx_http_agent_mcp_call_t *rpc,
    ngx_int_t rc, long status, ngx_http_agent_mcp_answer_t *a);
static void ngx_http_agent_mcp_list(ngx_http_agent_mcp_t *mcp,
    ngx_str_t *cursor, ngx_log_t *log);
static void ngx_http_agent_mcp_listed(ngx_http_agent_mcp_call_t *rpc,
    ngx_int_t rc, long status, ngx_http_agent_mcp_answer_t *a);
static ngx_int_t ngx_http_agent_mcp_tool(ngx_http_agent_mcp_t *mcp,
    yajl_val t, ngx_log_t *log);
static ngx_uint_t ngx_http_agent_mcp_kept(ngx_array_t *a, ngx_str_t *name);
static void ngx_http_agent_mcp_failed(ngx_http_agent_mcp_t *mcp,
    ngx_log_t *log, const char *what, ngx_str_t *why);
static void ngx_http_agent_mcp_wake(ngx_http_agent_mcp_t *mcp, ngx_int_t rc);


/* the versions we speak, newest first: the first is what we ask for */
static ngx_str_t  ngx_http_agent_mcp_versions[] = {
    ngx_string("2025-11-25"),
    ngx_string("2025-06-18"),
    ngx_string("2025-03-26"),
    ngx_null_string
};


/*
 * NGX_OK: the server's tools are known (a stale list serves while it is
 * listed again); NGX_AGAIN: w's handler is called when they are, or with
 * rc NGX_ERROR when the server could not be reached or gave no list within
 * its timeout=; NGX_DECLINED: it failed a moment ago and backs off
 */

ngx_int_t
ngx_http_agent_mcp_ready(ngx_http_agent_mcp_t *mcp,
    ngx_http_agent_mcp_waiter_t *w, ngx_log_t *log)
{
    ngx_http_agent_mcp_peer_t  *peer;

    if (mcp->peer == NULL) {
        mcp->peer = ngx_calloc(sizeof(ngx_http_agent_mcp_peer_t), log);
        if (mcp->peer == NULL) {
            return NGX_ERROR;
        }

        ngx_queue_init(&mcp->peer->waiters);
    }

    peer = mcp->peer;

    if (peer->state == NGX_HTTP_AGENT_MCP_READY) {
        if ((peer->stale
             || ngx_current_msec - peer->listed
                > (peer->ttl ? peer->ttl : mcp->ttl))
            && peer->pages == 0
            && !ngx_http_agent_mcp_resting(peer))
        {
            peer->stale = 0;
            peer->pages = 1;
            ngx_http_agent_mcp_list(mcp, NULL, log);
        }

        return NGX_OK;
    }

    if (peer->state == NGX_HTTP_AGENT_MCP_IDLE) {
        if (ngx_http_agent_mcp_resting(peer)) {
            /* it failed a moment ago: left out, as a server that is down */
            ngx_log_debug1(NGX_LOG_DEBUG_HTTP, log, 0, "agent: MCP server "
                           "\"%V\" backs off, its tools left out",
                           &mcp->name);
            return NGX_DECLINED;
        }

        ngx_http_agent_mcp_start(mcp, log);

        if (peer->state == NGX_HTTP_AGENT_MCP_IDLE) {
            /* it could not even be asked */
            return NGX_ERROR;
        }
    }

    ngx_queue_insert_tail(&peer->waiters, &w->queue);
    w->waiting = 1;
    w->name = &mcp->name;

    /* a server slow to list holds a turn no longer than its timeout= */

    ngx_memzero(&w->timer, sizeof(ngx_event_t));
    w->timer.handler = ngx_http_agent_mcp_waited;
    w->timer.data = w;
    w->timer.log = log;
    ngx_add_timer(&w->timer, mcp->timeout);

    return NGX_AGAIN;
}


void
ngx_http_agent_mcp_unwait(ngx_http_agent_mcp_waiter_t *w)
{
    if (w->waiting) {
        ngx_queue_remove(&w->queue);
        w->waiting = 0;
    }

    if (w->timer.timer_set) {
        ngx_del_timer(&w->timer);
    }
}


/* after a failure no new start until the back-off has passed */

static ngx_uint_t
ngx_http_agent_mcp_resting(ngx_http_agent_mcp_peer_t *peer)
{
    return peer->failures
           && (ngx_msec_int_t) (peer->retry - ngx_current_msec) > 0;
}


/* the list did not come within timeout=: the waiter goes on without it */

static void
ngx_http_agent_mcp_waited(ngx_event_t *ev)
{
    ngx_http_agent_mcp_waiter_t *w = ev->data;

    ngx_log_error(NGX_LOG_WARN, ev->log, 0, "agent: MCP server \"%V\" "
                  "gave no tools list within its timeout=, its tools left "
                  "out", w->name);

    if (w->waiting) {
        ngx_queue_remove(&w->queue);
        w->waiting = 0;
    }

    w->handler(w->data, NGX_ERROR);
}


/* the server forgot our session (404): the next call starts a new one */

void
ngx_http_agent_mcp_expired(ngx_http_agent_mcp_t *mcp)
{
    ngx_http_agent_mcp_peer_t  *peer;

    peer = mcp->peer;

    if (peer && peer->state == NGX_HTTP_AGENT_MCP_READY) {
        peer->state = NGX_HTTP_AGENT_MCP_IDLE;
    }
}


/*
 * The session and its lists belong to the worker, not to the request that
 * asked first: they log to the cycle's log, which outlives any request.
 */

static void
ngx_http_agent_mcp_start(ngx_http_agent_mcp_t *mcp, ngx_log_t *log)
{
    ngx_str_t                   params;
    ngx_http_agent_mcp_peer_t  *peer;

    log = ngx_cycle->log;
    peer = mcp->peer;
    peer->state = NGX_HTTP_AGENT_MCP_STARTING;

    if (peer->session.data) {
        ngx_free(peer->session.data);
    }

    ngx_str_null(&peer->session);
    ngx_str_null(&peer->version);

    /* the stateless revision first; a server of the earlier ones refuses
       the method (or the request), and the handshake follows */

    peer->modern = 0;
    ngx_str_set(&params, "{}");

    if (ngx_http_agent_mcp_send(mcp, "server/discover", &params, log,
                                ngx_http_agent_mcp_discovered, NULL)
        == NULL)
    {
        ngx_http_agent_mcp_failed(mcp, log, "server/discover", NULL);
    }
}


static void
ngx_http_agent_mcp_discovered(ngx_http_agent_mcp_call_t *rpc, ngx_int_t rc,
    long status, ngx_http_agent_mcp_answer_t *a)
{
    char                       *version;
    size_t                      i;
    yajl_val                    v;
    ngx_http_agent_mcp_peer_t  *peer;

    peer = rpc->mcp->peer;

    if (rc == NGX_OK && !a->rpc_error && a->result) {
        v = ngx_http_agent_json_get(a->result, "supportedVersions");

        for (i = 0; v && YAJL_IS_ARRAY(v) && i < v->u.array.len; i++) {
            version = YAJL_GET_STRING(v->u.array.values[i]);

            if (version
                && ngx_strcmp(version, NGX_HTTP_AGENT_MCP_MODERN) == 0)
            {
                peer->modern = 1;
                ngx_str_set(&peer->version, NGX_HTTP_AGENT_MCP_MODERN);
                peer->pages = 1;
                ngx_http_agent_mcp_list(rpc->mcp, NULL, ngx_cycle->log);
                return;
            }
        }
    }

    ngx_http_agent_mcp_initialize(rpc->mcp, ngx_cycle->log);
}


static void
ngx_http_agent_mcp_initialize(ngx_http_agent_mcp_t *mcp, ngx_log_t *log)
{
    u_char     *p;
    ngx_str_t   params;

    p = ngx_alloc(256, log);
    if (p == NULL) {
        ngx_http_agent_mcp_failed(mcp, log, "start", NULL);
        return;
    }

    params.data = p;
    params.len = ngx_sprintf(p, "{\"protocolVersion\":\"%V\","
                             "\"capabilities\":{},\"clientInfo\":{\"name\":"
                             "\"ngx_http_agent_module\",\"version\":\"1\"}}",
                             &ngx_http_agent_mcp_versions[0])
                 - p;

    if (ngx_http_agent_mcp_send(mcp, "initialize", &params, log,
                                ngx_http_agent_mcp_initialized, NULL)
        == NULL)
    {
        ngx_http_agent_mcp_failed(mcp, log, "initialize", NULL);
    }

    ngx_free(p);
}


static void
ngx_http_agent_mcp_initialized(ngx_http_agent_mcp_call_t *rpc, ngx_int_t rc,
    long status, ngx_http_agent_mcp_answer_t *a)
{
    ngx_str_t                   v, params;
    ngx_uint_t                  i;
    ngx_http_agent_mcp_t       *mcp;
    ngx_http_agent_mcp_peer_t  *peer;

    mcp = rpc->mcp;
    peer = mcp->peer;

    if (rc != NGX_OK || a->rpc_error || a->result == NULL) {
        ngx_http_agent_mcp_failed(mcp, rpc->curl->log, "initialize",
                                  a ? &a->error : NULL);
        return;
    }

    if (ngx_http_agent_json_get_str(a->result, "protocolVersion", &v)
        != NGX_OK)
    {
        ngx_str_set(&v, "");
    }

    for (i = 0; ngx_http_agent_mcp_versions[i].len; i++) {
        if (ngx_http_agent_mcp_versions[i].len == v.len
            && ngx_strncmp(ngx_http_agent_mcp_versions[i].data, v.data,
                           v.len) == 0)
        {
            break;
        }
    }

    if (ngx_http_agent_mcp_versions[i].len == 0) {
        ngx_str_set(&v, "it offers a protocol version we do not speak");
        ngx_http_agent_mcp_failed(mcp, rpc->curl->log, "initialize", &v);
        return;
    }

    peer->version = ngx_http_agent_mcp_versions[i];

    /* the session id, as the answer's header gave it (none: stateless) */

    if (rpc->curl->header_len) {
        peer->session.data = ngx_alloc(rpc->curl->header_len,
                                       rpc->curl->log);
        if (peer->session.data == NULL) {
            ngx_http_agent_mcp_failed(mcp, rpc->curl->log, "initialize",
                                      NULL);
            return;
        }

        ngx_memcpy(peer->session.data, rpc->curl->header,
                   rpc->curl->header_len);
        peer->session.len = rpc->curl->header_len;
    }

    ngx_str_null(&params);

    if (ngx_http_agent_mcp_send(mcp, "notifications/initialized", &params,
                                rpc->curl->log, ngx_http_agent_mcp_notified,
                                NULL)
        == NULL)
    {
        ngx_http_agent_mcp_failed(mcp, rpc->curl->log, "initialize", NULL);
    }
}


static void
ngx_http_agent_mcp_notified(ngx_http_agent_mcp_call_t *rpc, ngx_int_t rc,
    long status, ngx_http_agent_mcp_answer_t *a)
{
    if (rc != NGX_OK || status >= 400) {
        ngx_http_agent_mcp_failed(rpc->mcp, rpc->curl->log,
                                  "notifications/initialized", NULL);
        return;
    }

    rpc->mcp->peer->pages = 1;
    ngx_http_agent_mcp_list(rpc->mcp, NULL, rpc->curl->log);
}


/* tools/list, a page: the first creates the new list */

static void
ngx_http_agent_mcp_list(ngx_http_agent_mcp_t *mcp, ngx_str_t *cursor,
    ngx_log_t *log)
{
    ngx_str_t                   params;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_mcp_peer_t  *peer;

    log = ngx_cycle->log;
    peer = mcp->peer;
    ngx_str_set(&params, "{}");

    if (cursor) {
        if (peer->pool == NULL) {
            ngx_http_agent_mcp_failed(mcp, log, "tools/list", NULL);
            return;
        }

        j = ngx_http_agent_json_create(peer->pool);
        if (j == NULL) {
            ngx_http_agent_mcp_failed(mcp, log, "tools/list", NULL);
            return;
        }

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "cursor");
        ngx_http_agent_json_str(j, cursor);
        ngx_http_agent_json_end(j);

        if (ngx_http_agent_json_done(j, &params) != NGX_OK) {
            ngx_http_agent_mcp_failed(mcp, log, "tools/list", NULL);
            return;
        }
    }

    if (ngx_http_agent_mcp_send(mcp, "tools/list", &params, log,
                                ngx_http_agent_mcp_listed, NULL)
        == NULL)
    {
        ngx_http_agent_mcp_failed(mcp, log, "tools/list", NULL);
    }
}


static void
ngx_http_agent_mcp_listed(ngx_http_agent_mcp_call_t *rpc, ngx_int_t rc,
    long status, ngx_http_agent_mcp_answer_t *a)
{
    size_t                      i;
    yajl_val                    tools, ttl;
    ngx_str_t                   cursor, why;
    ngx_pool_t                 *pool;
    ngx_http_agent_mcp_t       *mcp;
    ngx_http_agent_mcp_peer_t  *peer;

    mcp = rpc->mcp;
    peer = mcp->peer;

    if (status == NGX_HTTP_NOT_FOUND && peer->session.len
        && !peer->restarted)
    {
        /*
         * the session expired: a new one, once for this list; a server
         * that answers a new session's list with 404 too fails below
         */

        ngx_log_error(NGX_LOG_INFO, rpc->curl->log, 0, "agent: MCP server "
                      "\"%V\": tools/list answered 404, the session is "
                      "started again", &mcp->name);

        ngx_http_agent_mcp_expired(mcp);
        peer->pages = 0;
        peer->restarted = 1;
        ngx_http_agent_mcp_start(mcp, rpc->curl->log);
        return;
    }

    if (status == NGX_HTTP_NOT_FOUND && peer->session.len) {
        ngx_str_set(&why, "it answered 404 to a new session too");
        ngx_http_agent_mcp_failed(mcp, rpc->curl->log, "tools/list", &why);
        return;
    }

    if (rc != NGX_OK || a->rpc_error || a->result == NULL) {
        ngx_http_agent_mcp_failed(mcp, rpc->curl->log, "tools/list",
                                  a ? &a->error : NULL);
        return;
    }

    if (peer->pages == 1) {

        /* a new list: the old one serves until this one is whole */

        pool = ngx_create_pool(4096, rpc->curl->log);
        if (pool == NULL) {
            ngx_http_agent_mcp_failed(mcp, rpc->curl->log, "tools/list",
                                      NULL);
            return;
        }

        peer->tools = NULL;

        if (peer->pool) {
            ngx_destroy_pool(peer->pool);
        }

        peer->pool = pool;
        peer->size = 0;
        peer->tools = ngx_array_create(pool, 8,
                                       sizeof(ngx_http_agent_tool_t));
        if (peer->tools == NULL) {
            ngx_http_agent_mcp_failed(mcp, rpc->curl->log, "tools/list",
                                      NULL);
            return;
        }
    }

    tools = ngx_http_agent_json_get(a->result, "tools");

    for (i = 0; tools && YAJL_IS_ARRAY(tools) && i < tools->u.array.len; i++)
    {
        if (ngx_http_agent_mcp_tool(mcp, tools->u.array.values[i],
                                    rpc->curl->log)
            != NGX_OK)
        {
            ngx_http_agent_mcp_failed(mcp, rpc->curl->log, "tools/list",
                                      NULL);
            return;
        }
    }

    if (ngx_http_agent_json_get_str(a->result, "nextCursor", &cursor)
        == NGX_OK
        && cursor.len
        && peer->pages++ < NGX_HTTP_AGENT_MCP_PAGES)
    {
        ngx_http_agent_mcp_list(mcp, &cursor, rpc->curl->log);
        return;
    }

    /* 2026-07-28: the server says how long its list may be kept */
    ttl = ngx_http_agent_json_get(a->result, "ttlMs");
    peer->ttl = (ttl && YAJL_IS_INTEGER(ttl) && YAJL_GET_INTEGER(ttl) > 0)
                ? (ngx_msec_t) ngx_min(YAJL_GET_INTEGER(ttl), 86400000) : 0;

    peer->pages = 0;
    peer->listed = ngx_current_msec;
    peer->state = NGX_HTTP_AGENT_MCP_READY;
    peer->failures = 0;
    peer->restarted = 0;

    ngx_log_error(NGX_LOG_INFO, rpc->curl->log, 0, "agent: MCP server "
                  "\"%V\": %ui tools, protocol %V%s", &mcp->name,
                  peer->tools->nelts, &peer->version,
                  peer->session.len ? "" : ", no session");

    ngx_http_agent_mcp_wake(mcp, NGX_OK);
}


/* a listed tool into the registry's shape, if the filter takes it */

static ngx_int_t
ngx_http_agent_mcp_tool(ngx_http_agent_mcp_t *mcp, yajl_val t,
    ngx_log_t *log)
{
    yajl_val                    schema, v;
    ngx_str_t                   name, descr;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_tool_t      *tool;
    ngx_http_agent_mcp_peer_t  *peer;

    peer = mcp->peer;

    if (!YAJL_IS_OBJECT(t)
        || ngx_http_agent_json_get_str(t, "name", &name) != NGX_OK)
    {
        return NGX_OK;
    }

    /* providers refuse other names: one would fail every model call */

    if (!ngx_http_agent_id_valid(&name)) {
        ngx_log_error(NGX_LOG_WARN, log, 0, "agent: MCP server \"%V\": a "
                      "tool name that is not 1 to 64 of A-Z a-z 0-9 _ - "
                      "is left out", &mcp->name);
        return NGX_OK;
    }

    if (mcp->filter.len && !ngx_http_agent_tools_allowed(&mcp->filter, &name))
    {
        return NGX_OK;
    }

    if (!mcp->keep_all
        && (mcp->keep == NULL
            || !ngx_http_agent_mcp_kept(mcp->keep, &name)))
    {
        /* no step binds it */
        return NGX_OK;
    }

    if (ngx_http_agent_mcp_kept(peer->tools, &name)) {
        ngx_log_error(NGX_LOG_WARN, log, 0, "agent: MCP server \"%V\": the "
                      "tool \"%V\" is listed twice, the first kept",
                      &mcp->name, &name);
        return NGX_OK;
    }

    if (peer->tools->nelts >= mcp->max_tools) {
        ngx_log_error(NGX_LOG_WARN, log, 0, "agent: MCP server \"%V\": more "
                      "than %ui tools (max_tools=), \"%V\" left out",
                      &mcp->name, mcp->max_tools, &name);
        return NGX_OK;
    }

    if (ngx_http_agent_json_get_str(t, "description", &descr) != NGX_OK) {
        ngx_str_set(&descr, "");
    }

    schema = ngx_http_agent_json_get(t, "inputSchema");

    tool = ngx_array_push(peer->tools);
    j = ngx_http_agent_json_create(peer->pool);
    if (tool == NULL || j == NULL) {
        return NGX_ERROR;
    }

    ngx_memzero(tool, sizeof(ngx_http_agent_tool_t));

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "function");
    ngx_http_agent_json_key(j, "function");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, &name);
    ngx_http_agent_json_key(j, "description");
    ngx_http_agent_json_str(j, &descr);
    ngx_http_agent_json_key(j, "parameters");

    if (schema && YAJL_IS_OBJECT(schema)) {
        ngx_http_agent_json_val(j, schema);

    } else {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "object");
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &tool->definition) != NGX_OK) {
        return NGX_ERROR;
    }

    if (peer->size + tool->definition.len > mcp->max) {
        ngx_log_error(NGX_LOG_WARN, log, 0, "agent: MCP server \"%V\": its "
                      "tools' definitions pass max_size=%uz, \"%V\" left "
                      "out", &mcp->name, mcp->max, &name);
        peer->tools->nelts--;
        return NGX_OK;
    }

    peer->size += tool->definition.len;

    tool->name.data = ngx_pstrdup(peer->pool, &name);
    if (tool->name.data == NULL) {
        return NGX_ERROR;
    }

    tool->name.len = name.len;
    /* run as the server's own tool is: the directive made it (mcp_conf.c) */
    tool->run = ((ngx_http_agent_tool_t *) mcp->tool)->run;
    tool->data = mcp;
    tool->peer = 1;

    /* run again after a take-over: its server says a call twice is once */
    v = ngx_http_agent_json_get(t, "annotations");
    tool->idempotent =
        (v && YAJL_IS_OBJECT(v)
         && (YAJL_IS_TRUE(ngx_http_agent_json_get(v, "idempotentHint"))
             || YAJL_IS_TRUE(ngx_http_agent_json_get(v, "readOnlyHint"))));

    return NGX_OK;
}


/* a name among the names, or the tools (each begins with its name) */

static ngx_uint_t
ngx_http_agent_mcp_kept(ngx_array_t *a, ngx_str_t *name)
{
    ngx_str_t   *s;
    ngx_uint_t   i;

    for (i = 0; i < a->nelts; i++) {
        s = (ngx_str_t *) ((u_char *) a->elts + i * a->size);

        if (s->len == name->len
            && ngx_strncmp(s->data, name->data, name->len) == 0)
        {
            return 1;
        }
    }

    return 0;
}


static void
ngx_http_agent_mcp_failed(ngx_http_agent_mcp_t *mcp, ngx_log_t *log,
    const char *what, ngx_str_t *why)
{
    ngx_str_t                  *text, none;
    ngx_msec_t                  backoff;
    ngx_pool_t                 *pool;
    ngx_http_agent_mcp_peer_t  *peer;

    peer = mcp->peer;
    text = why ? why : &peer->error;

    /* the server's words, for one line of the log (a pool of its own) */

    pool = ngx_create_pool(NGX_MIN_POOL_SIZE + text->len * 4, log);
    if (pool) {
        text = ngx_http_agent_json_log_str(pool, text);

    } else {
        ngx_str_null(&none);
        text = &none;
    }

    /* 1 s after the first failure, doubled after each, at most 60 s */

    backoff = NGX_HTTP_AGENT_MCP_BACKOFF << ngx_min(peer->failures, 6);
    backoff = ngx_min(backoff, NGX_HTTP_AGENT_MCP_BACKOFF_MAX);

    peer->failures++;
    peer->retry = ngx_current_msec + backoff;
    peer->restarted = 0;

    ngx_log_error(NGX_LOG_ERR, log, 0, "agent: MCP server \"%V\" at \"%V\": "
                  "%s failed%s%V, next try in %M ms (failure %ui)",
                  &mcp->name, &mcp->url, what, text->len ? ": " : "", text,
                  backoff, peer->failures);

    if (pool) {
        ngx_destroy_pool(pool);
    }

    peer->pages = 0;

    if (peer->state == NGX_HTTP_AGENT_MCP_READY && peer->tools) {
        /* a refresh failed: the list we have serves on */
        return;
    }

    peer->state = NGX_HTTP_AGENT_MCP_IDLE;
    ngx_http_agent_mcp_wake(mcp, NGX_ERROR);
}


static void
ngx_http_agent_mcp_wake(ngx_http_agent_mcp_t *mcp, ngx_int_t rc)
{
    ngx_queue_t                  *q;
    ngx_http_agent_mcp_waiter_t  *w;

    while (!ngx_queue_empty(&mcp->peer->waiters)) {
        q = ngx_queue_head(&mcp->peer->waiters);
        w = ngx_queue_data(q, ngx_http_agent_mcp_waiter_t, queue);

        ngx_queue_remove(q);
        w->waiting = 0;

        if (w->timer.timer_set) {
            ngx_del_timer(&w->timer);
        }

        w->handler(w->data, rc);
    }
}
