
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"


/*
 * GET /assistants/{id}/subgraphs[?recurse=true]: the graphs its subgraph
 * nodes run, by node name ("a|b" for b inside a's graph, with recurse),
 * each with its schemas: LangGraph's Python server's names (state_schema,
 * ...) and its JS server's (state, ...), which the two SDKs read.
 *
 * GET /assistants/{id}/schemas: JSON Schema (draft-07) of an assistant's
 * graph, from its channels (their reducers, type= and enum=): the state
 * and its input are the channels, its output those of its output
 * statement; the context is the channels an assistant's context may
 * write (all but messages); the config is the model a run or an
 * assistant may name and the channels declared config=on.  Messages are
 * said as LangGraph JS says them, which its clients know.
 */


#define NGX_HTTP_AGENT_LG_MESSAGE                                             \
    "BaseMessage<MessageStructure<MessageToolSet>,MessageType>"

#define NGX_HTTP_AGENT_LG_SCHEMA_STATE    0
#define NGX_HTTP_AGENT_LG_SCHEMA_OUTPUT   1
#define NGX_HTTP_AGENT_LG_SCHEMA_CONTEXT  2
#define NGX_HTTP_AGENT_LG_SCHEMA_CONFIG   3


static void ngx_http_agent_lg_schema(ngx_http_agent_json_t *j,
    ngx_http_agent_graph_t *g, ngx_uint_t which);
static void ngx_http_agent_lg_schema_channel(ngx_http_agent_json_t *j,
    ngx_http_agent_channel_t *ch);
static void ngx_http_agent_lg_schema_graph(ngx_http_agent_json_t *j,
    ngx_http_agent_graph_t *g, ngx_uint_t both);
static void ngx_http_agent_lg_subgraphs(ngx_http_agent_json_t *j,
    ngx_pool_t *pool, ngx_http_agent_graph_t *g, ngx_str_t *ns,
    ngx_uint_t depth, ngx_uint_t recurse);


ngx_int_t
ngx_http_agent_lg_assistant_schemas(ngx_http_request_t *r, ngx_str_t *id,
    ngx_uint_t subgraphs)
{
    ngx_int_t                        rc;
    ngx_str_t                        arg, none;
    ngx_uint_t                       recurse;
    ngx_http_agent_json_t           *j;
    ngx_http_agent_graph_t          *g;
    ngx_http_agent_assistant_row_t   row;

    rc = ngx_http_agent_lg_assistant_found(r, id, &g, &row);
    if (rc != NGX_OK) {
        return rc;
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (!subgraphs) {
        ngx_http_agent_lg_schema_graph(j, g, 0);
        return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
    }

    recurse = (ngx_http_arg(r, (u_char *) "recurse", 7, &arg) == NGX_OK
               && arg.len == 4 && ngx_strncmp(arg.data, "true", 4) == 0);

    ngx_str_null(&none);

    ngx_http_agent_json_obj(j);
    ngx_http_agent_lg_subgraphs(j, r->pool, g, &none, 0, recurse);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/* the subgraphs of g, their names under the namespace ns */

static void
ngx_http_agent_lg_subgraphs(ngx_http_agent_json_t *j, ngx_pool_t *pool,
    ngx_http_agent_graph_t *g, ngx_str_t *ns, ngx_uint_t depth,
    ngx_uint_t recurse)
{
    u_char                 *p;
    ngx_str_t               name;
    ngx_uint_t              i;
    ngx_http_agent_node_t  *node;

    node = g->nodes.elts;

    for (i = 0; i < g->nodes.nelts && depth < 8; i++) {
        if (node[i].subgraph == NULL) {
            continue;
        }

        p = ngx_pnalloc(pool, ns->len + 1 + node[i].name.len);
        if (p == NULL) {
            return;
        }

        name.data = p;

        if (ns->len) {
            p = ngx_cpymem(p, ns->data, ns->len);
            *p++ = '|';
        }

        name.len = ngx_cpymem(p, node[i].name.data, node[i].name.len)
                   - name.data;

        ngx_http_agent_json_str(j, &name);
        ngx_http_agent_lg_schema_graph(j, node[i].subgraph, 1);

        if (recurse) {
            ngx_http_agent_lg_subgraphs(j, pool, node[i].subgraph, &name,
                                        depth + 1, recurse);
        }
    }
}


/* a graph's schemas: LangGraph Python's names, and JS's too (both) */

static void
ngx_http_agent_lg_schema_graph(ngx_http_agent_json_t *j,
    ngx_http_agent_graph_t *g, ngx_uint_t both)
{
    ngx_uint_t  i, n;

    static struct {
        char        *key;
        ngx_uint_t   which;
    }  schemas[] = {
        { "input_schema", NGX_HTTP_AGENT_LG_SCHEMA_STATE },
        { "output_schema", NGX_HTTP_AGENT_LG_SCHEMA_OUTPUT },
        { "state_schema", NGX_HTTP_AGENT_LG_SCHEMA_STATE },
        { "context_schema", NGX_HTTP_AGENT_LG_SCHEMA_CONTEXT },
        { "config_schema", NGX_HTTP_AGENT_LG_SCHEMA_CONFIG },
        { "input", NGX_HTTP_AGENT_LG_SCHEMA_STATE },
        { "output", NGX_HTTP_AGENT_LG_SCHEMA_OUTPUT },
        { "state", NGX_HTTP_AGENT_LG_SCHEMA_STATE },
        { "config", NGX_HTTP_AGENT_LG_SCHEMA_CONFIG }
    };

    n = both ? sizeof(schemas) / sizeof(schemas[0]) : 5;

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "graph_id");
    ngx_http_agent_json_str(j, &g->name);

    for (i = 0; i < n; i++) {
        ngx_http_agent_json_cstr(j, schemas[i].key);
        ngx_http_agent_lg_schema(j, g, schemas[i].which);
    }

    ngx_http_agent_json_end(j);
}


/* the graph's channels as an object's properties */

static void
ngx_http_agent_lg_schema(ngx_http_agent_json_t *j, ngx_http_agent_graph_t *g,
    ngx_uint_t which)
{
    ngx_uint_t                 i, outputs, model, messages;
    ngx_http_agent_channel_t  *ch;

    ch = g->channels.elts;
    outputs = 0;
    model = 0;
    messages = 0;

    for (i = 0; i < g->channels.nelts; i++) {
        outputs |= ch[i].output;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "$schema");
    ngx_http_agent_json_cstr(j, "http://json-schema.org/draft-07/schema#");
    ngx_http_agent_json_key(j, "title");
    ngx_http_agent_json_str(j, &g->name);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "object");
    ngx_http_agent_json_key(j, "properties");
    ngx_http_agent_json_obj(j);

    for (i = 0; i < g->channels.nelts; i++) {

        switch (which) {

        case NGX_HTTP_AGENT_LG_SCHEMA_OUTPUT:
            if (outputs && !ch[i].output) {
                continue;
            }

            break;

        case NGX_HTTP_AGENT_LG_SCHEMA_CONTEXT:
            if (ch[i].reducer == NGX_HTTP_AGENT_REDUCE_MESSAGES) {
                continue;
            }

            break;

        case NGX_HTTP_AGENT_LG_SCHEMA_CONFIG:
            if (ch[i].config != 1) {
                continue;
            }

            if (ch[i].name.len == 5
                && ngx_strncmp(ch[i].name.data, "model", 5) == 0)
            {
                /* the graph's own "model" takes config's model key */
                model = 1;
            }

            break;
        }

        messages |= (ch[i].reducer == NGX_HTTP_AGENT_REDUCE_MESSAGES);

        ngx_http_agent_json_str(j, &ch[i].name);
        ngx_http_agent_lg_schema_channel(j, &ch[i]);
    }

    if (which == NGX_HTTP_AGENT_LG_SCHEMA_CONFIG && !model) {
        /* the model of a run: one of those the location may use */
        ngx_http_agent_json_key(j, "model");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "string");
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);

    if (messages) {
        ngx_http_agent_json_key(j, "definitions");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, NGX_HTTP_AGENT_LG_MESSAGE);
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "object");
        ngx_http_agent_json_key(j, "properties");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "string");
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_key(j, "content");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "string");
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);
}


