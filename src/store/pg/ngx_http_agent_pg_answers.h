
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PG_ANSWERS_H_INCLUDED_
#define _NGX_HTTP_AGENT_PG_ANSWERS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <libpq-fe.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg_query.h"


/*
 * The answers the PostgreSQL store's operations share
 * (pg_answers.c): done, a row changed, a list of rows.
 */
#pragma GCC visibility push(hidden)


/* the rows of an answer, and whether more are left */
typedef struct {
    ngx_array_t               *rows;
    ngx_uint_t                 more;
} ngx_http_agent_pg_rows_t;


ngx_int_t ngx_http_agent_pg_done(ngx_http_agent_pg_query_t *q, PGresult *res,
    ngx_http_agent_pg_answer_t *a);
ngx_int_t ngx_http_agent_pg_changed(ngx_http_agent_pg_query_t *q,
    PGresult *res, ngx_http_agent_pg_answer_t *a);
ngx_int_t ngx_http_agent_pg_rows(ngx_http_agent_pg_answer_t *a,
    ngx_array_t *to);
ngx_int_t ngx_http_agent_pg_new_rows(ngx_http_agent_pg_query_t *q,
    ngx_http_agent_pg_answer_t *a, size_t size, ngx_array_t **rows);


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_PG_ANSWERS_H_INCLUDED_ */
