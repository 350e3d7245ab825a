
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_UTIL_H_INCLUDED_
#define _NGX_HTTP_AGENT_UTIL_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>
#include <ngx_sha1.h>

#include <curl/curl.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>


/* where the system's time zone database is (Debian's tzdata) */
#define NGX_HTTP_AGENT_TZ_DIR   "/usr/share/zoneinfo/"

/* the longest zone name taken ("America/Argentina/ComodRivadavia") */
#define NGX_HTTP_AGENT_TZ_NAME  64


/* an IANA time zone: its offsets from UTC and when each began */
typedef struct {
    ngx_str_t     name;
    ngx_uint_t    n;           /* transitions */
    int64_t      *at;          /* each one's UTC second */
    int32_t      *offset;      /* the offset from it on, in seconds */
    int32_t       first;       /* the offset before the first */
} ngx_http_agent_tz_t;


ngx_http_agent_tz_t *ngx_http_agent_tz_get(ngx_str_t *name, ngx_log_t *log);
int32_t ngx_http_agent_tz_offset(ngx_http_agent_tz_t *tz, int64_t utc);
int64_t ngx_http_agent_tz_utc(ngx_http_agent_tz_t *tz, int64_t local);
ngx_int_t ngx_http_agent_tz_parse(ngx_http_agent_tz_t *tz, u_char *p,
    u_char *last, ngx_pool_t *pool);


/* a cron schedule: "minute hour day-of-month month day-of-week" */
typedef struct {
    uint64_t      minute;      /* bit n: minute n */
    uint32_t      hour;
    uint32_t      mday;        /* bit n: day n, 1 to 31 */
    uint32_t      month;       /* bit n: month n, 1 to 12 */
    uint32_t      wday;        /* bit n: day n, Sunday 0 */
    unsigned      mday_any:1;  /* "*": the other day field decides */
    unsigned      wday_any:1;
} ngx_http_agent_cron_t;


ngx_int_t ngx_http_agent_cron_parse(ngx_str_t *text,
    ngx_http_agent_cron_t *cron);
int64_t ngx_http_agent_cron_next(ngx_http_agent_cron_t *cron,
    ngx_http_agent_tz_t *tz, int64_t after);
ngx_int_t ngx_http_agent_cron_time(ngx_str_t *iso, int64_t *sec);
u_char *ngx_http_agent_cron_iso(u_char *buf, int64_t sec);

/* "2026-11-27T21:54:48Z" and the offset "+00:00" form, the longest */
#define NGX_HTTP_AGENT_CRON_ISO_LEN  (sizeof("2026-11-27T21:54:48+00:00") - 1)


typedef struct ngx_http_agent_curl_s  ngx_http_agent_curl_t;

/* a body posted in pieces, read from where they are (curl_post_parts()) */
#define NGX_HTTP_AGENT_CURL_PARTS  3

/*
 * return NGX_OK to go on, NGX_ERROR to abort the transfer; none (NULL):
 * the body is dropped, as by a webhook's or a collector's sender
 */
typedef ngx_int_t (*ngx_http_agent_curl_data_pt)(void *data, u_char *p,
    size_t len);

/* rc: NGX_OK, or NGX_ERROR with err set; status: the HTTP status or 0 */
typedef void (*ngx_http_agent_curl_done_pt)(void *data, ngx_int_t rc,
    long status, ngx_str_t *err);


struct ngx_http_agent_curl_s {
    CURL                          *easy;
    struct curl_slist             *headers;
    ngx_log_t                     *log;
    ngx_event_t                    idle;
    ngx_msec_t                     idle_timeout;
    ngx_http_agent_curl_data_pt    on_data;
    ngx_http_agent_curl_done_pt    on_done;
    void                          *data;
    long                           retry_after; /* seconds, or -1 */
    size_t                         body_len;    /* posted */
    ngx_str_t                      parts[NGX_HTTP_AGENT_CURL_PARTS];
    ngx_uint_t                     nparts;
    ngx_uint_t                     part;        /* read next, */
    size_t                         part_pos;    /* from here */
    const char                    *want_header; /* kept when answered */
    u_char                         header[128];
    size_t                         header_len;
    char                           errbuf[CURL_ERROR_SIZE];
};


ngx_int_t ngx_http_agent_curl_init_process(ngx_cycle_t *cycle);
void ngx_http_agent_curl_exit_process(ngx_cycle_t *cycle);
ngx_http_agent_curl_t *ngx_http_agent_curl_create(ngx_pool_t *pool,
    ngx_log_t *log);