/* a channel's schema: by its reducer, then its type= and enum= */

static void
ngx_http_agent_lg_schema_channel(ngx_http_agent_json_t *j,
    ngx_http_agent_channel_t *ch)
{
    ngx_uint_t   i;
    ngx_str_t   *choice;
    static const char  *types[] = NGX_HTTP_AGENT_TYPE_NAMES;

    ngx_http_agent_json_obj(j);

    switch (ch->reducer) {

    case NGX_HTTP_AGENT_REDUCE_MESSAGES:
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "array");
        ngx_http_agent_json_key(j, "items");
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "$ref");
        ngx_http_agent_json_cstr(j, "#/definitions/" NGX_HTTP_AGENT_LG_MESSAGE);
        ngx_http_agent_json_end(j);
        ngx_http_agent_json_key(j, "langgraph_type");
        ngx_http_agent_json_cstr(j, "messages");
        break;

    case NGX_HTTP_AGENT_REDUCE_APPEND:
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "array");
        break;

    case NGX_HTTP_AGENT_REDUCE_SUM:
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "number");
        break;

    case NGX_HTTP_AGENT_REDUCE_MERGE:
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "object");
        break;

    default:
        /* a value: any JSON, or its type= */
        if (ch->type) {
            ngx_http_agent_json_key(j, "type");
            ngx_http_agent_json_cstr(j, types[ch->type]);

        } else if (ch->choices) {
            ngx_http_agent_json_key(j, "type");
            ngx_http_agent_json_cstr(j, "string");
        }

        break;
    }

    if (ch->choices) {
        ngx_http_agent_json_key(j, "enum");
        ngx_http_agent_json_arr(j);

        choice = ch->choices->elts;

        for (i = 0; i < ch->choices->nelts; i++) {
            ngx_http_agent_json_str(j, &choice[i]);
        }

        ngx_http_agent_json_arr_end(j);
    }

    if (ch->dflt.len) {
        ngx_http_agent_json_key(j, "default");
        ngx_http_agent_json_raw(j, &ch->dflt);
    }

    ngx_http_agent_json_end(j);
}
