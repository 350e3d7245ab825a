
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_STREAM_H_INCLUDED_
#define _NGX_HTTP_AGENT_STREAM_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_util.h"


/* an event's name at most (a longer one is sent with none) */
#define NGX_HTTP_AGENT_SSE_NAME  512


typedef struct {
    ngx_http_request_t        *request;
    ngx_uint_t                 id;
    ngx_event_t                heartbeat;
    ngx_msec_t                 interval;
    ngx_chain_t               *free;
    ngx_chain_t               *busy;
    ngx_chain_t               *out;        /* written, not yet sent */
    ngx_chain_t              **last_out;
    ngx_event_t                flush;
    unsigned                   failed:1;
    unsigned                   finished:1;
    unsigned                   keep:1;     /* a lost client ends nothing */
    unsigned                   counted:1;  /* in agent_open_streams */
    unsigned                   zero:1;     /* ids from 0: LangGraph's */
} ngx_http_agent_sse_t;


ngx_int_t ngx_http_agent_sse_start(ngx_http_agent_sse_t *sse,
    ngx_http_request_t *r, ngx_msec_t interval);
ngx_int_t ngx_http_agent_sse_named(ngx_http_agent_sse_t *sse, ngx_str_t *name,
    ngx_str_t *json, ngx_uint_t now);
ngx_int_t ngx_http_agent_sse_finish(ngx_http_agent_sse_t *sse);
void ngx_http_agent_sse_stop(ngx_http_agent_sse_t *sse);


/* for the files of src/stream/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


#pragma GCC visibility pop


/* what happens in a turn, before any stream format words it */
typedef enum {
    NGX_HTTP_AGENT_EV_START = 0,
    NGX_HTTP_AGENT_EV_CHUNK,
    NGX_HTTP_AGENT_EV_TOOL_START,
    NGX_HTTP_AGENT_EV_TOOL_END,
    NGX_HTTP_AGENT_EV_NODE_START,
    NGX_HTTP_AGENT_EV_NODE_END,
    NGX_HTTP_AGENT_EV_MODEL_START,
    NGX_HTTP_AGENT_EV_MODEL_END,
    NGX_HTTP_AGENT_EV_UPDATE,       /* a step's update, for the formats
                                       that show it (updates: 1) */
    NGX_HTTP_AGENT_EV_CUSTOM,
    NGX_HTTP_AGENT_EV_INTERRUPT,    /* json: {"node", "value"} */
    NGX_HTTP_AGENT_EV_CHECKPOINT,   /* a step saved (checkpoint), for a
                                       stream with MODE_CHECKPOINTS or
                                       MODE_DEBUG only */
    NGX_HTTP_AGENT_EV_SUBGRAPH,     /* a subgraph's run starts (no name)
                                       or its node (name) ended: for a
                                       stream with MODE_SUBGRAPHS only */
    NGX_HTTP_AGENT_EV_END,
    NGX_HTTP_AGENT_EV_ERROR
} ngx_http_agent_ev_e;


/* the LangGraph API's stream modes (stream_lg.c) */
#define NGX_HTTP_AGENT_MODE_VALUES    0x01
#define NGX_HTTP_AGENT_MODE_UPDATES   0x02
#define NGX_HTTP_AGENT_MODE_MESSAGES  0x04    /* messages-tuple */
#define NGX_HTTP_AGENT_MODE_CUSTOM    0x08
#define NGX_HTTP_AGENT_MODE_EVENTS    0x10
#define NGX_HTTP_AGENT_MODE_DEBUG     0x20
#define NGX_HTTP_AGENT_MODE_PARTIAL   0x40    /* messages: partial,
                                                 complete */
#define NGX_HTTP_AGENT_MODE_TASKS     0x80    /* a node's task, result */
#define NGX_HTTP_AGENT_MODE_CHECKPOINTS 0x100 /* each step saved */
#define NGX_HTTP_AGENT_MODE_SUBGRAPHS 0x200   /* subgraphs' steps too */
#define NGX_HTTP_AGENT_MODE_JS        0x400   /* the JS server's shapes */


