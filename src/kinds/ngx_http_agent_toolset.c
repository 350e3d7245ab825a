
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_kinds_int.h"
#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_mcp.h"
#include "ngx_http_agent_util.h"


/*
 * The tools bound to a step.  An llm node's tools= is the set its model is
 * offered; a tools node runs a call only when its name resolves in the set
 * of the llm nodes before it (node_tools_conf.c), so a model that names a
 * tool it was never offered runs nothing.
 *
 * The names a model sees are made here, once for offering and once for
 * resolving, by the same walk: registry tools by their names, then each
 * bound server's tools in its order.  A server's tool whose name is taken
 * already (by a registry tool or an earlier server) is offered as
 * SERVER__TOOL, and left out when that is taken or too long, so no name is
 * ever offered twice and a call goes to the server that was bound.
 */


typedef struct {
    ngx_str_t                        offered;
    ngx_http_agent_tool_t           *tool;     /* its definition */
    ngx_http_agent_toolset_entry_t  *entry;
} ngx_http_agent_toolset_item_t;


static ngx_int_t ngx_http_agent_toolset_add(ngx_conf_t *cf,
    ngx_http_agent_toolset_t *set, ngx_array_t *extra, ngx_array_t *mcps,
    ngx_str_t *list);
static ngx_int_t ngx_http_agent_toolset_push(ngx_conf_t *cf,
    ngx_http_agent_toolset_t *set, ngx_http_agent_tool_t *tool,
    ngx_http_agent_mcp_t *mcp, ngx_str_t *name);
static ngx_array_t *ngx_http_agent_toolset_list(ngx_pool_t *pool,
    ngx_log_t *log, ngx_http_agent_toolset_t *set);
static ngx_int_t ngx_http_agent_toolset_item(ngx_pool_t *pool, ngx_log_t *log,
    ngx_array_t *items, ngx_http_agent_tool_t *t,
    ngx_http_agent_toolset_entry_t *e);
static ngx_uint_t ngx_http_agent_toolset_taken(ngx_array_t *items,
    ngx_str_t *name, ngx_http_agent_tool_t *t);
static ngx_int_t ngx_http_agent_toolset_definition(ngx_pool_t *pool,
    ngx_http_agent_toolset_item_t *it, ngx_str_t *out);


/* tools=all|none|A,B,SERVER.*,SERVER.tool, added to set */

