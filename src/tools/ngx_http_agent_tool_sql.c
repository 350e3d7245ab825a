
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"


/*
 * The SQL tools of seed 000: load_csv_data and execute_sql_query, on the
 * thread pool when the location has one, with the SQL layer's sandbox.
 */


static ngx_int_t ngx_http_agent_tool_sql_run(ngx_http_agent_tool_call_t *call);
static void ngx_http_agent_tool_sql_done(void *data, ngx_str_t *result);
static void ngx_http_agent_tool_sql_cancel(ngx_http_agent_tool_call_t *call);


ngx_http_agent_tool_t  ngx_http_agent_tool_load_csv_data = {
    ngx_string("load_csv_data"),
    ngx_string("{\"type\":\"function\",\"function\":{\"name\":"
    "\"load_csv_data\",\"description\":\"Describe a CSV table of this "
    "session: its columns with types, its row count and its first rows. "
    "Without a table, the first CSV of the session.\",\"parameters\":"
    "{\"type\":\"object\",\"properties\":{\"table\":{\"type\":\"string\","
    "\"description\":\"the table name\"}}}}}"),
    ngx_http_agent_tool_sql_run,
    1,
    ngx_null_string,
    ngx_null_string,
    NULL,
    1000,
    0,
    1,
    NULL
};


ngx_http_agent_tool_t  ngx_http_agent_tool_execute_sql_query = {
    ngx_string("execute_sql_query"),
    ngx_string("{\"type\":\"function\",\"function\":{\"name\":"
    "\"execute_sql_query\",\"description\":\"Run one read-only SQLite "
    "SELECT statement against the session's CSV tables (the first one is "
    "also csv_data) and the connected database.\",\"parameters\":{\"type\":"
    "\"object\",\"properties\":{\"query\":{\"type\":\"string\","
    "\"description\":\"one SQLite SELECT statement\"}},\"required\":"
    "[\"query\"]}}}"),
    ngx_http_agent_tool_sql_run,
    1,
    ngx_null_string,
    ngx_null_string,
    NULL,
    1000,
    0,
    1,
    NULL
};


static ngx_int_t
ngx_http_agent_tool_sql_run(ngx_http_agent_tool_call_t *call)
{
    ngx_http_agent_run_t      *run;
    ngx_http_agent_env_t      *env;
    ngx_http_agent_sql_ctx_t   sql;
    ngx_http_agent_sql_job_t  *job;

    run = call->run;
    env = run->data;

    if (ngx_http_agent_env_sql(run) != NGX_OK) {
        return NGX_ERROR;
    }

    sql = env->sql;

    if (call->timeout) {
        sql.timeout = call->timeout;
    }

    if (sql.thread_pool) {
        job = ngx_http_agent_sql_job_post(&sql, run->log, &call->name,
                                          &call->arguments,
                                          ngx_http_agent_tool_sql_done, call);
        if (job) {
            call->data = job;
            call->cancel = ngx_http_agent_tool_sql_cancel;
            return NGX_AGAIN;
        }

        ngx_log_error(NGX_LOG_WARN, run->log, 0, "agent: the thread pool "
                      "took no task, the tool runs inline");
    }

    return ngx_http_agent_sql_tool(run->pool, run->log, &sql, &call->name,
                                   &call->arguments, &call->result);
}


static void
ngx_http_agent_tool_sql_done(void *data, ngx_str_t *result)
{
    ngx_http_agent_tool_call_t *call = data;

    call->data = NULL;
    call->cancel = NULL;

    call->result.len = result->len;
    call->result.data = ngx_pstrdup(call->run->pool, result);

    if (call->result.data == NULL) {
        ngx_str_set(&call->result, "{\"error\":\"out of memory\"}");
    }

    call->done(call);
}


static void
ngx_http_agent_tool_sql_cancel(ngx_http_agent_tool_call_t *call)
{
    if (call->data) {
        ngx_http_agent_sql_job_cancel(call->data);
        call->data = NULL;
    }
}
