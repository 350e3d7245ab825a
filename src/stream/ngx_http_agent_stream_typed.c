
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_stream.h"


/*
 * "agent_stream typed": the v1 event stream, {"type": ...} objects, and
 * {"type": "node", "name", "status"} around each node.
 */


static ngx_int_t ngx_http_agent_typed_write(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *name);


ngx_http_agent_format_t  ngx_http_agent_typed_format = {
    ngx_string("typed"),
    ngx_http_agent_typed_write,
    0
};


static ngx_int_t
ngx_http_agent_typed_write(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev, ngx_http_agent_json_t *j, ngx_str_t *name)
{
    switch (ev->type) {

    case NGX_HTTP_AGENT_EV_MODEL_START:
    case NGX_HTTP_AGENT_EV_MODEL_END:
    case NGX_HTTP_AGENT_EV_UPDATE:
    case NGX_HTTP_AGENT_EV_CHECKPOINT:
    case NGX_HTTP_AGENT_EV_SUBGRAPH:
        return NGX_DECLINED;

    default:
        break;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");

    switch (ev->type) {

    case NGX_HTTP_AGENT_EV_START:
        ngx_http_agent_json_cstr(j, "start");
        ngx_http_agent_json_key(j, "session_id");
        ngx_http_agent_json_str(j, &s->session_id);
        ngx_http_agent_json_key(j, "run_id");
        ngx_http_agent_json_str(j, &s->run_id);
        break;

    case NGX_HTTP_AGENT_EV_CHUNK:
        ngx_http_agent_json_cstr(j, "chunk");
        ngx_http_agent_json_key(j, "content");
        ngx_http_agent_json_str(j, ev->text);
        break;

    case NGX_HTTP_AGENT_EV_TOOL_START:
    case NGX_HTTP_AGENT_EV_TOOL_END:
        if (ev->type == NGX_HTTP_AGENT_EV_TOOL_START) {
            ngx_http_agent_json_cstr(j, "tool_start");

        } else {
            ngx_http_agent_json_cstr(j, "tool_result");
        }

        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_str(j, ev->id);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, ev->name);

        if (ev->type == NGX_HTTP_AGENT_EV_TOOL_START) {
            ngx_http_agent_json_key(j, "input");

        } else {
            ngx_http_agent_json_key(j, "content");
        }

        ngx_http_agent_stream_payload(j, ev);
        break;

    case NGX_HTTP_AGENT_EV_NODE_START:
    case NGX_HTTP_AGENT_EV_NODE_END:
        ngx_http_agent_json_cstr(j, "node");
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &s->node);
        ngx_http_agent_json_key(j, "status");
        ngx_http_agent_json_cstr(j, ev->type == NGX_HTTP_AGENT_EV_NODE_START
                                    ? "start" : "end");
        break;

    case NGX_HTTP_AGENT_EV_CUSTOM:
        /* a node's own event: its name is the type, its value the data */
        ngx_http_agent_json_str(j, ev->name);
        ngx_http_agent_json_key(j, "data");
        ngx_http_agent_stream_payload(j, ev);
        break;

    case NGX_HTTP_AGENT_EV_INTERRUPT:
        /* the run waits: {"node", "value"}, answered by POST /resume */
        ngx_http_agent_json_cstr(j, "interrupt");
        ngx_http_agent_json_key(j, "data");
        ngx_http_agent_stream_payload(j, ev);
        ngx_http_agent_json_key(j, "checkpoint_id");
        ngx_http_agent_json_str(j, ev->checkpoint_id);
        break;

    case NGX_HTTP_AGENT_EV_END:
        ngx_http_agent_json_cstr(j, "end");
        ngx_http_agent_json_key(j, "full_response");
        ngx_http_agent_json_str(j, ev->text);
        ngx_http_agent_json_key(j, "usage");
        ngx_http_agent_stream_usage(j, ev);
        ngx_http_agent_json_key(j, "checkpoint_id");
        ngx_http_agent_json_str(j, ev->checkpoint_id);
        break;

    default: /* NGX_HTTP_AGENT_EV_ERROR */
        ngx_http_agent_json_cstr(j, "error");
        ngx_http_agent_json_key(j, "error");
        ngx_http_agent_json_str(j, ev->text);
        ngx_http_agent_json_key(j, "code");
        ngx_http_agent_json_str(j, ev->code);
        break;
    }

    ngx_http_agent_json_end(j);

    return NGX_OK;
}
