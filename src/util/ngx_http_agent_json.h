
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_JSON_H_INCLUDED_
#define _NGX_HTTP_AGENT_JSON_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>


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


#endif /* _NGX_HTTP_AGENT_JSON_H_INCLUDED_ */
