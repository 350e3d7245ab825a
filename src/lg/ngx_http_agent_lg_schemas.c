
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"


/*
 * GET /assistants/{id}/schemas: JSON Schema (draft-07) of an assistant's
 * graph, from its channels: the state, its input and its output are the
 * channels (a graph has no others); the context is the channels an
 * assistant's context may write (all but messages); the config is the
 * model a run or an assistant may name.
 */


static void ngx_http_agent_lg_schema(ngx_http_agent_json_t *j,
    ngx_http_agent_graph_t *g, ngx_uint_t context);


ngx_int_t
ngx_http_agent_lg_assistant_schemas(ngx_http_request_t *r, ngx_str_t *id)
{
    ngx_int_t                        rc;
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

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "graph_id");
    ngx_http_agent_json_str(j, &g->name);
    ngx_http_agent_json_key(j, "input_schema");
    ngx_http_agent_lg_schema(j, g, 0);
    ngx_http_agent_json_key(j, "output_schema");
    ngx_http_agent_lg_schema(j, g, 0);
    ngx_http_agent_json_key(j, "state_schema");
    ngx_http_agent_lg_schema(j, g, 0);
    ngx_http_agent_json_key(j, "context_schema");
    ngx_http_agent_lg_schema(j, g, 1);

    ngx_http_agent_json_key(j, "config_schema");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "$schema");
    ngx_http_agent_json_cstr(j, "http://json-schema.org/draft-07/schema#");
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "object");
    ngx_http_agent_json_key(j, "properties");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "model");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "string");
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    ngx_http_agent_json_end(j);

    return ngx_http_agent_lg_send(r, NGX_HTTP_OK, j);
}


/* the graph's channels as an object's properties, by their reducers */

static void
ngx_http_agent_lg_schema(ngx_http_agent_json_t *j, ngx_http_agent_graph_t *g,
    ngx_uint_t context)
{
    ngx_uint_t                 i;
    ngx_http_agent_channel_t  *ch;

    ch = g->channels.elts;

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
        if (context && ch[i].reducer == NGX_HTTP_AGENT_REDUCE_MESSAGES) {
            continue;
        }

        ngx_http_agent_json_str(j, &ch[i].name);
        ngx_http_agent_json_obj(j);

        switch (ch[i].reducer) {

        case NGX_HTTP_AGENT_REDUCE_MESSAGES:
            ngx_http_agent_json_key(j, "type");
            ngx_http_agent_json_cstr(j, "array");
            ngx_http_agent_json_key(j, "items");
            ngx_http_agent_json_obj(j);
            ngx_http_agent_json_key(j, "type");
            ngx_http_agent_json_cstr(j, "object");
            ngx_http_agent_json_end(j);
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
            /* a value: any JSON */
            break;
        }

        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);
}
