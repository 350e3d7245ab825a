
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_LLM_H_INCLUDED_
#define _NGX_HTTP_AGENT_LLM_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_ops.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_store.h"


/*
 * A model call's types: the model it is made with, what it sends, its
 * state as the answer comes (ngx_http_agent_llm_state.c writes it).
 */


#define NGX_HTTP_AGENT_LLM_MAX_TOOL_CALLS  32
#define NGX_HTTP_AGENT_LLM_MAX_DIMS        8192


typedef struct ngx_http_agent_llm_s       ngx_http_agent_llm_t;
typedef struct ngx_http_agent_provider_s  ngx_http_agent_provider_t;


/* a text's vector as a query, as the request's agent_embeddings answer */
typedef ngx_int_t (*ngx_http_agent_llm_embed_pt)(void *data,
    ngx_http_agent_store_call_t *sc, ngx_str_t *text, ngx_str_t *vector,
    ngx_str_t *err);


/* an agent_model: where it is, how to reach it, what to do when it fails */
typedef struct {
    ngx_str_t                      name;
    ngx_str_t                      url;
    ngx_str_t                      model;
    ngx_str_t                      key_env;
    ngx_array_t                   *aliases;     /* ngx_str_t */
    ngx_array_t                   *headers;     /* ngx_str_t "Name: value" */
    ngx_http_agent_provider_t     *provider;
    ngx_str_t                      fallback_name;
    void                          *fallback;    /* ngx_http_agent_model_t */
    ngx_uint_t                     retries;
    ngx_msec_t                     backoff;
    ngx_msec_t                     connect_timeout;
    ngx_msec_t                     first_token_timeout;
    ngx_msec_t                     idle_timeout;
    ngx_msec_t                     timeout;
    ngx_uint_t                     max_tokens;
    ngx_flag_t                     cache;
    ngx_http_agent_price_t         price;
    ngx_str_t                      file;
    ngx_uint_t                     line;
} ngx_http_agent_model_t;


typedef struct {
    u_char                        *data;
    size_t                         len;
    size_t                         cap;
} ngx_http_agent_llm_buf_t;


typedef struct {
    ngx_http_agent_llm_buf_t       id;
    ngx_http_agent_llm_buf_t       name;
    ngx_http_agent_llm_buf_t       arguments;
} ngx_http_agent_llm_call_t;


/* what a call sends, whichever provider writes it */
typedef struct {
    ngx_str_t                     *system;
    ngx_array_t                   *messages;    /* ngx_http_agent_msg_t */
    ngx_str_t                     *tools;       /* OpenAI's "tools" array */
    ngx_uint_t                     tools_off;   /* declared, not to be
                                                   called: the last round */
    ngx_uint_t                     history;     /* messages of earlier
                                                   turns: a stable prefix */
    ngx_str_t                     *session;     /* whose: its encoding
                                                   kept (llm_prefix.c) */

    /* the location's timeouts, for models that set none of their own */
    ngx_msec_t                     connect_timeout;
    ngx_msec_t                     idle_timeout;
    ngx_msec_t                     timeout;

    /* an embeddings call (llm/embed.c): texts in, vectors out */
    ngx_array_t                   *inputs;      /* ngx_str_t; NULL: a chat
                                                   call */
    ngx_uint_t                     query;       /* as queries, not as
                                                   documents */
    ngx_uint_t                     dims;        /* asked (0: the model's),
                                                   then answered */
    float                         *vectors;     /* inputs' nelts of dims */
    /* the exact response cache (llm_cache.c): how long, and whose */
    ngx_msec_t                     cache;       /* 0: none */
    ngx_str_t                     *owner;

    /* the semantic one (llm_cache.c): after a miss of the exact one */
    ngx_uint_t                     similar;     /* the least score, in
                                                   thousandths; 0: none */
    ngx_str_t                     *scope;       /* the graph and node */
    ngx_http_agent_llm_embed_pt    embed;
    void                          *embed_data;
    ngx_pool_t                    *keep;        /* outlives the call: the
                                                   embeddings' wait */
} ngx_http_agent_llm_req_t;


