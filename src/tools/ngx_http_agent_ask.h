
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_ASK_H_INCLUDED_
#define _NGX_HTTP_AGENT_ASK_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_env.h"
#include "ngx_http_agent_llm.h"


typedef struct ngx_http_agent_ask_s  ngx_http_agent_ask_t;

/* rc NGX_OK: text is the answer (in the run's pool); else run->error */
typedef void (*ngx_http_agent_ask_done_pt)(void *data, ngx_int_t rc,
    ngx_str_t *text);


/* one model call that is not streamed: summaries, SQL, chart specs */
struct ngx_http_agent_ask_s {
    ngx_http_agent_run_t           *run;
    ngx_pool_t                     *pool;
    ngx_http_agent_llm_t           *llm;
    ngx_http_agent_llm_req_t        req;
    ngx_http_agent_model_t         *model;
    ngx_http_agent_ask_done_pt      done;
    void                           *data;
};


ngx_http_agent_ask_t *ngx_http_agent_ask(ngx_http_agent_run_t *run,
    ngx_str_t *system, ngx_str_t *user, ngx_http_agent_ask_done_pt done,
    void *data);
void ngx_http_agent_ask_cancel(ngx_http_agent_ask_t *ask);
ngx_int_t ngx_http_agent_ask_fenced(ngx_str_t *text);


#endif /* _NGX_HTTP_AGENT_ASK_H_INCLUDED_ */
