
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_util.h"


/*
 * A turn for a client that wants no stream: "Accept: application/json"
 * (without text/event-stream) on the message endpoint.  The turn runs as
 * any other, nothing is sent while it runs, and its end is one JSON
 * object: the answer, the usage, the checkpoint and the state's channels
 * (seed 001's structured answer is one of them).  A failed turn is an
 * HTTP error with the error event's text and code, since no header has
 * gone out yet.
 */


static ngx_uint_t ngx_http_agent_turn_json_status(ngx_str_t *code);


ngx_uint_t
ngx_http_agent_turn_json_wanted(ngx_http_request_t *r)
{
    u_char           *p, *last;
    ngx_table_elt_t  *h;

    h = ngx_http_agent_header_in(r, "Accept", NULL);

    if (h == NULL) {
        return 0;
    }

    p = h->value.data;
    last = p + h->value.len;

    if (ngx_strlcasestrn(p, last, (u_char *) "text/event-stream", 17 - 1)) {
        return 0;
    }

    return ngx_strlcasestrn(p, last, (u_char *) "application/json", 16 - 1)
           != NULL;
}


/* ev: the turn's end or error event, as a stream would have sent it */

ngx_int_t
ngx_http_agent_turn_json_send(ngx_http_request_t *r,
    ngx_http_agent_run_t *run, ngx_http_agent_event_t *ev,
    ngx_str_t *session_id, ngx_str_t *run_id)
{
    ngx_str_t               out;
    ngx_uint_t              status;
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);

    if (ev->type == NGX_HTTP_AGENT_EV_END) {
        status = NGX_HTTP_OK;

        ngx_http_agent_json_key(j, "session_id");
        ngx_http_agent_json_str(j, session_id);
        ngx_http_agent_json_key(j, "run_id");
        ngx_http_agent_json_str(j, run_id);
        ngx_http_agent_json_key(j, "graph");
        ngx_http_agent_json_str(j, &run->graph->name);
        ngx_http_agent_json_key(j, "full_response");
        ngx_http_agent_json_str(j, ev->text);
        ngx_http_agent_json_key(j, "usage");
        ngx_http_agent_stream_usage(j, ev);
        ngx_http_agent_json_key(j, "checkpoint_id");
        ngx_http_agent_json_str(j, ev->checkpoint_id);
        ngx_http_agent_json_key(j, "state");
        ngx_http_agent_state_values(j, run);

    } else {
        status = ngx_http_agent_turn_json_status(ev->code);

        ngx_http_agent_json_key(j, "error");
        ngx_http_agent_json_str(j, ev->text);
        ngx_http_agent_json_key(j, "code");
        ngx_http_agent_json_str(j, ev->code);
        ngx_http_agent_json_key(j, "session_id");
        ngx_http_agent_json_str(j, session_id);
    }

    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_agent_reply_send(r, status, &out);
}


/* the error event's code as the status a client of a JSON API expects */

static ngx_uint_t
ngx_http_agent_turn_json_status(ngx_str_t *code)
{
    ngx_uint_t  i;

    static struct {
        ngx_str_t   code;
        ngx_uint_t  status;
    } map[] = {
        { ngx_string("llm_error"), NGX_HTTP_BAD_GATEWAY },
        { ngx_string("tool_error"), NGX_HTTP_BAD_GATEWAY },
        { ngx_string("lease_lost"), NGX_HTTP_CONFLICT },
        { ngx_string("shutdown"), NGX_HTTP_SERVICE_UNAVAILABLE },
        { ngx_null_string, 0 }
    };

    for (i = 0; map[i].code.len; i++) {
        if (map[i].code.len == code->len
            && ngx_strncmp(map[i].code.data, code->data, code->len) == 0)
        {
            return map[i].status;
        }
    }

    return NGX_HTTP_INTERNAL_SERVER_ERROR;
}