typedef struct {
    ngx_http_agent_ev_e        type;
    ngx_str_t                 *id;          /* a tool call's */
    ngx_str_t                 *name;        /* a tool's, a custom event's */
    ngx_str_t                 *text;        /* chunk, end, error */
    ngx_str_t                 *json;        /* our own JSON */
    yajl_val                   value;       /* or a parsed value */
    yajl_val                   input;       /* a tool's end: its
                                               arguments, parsed */
    ngx_str_t                 *code;        /* error */
    ngx_str_t                 *checkpoint_id;
    void                      *checkpoint;  /* EV_CHECKPOINT's: an
                                               ngx_http_agent_checkpoint_t,
                                               its channels those saved */
    void                      *subgraph;    /* EV_SUBGRAPH's: the run of
                                               the subgraph */
    ngx_array_t               *messages;    /* a model's input */
    int64_t                    prompt_tokens;
    int64_t                    completion_tokens;
    int64_t                    cached_tokens;
    int64_t                    cache_write_tokens;
} ngx_http_agent_event_t;


typedef struct ngx_http_agent_stream_s  ngx_http_agent_stream_t;

/* now: send at once; else it may wait for the end of this event loop pass */
typedef ngx_int_t (*ngx_http_agent_stream_sink_pt)(void *data,
    ngx_str_t *name, ngx_str_t *json, ngx_uint_t now);


/* a stream format: one event in, one SSE event (name and JSON) out */
typedef struct {
    ngx_str_t                  name;
    ngx_int_t                (*write)(ngx_http_agent_stream_t *s,
                                      ngx_http_agent_event_t *ev,
                                      ngx_http_agent_json_t *j,
                                      ngx_str_t *name);
    ngx_uint_t                 updates;     /* wants EV_UPDATE and a
                                               model's input; 1: the
                                               update as JSON too */
} ngx_http_agent_format_t;


struct ngx_http_agent_stream_s {
    ngx_http_agent_format_t   *format;
    ngx_http_agent_json_t     *json;        /* written, sent, reused */
    ngx_pool_t                *pool;
    ngx_str_t                  session_id;
    ngx_str_t                  run_id;
    ngx_str_t                  graph;
    ngx_str_t                  node;        /* the node running */
    ngx_str_t                  model;       /* the model it calls */
    ngx_str_t                  model_remote;
    ngx_str_t                  provider;
    ngx_uint_t                 step;
    ngx_str_t                  node_run_id;
    ngx_str_t                  model_run_id;
    ngx_str_t                  tool_run_id;
    ngx_http_agent_stream_sink_pt  sink;
    void                      *sink_data;
    ngx_uint_t                 modes;       /* NGX_HTTP_AGENT_MODE_* */
    void                      *state;       /* the run, for the formats
                                               that show its state */
    ngx_str_t                  partial;     /* a message so far, for a
                                               format that shows it whole
                                               as it streams */
    size_t                     partial_size;
    ngx_uint_t                 messages_seen; /* shown whole */
    ngx_str_t                  chunk_id;    /* "events": the id of the
                                               message being streamed,
                                               if the protocol names it */
    unsigned                   lc:1;        /* "events": a tool's end as
                                               LangChain's ToolMessage */
    unsigned                   again:1;     /* the start is the lost
                                               worker's (a take-over):
                                               not sent again */
    ngx_str_t                  assistant;
    ngx_str_t                  meta;        /* langgraph: a chunk's
                                               metadata, made once per
                                               model call */
    ngx_str_t                  meta_key;    /* what it was made of */
    void                      *format_data; /* the format's own, from
                                               the stream's pool */
};


void ngx_http_agent_stream_events_call(ngx_http_agent_stream_t *s,
    ngx_http_agent_json_t *j, ngx_str_t *id, ngx_str_t *name,
    ngx_str_t *args);
extern ngx_http_agent_format_t  ngx_http_agent_events_format;
extern ngx_http_agent_format_t  ngx_http_agent_lg_format;
extern ngx_http_agent_format_t  ngx_http_agent_agui_format;


ngx_http_agent_format_t *ngx_http_agent_stream_format_find(ngx_str_t *name);
ngx_int_t ngx_http_agent_stream_emit(ngx_http_agent_stream_t *s,
    ngx_http_agent_event_t *ev);

extern ngx_conf_post_t  ngx_http_agent_stream_event_post;
void ngx_http_agent_stream_usage(ngx_http_agent_json_t *j,
    ngx_http_agent_event_t *ev);
void ngx_http_agent_stream_payload(ngx_http_agent_json_t *j,
    ngx_http_agent_event_t *ev);


/* for the files of src/stream/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_STREAM_H_INCLUDED_ */