typedef ngx_int_t (*ngx_http_agent_llm_chunk_pt)(void *data, ngx_str_t *text);
typedef void (*ngx_http_agent_llm_done_pt)(void *data, ngx_int_t rc);


struct ngx_http_agent_llm_s {
    ngx_pool_t                    *pool;
    ngx_log_t                     *log;
    ngx_http_agent_curl_t         *curl;

    ngx_http_agent_llm_chunk_pt    on_chunk;
    ngx_http_agent_llm_done_pt     on_done;
    void                          *data;

    /* the call */
    ngx_http_agent_model_t        *model;       /* answering now */
    ngx_http_agent_provider_t     *provider;
    ngx_http_agent_llm_req_t      *req;
    ngx_str_t                      key;
    ngx_uint_t                     attempt;     /* of this model */
    ngx_uint_t                     hops;        /* fallbacks taken */
    ngx_msec_t                     start;
    ngx_msec_t                     ttft;        /* 0: no token yet */
    ngx_event_t                    retry;
    ngx_event_t                    first;
    ngx_pool_t                    *request;     /* the attempt's body and
                                                   what it was made of */
    ngx_array_t                   *prefix_messages; /* the first prefix_same
                                                   of these are the kept
                                                   entry's of prefix_stamp
                                                   (llm_prefix.c) */
    ngx_uint_t                     prefix_same;
    ngx_uint_t                     prefix_stamp;
    ngx_str_t                      body_kept;   /* sent at body_at of the
                                                   body, not copied in */
    size_t                         body_at;

    /* the stream parser */
    ngx_http_agent_llm_buf_t       line;
    ngx_http_agent_llm_buf_t       content;
    ngx_http_agent_llm_buf_t       errbody;
    ngx_http_agent_llm_call_t     *calls;       /* made at the first */
    ngx_uint_t                     ncalls;
    ngx_int_t                      block;       /* anthropic: the call of
                                                   the open block, or -1 */
    ngx_str_t                      finish_reason;
    int64_t                        prompt_tokens;
    int64_t                        completion_tokens;
    int64_t                        cached_tokens;
    int64_t                        cache_write_tokens;
    int64_t                        reserved;    /* in agent_limit's
                                                   budgets, until settled */
    int64_t                        reserved_cost; /* nanodollars */
    long                           status;
    long                           retry_after; /* seconds, or -1 */

    ngx_str_t                      error;

    /* the exact response cache (llm_cache.c) */
    ngx_str_t                      cache_key;   /* looked up: put on end */
    ngx_array_t                   *cache_text;  /* the text's pieces */
    void                          *cache_sc;    /* the lookup's call */
    ngx_str_t                      cache_url;   /* sent on a miss */
    ngx_array_t                   *cache_headers;
    ngx_str_t                      cache_body;
    ngx_event_t                    replay;      /* a hit's answer */
    void                          *similar;     /* llm_cache.c's near one */
    unsigned                       cache_hit:1;
    unsigned                       cache_similar:1; /* the hit was near */

    unsigned                       seen_done:1;
    unsigned                       answered:1;  /* a token came */
    unsigned                       failed:1;
    unsigned                       retryable:1;
};


