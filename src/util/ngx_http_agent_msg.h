/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_MSG_H_INCLUDED_
#define _NGX_HTTP_AGENT_MSG_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


/*
 * One chat message, provider-neutral: a row of the store's messages and
 * an entry of a graph's messages channel; the providers translate it.
 */

typedef struct {
    int64_t                    seq;
    ngx_str_t                  role;          /* user assistant tool */
    ngx_str_t                  content;
    ngx_str_t                  tool_calls;    /* JSON array, or empty */
    ngx_str_t                  tool_call_id;
    ngx_str_t                  name;
    ngx_str_t                  images;        /* JSON array, or empty */
    ngx_str_t                  created_at;
    ngx_str_t                  metadata;      /* JSON object, or empty */
    ngx_str_t                  id;            /* a client's own id (its
                                                 metadata's "id"), or
                                                 empty: ours */
    unsigned                   replace:1;     /* an update's: it takes the
                                                 place seq of the channel
                                                 (a message id of ours) */
    unsigned                   replaced:1;    /* in a channel: not as the
                                                 store's row has it */
} ngx_http_agent_msg_t;


#endif /* _NGX_HTTP_AGENT_MSG_H_INCLUDED_ */