ngx_int_t ngx_http_agent_curl_post(ngx_http_agent_curl_t *x, ngx_str_t *url,
    ngx_array_t *headers, ngx_str_t *body, ngx_msec_t connect_timeout,
    ngx_msec_t timeout);
ngx_int_t ngx_http_agent_curl_post_parts(ngx_http_agent_curl_t *x,
    ngx_str_t *url, ngx_array_t *headers, ngx_str_t *parts, ngx_uint_t n,
    ngx_msec_t connect_timeout, ngx_msec_t timeout);
ngx_uint_t ngx_http_agent_curl_sent(ngx_http_agent_curl_t *x);
void ngx_http_agent_curl_cancel(ngx_http_agent_curl_t *x);
void ngx_http_agent_curl_unwatch(ngx_connection_t *c, ngx_uint_t closed);


ngx_int_t ngx_http_agent_files_give(ngx_log_t *log, u_char *path,
    ngx_uid_t user, ngx_gid_t group, ngx_uint_t dir);
ngx_int_t ngx_http_agent_files_create(ngx_log_t *log, u_char *path);


/*
 * for the files that include <ngx_http.h>: the engine and the node kinds
 * include this header and stay without nginx's HTTP
 */
#ifdef _NGX_HTTP_H_INCLUDED_
ngx_table_elt_t *ngx_http_agent_header_in(ngx_http_request_t *r,
    const char *name, ngx_uint_t *count);
#endif


/*
 * the longest id a client may name (a thread, a run) and a tool's name:
 * what the providers take as a function's name, [A-Za-z0-9_-]{1,64}
 */
#define NGX_HTTP_AGENT_ID_MAX   64

/* the text of a random (version 4) UUID, the ids we make */
#define NGX_HTTP_AGENT_ID_LEN   36


ngx_int_t ngx_http_agent_digest_key(ngx_pool_t *pool, const char *prefix,
    ngx_sha1_t *sha1, ngx_str_t *key);
ngx_uint_t ngx_http_agent_id_valid(ngx_str_t *id);
void ngx_http_agent_id_uuid(u_char *buf);
ngx_int_t ngx_http_agent_id_make(ngx_pool_t *pool, ngx_str_t *id);


/* a yajl generator that prints into a growing pool buffer */
typedef struct {
    yajl_gen                   gen;
    ngx_pool_t                *pool;
    u_char                    *start;
    u_char                    *pos;
    u_char                    *end;
    ngx_uint_t                 failed;

    /* a chained text: full buffers are linked here, never copied */
    ngx_chain_t               *out;
    ngx_chain_t              **last;
    off_t                      size;
} ngx_http_agent_json_t;


/* deeper JSON is refused before any recursive code sees it */
#define NGX_HTTP_AGENT_JSON_MAX_DEPTH  64


/* every generator call is checked: a failed one fails the whole text */
#define ngx_http_agent_json_ok(j, call)                                       \
    ((call) != yajl_gen_status_ok ? (void) ((j)->failed = 1) : (void) 0)

#define ngx_http_agent_json_obj(j)                                            \
    ngx_http_agent_json_ok(j, yajl_gen_map_open((j)->gen))
#define ngx_http_agent_json_end(j)                                            \
    ngx_http_agent_json_ok(j, yajl_gen_map_close((j)->gen))
#define ngx_http_agent_json_arr(j)                                            \
    ngx_http_agent_json_ok(j, yajl_gen_array_open((j)->gen))
#define ngx_http_agent_json_arr_end(j)                                        \
    ngx_http_agent_json_ok(j, yajl_gen_array_close((j)->gen))
#define ngx_http_agent_json_null(j)                                           \
    ngx_http_agent_json_ok(j, yajl_gen_null((j)->gen))
#define ngx_http_agent_json_bool(j, b)                                        \
    ngx_http_agent_json_ok(j, yajl_gen_bool((j)->gen, (b)))
/* k: a string literal only (its length is its sizeof): "" k "" says so */
#define ngx_http_agent_json_key(j, k)                                         \
    ngx_http_agent_json_ok(j, yajl_gen_string((j)->gen, (u_char *) "" k "",  \
                                              sizeof("" k "") - 1))