/* for the files of src/llm/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_llm_buf_add(ngx_pool_t *pool,
    ngx_http_agent_llm_buf_t *b, u_char *p, size_t len, size_t max);
void ngx_http_agent_llm_excerpt(ngx_http_agent_llm_t *llm, ngx_str_t *s);
ngx_int_t ngx_http_agent_llm_fail(ngx_http_agent_llm_t *llm,
    const char *fmt, ...);
void ngx_http_agent_llm_hide_key(ngx_http_agent_llm_t *llm, ngx_str_t *s);
ngx_uint_t ngx_http_agent_llm_prefix_paired(ngx_http_agent_llm_t *llm);
ngx_uint_t ngx_http_agent_llm_prefix_find(ngx_http_agent_llm_t *llm,
    ngx_str_t *json);
void ngx_http_agent_llm_prefix_keep(ngx_http_agent_llm_t *llm,
    ngx_str_t *reused, u_char *json, size_t len);
ngx_int_t ngx_http_agent_llm_cache_look(ngx_http_agent_llm_t *llm,
    ngx_http_agent_store_wake_pt wake);
ngx_int_t ngx_http_agent_llm_cache_pass(ngx_http_agent_llm_t *llm);
void ngx_http_agent_llm_cache_put(ngx_http_agent_llm_t *llm);
void ngx_http_agent_llm_cache_cancel(ngx_http_agent_llm_t *llm);

#pragma GCC visibility pop


ngx_int_t ngx_http_agent_llm_message(ngx_http_agent_llm_t *llm,
    ngx_pool_t *pool, ngx_http_agent_msg_t *msg);


/* for the files of src/llm/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_int_t ngx_http_agent_llm_end(ngx_http_agent_llm_t *llm);
ngx_int_t ngx_http_agent_llm_finish(ngx_http_agent_llm_t *llm,
    ngx_str_t *reason);
ngx_int_t ngx_http_agent_llm_parse(ngx_http_agent_llm_t *llm, u_char *p,
    size_t len);
void ngx_http_agent_llm_reset(ngx_http_agent_llm_t *llm);
ngx_int_t ngx_http_agent_llm_text(ngx_http_agent_llm_t *llm, ngx_str_t *s);
ngx_int_t ngx_http_agent_llm_tool(ngx_http_agent_llm_t *llm,
    ngx_uint_t index, ngx_str_t *id, ngx_str_t *name, ngx_str_t *args);

#pragma GCC visibility pop


/* the call: attempts, retries, fallback (ngx_http_agent_llm.c) */
ngx_http_agent_llm_t *ngx_http_agent_llm_create(ngx_pool_t *pool,
    ngx_log_t *log);
ngx_int_t ngx_http_agent_llm_call(ngx_http_agent_llm_t *llm,
    ngx_http_agent_model_t *model, ngx_http_agent_llm_req_t *req);
void ngx_http_agent_llm_cancel(ngx_http_agent_llm_t *llm);
ngx_int_t ngx_http_agent_llm_key(ngx_http_agent_model_t *model,
    ngx_str_t *key);


/* agent_embeddings MODEL [dims=N] [fields=a,b.c]: a location's */
typedef struct {
    ngx_str_t                      name;
    ngx_http_agent_model_t        *model;     /* NULL: no embeddings */
    ngx_uint_t                     dims;      /* 0: the model's own */
    ngx_array_t                   *fields;    /* ngx_str_t: what of an
                                                 item is embedded */
} ngx_http_agent_embed_conf_t;


/*
 * who pays for a request's embeddings calls (a turn's graph nodes): start
 * reserves before the call (NGX_OK, or a refusal with its reason in err),
 * end settles once it has answered or failed
 */
typedef struct {
    ngx_int_t                    (*start)(void *data,
                                      ngx_http_agent_llm_t *llm,
                                      ngx_http_agent_model_t *model,
                                      ngx_http_agent_llm_req_t *req,
                                      ngx_str_t *err);
    void                         (*end)(void *data,
                                      ngx_http_agent_llm_t *llm);
} ngx_http_agent_embed_watch_t;


extern ngx_module_t  ngx_http_agent_embed_module;


ngx_http_agent_embed_conf_t *ngx_http_agent_embed_conf(
    ngx_http_request_t *r);
ngx_int_t ngx_http_agent_embed_watch(void *r,
    ngx_http_agent_embed_watch_t *watch, void *data);
ngx_int_t ngx_http_agent_embed_text(ngx_http_request_t *r,
    ngx_http_agent_store_call_t *sc, ngx_str_t *text, ngx_uint_t query,
    ngx_str_t *vector, ngx_str_t *err);
