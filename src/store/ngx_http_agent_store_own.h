
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

ngx_uint_t ngx_http_agent_store_holder_gone(ngx_str_t *id, u_char *host,
    size_t len, ngx_pid_t pid);
void ngx_http_agent_store_host_init(ngx_cycle_t *cycle);
int64_t ngx_http_agent_store_ms(void);
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