ngx_http_agent_json_t *ngx_http_agent_json_create(ngx_pool_t *pool);
ngx_http_agent_json_t *ngx_http_agent_json_create_obj(ngx_pool_t *pool);
ngx_int_t ngx_http_agent_json_reserve(ngx_http_agent_json_t *j, size_t size);
void ngx_http_agent_json_str(ngx_http_agent_json_t *j, ngx_str_t *s);
void ngx_http_agent_json_bytes(ngx_http_agent_json_t *j, u_char *s,
    size_t len);
void ngx_http_agent_json_cstr(ngx_http_agent_json_t *j, const char *s);
void ngx_http_agent_json_int(ngx_http_agent_json_t *j, int64_t n);
void ngx_http_agent_json_double(ngx_http_agent_json_t *j, double n);
void ngx_http_agent_json_num(ngx_http_agent_json_t *j, double n);
u_char *ngx_http_agent_json_number_text(u_char *p, double n);
double ngx_http_agent_json_number(ngx_str_t *text);
void ngx_http_agent_json_raw(ngx_http_agent_json_t *j, ngx_str_t *json);
size_t ngx_http_agent_json_gap(ngx_http_agent_json_t *j);
void ngx_http_agent_json_raw_obj(ngx_http_agent_json_t *j, ngx_str_t *json);
ngx_int_t ngx_http_agent_json_error(ngx_pool_t *pool, ngx_str_t *err,
    ngx_str_t *result);
void ngx_http_agent_json_val(ngx_http_agent_json_t *j, yajl_val v);
void ngx_http_agent_json_merge(ngx_http_agent_json_t *j, yajl_val old,
    yajl_val add);
ngx_int_t ngx_http_agent_json_done(ngx_http_agent_json_t *j, ngx_str_t *out);
ngx_http_agent_json_t *ngx_http_agent_json_chain(ngx_pool_t *pool);
ngx_int_t ngx_http_agent_json_chain_done(ngx_http_agent_json_t *j,
    ngx_chain_t **out, off_t *size);
ngx_int_t ngx_http_agent_json_scratch(ngx_http_agent_json_t *j,
    ngx_str_t *out);

ngx_int_t ngx_http_agent_json_depth(u_char *p, size_t len);
u_char *ngx_http_agent_json_scan(u_char *p, u_char *last, ngx_uint_t value);
ngx_uint_t ngx_http_agent_json_utf8_valid(u_char *p, size_t len);
size_t ngx_http_agent_json_utf8_char(u_char *p, size_t len);
yajl_val ngx_http_agent_json_tree(ngx_pool_t *pool, u_char *data,
    size_t len, ngx_str_t *err);
yajl_val ngx_http_agent_json_parse(ngx_pool_t *pool, u_char *data,
    size_t len, ngx_str_t *err);
yajl_val ngx_http_agent_json_get(yajl_val obj, const char *key);
ngx_uint_t ngx_http_agent_json_contains(yajl_val have, yajl_val want);
ngx_int_t ngx_http_agent_json_get_str(yajl_val obj, const char *key,
    ngx_str_t *out);
ngx_int_t ngx_http_agent_json_encode(ngx_pool_t *pool, yajl_val v,
    ngx_str_t *out);
ngx_int_t ngx_http_agent_json_quote(ngx_pool_t *pool, ngx_str_t *s,
    ngx_str_t *out);
ngx_str_t *ngx_http_agent_json_log_str(ngx_pool_t *pool, ngx_str_t *s);


/* JSON-RPC's error codes */
#define NGX_HTTP_AGENT_JSONRPC_PARSE_ERROR       -32700
#define NGX_HTTP_AGENT_JSONRPC_INVALID_REQUEST   -32600
#define NGX_HTTP_AGENT_JSONRPC_METHOD_NOT_FOUND  -32601
#define NGX_HTTP_AGENT_JSONRPC_INVALID_PARAMS    -32602
#define NGX_HTTP_AGENT_JSONRPC_INTERNAL_ERROR    -32603
#define NGX_HTTP_AGENT_JSONRPC_SERVER_ERROR      -32000


/* one JSON-RPC message a client sent */
typedef struct {
    ngx_str_t                  id;          /* as JSON (a number or a
                                               string, written again by
                                               our generator), or empty */
    ngx_str_t                  method;
    yajl_val                   params;      /* an object, or NULL */
    yajl_val                   result;      /* a response's "result",
                                               or NULL: its "error" */
    ngx_int_t                  code;        /* an error to answer, or 0 */
    ngx_str_t                  error;
    unsigned                   notification:1; /* no "id": no answer,
                                                  not even an error */
    unsigned                   response:1;  /* no "method": the answer
                                               to a request of ours */
} ngx_http_agent_jsonrpc_t;


