
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_STORE_OWN_H_INCLUDED_
#define _NGX_HTTP_AGENT_STORE_OWN_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


/* included by ngx_http_agent_store.h, after the types these use */


/* an unlock sent again until it goes through (NGX_OK) */
typedef ngx_int_t (*ngx_http_agent_store_unlock_pt)(ngx_str_t *id,
    ngx_str_t *run_id, int64_t gen);


/* for the files of src/store/ only: hidden from the module's exports */
#pragma GCC visibility push(hidden)


/*
 * A row's columns in the order both back ends' statements select them:
 * each back end reads a row through its table (sqlite_db.c, pg_query.c),
 * so a column added is one line here, not one per operation and back end.
 */

#define NGX_HTTP_AGENT_STORE_STR     1      /* ngx_str_t, NULL: empty */
#define NGX_HTTP_AGENT_STORE_INT     2      /* int64_t, NULL: 0 */
#define NGX_HTTP_AGENT_STORE_FLAG    3      /* ngx_uint_t, 0 or 1 */
#define NGX_HTTP_AGENT_STORE_REAL    4      /* double */

#define NGX_HTTP_AGENT_STORE_COLS    16

typedef struct {
    ngx_uint_t                     type;   /* 0: the last */
    size_t                         offset;
} ngx_http_agent_store_col_t;

typedef struct {
    size_t                         size;   /* the row's struct */
    ngx_http_agent_store_col_t     cols[NGX_HTTP_AGENT_STORE_COLS];
} ngx_http_agent_store_table_t;


extern ngx_http_agent_store_table_t  ngx_http_agent_store_session_cols;
extern ngx_http_agent_store_table_t  ngx_http_agent_store_run_cols;
extern ngx_http_agent_store_table_t  ngx_http_agent_store_assistant_cols;
extern ngx_http_agent_store_table_t  ngx_http_agent_store_cron_cols;
extern ngx_http_agent_store_table_t  ngx_http_agent_store_item_cols;
extern ngx_http_agent_store_table_t  ngx_http_agent_store_resource_cols;
extern ngx_http_agent_store_table_t  ngx_http_agent_store_message_cols;
extern ngx_http_agent_store_table_t  ngx_http_agent_store_checkpoint_cols;

ngx_int_t ngx_http_agent_store_row(ngx_pool_t *pool,
    ngx_http_agent_store_table_t *t, void *row, ngx_str_t *cells,
    ngx_int_t n);


ngx_uint_t ngx_http_agent_store_holder_gone(ngx_str_t *id, u_char *host,
    size_t len, ngx_pid_t pid);
void ngx_http_agent_store_host_init(ngx_cycle_t *cycle);
int64_t ngx_http_agent_store_ms(void);
ngx_int_t ngx_http_agent_store_made(ngx_pool_t *pool, ngx_str_t *given,
    ngx_str_t *id, ngx_str_t *at);
ngx_int_t ngx_http_agent_store_resources_dir(ngx_cycle_t *cycle,
    ngx_str_t *resources_dir, ngx_uid_t user, ngx_gid_t group);
ngx_http_agent_store_answer_t *ngx_http_agent_store_answered(
    ngx_http_agent_store_call_t *sc, ngx_uint_t op, ngx_str_t *k1,
    ngx_str_t *k2);
ngx_http_agent_store_answer_t *ngx_http_agent_store_answer_add(
    ngx_http_agent_store_call_t *sc);
ngx_int_t ngx_http_agent_store_leases_json(ngx_pool_t *pool,
    ngx_array_t *leases, ngx_str_t *json);
void ngx_http_agent_store_lease_renewed(ngx_array_t *leases, u_char *run_id,
    size_t len);
void ngx_http_agent_store_unlock_later(ngx_str_t *id, ngx_str_t *run_id,
    int64_t gen, ngx_http_agent_store_unlock_pt send, ngx_log_t *log);

#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_STORE_OWN_H_INCLUDED_ */