static ngx_int_t
ngx_http_agent_toolset_add(ngx_conf_t *cf, ngx_http_agent_toolset_t *set,
    ngx_array_t *extra, ngx_array_t *mcps, ngx_str_t *list)
{
    u_char                 *p, *q, *dot, *last;
    ngx_str_t               name, tool;
    ngx_uint_t              i;
    ngx_http_agent_mcp_t   *mcp;
    ngx_http_agent_tool_t  *t;

    if (list->len == 0
        || (list->len == 4 && ngx_strncmp(list->data, "none", 4) == 0))
    {
        return NGX_OK;
    }

    if (list->len == 3 && ngx_strncmp(list->data, "all", 3) == 0) {
        i = 0;

        while ((t = ngx_http_agent_tools_next(extra, &i))) {
            if (ngx_http_agent_toolset_push(cf, set, t, NULL, NULL)
                != NGX_OK)
            {
                return NGX_ERROR;
            }
        }

        return NGX_OK;
    }

    p = list->data;
    last = list->data + list->len;

    while (p < last) {
        q = ngx_strlchr(p, last, ',');
        if (q == NULL) {
            q = last;
        }

        name.data = p;
        name.len = q - p;
        p = q + 1;

        dot = ngx_strlchr(name.data, q, '.');

        if (dot == NULL) {
            t = ngx_http_agent_tools_find(extra, &name);

            if (t == NULL) {
                ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "tools=%V: there "
                                   "is no tool \"%V\" (an agent_tool is "
                                   "declared before the graphs that use it)",
                                   list, &name);
                return NGX_ERROR;
            }

            if (ngx_http_agent_toolset_push(cf, set, t, NULL, NULL)
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            continue;
        }

        /* SERVER.* or SERVER.tool: an agent_mcp's */

        tool.data = dot + 1;
        tool.len = q - dot - 1;
        name.len = dot - name.data;

        mcp = ngx_http_agent_mcp_find(mcps, &name);

        if (mcp == NULL) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "tools=%V: there is no "
                               "agent_mcp \"%V\" before this graph", list,
                               &name);
            return NGX_ERROR;
        }

        if (tool.len == 1 && tool.data[0] == '*') {
            tool.len = 0;

        } else if (!ngx_http_agent_id_valid(&tool)) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "tools=%V: \"%V\" is "
                               "not a tool name (1 to 64 of A-Z a-z 0-9 _ "
                               "-)", list, &tool);
            return NGX_ERROR;
        }

        if (ngx_http_agent_toolset_push(cf, set, NULL, mcp, &tool)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        /* the server keeps only the tools that some step binds */

        if (ngx_http_agent_mcp_keep(cf, mcp, &tool) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_toolset_push(ngx_conf_t *cf, ngx_http_agent_toolset_t *set,
    ngx_http_agent_tool_t *tool, ngx_http_agent_mcp_t *mcp, ngx_str_t *name)
{
    ngx_uint_t                       i;
    ngx_http_agent_toolset_entry_t  *e;

    if (set->entries == NULL) {
        set->entries = ngx_array_create(cf->pool, 4,
                                        sizeof(ngx_http_agent_toolset_entry_t));
        if (set->entries == NULL) {
            return NGX_ERROR;
        }
    }

    e = set->entries->elts;

    for (i = 0; i < set->entries->nelts; i++) {
        if (e[i].tool == tool && e[i].mcp == mcp
            && (mcp == NULL
                || (e[i].name.len == name->len
                    && ngx_strncmp(e[i].name.data, name->data, name->len)
                       == 0)))
        {
            return NGX_OK;
        }
    }

    e = ngx_array_push(set->entries);
    if (e == NULL) {
        return NGX_ERROR;
    }

    e->tool = tool;
    e->mcp = mcp;

    if (name) {
        e->name = *name;

    } else {
        ngx_str_null(&e->name);
    }

    return NGX_OK;
}


ngx_uint_t
ngx_http_agent_toolset_empty(ngx_http_agent_toolset_t *set)
{
    return set->entries == NULL || set->entries->nelts == 0;
}


/* whether the set binds a server: the first call waits for its list */

ngx_uint_t
ngx_http_agent_toolset_waits(ngx_http_agent_toolset_t *set)
{
    ngx_uint_t                       i;
    ngx_http_agent_toolset_entry_t  *e;

    if (set->entries == NULL) {
        return 0;
    }

    e = set->entries->elts;

    for (i = 0; i < set->entries->nelts; i++) {
        if (e[i].mcp) {
            return 1;
        }
    }

    return 0;
}


/* the definitions the model is sent, as a JSON array */

ngx_int_t
ngx_http_agent_toolset_json(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_toolset_t *set, ngx_str_t *out)
{
    u_char                         *p;
    size_t                          size;
    ngx_str_t                       def;
    ngx_uint_t                      i;
    ngx_array_t                    *items;
    ngx_http_agent_toolset_item_t  *it;

    items = ngx_http_agent_toolset_list(pool, log, set);
    if (items == NULL) {
        return NGX_ERROR;
    }

    it = items->elts;
    size = 2;

    for (i = 0; i < items->nelts; i++) {
        size += it[i].tool->definition.len + it[i].offered.len + 1;
    }

    p = ngx_pnalloc(pool, size);
    if (p == NULL) {
        return NGX_ERROR;
    }

    out->data = p;
    *p++ = '[';

    for (i = 0; i < items->nelts; i++) {
        if (ngx_http_agent_toolset_definition(pool, &it[i], &def) != NGX_OK) {
            return NGX_ERROR;
        }

        if (i) {
            *p++ = ',';
        }

        p = ngx_cpymem(p, def.data, def.len);
    }

    *p++ = ']';
    out->len = p - out->data;

    return NGX_OK;
}


/*
 * The client's own tools (Open Responses) after the step's: one whose
 * name the step's set holds is left out, so a name is offered once and
 * a call of it is the graph's
 */

ngx_int_t
ngx_http_agent_toolset_client(ngx_pool_t *pool, ngx_http_agent_toolset_t *set,
    ngx_array_t *client, ngx_str_t **tools)
{
    u_char                        *p;
    size_t                         size;
    ngx_str_t                     *out;
    ngx_uint_t                     i, n;
    ngx_keyval_t                  *kv;
    ngx_http_agent_toolset_hit_t   hit;

    kv = client->elts;
    n = (*tools && (*tools)->len > 2) ? (*tools)->len - 1 : 1;
    size = n + 1;

    for (i = 0; i < client->nelts; i++) {
        size += kv[i].value.len + 1;
    }

    out = ngx_palloc(pool, sizeof(ngx_str_t));
    p = ngx_pnalloc(pool, size);

    if (out == NULL || p == NULL) {
        return NGX_ERROR;
    }

    out->data = p;
    p = (n > 1) ? ngx_cpymem(p, (*tools)->data, n) : ngx_cpymem(p, "[", 1);

    for (i = 0; i < client->nelts; i++) {
        if (ngx_http_agent_toolset_find(pool, set, &kv[i].key, &hit)
            == NGX_OK)
        {
            continue;
        }

        if (p - out->data > 1) {
            *p++ = ',';
        }

        p = ngx_cpymem(p, kv[i].value.data, kv[i].value.len);
    }

    *p++ = ']';
    out->len = p - out->data;
    *tools = out;

    return NGX_OK;
}


/*
 * A name a model called, resolved as it was offered: NGX_DECLINED when
 * the set holds no such tool.  An MCP call points to the server's stable
 * tool, with the name the server knows, copied: a refresh may free the list
 */

ngx_int_t
ngx_http_agent_toolset_find(ngx_pool_t *pool, ngx_http_agent_toolset_t *set,
    ngx_str_t *name, ngx_http_agent_toolset_hit_t *hit)
{
    ngx_uint_t                      i;
    ngx_array_t                    *items;
    ngx_http_agent_toolset_item_t  *it;

    items = ngx_http_agent_toolset_list(pool, pool->log, set);
    if (items == NULL) {
        return NGX_ERROR;
    }

    it = items->elts;

    for (i = 0; i < items->nelts; i++) {
        if (it[i].offered.len != name->len
            || ngx_strncmp(it[i].offered.data, name->data, name->len) != 0)
        {
            continue;
        }

        hit->entry = it[i].entry;

        if (it[i].entry->mcp == NULL) {
            hit->tool = it[i].tool;
            hit->name = it[i].tool->name;
            return NGX_OK;
        }

        hit->tool = it[i].entry->mcp->tool;
        hit->name.len = it[i].tool->name.len;
        hit->name.data = ngx_pstrdup(pool, &it[i].tool->name);

        return hit->name.data ? NGX_OK : NGX_ERROR;
    }

    return NGX_DECLINED;
}


/* whether a tool resolved elsewhere is one of this set's too */

ngx_uint_t
ngx_http_agent_toolset_holds(ngx_http_agent_toolset_t *set,
    ngx_http_agent_toolset_hit_t *hit)
{
    ngx_uint_t                       i;
    ngx_http_agent_toolset_entry_t  *e;

    if (set->entries == NULL) {
        return 0;
    }

    e = set->entries->elts;

    for (i = 0; i < set->entries->nelts; i++) {
        if (hit->entry->mcp == NULL) {
            if (e[i].tool == hit->tool) {
                return 1;
            }

            continue;
        }

        if (e[i].mcp == hit->entry->mcp
            && (e[i].name.len == 0
                || (e[i].name.len == hit->name.len
                    && ngx_strncmp(e[i].name.data, hit->name.data,
                                   hit->name.len) == 0)))
        {
            return 1;
        }
    }

    return 0;
}


/* the walk: every tool the set offers, each under one name */

static ngx_array_t *
ngx_http_agent_toolset_list(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_agent_toolset_t *set)
{
    ngx_uint_t                       i, k;
    ngx_array_t                     *items;
    ngx_http_agent_tool_t           *t;
    ngx_http_agent_mcp_peer_t       *peer;
    ngx_http_agent_toolset_entry_t  *e;

    items = ngx_array_create(pool, 8, sizeof(ngx_http_agent_toolset_item_t));
    if (items == NULL || set->entries == NULL) {
        return items;
    }

    e = set->entries->elts;

    /* the registry's tools first: their names are the operator's */

    for (i = 0; i < set->entries->nelts; i++) {
        if (e[i].tool
            && ngx_http_agent_toolset_item(pool, log, items, e[i].tool, &e[i])
               != NGX_OK)
        {
            return NULL;
        }
    }

    for (i = 0; i < set->entries->nelts; i++) {
        if (e[i].mcp == NULL) {
            continue;
        }

        peer = e[i].mcp->peer;

        if (peer == NULL || peer->tools == NULL) {
            continue;
        }

        t = peer->tools->elts;

        for (k = 0; k < peer->tools->nelts; k++) {
            if (e[i].name.len
                && (e[i].name.len != t[k].name.len
                    || ngx_strncmp(e[i].name.data, t[k].name.data,
                                   t[k].name.len) != 0))
            {
                continue;
            }

            if (ngx_http_agent_toolset_item(pool, log, items, &t[k], &e[i])
                != NGX_OK)
            {
                return NULL;
            }
        }
    }

    return items;
}


static ngx_int_t
ngx_http_agent_toolset_item(ngx_pool_t *pool, ngx_log_t *log,
    ngx_array_t *items, ngx_http_agent_tool_t *t,
    ngx_http_agent_toolset_entry_t *e)
{
    u_char                         *p;
    ngx_str_t                       name;
    ngx_http_agent_toolset_item_t  *it;

    if (ngx_http_agent_toolset_taken(items, NULL, t)) {
        /* bound twice (SERVER.* and SERVER.tool): offered once */
        return NGX_OK;
    }

    name = t->name;

    if (ngx_http_agent_toolset_taken(items, &name, NULL)) {

        /* a name taken: the server's tool as SERVER__TOOL */

        name.len = e->mcp ? e->mcp->name.len + 2 + t->name.len : 0;

        if (name.len == 0 || name.len > NGX_HTTP_AGENT_TOOL_NAME_MAX) {
            goto left_out;
        }

        p = ngx_pnalloc(pool, name.len);
        if (p == NULL) {
            return NGX_ERROR;
        }

        name.data = p;
        ngx_sprintf(p, "%V__%V", &e->mcp->name, &t->name);

        if (!ngx_http_agent_id_valid(&name)
            || ngx_http_agent_toolset_taken(items, &name, NULL))
        {
            goto left_out;
        }
    }

    it = ngx_array_push(items);
    if (it == NULL) {
        return NGX_ERROR;
    }

    it->offered = name;
    it->tool = t;
    it->entry = e;

    return NGX_OK;

left_out:

    ngx_log_error(NGX_LOG_INFO, log, 0, "agent: the tool \"%V\" of the MCP "
                  "server \"%V\" is left out: its name is another tool's",
                  &t->name, &e->mcp->name);

    return NGX_OK;
}


static ngx_uint_t
ngx_http_agent_toolset_taken(ngx_array_t *items, ngx_str_t *name,
    ngx_http_agent_tool_t *t)
{
    ngx_uint_t                      i;
    ngx_http_agent_toolset_item_t  *it;

    it = items->elts;

    for (i = 0; i < items->nelts; i++) {
        if (t) {
            if (it[i].tool == t) {
                return 1;
            }

            continue;
        }

        if (it[i].offered.len == name->len
            && ngx_strncmp(it[i].offered.data, name->data, name->len) == 0)
        {
            return 1;
        }
    }

    return 0;
}


/*
 * A definition under the name offered.  Ours all begin the same way (the
 * registry's and mcp.c's generator write them), so a new name is the
 * definition with its name replaced
 */

static ngx_int_t
ngx_http_agent_toolset_definition(ngx_pool_t *pool,
    ngx_http_agent_toolset_item_t *it, ngx_str_t *out)
{
    u_char                *p;
    size_t                 skip;
    ngx_http_agent_tool_t  *t;

    static ngx_str_t  head =
        ngx_string("{\"type\":\"function\",\"function\":{\"name\":\"");

    t = it->tool;

    if (it->offered.data == t->name.data) {
        *out = t->definition;
        return NGX_OK;
    }

    skip = head.len + t->name.len;

    if (t->definition.len <= skip + 1
        || ngx_strncmp(t->definition.data, head.data, head.len) != 0
        || ngx_strncmp(t->definition.data + head.len, t->name.data,
                       t->name.len) != 0
        || t->definition.data[skip] != '"')
    {
        return NGX_ERROR;
    }

    p = ngx_pnalloc(pool, t->definition.len - t->name.len + it->offered.len);
    if (p == NULL) {
        return NGX_ERROR;
    }

    out->data = p;
    p = ngx_cpymem(p, head.data, head.len);
    p = ngx_cpymem(p, it->offered.data, it->offered.len);
    p = ngx_cpymem(p, t->definition.data + skip, t->definition.len - skip);
    out->len = p - out->data;

    return NGX_OK;
}


/*
 * tools=A,B of a node: each a tool that exists (agent_tool, agent_mcp or
 * built-in), bound into set; with prompts, the prompts of those read
 */

ngx_int_t
ngx_http_agent_toolset_bind(ngx_conf_t *cf, ngx_http_agent_toolset_t *set,
    ngx_str_t *list, ngx_uint_t prompts)
{
    ngx_http_agent_env_conf_t  ec;

    ngx_http_agent_env_conf(cf, &ec);

    if (ngx_http_agent_toolset_add(cf, set, ec.tools, ec.mcps, list)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return prompts ? ngx_http_agent_tools_prompts(cf, list, ec.prompts_dir,
                                                  ec.tool_prompts)
                   : NGX_OK;
}