void ngx_http_agent_jsonrpc_read(ngx_pool_t *pool, ngx_str_t *body,
    ngx_http_agent_jsonrpc_t *rpc);
ngx_int_t ngx_http_agent_jsonrpc_result(ngx_pool_t *pool, ngx_str_t *id,
    ngx_str_t *result, ngx_str_t *out);
ngx_int_t ngx_http_agent_jsonrpc_error(ngx_pool_t *pool, ngx_str_t *id,
    ngx_int_t code, ngx_str_t *msg, ngx_str_t *out);


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


/*
 * KEY=VALUE parameters, read against a table the way nginx reads
 * directives against its ngx_command_t: a node line's and those of the
 * directives that take KEY=VALUE words.  A setter returns NGX_CONF_OK,
 * NGX_CONF_ERROR (it has logged) or a short reason; the parser writes
 * every message, so all say the same thing the same way.
 */

typedef struct ngx_http_agent_param_s  ngx_http_agent_param_t;

typedef char *(*ngx_http_agent_param_set_pt)(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);

struct ngx_http_agent_param_s {
    ngx_str_t                      name;
    ngx_http_agent_param_set_pt    set;
    ngx_uint_t                     offset;
    void                          *post;   /* bounds, enum, post handler */
};

#define ngx_http_agent_null_param  { ngx_null_string, NULL, 0, NULL }


/* numbers, times and sizes: from min to max, inclusive */
typedef struct {
    ngx_int_t                      min;
    ngx_int_t                      max;
} ngx_http_agent_param_bounds_t;


/*
 * The post of a node's set_channel, set_channels or set_file parameter:
 * once the graph is read, what it names is resolved into what follows its
 * name in the conf: a channel into an ngx_int_t (unnamed: -1, or the
 * messages channel where messages may go), channels into an ngx_array_t *
 * of ngx_int_t, a file of the prompts folder into an ngx_str_t of its
 * text.  Without a post the kind resolves it.
 */
typedef struct {
    ngx_uint_t                     required;   /* the node needs it */
    ngx_uint_t                     messages;   /* may be "messages" */
} ngx_http_agent_param_ref_t;


extern ngx_http_agent_param_ref_t  ngx_http_agent_param_optional;
extern ngx_http_agent_param_ref_t  ngx_http_agent_param_required;
extern ngx_http_agent_param_ref_t  ngx_http_agent_param_messages;


ngx_int_t ngx_http_agent_params_parse(ngx_conf_t *cf,
    ngx_http_agent_param_t *table, ngx_str_t *words, ngx_uint_t n,
    void *conf, const char *what, ngx_str_t *name);
ngx_int_t ngx_http_agent_params_word(ngx_conf_t *cf,
    ngx_http_agent_param_t *table, ngx_str_t *word, void *conf,
    const char *what, ngx_str_t *name);
void ngx_http_agent_params_unknown(ngx_conf_t *cf, ngx_str_t *word,
    const char *what, ngx_str_t *name);
ngx_int_t ngx_http_agent_params_name(ngx_str_t *name);

char *ngx_http_agent_params_set_str(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_channel(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_channels(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_file(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_list(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_headers(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_num(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_msec(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_size(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_flag(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_enum(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_regex(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);


char *ngx_http_agent_params_path(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);


ngx_int_t ngx_http_agent_redact(ngx_pool_t *pool, ngx_array_t *re,
    ngx_str_t *json);


ngx_int_t ngx_http_agent_grow(void *buf, size_t used, size_t *size,
    size_t need, size_t max, ngx_log_t *log);
ngx_int_t ngx_http_agent_grow_shared(u_char **buf, size_t used,
    size_t *size, size_t need, size_t max, ngx_log_t *log);
void ngx_http_agent_grow_reset(u_char **buf, size_t *size);
ngx_int_t ngx_http_agent_grow_pin(ngx_pool_t *pool, u_char *buf);
void ngx_http_agent_grow_ref(u_char *buf);
void ngx_http_agent_grow_release(void *buf);


#endif /* _NGX_HTTP_AGENT_UTIL_H_INCLUDED_ */