ngx_int_t ngx_http_agent_embed_item(ngx_http_request_t *r,
    ngx_http_agent_store_call_t *sc, yajl_val value, ngx_str_t *fields,
    ngx_uint_t n, ngx_str_t *vector, ngx_str_t *err);


char *ngx_http_agent_model(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
char *ngx_http_agent_model_check(ngx_conf_t *cf,
    ngx_http_agent_main_conf_t *amcf);
ngx_http_agent_model_t *ngx_http_agent_model_find(
    ngx_http_agent_main_conf_t *amcf, ngx_str_t *name);


/* one wire format: it writes the request and reads the stream's events */
struct ngx_http_agent_provider_s {
    ngx_str_t                      name;
    ngx_str_t                      url;         /* the default, or empty */

    ngx_int_t                    (*request)(ngx_http_agent_llm_t *llm,
                                      ngx_str_t *url, ngx_array_t *headers,
                                      ngx_str_t *body);
    ngx_int_t                    (*event)(ngx_http_agent_llm_t *llm,
                                      yajl_val v);

    /* embeddings (llm->req->inputs), where the provider has them */
    ngx_int_t                    (*embed)(ngx_http_agent_llm_t *llm,
                                      ngx_str_t *url, ngx_array_t *headers,
                                      ngx_str_t *body);
    ngx_int_t                    (*embedded)(ngx_http_agent_llm_t *llm,
                                      yajl_val v);
};


/* writes the parts of message i of the call */
typedef void (*ngx_http_agent_provider_part_pt)(ngx_http_agent_llm_t *llm,
    ngx_http_agent_json_t *j, ngx_http_agent_msg_t *m, ngx_uint_t i);


/* what the providers share (the registry is ngx_http_agent_providers.c) */


/* for the files of src/llm/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)

ngx_array_t *ngx_http_agent_provider_calls(ngx_http_agent_json_t *j,
    ngx_http_agent_msg_t *m);
ngx_int_t ngx_http_agent_provider_function(ngx_http_agent_json_t *j,
    yajl_val t, yajl_val *params);
ngx_int_t ngx_http_agent_provider_header(ngx_http_agent_llm_t *llm,
    ngx_array_t *headers, const char *fmt, ...);
ngx_int_t ngx_http_agent_provider_image(yajl_val images, size_t i,
    ngx_str_t *mime, ngx_str_t *data);
yajl_val ngx_http_agent_provider_images(ngx_http_agent_llm_t *llm,
    ngx_http_agent_msg_t *m);
int64_t ngx_http_agent_provider_int(yajl_val v, const char *name);
void ngx_http_agent_provider_object(ngx_http_agent_json_t *j, yajl_val v);
yajl_val ngx_http_agent_provider_tools(ngx_http_agent_llm_t *llm);
ngx_int_t ngx_http_agent_provider_vectors(ngx_http_agent_llm_t *llm,
    yajl_val list, const char *key);
void ngx_http_agent_provider_turns(ngx_http_agent_llm_t *llm,
    ngx_http_agent_json_t *j, const char *key, ngx_str_t *ai,
    ngx_http_agent_provider_part_pt part);

#pragma GCC visibility pop


ngx_http_agent_model_t *ngx_http_agent_allowed_model(
    ngx_http_agent_main_conf_t *amcf, ngx_http_agent_loc_conf_t *alcf,
    ngx_str_t *name);
ngx_http_agent_model_t *ngx_http_agent_allowed_model_default(
    ngx_http_agent_main_conf_t *amcf, ngx_http_agent_loc_conf_t *alcf);
ngx_http_agent_database_t *ngx_http_agent_allowed_database(
    ngx_http_agent_main_conf_t *amcf, ngx_http_agent_loc_conf_t *alcf,
    ngx_str_t *name);
char *ngx_http_agent_allowed_check(ngx_conf_t *cf,
    ngx_http_agent_loc_conf_t *alcf);
char *ngx_http_agent_allowed_slot(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);


#endif /* _NGX_HTTP_AGENT_LLM_H_INCLUDED_ */
