
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_ops.h"


static char *ngx_http_agent_stream_event_conf(ngx_conf_t *cf, void *post,
    void *data);
static ngx_uint_t ngx_http_agent_stream_reserved(ngx_str_t *name);


/*
 * Node kinds and the turn say what happened; the location's stream format
 * (agent_stream) words it.  The formats are listed in stream_formats.c.
 */


ngx_conf_post_t  ngx_http_agent_stream_event_post = {
    ngx_http_agent_stream_event_conf
};


ngx_int_t
ngx_http_agent_stream_emit(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev)
{
    uint64_t   t;
    ngx_int_t  rc;
    ngx_str_t  name, json;

    t = ngx_http_agent_phase_now();

    if (s->json == NULL) {
        s->json = ngx_http_agent_json_create(s->pool);
        if (s->json == NULL) {
            return NGX_ERROR;
        }
    }

    ngx_str_null(&name);

    rc = s->format->write(s, ev, s->json, &name);

    if (rc == NGX_DECLINED) {
        /* not an event of this format, or one it sent itself */
        ngx_http_agent_phase_add(NGX_HTTP_AGENT_PHASE_EVENT, t);
        return NGX_OK;
    }

    if (rc != NGX_OK
        || ngx_http_agent_json_scratch(s->json, &json) != NGX_OK)
    {
        return NGX_ERROR;
    }

    /*
     * tokens, and the node and model events between them, leave together
     * at the end of this pass of the event loop; the others at once: a
     * tool_start must be seen before a tool that blocks (the thread pool
     * off) runs
     */

    switch (ev->type) {

    case NGX_HTTP_AGENT_EV_CHUNK:
    case NGX_HTTP_AGENT_EV_NODE_START:
    case NGX_HTTP_AGENT_EV_NODE_END:
    case NGX_HTTP_AGENT_EV_MODEL_START:
    case NGX_HTTP_AGENT_EV_MODEL_END:
        rc = s->sink(s->sink_data, &name, &json, 0);
        break;

    default:
        rc = s->sink(s->sink_data, &name, &json, 1);
    }

    ngx_http_agent_phase_add(NGX_HTTP_AGENT_PHASE_EVENT, t);

    return rc;
}


/* a node's custom event may not pass for one of the turn's own */

static ngx_uint_t
ngx_http_agent_stream_reserved(ngx_str_t *name)
{
    ngx_uint_t  i;

    static ngx_str_t  reserved[] = {
        ngx_string("start"), ngx_string("chunk"), ngx_string("tool_start"),
        ngx_string("tool_result"), ngx_string("node"), ngx_string("end"),
        ngx_string("error"), ngx_null_string
    };

    for (i = 0; reserved[i].len; i++) {
        if (reserved[i].len == name->len
            && ngx_strncmp(reserved[i].data, name->data, name->len) == 0)
        {
            return 1;
        }
    }

    for (i = 0; i < name->len; i++) {
        if (!(isalnum(name->data[i]) || name->data[i] == '_'
              || name->data[i] == '-'))
        {
            return 1;
        }
    }

    return name->len == 0 || name->len > 32;
}


/* event=NAME of a node: ngx_http_agent_stream_event_post's handler */

static char *
ngx_http_agent_stream_event_conf(ngx_conf_t *cf, void *post, void *data)
{
    if (ngx_http_agent_stream_reserved(data)) {
        return "letters, digits, _ and -, and not the name of an event of "
               "the turn's own";
    }

    return NGX_CONF_OK;
}


/* the usage of a turn, in both formats: cached tokens are in the prompt's */

void
ngx_http_agent_stream_usage(ngx_http_agent_json_t *j,
    ngx_http_agent_event_t *ev)
{
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "prompt_tokens");
    ngx_http_agent_json_int(j, ev->prompt_tokens);
    ngx_http_agent_json_key(j, "completion_tokens");
    ngx_http_agent_json_int(j, ev->completion_tokens);
    ngx_http_agent_json_key(j, "cached_tokens");
    ngx_http_agent_json_int(j, ev->cached_tokens);
    ngx_http_agent_json_key(j, "cache_creation_tokens");
    ngx_http_agent_json_int(j, ev->cache_write_tokens);
    ngx_http_agent_json_end(j);
}


/*
 * An event's payload, the same in every format: our own JSON as it is,
 * else the value parsed from outside written anew, else null
 */

void
ngx_http_agent_stream_payload(ngx_http_agent_json_t *j,
    ngx_http_agent_event_t *ev)
{
    if (ev->json) {
        ngx_http_agent_json_raw(j, ev->json);

    } else {
        ngx_http_agent_json_val(j, ev->value);
    }
}
