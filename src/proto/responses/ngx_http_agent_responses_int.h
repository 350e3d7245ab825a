
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_RESPONSES_INT_H_INCLUDED_
#define _NGX_HTTP_AGENT_RESPONSES_INT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_module.h"


/* a response being made: what its events and its last object say */
typedef struct {
    ngx_http_agent_turn_record_t  record;   /* the response kept */
    ngx_str_t                  id;          /* resp_{run}_{thread} */
    ngx_str_t                  model;       /* the graph */
    ngx_str_t                  previous;    /* previous_response_id */
    ngx_str_t                  instructions; /* echoed */
    time_t                     created;
    ngx_array_t               *items;       /* ngx_str_t: output items,
                                               our JSON */
    ngx_str_t                  item_id;     /* the message being made */
    u_char                    *text;        /* its text so far */
    size_t                     text_len;
    size_t                     text_size;
    ngx_str_t                  interrupt;   /* the run waits: {"node",
                                               "value"}; not the client's
                                               calls */
    int64_t                    seq;         /* sequence_number */
    const char                *status;      /* a kept response's, or NULL:
                                               the run's */
    unsigned                   open:1;      /* a message item is open */
    unsigned                   streamed:1;  /* this model call streamed */
    unsigned                   over:1;
    unsigned                   background:1;
    unsigned                   answered:1;  /* a background response's
                                               first object sent */
    unsigned                   stored:1;    /* read again: no usage */
    unsigned                   gone:1;      /* its client left */

    /* a background response's events, kept (responses_replay.c) */
    ngx_http_agent_turn_t     *turn;
    ngx_http_agent_stream_t   *stream;      /* its events' */
    ngx_http_agent_turn_kept_t  kept;
    int64_t                    kept_seq;
} ngx_http_agent_responses_out_t;


/* responses_calls.c: the client's calls, the events' head and send */
ngx_int_t ngx_http_agent_responses_calls(ngx_http_agent_stream_t *s,
    ngx_pool_t *pool, ngx_http_agent_responses_out_t *o,
    ngx_http_agent_json_t *j, ngx_str_t *interrupt);
void ngx_http_agent_responses_head(ngx_http_agent_json_t *j,
    ngx_http_agent_responses_out_t *o, const char *type);
ngx_int_t ngx_http_agent_responses_send(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, const char *type, ngx_uint_t now);
ngx_int_t ngx_http_agent_responses_item_done(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, ngx_http_agent_responses_out_t *o,
    ngx_str_t *item);


ngx_int_t ngx_http_agent_responses_sink(void *data, ngx_str_t *name,
    ngx_str_t *json, ngx_uint_t now);
void ngx_http_agent_responses_poll(ngx_http_agent_turn_t *turn);
void ngx_http_agent_responses_done(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev);
ngx_int_t ngx_http_agent_responses_replay(ngx_http_request_t *r,
    ngx_str_t *run_id, ngx_str_t *thread);


ngx_int_t ngx_http_agent_responses_stored(ngx_http_request_t *r,
    ngx_str_t *id);


extern ngx_http_agent_format_t      ngx_http_agent_responses_format;
extern ngx_http_agent_turn_hooks_t  ngx_http_agent_responses_hooks;


ngx_int_t ngx_http_agent_responses_stored_object(ngx_pool_t *pool,
    ngx_http_agent_responses_out_t *o, ngx_http_agent_turn_outcome_t *out,
    ngx_str_t *json);


ngx_int_t ngx_http_agent_responses_route(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx);
ngx_int_t ngx_http_agent_responses_run(ngx_http_request_t *r,
    ngx_http_agent_ctx_t *ctx, ngx_str_t *body);


#endif /* _NGX_HTTP_AGENT_RESPONSES_INT_H_INCLUDED_ */
