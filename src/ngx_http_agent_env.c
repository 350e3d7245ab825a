
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_env.h"
#include "ngx_http_agent_store.h"


ngx_int_t
ngx_http_agent_emit(ngx_http_agent_run_t *run, ngx_http_agent_event_t *ev)
{
    ngx_http_agent_env_t *env = run->data;

    if (env->stream == NULL) {
        return NGX_OK;
    }

    return ngx_http_agent_stream_emit(env->stream, ev);
}


/* the session's CSV tables, listed once a turn, for the SQL layer */

ngx_int_t
ngx_http_agent_env_sql(ngx_http_agent_run_t *run)
{
    ngx_http_agent_env_t *env = run->data;

    ngx_array_t  *resources;

    if (env->sql.resources) {
        return NGX_OK;
    }

    resources = ngx_array_create(run->pool, 4,
                                 sizeof(ngx_http_agent_resource_t));
    if (resources == NULL) {
        return NGX_ERROR;
    }

    if (ngx_http_agent_store_resource_list(run->pool, &env->session_id,
                                           resources)
        != NGX_OK)
    {
        return ngx_http_agent_graph_fail(run, "store_error", "the session's "
                                         "CSV files could not be listed");
    }

    env->sql.resources = resources;

    return NGX_OK;
}
